// What the chunked-drift section takes from the chunked implementations
// (gpu/include/vla/gpu/chunked.hpp) and the generators, one function each (as
// deps.hpp); Unavailable when this build lacks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vla/report/deps.hpp"

namespace vla::report::deps {

// "chunked-fp32", "chunked-bf16", "chunked-tf32" (the carried form),
// "chunked-scan-fp32", "chunked-scan-bf16" (the chunk-parallel form).
const std::vector<std::string>& chunked_kinds();
// The fused kernel whose input type and precision a chunked kind shares (the
// recurrence it is compared with): fp32 for chunked-fp32, chunked-tf32 and
// chunked-scan-fp32, bf16-state for chunked-bf16 (its state enters products
// rounded to bf16), bf16 for chunked-scan-bf16 (bf16 in and out, float state).
impl::Kind chunked_counterpart(const std::string& kind);
// Whether the kind consumes bf16 inputs (chunked-bf16, chunked-scan-bf16).
bool chunked_bf16_inputs(const std::string& kind);
// The kind whose error model (precision and baselines, hence envelope) the kind
// has: itself, or chunked-fp32 for chunked-scan-fp32.
std::string chunked_model(const std::string& kind);
// The chunked implementation on the GPU (cuda) or as its CPU twin, chunk size C.
Outputs run_chunked(const Stream& s, const Options& opt, const std::string& kind, bool cuda, int C);
// The inputs exactly as it consumes them (rounded to float, or to bf16).
Stream chunked_consumed_inputs(const Stream& s, const std::string& kind);
// The error model at the chunked policy's own precision (accuracy::precision_of
// and accuracy::baselines of the ChunkedKind): per head (index b * H + h) the
// largest row error of o_t it accepts at each step. `consumed` as above, `ref`
// the reference on it.
std::vector<std::vector<double>> chunked_envelopes(const std::string& kind, const Stream& consumed, const Options& opt,
                                                   const Outputs& ref);

// A near_collinear stream of the generators (every key at angle theta from one
// base direction, theta drawn in [1e-6, 1e-2] from the seed) and its theta.
struct AngleStream {
  Stream stream;
  double theta = 0;
};
AngleStream near_collinear(const Dims& dims, std::uint64_t seed);

}  // namespace vla::report::deps
