// Helpers of the GPU benchmarks (bench_variants, bench_cluster_roles).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../gpu/cuda/check.cuh"

namespace vla::bench {

// The inputs: n floats uniform in [-1, 1] from a hash of (i, salt) (a splitmix64
// finaliser), the same on every device and run.
static __global__ void fill_uniform(float* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    p[i] = static_cast<float>((x >> 40) & 0xffffff) * (2.0f / 16777216.0f) - 1.0f;
  }
}

// The median time of 5 launches after a warm-up (CUDA events), in ms; launch()
// launches one kernel on the default stream (checked).
template <class Launch>
double median_launch_ms(Launch&& launch) {
  cudaEvent_t a, b;
  VLA_CUDA_CHECK(cudaEventCreate(&a));
  VLA_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < 6; ++r) {
    VLA_CUDA_CHECK(cudaEventRecord(a));
    launch();
    VLA_CUDA_CHECK(cudaEventRecord(b));
    VLA_CUDA_CHECK(cudaEventSynchronize(b));
    float x;
    VLA_CUDA_CHECK(cudaEventElapsedTime(&x, a, b));
    if (r > 0) ms.push_back(x);
  }
  VLA_CUDA_CHECK(cudaEventDestroy(a));
  VLA_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace vla::bench
