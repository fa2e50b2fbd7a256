// Dispatch of the chunked kernel on (D, C) for one precision; the instances of
// each precision live in their own file (chunked_fp32.cu, chunked_bf16.cu) so
// that they compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "check.cuh"
#include "chunked_kernel.cuh"
#include "device_sms.cuh"
#include "vla/gpu/chunked_launch.hpp"
#include "vla/gpu/fused.hpp"

namespace vla::gpu::chunked {

template <class Prec>
void launch_prec(const FusedParams& p, int C, cudaStream_t s);
template <class Prec>
KernelInfo info_prec(int D, int C);
template <class Prec>
KernelInfo pipelined_info_prec(int D, int C);

// The layout forced by set_chunked_layout (chunked_run.cu).
extern ChunkedLayout forced_layout;

// One wave of blocks (B H <= SMs): each block fetches its next chunk while it
// computes. Several waves: no prefetch, and without U (u = k) the C = 32 plan
// fits two blocks per SM, which hide each other's latency.
// The pipelined kernel where the layout asks for it and the plan fits (C = 32).
// automatic: for the tensor-core kinds at one wave of blocks. Measured (H200,
// reports/gpu/2026-12-01-h200-chunked-v7.md, D = 64, C = 32, B H = 16): per chunk
// step bf16 32.6 us pipelined against 34.1 plain, tf32 36.2 against 38.2, but
// fp32 (SIMT products) 44.8 against 42.6; at several waves the plain kernel's two
// blocks per SM win (bf16 B H = 1024: 2.22e8 tokens/s against 1.20e8).
inline bool use_pipelined(const FusedParams& p, int C, bool fits, bool tensor_cores) {
  const ChunkedLayout l = forced_layout;
  return fits && C == 32 &&
         (l == ChunkedLayout::pipelined || (l == ChunkedLayout::automatic && tensor_cores && p.B * p.H <= device_sms()));
}

template <class Tr>
void launch_typed(const FusedParams& p, cudaStream_t s) {
  if constexpr (PipePlan<Tr>::fits) {
    if (use_pipelined(p, Tr::C, true, Tr::tc_bf16 || Tr::tc_tf32)) {
      const auto k = chunked_forward_pipelined<Tr>;
      VLA_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, PipePlan<Tr>::smem_bytes));
      k<<<p.B * p.H, NT, PipePlan<Tr>::smem_bytes, s>>>(p);
      VLA_CUDA_CHECK(cudaGetLastError());
      return;
    }
  }
  const auto k = chunked_forward<Tr>;
  const bool prefetch = p.B * p.H <= device_sms(), u_is_k = !p.u && !p.u_unit_scaled;
  const int bytes = Tr::smem_bytes(prefetch, u_is_k);
  VLA_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, Tr::max_smem_bytes));
  k<<<p.B * p.H, NT, bytes, s>>>(p, prefetch);
  VLA_CUDA_CHECK(cudaGetLastError());
}

// Resources of the several-waves launch with u = k (the throughput case).
template <class Tr>
KernelInfo info_typed() {
  const auto k = chunked_forward<Tr>;
  VLA_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, Tr::max_smem_bytes));
  cudaFuncAttributes a{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&a, k));
  KernelInfo i;
  i.threads = NT;
  i.registers = a.numRegs;
  i.shared_bytes = Tr::smem_bytes(false, true);
  i.local_bytes = int(a.localSizeBytes);
  VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&i.blocks_per_sm, k, NT, i.shared_bytes));
  return i;
}

// Resources of the pipelined kernel (none where its plan does not fit).
template <class Tr>
KernelInfo pipelined_info_typed() {
  KernelInfo i;
  if constexpr (PipePlan<Tr>::fits) {
    const auto k = chunked_forward_pipelined<Tr>;
    VLA_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, PipePlan<Tr>::smem_bytes));
    cudaFuncAttributes a{};
    VLA_CUDA_CHECK(cudaFuncGetAttributes(&a, k));
    i.threads = NT;
    i.registers = a.numRegs;
    i.shared_bytes = PipePlan<Tr>::smem_bytes;
    i.local_bytes = int(a.localSizeBytes);
    VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&i.blocks_per_sm, k, NT, i.shared_bytes));
  }
  return i;
}

// The instantiated shapes (vla::impl::chunked_supported).
template <class Prec, class F>
auto dispatch(int D, int C, F&& f) {
  if (D == 64 && C == 64) return f(Traits<64, 64, Prec>{});
  if (D == 64 && C == 32) return f(Traits<64, 32, Prec>{});
  if (D == 32 && C == 64) return f(Traits<32, 64, Prec>{});
  if (D == 32 && C == 32) return f(Traits<32, 32, Prec>{});
  if (D == 16 && C == 64) return f(Traits<16, 64, Prec>{});
  if (D == 16 && C == 32) return f(Traits<16, 32, Prec>{});
  throw std::invalid_argument("chunked kernel: (D, C) = (" + std::to_string(D) + ", " + std::to_string(C) +
                              ") not supported (D in {16, 32, 64}, C in {32, 64})");
}

}  // namespace vla::gpu::chunked

// The instances of one precision (one translation unit each).
#define VLA_CHUNKED_INSTANCES(PREC)                                                                      \
  namespace vla::gpu::chunked {                                                                         \
  template <>                                                                                           \
  void launch_prec<PREC>(const FusedParams& p, int C, cudaStream_t s) {                                 \
    dispatch<PREC>(p.D, C, [&](auto tr) { launch_typed<decltype(tr)>(p, s); });                         \
  }                                                                                                     \
  template <>                                                                                           \
  KernelInfo info_prec<PREC>(int D, int C) {                                                            \
    return dispatch<PREC>(D, C, [&](auto tr) { return info_typed<decltype(tr)>(); });                   \
  }                                                                                                     \
  template <>                                                                                           \
  KernelInfo pipelined_info_prec<PREC>(int D, int C) {                                                  \
    return dispatch<PREC>(D, C, [&](auto tr) { return pipelined_info_typed<decltype(tr)>(); });         \
  }                                                                                                     \
  }
