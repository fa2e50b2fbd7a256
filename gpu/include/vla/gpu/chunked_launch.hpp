// The chunked kernel's launcher (device pointers; no CUDA types, so the plain
// C++ benchmark can include it). Same parameters and I/O as the fused kernel
// (vla/gpu/fused.hpp); one block per (b, h).
#pragma once

#include "vla/gpu/chunked.hpp"
#include "vla/gpu/fused.hpp"

#include <vector>

namespace vla::gpu {
// Which schedule a launch runs (docs/CHUNKED.md, section 7): pipelined (kernel
// v7: the gate of chunk c + 1 in the same phases as the state of chunk c, one
// block per SM; C = 32 only) or plain (v6's schedule: two blocks per SM at C = 32
// for launches of several waves). Both give the same bits. automatic: pipelined
// for chunked-bf16 and chunked-tf32 at C = 32 with one wave of blocks
// (B H <= SMs), plain otherwise (measured: chunked_dispatch.cuh). set_chunked_layout forces the layout of
// later launches (tests and bench; pipelined where C = 32, plain elsewhere).
enum class ChunkedLayout { automatic, plain, pipelined };
// Where chunked-scan-bf16's float steps keep a chunk's w rows (docs/CHUNKED.md 8.33): in a buffer
// of their own, or over the chunk's u rows. Both give the same bits. automatic: over u where the
// steps' blocks exceed one wave of the other layout (measured faster there, slower otherwise).
// set_scan_steps_layout forces the layout of later launches (tests and bench).
enum class ScanStepsLayout { automatic, w_own, w_over_u };
#if defined(VLA_HAVE_CUDA)
void set_chunked_layout(ChunkedLayout layout);
void set_scan_steps_layout(ScanStepsLayout layout);
// set_scan_norms(false): later run_cuda_scan launches pass a null state_norm (o and S only: the
// readout skips the norm's fma, scan_stages.cuh), and the norms' buffer keeps its NaN poison (tests).
void set_scan_norms(bool form);

// kind: chunked-fp32 (SIMT), chunked-bf16 or chunked-tf32 (tensor cores); C = chunk size.
// Throws std::invalid_argument for an unsupported (D, C) and std::runtime_error
// for a CUDA error.
void launch_chunked(const FusedParams& p, impl::ChunkedKind kind, int C, void* stream);
KernelInfo chunked_kernel_info(impl::ChunkedKind kind, int D, int C);
// The pipelined kernel's resources (C = 32; blocks_per_sm 0 where D, C have none).
KernelInfo chunked_pipelined_info(impl::ChunkedKind kind, int D, int C);
// x rounded on the device exactly as the chunked-tf32 kernel rounds its operands
// (cvt.rna.tf32.f32), to check the twin's gpu::round_tf32 against the hardware.
std::vector<float> device_round_tf32(const std::vector<float>& x);
#endif
}  // namespace vla::gpu
