// Timing probe (issue 8): the scan form's gate stage as the per-step
// Sherman-Morrison recurrence in double, restarted at every segment, segments in
// parallel, A held in registers, against scan_gate's in-chunk Woodbury chain.
// Prototype: A_c0 = I / lambda0 at every segment (the timing does not depend on
// it; the check restarts the CPU recurrence the same way). u = k^, no floor.
// Variants: RP rows x CP columns a thread; PADC doubles of padding after every CP
// columns of the shared rows (the CG lanes' blocks out of each other's banks) and
// ROWDOT, u . z from the row groups' shares (docs/CHUNKED.md 8.16: the two changes
// that made the per-step kernel faster than the Woodbury chunks).
//   nvcc -O3 -arch=sm_90 -std=c++20 -Icore/include bench/gpu/gate_steps_proto.cu -o gate_steps_proto && ./gate_steps_proto
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.cuh"

using vla::bench::hash_uniform;
using vla::bench::median_launch_ms;

__device__ __forceinline__ double recip(double p) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
  double e = fma(-p, y, 1.0);
  y = fma(y, e, y);
  e = fma(-p, y, 1.0);
  return fma(y, e, y);
}

// RP rows x CP columns of A per thread; CG = D / CP lanes share a row group.
template <int D, int RP, int CP, int MINB, int PADC = 0, bool ROWDOT = false, int NCH = 1>
__global__ void __launch_bounds__((D / RP) * (D / CP), MINB)
    gate_steps(const float* __restrict__ khat, float* __restrict__ gate, int T, int H, int seg_steps, double lambda0) {
  constexpr int CG = D / CP, NT = (D / RP) * CG, CH = 32, TPS = NT / CH, PER = D / TPS;
  static_assert(32 % CG == 0 && NT % CH == 0 && D % TPS == 0, "shape");
  constexpr int LD = D + PADC * CG;  // each CP-column block padded by PADC doubles: the CG lanes' blocks in distinct banks
  __shared__ __align__(16) double ud[CH][LD];
  __shared__ __align__(16) double zb[2][LD];
  __shared__ __align__(16) double pb[2][D / RP + 4 * CG];  // row-group partials of u . z (ROWDOT)
  auto P = [](int c) { return c + (c / CP) * PADC; };
  __shared__ double wb[CH][D + 1];
  const int seg = blockIdx.x, bh = blockIdx.y, b = bh / H, h = bh % H;
  const int tid = threadIdx.x, rg = tid / CG, cg = tid % CG, r0 = rg * RP, c0 = cg * CP;
  const int t_begin = seg * seg_steps, t_end = min(T, t_begin + seg_steps);
  double a[RP][CP];
#pragma unroll
  for (int rr = 0; rr < RP; ++rr)
#pragma unroll
    for (int cc = 0; cc < CP; ++cc) a[rr][cc] = r0 + rr == c0 + cc ? 1.0 / lambda0 : 0.0;
  for (int tc = t_begin; tc < t_end; tc += CH) {
    const int len = min(CH, t_end - tc);
    __syncthreads();
    for (int e = tid; e < CH * D; e += NT) {
      const int t = e / D, d = e % D;
      ud[t][P(d)] = t < len ? double(khat[((std::size_t(b) * T + tc + t) * H + h) * D + d]) : 0.0;
    }
    __syncthreads();
#pragma unroll 1
    for (int s = 0; s < len; ++s) {
      // NCH fma chains a row (columns cc mod NCH), summed pairwise at the end.
      double yc[NCH][RP];
#pragma unroll
      for (int k = 0; k < NCH; ++k)
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) yc[k][rr] = 0.0;
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) {
        const double uj = ud[s][P(c0) + cc];
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) yc[cc % NCH][rr] = fma(a[rr][cc], uj, yc[cc % NCH][rr]);
      }
#pragma unroll
      for (int m = NCH / 2; m >= 1; m /= 2)
#pragma unroll
        for (int k = 0; k < m; ++k)
#pragma unroll
          for (int rr = 0; rr < RP; ++rr) yc[k][rr] += yc[k + m][rr];
      double y[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) y[rr] = yc[0][rr];
#pragma unroll
      for (int m = CG / 2; m >= 1; m /= 2)
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) y[rr] += __shfl_xor_sync(0xffffffffu, y[rr], m);
      if (cg == 0) {
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) zb[s & 1][P(r0 + rr)] = y[rr];
        if constexpr (ROWDOT) {
          double p = ud[s][P(r0)] * y[0];
#pragma unroll
          for (int rr = 1; rr < RP; ++rr) p = fma(ud[s][P(r0 + rr)], y[rr], p);
          constexpr int PER_CG = D / RP / CG;
          pb[s & 1][rg + (rg / PER_CG) * 4] = p;
        }
      }
      __syncthreads();
      double d1 = 0.0;
      if constexpr (ROWDOT) {
        constexpr int PER_CG = D / RP / CG;  // row groups summed by each lane of a row group
        double q[PER_CG];
#pragma unroll
        for (int i = 0; i < PER_CG; ++i) q[i] = pb[s & 1][cg * (PER_CG + 4) + i];
#pragma unroll
        for (int m = PER_CG / 2; m >= 1; m /= 2)
#pragma unroll
          for (int i = 0; i < m; ++i) q[i] += q[i + m];
        d1 = q[0];
      } else {
        double dc[NCH];
#pragma unroll
        for (int k = 0; k < NCH; ++k) dc[k] = 0.0;
#pragma unroll
        for (int cc = 0; cc < CP; ++cc) dc[cc % NCH] = fma(ud[s][P(c0) + cc], zb[s & 1][P(c0) + cc], dc[cc % NCH]);
#pragma unroll
        for (int m = NCH / 2; m >= 1; m /= 2)
#pragma unroll
          for (int k = 0; k < m; ++k) dc[k] += dc[k + m];
        d1 = dc[0];
      }
#pragma unroll
      for (int m = CG / 2; m >= 1; m /= 2) d1 += __shfl_xor_sync(0xffffffffu, d1, m);
      const double rd = recip(1.0 + d1);
      double hz[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) hz[rr] = y[rr] * rd;
      if (cg == 0)
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) wb[s][r0 + rr] = fma(-hz[rr], d1, y[rr]);
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) {
        const double zj = zb[s & 1][P(c0) + cc];
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) a[rr][cc] = fma(-hz[rr], zj, a[rr][cc]);
      }
    }
    __syncthreads();
    {
      const int t = tid / TPS, sl = tid % TPS;
      double w[PER], ss = 0.0;
#pragma unroll
      for (int m = 0; m < PER; ++m) {
        w[m] = wb[t][sl + TPS * m];
        ss = fma(w[m], w[m], ss);
      }
#pragma unroll
      for (int m = TPS / 2; m >= 1; m /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, m);
      const double nw = sqrt(ss);
      if (t < len) {
        float* o = gate + ((std::size_t(b) * T + tc + t) * H + h) * D;
#pragma unroll
        for (int m = 0; m < PER; ++m) o[sl + TPS * m] = float(w[m] / nw);
      }
    }
  }
}

// Positive (phi-like) unit keys from the benchmarks' hash inputs.
__global__ void fill_keys(float* k, std::size_t rows, int D, std::uint32_t salt) {
  for (std::size_t r = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; r < rows; r += std::size_t(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) {
      const float v = 0.5f * hash_uniform(r * D + d, salt) + 0.55f;
      k[r * D + d] = v;
      s += v * v;
    }
    const float n = std::sqrt(s);
    for (int d = 0; d < D; ++d) k[r * D + d] /= n;
  }
}

template <int D, int RP, int CP, int MINB, int PADC = 0, bool ROWDOT = false, int NCH = 1>
void run(const char* name, int B, int H, int T, int seg, bool check) {
  const std::size_t n = std::size_t(B) * T * H * D;
  float *k, *g;
  VLA_CUDA_CHECK(cudaMalloc(&k, n * 4));
  VLA_CUDA_CHECK(cudaMalloc(&g, n * 4));
  fill_keys<<<1024, 256>>>(k, n / D, D, 7);
  VLA_CUDA_CHECK(cudaGetLastError());
  const dim3 grid((T + seg - 1) / seg, B * H);
  constexpr int NT = (D / RP) * (D / CP);
  auto launch = [&] {
    gate_steps<D, RP, CP, MINB, PADC, ROWDOT, NCH><<<grid, NT>>>(k, g, T, H, seg, 1.0);
    VLA_CUDA_CHECK(cudaGetLastError());
  };
  const double ms = median_launch_ms(launch);  // after a warm-up launch
  int blocks = 0;
  VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gate_steps<D, RP, CP, MINB, PADC, ROWDOT, NCH>, NT, 0));
  cudaFuncAttributes at;
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&at, gate_steps<D, RP, CP, MINB, PADC, ROWDOT, NCH>));
  double err = -1;
  if (check) {  // head (0, 0), every segment restarted from I / lambda0, double on the host
    std::vector<float> hk(n), hg(n);
    VLA_CUDA_CHECK(cudaMemcpy(hk.data(), k, n * 4, cudaMemcpyDeviceToHost));
    VLA_CUDA_CHECK(cudaMemcpy(hg.data(), g, n * 4, cudaMemcpyDeviceToHost));
    err = 0;
    std::vector<double> A(D * D), z(D), w(D);
    for (int t = 0; t < T; ++t) {
      if (t % seg == 0)
        for (int i = 0; i < D * D; ++i) A[i] = i / D == i % D ? 1.0 : 0.0;
      const float* u = &hk[(std::size_t(t) * H) * D];
      double d1 = 0;
      for (int i = 0; i < D; ++i) {
        z[i] = 0;
        for (int j = 0; j < D; ++j) z[i] += A[i * D + j] * u[j];
      }
      for (int i = 0; i < D; ++i) d1 += u[i] * z[i];
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) A[i * D + j] -= z[i] * z[j] / (1 + d1);
      double nw = 0;
      for (int i = 0; i < D; ++i) {
        w[i] = z[i] / (1 + d1);
        nw += w[i] * w[i];
      }
      nw = std::sqrt(nw);
      for (int i = 0; i < D; ++i) err = std::max(err, std::fabs(w[i] / nw - hg[(std::size_t(t) * H) * D + i]));
    }
  }
  std::printf("%-10s D=%d B=%d H=%d T=%d seg=%d: %.4f ms, %d blocks/SM, %d regs, %zu B local; max err %.3g\n", name, D, B, H, T, seg,
              ms, blocks, at.numRegs, static_cast<std::size_t>(at.localSizeBytes), err);
  VLA_CUDA_CHECK(cudaFree(k));
  VLA_CUDA_CHECK(cudaFree(g));
}

int main(int argc, char** argv) {
  cudaDeviceProp p;
  VLA_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  if (argc > 1 && std::string(argv[1]) == "--shapes") {
    // The kernel's layout (4 x 16, padded, row shares, two chains a row) against whole rows a thread (1 x 64: no
    // butterfly, u . z by each thread from z in shared memory) and 2 x 32, with 2 or 4 chains.
    for (int seg : {512, 256}) {
      run<64, 4, 16, 4, 2, true, 2>("rp4cp16prs", 1, 16, 16384, seg, true);
      run<64, 4, 16, 4, 2, true, 4>("rp4cp16pr4", 1, 16, 16384, seg, true);
      run<64, 1, 64, 4, 2, false, 4>("rp1cp64c4", 1, 16, 16384, seg, true);
      run<64, 1, 64, 4, 2, false, 2>("rp1cp64c2", 1, 16, 16384, seg, true);
      run<64, 1, 64, 3, 2, false, 4>("rp1cp64c4m3", 1, 16, 16384, seg, true);
      run<64, 2, 32, 4, 2, false, 4>("rp2cp32c4", 1, 16, 16384, seg, true);
      run<64, 2, 32, 4, 2, true, 2>("rp2cp32prs", 1, 16, 16384, seg, true);
      run<64, 2, 16, 4, 2, true, 1>("rp2cp16pr", 1, 16, 16384, seg, true);
    }
    return 0;
  }
  for (int seg : {512, 256}) {
    run<64, 2, 16, 4>("rp2cp16", 1, 16, 16384, seg, seg == 512);
    run<64, 1, 16, 2>("rp1cp16", 1, 16, 16384, seg, false);
    run<64, 2, 16, 3>("rp2cp16m3", 1, 16, 16384, seg, false);
    run<64, 4, 16, 6>("rp4cp16", 1, 16, 16384, seg, false);
    run<64, 2, 32, 6>("rp2cp32", 1, 16, 16384, seg, false);
    run<64, 4, 8, 4>("rp4cp8", 1, 16, 16384, seg, false);
  }
  for (int seg : {512, 256}) {
    run<64, 2, 16, 4>("rp2cp16", 1, 16, 65536, seg, false);
    run<64, 4, 16, 6>("rp4cp16", 1, 16, 65536, seg, false);
    run<64, 2, 32, 6>("rp2cp32", 1, 16, 65536, seg, false);
    run<64, 2, 16, 4>("rp2cp16", 8, 128, 4096, seg, false);
    run<64, 4, 16, 6>("rp4cp16", 8, 128, 4096, seg, false);
  }
  run<32, 2, 8, 8>("d32", 1, 16, 16384, 512, true);
  for (int seg : {512, 256}) {
    run<64, 2, 16, 4, 2, false>("rp2cp16p", 1, 16, 16384, seg, true);
    run<64, 2, 16, 4, 2, true>("rp2cp16pr", 1, 16, 16384, seg, true);
    run<64, 2, 32, 6, 2, false>("rp2cp32p", 1, 16, 16384, seg, true);
    run<64, 2, 32, 6, 2, true>("rp2cp32pr", 1, 16, 16384, seg, true);
    run<64, 4, 16, 6, 2, true>("rp4cp16pr", 1, 16, 16384, seg, true);
  }
  return 0;
}
