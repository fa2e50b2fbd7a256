// The segment starts' A = M^{-1} by the symmetric sweep in blocks of 16, products on the FP64 tensor cores
// (scan_seg_inverse; docs/CHUNKED.md 8.35). Included by scan_gate.cu inside its namespace (pivot_recip,
// packed_index, check_start_factor from there; dmma_product from dmma_tile.cuh).
//
// Why: the L D L^T and two triangular solves of inverse_of_slot run 64 barrier-separated pivots and 126
// shuffle-chained elimination steps of predicated fmas, ~80 us a block at four blocks an SM (ncu: bound by
// shared-memory loads of one coefficient per fma and by the pivots' barriers, 8.33, 8.34). Segments of 256
// steps halve the steps kernel's chain but double the starts, and paid nothing with that inverse. Here the
// pivots run in one warp's registers, 16 at a time, and the rest is rank-16 products on DMMA: 13 barriers.
// Measured (H100): ~40 us a block, 0.041 ms for the 512 starts of B H = 16, T = 16,384 (0.079 before). Still
// latency-bound: the other three warps wait at a barrier while warp 0 sweeps a diagonal block (ncu, 8.35).
//
// The maths: the sweep operator (Gauss-Jordan on a symmetric matrix without pivoting). With A = M and K the
// columns [16 k, 16 k + 16) of block k, sweeping block k is
//   P = A_KK^{-1},  A_ij -= A_iK P A_Kj (i, j not in K),  A_Kj = P A_Kj,  A_iK = A_iK P,  A_KK = -P,
// and after every block A = -M^{-1}. A_KK is then the Schur complement of the blocks swept before it, SPD
// where M is; its own inverse is the same sweep entry by entry (one warp), whose pivots are the Schur
// complements' leading entries: the pivots of M's L D L^T, which check_start_factor bounds as before.
// Error: Gauss-Jordan without pivoting on a symmetric positive definite matrix is forward stable (Higham,
// Accuracy and Stability of Numerical Algorithms, 14.4): |X - M^{-1}| within a modest multiple of
// D u cond(M) |M^{-1}|, the class of the L D L^T solves it replaces (the same pivots, other products). The
// products are DMMA chains over k ascending from zero, added to the entry once (two roundings an entry and
// block). A stays symmetric up to rounding (A_iK P and P A_Ki round differently): A_iK is taken as the
// transpose of A_Ki, the product the kernel forms, so the result is the sweep of the lower and upper
// triangles alike.
#pragma once

constexpr int NTI = 128;  // threads of an inverse block (4 warps)
constexpr int SWB = 16;   // the sweep's block width

// Shared memory: A (D rows of LD doubles), the pivots. LD = D + 4: a DMMA fragment's 8 rows x 4 columns (or
// 4 x 8) fall into two wavefronts, the least for 32 doubles (rows 8 banks apart).
template <int D>
struct SweepPlan {
  static constexpr int LD = D + 4;
  static constexpr int bytes = (D * LD + D) * 8;
  static_assert(D % SWB == 0, "whole sweep blocks");
};

// The unblocked sweep of the SWB x SWB diagonal block at (K0, K0) by warp 0, in registers: lane l holds row
// l / 2, columns 8 (l % 2) + m. Pivot p: its row's entries and the row's column p by shuffles, then every
// entry's update (the sweep's four cases). The pivots (before their sweep) go to piv[K0 + p]; the block,
// now -A_KK^{-1}, back in place.
template <int LD>
__device__ __forceinline__ void sweep_diagonal_block(double* A, int K0, double* piv) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x % 32, r = lane / 2, h = lane % 2;
  double* row = A + (K0 + r) * LD + K0 + 8 * h;
  double x[8];
#pragma unroll
  for (int m = 0; m < 8; ++m) x[m] = row[m];
#pragma unroll
  for (int p = 0; p < SWB; ++p) {
    const int hp = p / 8, mp = p % 8;
    const double d = __shfl_sync(kAll, x[mp], 2 * p + hp);  // the pivot a_pp
    const double t = __shfl_xor_sync(kAll, x[mp], 1);
    const double arp = h == hp ? x[mp] : t;  // a_rp, in this lane or its pair's
    double y[8];                             // a_pc for this lane's columns
#pragma unroll
    for (int m = 0; m < 8; ++m) y[m] = __shfl_sync(kAll, x[m], 2 * p + h);
    const double inv = pivot_recip(d);  // one rounding more than a division (pivot_recip), as the L D L^T's multipliers
    if (lane == 0) piv[K0 + p] = d;
    const double f = arp * inv;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const bool cp = 8 * h + m == p;
      if (r == p) x[m] = cp ? -inv : x[m] * inv;  // a_pp = -1 / a_pp, a_pc = a_pc / a_pp
      else x[m] = cp ? f : core::sweep_entry(x[m], f, y[m]);  // a_rp = a_rp / a_pp, a_rc -= (a_rp / a_pp) a_pc
    }
  }
#pragma unroll
  for (int m = 0; m < 8; ++m) row[m] = x[m];
}

// A_iK = (A_Ki)^T for the rows i outside block kb, by the threads from `first` on.
template <int D, int LD>
__device__ __forceinline__ void sweep_mirror(double* A, int kb, int first) {
  const int K0 = kb * SWB;
  for (int e = threadIdx.x - first; e < (D - SWB) * SWB; e += NTI - first) {
    const int i = e / SWB + (e / SWB >= K0 ? SWB : 0), c = e % SWB;
    A[i * LD + K0 + c] = A[(K0 + c) * LD + i];
  }
}

// M^{-1} of the packed lower triangle Ms (global) by the block sweep, the NTI threads of the block; A and piv in
// shared memory (SweepPlan); sink(r D + c, x) takes each entry once. The pivots are complete in piv on return.
template <int D, class Sink>
__device__ void sweep_inverse(const double* Ms, double* A, double* piv, Sink sink) {
  constexpr int LD = SweepPlan<D>::LD, NB = D / SWB, NWI = NTI / 32;
  const int warp = threadIdx.x / 32;
  // The packed lower triangle, every thread's loads in flight at once (one round trip), then each entry to its two
  // places.
  {
    constexpr int P = D * (D + 1) / 2, PL = (P + NTI - 1) / NTI;
    double v[PL];
#pragma unroll
    for (int i = 0; i < PL; ++i) {
      const int e = threadIdx.x + i * NTI;
      v[i] = e < P ? Ms[e] : 0.0;
    }
#pragma unroll
    for (int i = 0; i < PL; ++i) {
      const int e = threadIdx.x + i * NTI;
      if (e < P) {
        int r = static_cast<int>((sqrtf(8.0f * static_cast<float>(e) + 1.0f) - 1.0f) * 0.5f);  // row of packed entry e,
        r += (r + 1) * (r + 2) / 2 <= e ? 1 : 0;                                                // corrected where the
        r -= r * (r + 1) / 2 > e ? 1 : 0;                                                       // float root rounds off
        const int c = e - r * (r + 1) / 2;
        A[r * LD + c] = v[i];
        A[c * LD + r] = v[i];
      }
    }
  }
  __syncthreads();
#pragma unroll 1
  for (int kb = 0; kb < NB; ++kb) {
    const int K0 = kb * SWB;
    // Block kb's pivots in warp 0; the other warps finish block kb - 1's column (its row is final).
    if (warp == 0) sweep_diagonal_block<LD>(A, K0, piv);
    else if (kb > 0) sweep_mirror<D, LD>(A, kb - 1, 32);
    __syncthreads();
    // W = P A_Kj in place of block kb's row (j outside it): a warp reads only the columns it writes (one warp
    // along M: every warp owns whole tile columns), so no barrier between the reads and the stores.
    static_assert(WarpGrid<SWB / 8, D / 8, NWI>::WM == 1 || NB == 1, "the in-place W needs whole tile columns a warp");
    dmma_product<SWB, D, SWB, NWI>([&](int m, int k) { return -A[(K0 + m) * LD + K0 + k]; },  // P = -(swept A_KK)
                                   [&](int k, int j) { return A[(K0 + k) * LD + j]; },
                                   [&](int nt) { return 8 * nt / SWB == kb ? 0 : SWB / 4; },  // block kb's columns: none
                                   [&](int m, int j, double v) {
                                     if (j / SWB != kb) A[(K0 + m) * LD + j] = v;
                                   });
    __syncthreads();
    // A_ij -= A_iK W_Kj for i, j outside block kb: reads block kb's column (unchanged until the mirror) and row
    // (W), writes neither. In column halves at D = 64 (the accumulators fit the register bound).
    constexpr int NH = D >= 64 ? 2 : 1, DH = D / NH;
#pragma unroll 1
    for (int hc = 0; hc < NH; ++hc)
      dmma_product<D, DH, SWB, NWI>([&](int i, int k) { return -A[i * LD + K0 + k]; },
                                    [&](int k, int j) { return A[(K0 + k) * LD + hc * DH + j]; },
                                    [&](int nt) { return (hc * DH + 8 * nt) / SWB == kb ? 0 : SWB / 4; },
                                    [&](int i, int j, double v) {
                                      const int jj = hc * DH + j;
                                      if (i / SWB != kb && jj / SWB != kb) A[i * LD + jj] += v;
                                    });
    __syncthreads();
  }
  // A = -M^{-1}, but the last block's column, which is the transpose of its row.
  for (int e = threadIdx.x; e < D * D; e += NTI) {
    const int r = e / D, c = e % D;
    const bool mirrored = c >= D - SWB && r < D - SWB;
    sink(e, -(mirrored ? A[c * LD + r] : A[r * LD + c]));
  }
}
