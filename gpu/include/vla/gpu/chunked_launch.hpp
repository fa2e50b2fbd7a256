// The chunked kernel's launcher (device pointers; no CUDA types, so the plain
// C++ benchmark can include it). Same parameters and I/O as the fused kernel
// (vla/gpu/fused.hpp); one block per (b, h).
#pragma once

#include "vla/gpu/fused.hpp"

namespace vla::gpu {
#if defined(VLA_HAVE_CUDA)
// bf16 = chunked-bf16 (tensor cores), else chunked-fp32; C = chunk size.
// Throws std::invalid_argument for an unsupported (D, C) and std::runtime_error
// for a CUDA error.
void launch_chunked(const FusedParams& p, bool bf16, int C, void* stream);
KernelInfo chunked_kernel_info(bool bf16, int D, int C);
#endif
}  // namespace vla::gpu
