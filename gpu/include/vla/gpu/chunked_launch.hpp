// The chunked kernel's launcher (device pointers; no CUDA types, so the plain
// C++ benchmark can include it). Same parameters and I/O as the fused kernel
// (vla/gpu/fused.hpp); one block per (b, h).
#pragma once

#include "vla/gpu/chunked.hpp"
#include "vla/gpu/fused.hpp"

#include <vector>

namespace vla::gpu {
#if defined(VLA_HAVE_CUDA)
// kind: chunked-fp32 (SIMT), chunked-bf16 or chunked-tf32 (tensor cores); C = chunk size.
// Throws std::invalid_argument for an unsupported (D, C) and std::runtime_error
// for a CUDA error.
void launch_chunked(const FusedParams& p, impl::ChunkedKind kind, int C, void* stream);
KernelInfo chunked_kernel_info(impl::ChunkedKind kind, int D, int C);
// x rounded on the device exactly as the chunked-tf32 kernel rounds its operands
// (cvt.rna.tf32.f32), to check the twin's gpu::round_tf32 against the hardware.
std::vector<float> device_round_tf32(const std::vector<float>& x);
#endif
}  // namespace vla::gpu
