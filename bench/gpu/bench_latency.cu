// Latencies of the operations on the fused kernel's dependent chain, measured
// with clock64() inside one block (or one thread-block cluster) on an otherwise
// idle GPU: the terms of the per-step floor in reports/gpu (reports/gpu/FLOOR.md).
// Each kernel runs a dependent chain of N repetitions and reports SM cycles per
// repetition (median over the block's warps 0's lane 0 of 5 launches).
//   bench_gpu_latency
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../../gpu/cuda/check.cuh"
#include "../../gpu/cuda/fused_kernel.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kN = 4096;

struct Result {
  long long cycles;
  float sink;
};

// x <- Op(x, c) kN times: the latency of one Op.
template <class Op>
__global__ void k_chain(Result* r, float x0, float c) {
  float x = x0 + threadIdx.x * 1e-3f;
  const long long t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < kN; ++i) x = Op{}(x, c);
  const long long t1 = clock64();
  if (threadIdx.x == 0) *r = {t1 - t0, x};
}
struct Fma {  // FFMA
  __device__ float operator()(float x, float c) const { return __fmaf_rn(x, c, 0.001f); }
};
struct Butterfly {  // one butterfly level: SHFL.BFLY + FADD, and an FMUL
  __device__ float operator()(float x, float c) const { return __fadd_rn(x, __shfl_xor_sync(0xffffffffu, x, 1)) * c; }
};
struct Div {  // IEEE division (div.rn): the kernel's reciprocals and o
  __device__ float operator()(float x, float c) const { return __fdiv_rn(c, x); }
};
struct Sqrt {  // IEEE square root and one FADD
  __device__ float operator()(float x, float c) const { return __fadd_rn(__fsqrt_rn(x), c); }
};

// One block-wide exchange: STS, __syncthreads, LDS of another warp's value, FMUL.
__global__ void k_barrier(Result* r) {
  __shared__ float buf[2][1024];
  const int nt = blockDim.x, tid = threadIdx.x;
  float v = tid;
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < kN / 4; ++i) {
    buf[i & 1][tid] = v;
    __syncthreads();
    v = buf[i & 1][(tid + 33) % nt] * 0.5f;
  }
  const long long t1 = clock64();
  if (tid == 0) *r = {(t1 - t0) * 4, v};
}

// The kernel's row reductions at D = 64 (G = 16 lanes, R = 4 rows): the
// reduce-scatter (one row per lane) against R independent butterflies.
template <bool Scatter>
__global__ void k_rows(Result* r) {
  constexpr int G = 16, R = 4;
  const int c = threadIdx.x % G;
  float x[1][R];
  for (int i = 0; i < R; ++i) x[0][i] = threadIdx.x * 1e-3f + i;
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < kN / 4; ++i) {
    float y;
    if constexpr (Scatter) {
      float out[1];
      vla::gpu::detail::group_reduce_scatter<G, R, 1>(x, c, out);
      y = out[0];
    } else {
      y = 0.0f;
#pragma unroll
      for (int k = 0; k < R; ++k) y = y + vla::gpu::detail::group_sum<G>(x[0][k]);
    }
#pragma unroll
    for (int k = 0; k < R; ++k) x[0][k] = y * 0.0625f;
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) *r = {(t1 - t0) * 4, x[0][0]};
}

// One cluster-wide exchange: every block writes a value into the next block's
// shared memory (distributed shared memory), cluster barrier, local read.
__global__ void k_cluster(Result* r, int exchange) {
  __shared__ float buf[2][1024];
  cg::cluster_group cluster = cg::this_cluster();
  const int tid = threadIdx.x, rank = static_cast<int>(cluster.block_rank()), cs = static_cast<int>(cluster.num_blocks());
  float v = tid + rank;
  cluster.sync();
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < kN / 16; ++i) {
    if (exchange) {
      float* remote = cluster.map_shared_rank(&buf[i & 1][0], (rank + 1) % cs);
      remote[tid] = v;
    }
    cluster.sync();
    v = buf[i & 1][tid] * 0.5f + 1.0f;
  }
  const long long t1 = clock64();
  if (tid == 0 && rank == 0) *r = {(t1 - t0) * 16, v};
}

template <class Launch>
double median_cycles(Launch launch) {
  Result* d = nullptr;
  VLA_CUDA_CHECK(cudaMalloc(&d, sizeof(Result)));
  std::vector<double> c;
  for (int rep = 0; rep < 6; ++rep) {
    launch(d);
    VLA_CUDA_CHECK(cudaGetLastError());
    VLA_CUDA_CHECK(cudaDeviceSynchronize());
    Result h{};
    VLA_CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    if (rep > 0) c.push_back(double(h.cycles) / kN);
  }
  VLA_CUDA_CHECK(cudaFree(d));
  std::sort(c.begin(), c.end());
  return c[c.size() / 2];
}

double cluster_cycles(int cs, int threads, int exchange) {
  return median_cycles([&](Result* d) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(cs);
    cfg.blockDim = dim3(threads);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cs;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    VLA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_cluster, d, exchange));
  });
}

}  // namespace

int main() {
  try {
    int clock_khz = 0;
    VLA_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    std::printf("| operation (dependent chain) | cycles | ns at %.0f MHz |\n|---|---|---|\n", clock_khz / 1e3);
    auto row = [&](const char* what, double cyc) { std::printf("| %s | %.1f | %.1f |\n", what, cyc, cyc / (clock_khz / 1e6)); };
    row("FFMA", median_cycles([](Result* d) { k_chain<Fma><<<1, 32>>>(d, 0.0f, 0.999f); }));
    row("SHFL.BFLY + FADD + FMUL (one butterfly level)", median_cycles([](Result* d) { k_chain<Butterfly><<<1, 32>>>(d, 0.0f, 0.5f); }));
    row("IEEE division (div.rn)", median_cycles([](Result* d) { k_chain<Div><<<1, 32>>>(d, 1.5f, 2.25f); }));
    row("IEEE square root + FADD", median_cycles([](Result* d) { k_chain<Sqrt><<<1, 32>>>(d, 2.0f, 0.5f); }));
    for (int nt : {32, 128, 256, 512})
      row((std::string("STS + __syncthreads + LDS + FMUL, ") + std::to_string(nt) + " threads").c_str(),
          median_cycles([nt](Result* d) { k_barrier<<<1, nt>>>(d); }));
    row("4 rows over 16 lanes: reduce-scatter (+ FADD + FMUL)", median_cycles([](Result* d) { k_rows<true><<<1, 256>>>(d); }));
    row("4 rows over 16 lanes: 4 butterflies (+ 4 FADD + FMUL)", median_cycles([](Result* d) { k_rows<false><<<1, 256>>>(d); }));
    for (int cs : {2, 4, 8}) {
      row((std::string("cluster.sync, ") + std::to_string(cs) + " blocks x 256 threads").c_str(), cluster_cycles(cs, 256, 0));
      row((std::string("DSMEM store + cluster.sync + LDS, ") + std::to_string(cs) + " blocks x 256 threads").c_str(),
          cluster_cycles(cs, 256, 1));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_latency: %s\n", e.what());
    return 1;
  }
  return 0;
}
