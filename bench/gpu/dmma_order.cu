// Does a chain of DMMAs (mma.sync m8n8k4 f64) over k-blocks of four, ascending,
// give the bits of the sequential fma chain acc = fma(a_k, b_k, acc), k
// ascending, that the SIMT products compute? Runs 8 x 8 x K products (K = 64)
// on random operands on the GPU both ways and compares every entry with two
// models computed on the host: (1) the sequential fma chain; (2) each block of
// four products and the accumulator summed exactly, rounded once (operands in
// +-[1, 2), so a __float128 sum is exact). Prints the counts of entries whose
// bits differ. A second run starts every chain from a nonzero accumulator (as a
// blocked L D L^T's trailing update a(r, c) - sum_j L(r, j) u(c, j) would) with
// operands and accumulators over a wide range of exponents and signs, and
// compares the DMMA chain with the fma chains only. Standalone (no project headers):
//   nvcc -O3 -arch=sm_90 --fmad=false -o dmma_order bench/gpu/dmma_order.cu && ./dmma_order
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "../../gpu/cuda/dmma_tile.cuh"

constexpr int K = 64, TRIALS = 4096;

// Trial t: a [8][K] row-major, b [K][8] row-major, init [8][8] (null: zero); out [8][8] = init + a b by
// DMMA and by the fma chain.
__global__ void products(const double* a, const double* b, const double* init, double* mma_out, double* fma_out) {
  const int t = blockIdx.x, lane = threadIdx.x, g = lane / 4, q = lane % 4;
  const double* A = a + std::size_t(t) * 8 * K;
  const double* B = b + std::size_t(t) * K * 8;
  const double* I = init ? init + std::size_t(t) * 64 : nullptr;
  double d[2] = {I ? I[g * 8 + 2 * q] : 0.0, I ? I[g * 8 + 2 * q + 1] : 0.0};
  for (int kb = 0; kb < K / 4; ++kb) vla::gpu::scan::dmma_884(d, A[g * K + 4 * kb + q], B[(4 * kb + q) * 8 + g]);
  for (int e = 0; e < 2; ++e) mma_out[std::size_t(t) * 64 + g * 8 + 2 * q + e] = d[e];
  for (int e = 0; e < 2; ++e) {
    const int col = 2 * q + e;
    double acc = I ? I[g * 8 + col] : 0.0;
    for (int k = 0; k < K; ++k) acc = fma(A[g * K + k], B[k * 8 + col], acc);
    fma_out[std::size_t(t) * 64 + g * 8 + col] = acc;
  }
}

int main() {
  const std::size_t na = std::size_t(TRIALS) * 8 * K, nout = std::size_t(TRIALS) * 64;
  std::vector<double> a(na), b(na), mo(nout), fo(nout);
  std::mt19937_64 rng(20261204);
  std::uniform_real_distribution<double> mag(1.0, 2.0);
  auto draw = [&] { return (rng() & 1 ? -1.0 : 1.0) * mag(rng); };
  for (auto& x : a) x = draw();
  for (auto& x : b) x = draw();
  double *da, *db, *dm, *df;
  cudaMalloc(&da, na * 8);
  cudaMalloc(&db, na * 8);
  cudaMalloc(&dm, nout * 8);
  cudaMalloc(&df, nout * 8);
  double* di;
  cudaMalloc(&di, nout * 8);
  // a, b (and the accumulators init, where given) to the device, both products, the results into mo, fo.
  auto run = [&](const std::vector<double>* init) {
    cudaMemcpy(da, a.data(), na * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), na * 8, cudaMemcpyHostToDevice);
    if (init) cudaMemcpy(di, init->data(), nout * 8, cudaMemcpyHostToDevice);
    products<<<TRIALS, 32>>>(da, db, init ? di : nullptr, dm, df);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return false;
    }
    cudaMemcpy(mo.data(), dm, nout * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(fo.data(), df, nout * 8, cudaMemcpyDeviceToHost);
    return true;
  };
  if (!run(nullptr)) return 1;
  auto same = [](double x, double y) { return std::memcmp(&x, &y, 8) == 0; };
  long diff_fma_dev = 0, diff_fma_host = 0, diff_block_exact = 0, dev_fma_vs_host = 0;
  double worst_rel = 0;
  for (int t = 0; t < TRIALS; ++t)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) {
        const double* A = a.data() + std::size_t(t) * 8 * K;
        const double* B = b.data() + std::size_t(t) * K * 8;
        double seq = 0.0, blk = 0.0;
        for (int k = 0; k < K; ++k) seq = std::fma(A[r * K + k], B[k * 8 + c], seq);
        for (int kb = 0; kb < K / 4; ++kb) {
          __float128 s = blk;
          for (int k = 4 * kb; k < 4 * kb + 4; ++k) s += __float128(A[r * K + k]) * __float128(B[k * 8 + c]);
          blk = double(s);
        }
        const std::size_t o = std::size_t(t) * 64 + r * 8 + c;
        diff_fma_dev += !same(mo[o], fo[o]);
        diff_fma_host += !same(mo[o], seq);
        diff_block_exact += !same(mo[o], blk);
        dev_fma_vs_host += !same(fo[o], seq);
        if (seq != 0) worst_rel = std::fmax(worst_rel, std::fabs(mo[o] - seq) / std::fabs(seq));
      }
  std::printf("entries: %ld (8 x 8 x K=%d products, %d trials, operands +-[1,2))\n", long(nout), K, TRIALS);
  std::printf("DMMA chain vs device fma chain:            %ld differ\n", diff_fma_dev);
  std::printf("DMMA chain vs host fma chain:              %ld differ\n", diff_fma_host);
  std::printf("DMMA chain vs exact 4-block sum, 1 rounding: %ld differ\n", diff_block_exact);
  std::printf("device fma chain vs host fma chain:        %ld differ (sanity: 0)\n", dev_fma_vs_host);
  std::printf("largest |DMMA - fma chain| / |fma chain|:  %.3e\n", worst_rel);

  // Run 2: nonzero accumulators, operands +-m 2^e with m in [1, 2), e in [-30, 30] (products and
  // accumulators of very different sizes, cancellation); the fma chains only.
  std::uniform_int_distribution<int> ex(-30, 30);
  auto wide = [&] { return std::ldexp(draw(), ex(rng)); };
  std::vector<double> init(nout);
  for (auto& x : a) x = wide();
  for (auto& x : b) x = wide();
  for (auto& x : init) x = wide();
  if (!run(&init)) return 1;
  long d2_dev = 0, d2_host = 0;
  for (int t = 0; t < TRIALS; ++t)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) {
        const double* A = a.data() + std::size_t(t) * 8 * K;
        const double* B = b.data() + std::size_t(t) * K * 8;
        const std::size_t o = std::size_t(t) * 64 + r * 8 + c;
        double seq = init[o];
        for (int k = 0; k < K; ++k) seq = std::fma(A[r * K + k], B[k * 8 + c], seq);
        d2_dev += !same(mo[o], fo[o]);
        d2_host += !same(mo[o], seq);
      }
  std::printf("run 2, nonzero accumulators, exponents in [-30, 30]:\n");
  std::printf("DMMA chain vs device fma chain:            %ld differ\n", d2_dev);
  std::printf("DMMA chain vs host fma chain:              %ld differ\n", d2_host);
  return 0;
}
