// Everything the report takes from the other components, one function each, so
// that the sections do not depend on how those components spell their APIs.
// A piece that is not in this build throws Unavailable, and the section that
// needs it says so on the page instead of failing the whole report.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::report::deps {

struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- kernels under test (gpu/) ----
bool cuda_available();
// The kernel `kind` on the GPU (cuda) or as its CPU twin.
Outputs run_kernel(const Stream& s, const Options& opt, impl::Kind kind, bool cuda);
// The inputs exactly as kernel `kind` consumes them (rounded to its input type).
Stream consumed_inputs(const Stream& s, impl::Kind kind);

// ---- error model (gpu/ first, then the gate) ----
// The error model applied to every (b, h) of a candidate run (index b * H + h):
// the first step at which the model rejects an element of that head (its
// envelope, element by element), and the largest row error
// max_i |o_t,i - o_ref_t,i| / max_i |o_ref_t,i| it allows at each step (the
// envelope drawn on the plots). `s` is the stream as given; `ref` the reference
// run on the inputs the kernel consumed.
struct Envelope {
  std::vector<double> o_rel;   // per step
  long first_fail_step = -1;   // 0-based; -1 when every step is inside
  // Elements the model does not judge (beyond the policy: its own runs keep no
  // correct bit there) and the first step holding one; -1 when all are judged.
  long not_judged = 0, judged = 0, first_not_judged_step = -1;
  std::string source;          // the function and document it comes from
};
std::vector<Envelope> envelopes(impl::Kind kind, const Stream& s, const Options& opt, const Outputs& cand,
                                const Outputs& ref);

// Tests plant a defective kernel here: while set, run_kernel calls it instead.
using KernelFn = std::function<Outputs(const Stream&, const Options&, impl::Kind)>;
void set_kernel_override(KernelFn fn);

// ---- input streams (properties/) ----
// Seeded, deterministic. `family` is a generator family name, or one of the
// properties' adversarial searches, built against the VLA recurrence with
// options `opt` (one search per head):
//   "adversarial-jacobian"    each step maximises ||J_t||_2 (the step's error
//                             amplification, from the closed form of properties/);
//   "adversarial-state-norm"  each step maximises ||S_t||_F.
Stream make_stream(const std::string& family, const Dims& dims, std::uint64_t seed, const Options& opt = Options{});
std::string stream_source(const std::string& family);  // what produced it, for the page

// ---- reference (reference/) ----
// The certified reference on a (short) stream: outputs and the number of
// correct significant bits it vouches for.
struct Certified {
  Outputs out;
  double certified_bits = 0;
  int working_bits = 0;
  std::string method;
};
Certified certified(const Stream& s, const Options& opt);

// ---- high-precision measures (properties/): deps_jacobian.hpp, deps_sm.hpp ----

// ---- claims ledger (proofs_check/) ----
// Every claim's verdict; `quick` selects the ledger's CI-sized run. Each entry:
// id, section, statement, verdict, conditions, evidence (as the ledger writes them).
nlohmann::json claims(bool quick);

}  // namespace vla::report::deps
