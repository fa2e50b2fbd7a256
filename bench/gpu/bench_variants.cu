// Times other block layouts of the fused kernel (fused_traits.hpp) than the ones
// shipped, to choose them by measurement: per-step latency at B=1, H=16 (one
// block per head, 16 of 132 SMs busy: latency-bound) and throughput at B*H=1024.
// fp32, paper preset, inputs uniform in [-1, 1]; median of 5 launches after a
// warm-up. Only the shipped layouts are tested against the twin; these are
// timing experiments.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../../gpu/cuda/fused_kernel.cuh"
#include "bench_util.cuh"

using namespace vla;

namespace {

using bench::fill_f32;
using bench::median_launch_ms;

template <class Tr>
double median_ms(int B, int H, int T) {
  const int D = Tr::D;
  const std::size_t n = std::size_t(B) * H * T * D;
  std::vector<float*> bufs(4);
  for (auto& b : bufs) VLA_CUDA_CHECK(cudaMalloc(&b, n * 4));
  for (int w = 0; w < 3; ++w) fill_f32<<<512, 256>>>(bufs[w], n, w + 1);
  float *S, *A, *norm;
  VLA_CUDA_CHECK(cudaMalloc(&S, std::size_t(B) * H * D * D * 4));
  VLA_CUDA_CHECK(cudaMalloc(&A, std::size_t(B) * H * D * D * 4));
  VLA_CUDA_CHECK(cudaMalloc(&norm, std::size_t(B) * H * T * 4));
  gpu::FusedParams p = gpu::make_params(Options{}, Dims{B, T, H, D, D}, false);
  p.q = bufs[0];
  p.k = bufs[1];
  p.v = bufs[2];
  p.o = bufs[3];
  p.S = S;
  p.A = A;
  p.state_norm = norm;
  const double ms = median_launch_ms([&] {
    gpu::detail::ensure_smem_limit<Tr, gpu::PrecFp32>();
    gpu::detail::vla_fused_kernel<Tr, gpu::PrecFp32><<<B * H, gpu::detail::block_threads<Tr>(), gpu::detail::smem_bytes<Tr, gpu::PrecFp32>()>>>(p);
    VLA_CUDA_CHECK(cudaGetLastError());
  });
  for (auto& x : bufs) VLA_CUDA_CHECK(cudaFree(x));
  VLA_CUDA_CHECK(cudaFree(S));
  VLA_CUDA_CHECK(cudaFree(A));
  VLA_CUDA_CHECK(cudaFree(norm));
  return ms;
}

template <int D, int NT, int G, bool SPLIT = true>
void row() {
  using Tr = gpu::FusedTraitsBase<D, NT, G, SPLIT>;
  cudaFuncAttributes attr{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&attr, gpu::detail::vla_fused_kernel<Tr, gpu::PrecFp32>));
  const double lat = median_ms<Tr>(1, 16, 16384) * 1e3 / 16384;
  const double thr = median_ms<Tr>(8, 128, 2048);
  std::printf("| %3d | %4d | %s | %2d | %2d | %2d | %3d | %5d | %.4f | %.3f | %.3g |\n", D, NT, SPLIT ? "yes" : "no", G, Tr::CW, Tr::R, attr.numRegs,
              int(attr.localSizeBytes), lat, thr, 1024.0 * 2048 / (thr / 1e3));
  std::fflush(stdout);
}

}  // namespace

int main() {
  try {
    // Kernel v4 splits the sides: NT threads hold A and NT hold S (block 2 NT);
    // unsplit (split = no), NT threads hold both (kernel v3's layout).
    std::printf("| D | threads per side | split | G | CW | R | regs | local B | us/step B=1,H=16,T=16384 | ms B=8,H=128,T=2048 | tokens/s |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    row<32, 64, 8>();
    row<32, 128, 8>();
    row<32, 128, 4>();
    row<32, 128, 8, false>();
    row<64, 128, 8>();
    row<64, 128, 16>();
    row<64, 256, 8>();
    row<64, 256, 16>();
    row<64, 256, 16, false>();
    row<128, 256, 16>();
    row<128, 256, 16, false>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_variants: %s\n", e.what());
    return 1;
  }
  return 0;
}
