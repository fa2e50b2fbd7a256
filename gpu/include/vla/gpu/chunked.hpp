// The chunked-parallel VLA forward (docs/CHUNKED.md) as an implementation under
// test: a CUDA kernel whose in-chunk work runs as matrix products (tensor cores
// for bf16) and its CPU twin, the same precision policy on the host.
//
// Precision policies:
//   chunked-fp32  float in/out; every product, solve and state in float (no TF32);
//   chunked-bf16  bf16 in/out; every matrix product takes bf16 operands (the
//                 state A and S too, rounded as they enter a product; stored in
//                 float between chunks) with float accumulation: the
//                 tensor-core policy. LDL^T, triangular solves, norms in float.
//   chunked-tf32  float in/out; every matrix product takes tf32 operands (10
//                 fraction bits, rounded as cvt.rna.tf32.f32 does: vla/gpu/tf32.hpp)
//                 with float accumulation; the rest as chunked-fp32.
//   chunked-scan-fp32, chunked-scan-bf16  the chunk-parallel form (docs/CHUNKED.md,
//                 section 8): the gate stage in double (Gram prefix, Cholesky of
//                 each chunk's M_c, in-chunk Woodbury), rounded to float once;
//                 the state in float between chunks (the pass's two products per
//                 chunk on FP64 tensor cores at D >= 32, rounded to float once:
//                 docs/CHUNKED.md 8.13); float, or bf16 in and out.
// The carried kinds' twin is vla::ref::run_chunked<float, Ops> with Ops the operand rounding:
// the same maths as the reference, only the products' operands rounded. It is
// not bitwise equal to the kernel (tensor-core accumulation order is the
// hardware's); both are checked against the recurrent reference. The scan
// kinds' twin is vla::ref::run_chunked_scan<float, double>, likewise not bitwise.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/error_baselines.hpp"
#include "vla/gpu/error_model.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::impl {

enum class ChunkedKind { fp32, bf16, tf32, scan_fp32, scan_bf16 };
// The chunk-parallel (scan) form, as opposed to the carried form.
inline bool is_scan(ChunkedKind k) { return k == ChunkedKind::scan_fp32 || k == ChunkedKind::scan_bf16; }
// bf16 inputs and outputs.
inline bool bf16_io(ChunkedKind k) { return k == ChunkedKind::bf16 || k == ChunkedKind::scan_bf16; }
std::string to_string(ChunkedKind);
// "chunked-fp32", "chunked-bf16", "chunked-tf32", "chunked-scan-fp32", "chunked-scan-bf16"
ChunkedKind parse_chunked_kind(std::string_view);

// Shapes the chunked kernel supports: Dk = Dv = D in {16, 32, 64} and chunk size
// C in {32, 64} (D = 128 does not fit its shared-memory plan: rejected).
bool chunked_supported(int D, int C);
// Why the chunked implementation `kind` with chunk size C does not run a stream
// of dims `d` with options `opt` (empty: it does): the shapes above, the VLA
// model only, and unit keys for chunked-bf16 (run_chunked throws this reason).
std::string chunked_unsupported(const Dims& d, const Options& opt, ChunkedKind kind, int C);

// Runs the chunked implementation `kind` with chunk size C on `device`
// (Device::cpu = the CPU twin). All spec options of the VLA model are supported
// (ridge steps end a chunk early, as in the reference). Throws
// std::invalid_argument for unsupported shapes/options, std::runtime_error when
// the device is unavailable.
Outputs run_chunked(const Stream& s, const Options& opt, ChunkedKind kind, Device device, int C = 64);

// The recurrent kernel kind whose plain same-precision baselines measure the
// conditioning for the error model, and the precision the error model checks
// against (docs/ERROR_MODEL.md; see the chunked section of the report).
Kind baseline_kind(ChunkedKind);
// The fused kind with the same input type: the inputs are rounded as it rounds
// them (float for chunked-fp32 and chunked-tf32, bf16 for chunked-bf16).
Kind input_kind(ChunkedKind);

}  // namespace vla::impl

namespace vla::accuracy {
Precision precision_of(impl::ChunkedKind kind);
// The error model's baselines for a chunked policy (error_baselines.hpp): those
// of baseline_kind(kind), except chunked-tf32's, whose state is stored rounded to
// tf32 (accuracy::StateRounding::tf32; docs/CHUNKED.md, "tf32").
std::vector<Outputs> baselines(const Stream& rounded, const Options& opt, impl::ChunkedKind kind, int samples = kBaselineSamples);
std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt, impl::ChunkedKind kind, int first,
                                    int count = kEscalationSamples);
}
