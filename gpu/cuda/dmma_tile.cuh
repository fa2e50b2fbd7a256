// Block-level fp64 products on the tensor cores (DMMA: mma.sync.aligned.m8n8k4
// f64, sm_80 and later) with operands read from shared memory through accessors,
// for the scan form's gate (scan_gate.cu). Each output entry is one chain of
// DMMAs over k-blocks of four, ascending. On the H200 that chain gave the bits of
// the sequential fma chain acc = fma(a_k, b_k, acc), k ascending, in every one of
// 262,144 entries (bench/gpu/dmma_order.cu; reports/gpu/2026-12-04-h200-scan-gate-v2.md),
// so the products keep the SIMT products' bits; the PTX ISA does not promise it.
#pragma once

#include <cuda_runtime.h>

namespace vla::gpu::scan {

// d += a b for one 8 x 8 x 4 tile (PTX ISA, "Matrix Fragments for mma.m8n8k4
// with .f64"): lane l holds a = A(l / 4, l % 4), b = B(l % 4, l / 4) and
// d = D(l / 4, 2 (l % 4) + {0, 1}).
__device__ __forceinline__ void dmma_884(double (&d)[2], double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
}

// The warp grid of a product with MT x NT 8 x 8 tiles over NW warps: WM warps
// along M, NW / WM along N (powers of two), the split with the fewest fragment
// loads per k-block (MT / WM + NT / WN); fewer warps where there are fewer tiles.
template <int MT, int NT, int NW>
struct WarpGrid {
  static constexpr int pick() {
    int best = 1, cost = 1 << 30;
    for (int wm = 1; wm <= NW; wm *= 2) {
      const int wn = NW / wm;
      const int em = wm < MT ? wm : MT, en = wn < NT ? wn : NT;
      const int c = MT / em + NT / en + (em * en < NW ? 64 : 0);  // idle warps last
      if (c < cost) cost = c, best = wm;
    }
    return best;
  }
  static constexpr int WM0 = pick(), WN0 = NW / WM0;
  static constexpr int WM = WM0 < MT ? WM0 : MT, WN = WN0 < NT ? WN0 : NT;  // warps used along M, N
  static constexpr int TM = MT / WM, TN = NT / WN;                         // tiles per warp
  static_assert(MT % WM == 0 && NT % WN == 0, "power-of-two tile counts");
};

// out(m, n) = sum_k a(m, k) b(k, n) for an M x N x K product (multiples of 8, 8
// and 4) by the block's NW warps: warp w takes the tiles (mt, nt) with
// mt % WM = w % WM and nt % WN = w / WM, and for tile column nt the k-blocks
// kb < kend(nt) (kend(nt) <= K / 4, warp-uniform: a causal product stops where
// its mask begins). store(m, n, v) receives each entry's chain once.
template <int M, int N, int K, int NW, class A, class B, class KEnd, class Store>
__device__ __forceinline__ void dmma_product(A a, B b, KEnd kend, Store store) {
  using Grid = WarpGrid<M / 8, N / 8, NW>;
  constexpr int TM = Grid::TM, TN = Grid::TN;
  static_assert(M % 8 == 0 && N % 8 == 0 && K % 4 == 0, "8 x 8 x 4 tiles");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp >= Grid::WM * Grid::WN) return;
  const int wm = warp % Grid::WM, wn = warp / Grid::WM, g = lane / 4, q = lane % 4;
  double acc[TM][TN][2] = {};
#pragma unroll 4
  for (int kb = 0; kb < K / 4; ++kb) {
    double af[TM], bf[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) af[i] = a(8 * (wm + Grid::WM * i) + g, 4 * kb + q);
#pragma unroll
    for (int j = 0; j < TN; ++j) bf[j] = b(4 * kb + q, 8 * (wn + Grid::WN * j) + g);
#pragma unroll
    for (int j = 0; j < TN; ++j)
      if (kb < kend(wn + Grid::WN * j))
#pragma unroll
        for (int i = 0; i < TM; ++i) dmma_884(acc[i][j], af[i], bf[j]);
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) store(8 * (wm + Grid::WM * i) + g, 8 * (wn + Grid::WN * j) + 2 * q + e, acc[i][j][e]);
}

// The full product (every k-block).
template <int M, int N, int K, int NW, class A, class B, class Store>
__device__ __forceinline__ void dmma_product(A a, B b, Store store) {
  dmma_product<M, N, K, NW>(a, b, [](int) { return K / 4; }, store);
}

}  // namespace vla::gpu::scan
