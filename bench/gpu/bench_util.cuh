// Helpers of the GPU benchmarks (bench_gpu, bench_chunked, bench_variants, bench_cluster_roles).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../gpu/cuda/check.cuh"
#include "vla/core/bf16.hpp"

namespace vla::bench {

// Inputs uniform in [-1, 1) from a hash of (i, salt) (a splitmix64 finaliser):
// deterministic, non-zero data, the same on every device and run, without a
// host copy.
static __device__ __forceinline__ float hash_uniform(std::uint64_t i, std::uint32_t salt) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>((x >> 40) & 0xffffff) * (2.0f / 16777216.0f) - 1.0f;
}
static __global__ void fill_f32(float* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = hash_uniform(i, salt);
}
// The same values rounded to bf16 (round to nearest even), as bit patterns.
static __global__ void fill_bf16(std::uint16_t* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = core::bf16_bits_rne(hash_uniform(i, salt));
}

// The median time in ms of `reps` launches (CUDA events) after one warm-up launch;
// launch() launches on the default stream (checked). Every benchmark times with it.
template <class Launch>
double median_launch_ms(Launch&& launch, int reps = 5) {
  cudaEvent_t a, b;
  VLA_CUDA_CHECK(cudaEventCreate(&a));
  VLA_CUDA_CHECK(cudaEventCreate(&b));
  launch();
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    VLA_CUDA_CHECK(cudaEventRecord(a));
    launch();
    VLA_CUDA_CHECK(cudaEventRecord(b));
    VLA_CUDA_CHECK(cudaEventSynchronize(b));
    float x = 0;
    VLA_CUDA_CHECK(cudaEventElapsedTime(&x, a, b));
    ms.push_back(x);
  }
  VLA_CUDA_CHECK(cudaEventDestroy(a));
  VLA_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace vla::bench
