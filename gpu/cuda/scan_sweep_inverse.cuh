// The segment starts' A = M^{-1} by the symmetric sweep in blocks of 16, products on the FP64 tensor cores
// (scan_seg_inverse; docs/CHUNKED.md 8.35, 8.37). Included by scan_gate.cu inside its namespace (pivot_recip,
// packed_index, check_start_factor from there; dmma_884 from dmma_tile.cuh).
//
// Why: the L D L^T and two triangular solves of inverse_of_slot run 64 barrier-separated pivots and 126
// shuffle-chained elimination steps of predicated fmas, ~80 us a block at four blocks an SM (ncu: bound by
// shared-memory loads of one coefficient per fma and by the pivots' barriers, 8.33, 8.34). Segments of 256
// steps halve the steps kernel's chain but double the starts. The first block sweep (8.35: a 128-thread block
// an inverse, the whole square in shared memory, 13 block barriers) took ~40 us a block, three warps waiting at
// barriers while the fourth swept a diagonal block's pivots, six blocks an SM: 1,024 starts were two waves.
// Here one warp sweeps one matrix with no block barrier at all, holding only the lower blocks (symmetry) in
// shared memory, swizzled so that every DMMA fragment is two wavefronts: 27 KB a warp, eight warps an SM, so
// 1,024 starts are one wave on 132 SMs, and a scheduler's two warps overlap one's pivot chain with the other's
// products. Measured (H100, 8.37): 0.055 ms for the 1,024 starts of B H = 16, T = 16,384 (0.078 for the block
// version's two waves); ~10,500 instructions a warp at ~8 cycles each (ncu), latency-bound with two warps a
// scheduler. Its results equal ref::sweep_inverse's entry for entry (test_gpu_chunked_cuda, check_segment_inverses).
//
// The maths: the sweep operator (Gauss-Jordan on a symmetric matrix without pivoting). With A = M and K the
// columns [16 k, 16 k + 16) of block k, sweeping block k is
//   P = A_KK^{-1},  A_ij -= A_iK P A_Kj (i, j not in K),  A_Kj = P A_Kj,  A_iK = A_iK P,  A_KK = -P,
// and after every block A = -M^{-1}. A_KK is then the Schur complement of the blocks swept before it, SPD
// where M is; its own inverse is the same sweep entry by entry (in registers), whose pivots are the Schur
// complements' leading entries: the pivots of M's L D L^T, which check_start_factor bounds as before.
// Error: Gauss-Jordan without pivoting on a symmetric positive definite matrix is forward stable (Higham,
// Accuracy and Stability of Numerical Algorithms, 14.4): |X - M^{-1}| within a modest multiple of
// D u cond(M) |M^{-1}|, the class of the L D L^T solves it replaces (the same pivots, other products). The
// products are DMMA chains over k ascending from zero, added to the entry once (two roundings an entry and
// block). Only the lower blocks are formed: N_o = P A_Ko for every block o outside K (the row of block K
// before it, the transpose of its column after it, computed as A_oK P^T: the same products in the same
// order), then A_ij -= A_iK N_j for i >= j (diagonal blocks whole), then the N_o take block K's row and
// column. The result is the lower triangle mirrored: exactly symmetric. ref::sweep_inverse is this algorithm
// in any scalar type (tests/chunked/test_sweep_inverse.cpp measures it at 256 bits and in double).
#pragma once

constexpr int NTI = 64;  // threads of an inverse block: two warps, a matrix each
constexpr int SWB = sweep::kBlock;  // the sweep's block width
// The slots' layout and map (vla/gpu/sweep_layout.hpp, checked on the CPU by tests/gpu/test_sweep_layout.cpp).
using sweep::lower_block;
using sweep::slot_at;
using sweep::SlotMap;
using sweep::swz;

// A warp's shared memory: the lower blocks (i >= j) of the NB x NB blocks, NB - 1 buffers for block K's new row
// and column, the pivots. A slot map (4 bits an entry: lower block i (i + 1) / 2 + j, then the buffers) says
// which slot holds what; block K's new row and column take the buffers' slots, whose old slots become the
// buffers, so nothing is copied.
template <int D>
struct SweepPlan {
  static constexpr int NB = D / SWB, LOWER = packed_size(NB), SLOTS = LOWER + NB - 1;
  static constexpr int warp_doubles = SLOTS * SWB * SWB + D;
  static constexpr int bytes = NTI / 32 * warp_doubles * 8;
  static_assert(D % SWB == 0 && SLOTS <= 16, "whole sweep blocks, a slot number in 4 bits");
};

// A lane's offsets (doubles) into a slot: the DMMA fragments' entries (row 8 t + g, column 4 s + q) (fa) and
// (row 4 s + q, column 8 t + g) (fb), g = lane / 4, q = lane % 4, and the accumulators' pairs (row 8 t + g,
// columns 8 u + 2 q, + 1) (fc). A slot read as it stands takes fa for A operands and fb for B ones; read
// transposed, the other way round.
struct SlotOffsets {
  int fa[2][SWB / 4], fb[2][SWB / 4], fc[2][2];
  __device__ __forceinline__ SlotOffsets() {
    const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
#pragma unroll
      for (int s = 0; s < SWB / 4; ++s) fa[t][s] = slot_at(8 * t + g, 4 * s + q), fb[t][s] = slot_at(4 * s + q, 8 * t + g);
#pragma unroll
      for (int u = 0; u < 2; ++u) fc[t][u] = slot_at(8 * t + g, 8 * u + 2 * q);
    }
  }
};

// acc = a b for one 16 x 16 x 16 product of slots (2 x 2 tiles of 8 x 8), a transposed where AT, b where BT: the
// warp's DMMA chains over k ascending from zero (acc starts at +0).
template <bool AT, bool BT>
__device__ __forceinline__ void dmma_16(double (&acc)[2][2][2], const double* a, const double* b, const SlotOffsets& o) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) acc[mt][nt][0] = acc[mt][nt][1] = 0.0;
#pragma unroll
  for (int s = 0; s < SWB / 4; ++s) {
    const double a0 = a[AT ? o.fb[0][s] : o.fa[0][s]], a1 = a[AT ? o.fb[1][s] : o.fa[1][s]];
    const double b0 = b[BT ? o.fa[0][s] : o.fb[0][s]], b1 = b[BT ? o.fa[1][s] : o.fb[1][s]];
    dmma_884(acc[0][0], a0, b0);
    dmma_884(acc[0][1], a0, b1);
    dmma_884(acc[1][0], a1, b0);
    dmma_884(acc[1][1], a1, b1);
  }
}
// The same with AT, BT chosen at run time (warp-uniform).
__device__ __forceinline__ void dmma_16(double (&acc)[2][2][2], const double* a, bool at, const double* b, bool bt, const SlotOffsets& o) {
  if (at) {
    if (bt) dmma_16<true, true>(acc, a, b, o);
    else dmma_16<true, false>(acc, a, b, o);
  } else {
    if (bt) dmma_16<false, true>(acc, a, b, o);
    else dmma_16<false, false>(acc, a, b, o);
  }
}

// The unblocked sweep of the diagonal block in slot S (rows K0.., pivots to piv[K0 + p]) by the warp, in
// registers: lane l holds row l / 2, columns 8 (l % 2) + m. Pivot p: its row's entries and the row's column p
// by shuffles, then every entry's update (the sweep's four cases; the pivot row's two lanes branch off, the
// other rows' updates are fmas). The block, now -A_KK^{-1}, back in place.
__device__ __forceinline__ void sweep_diagonal_block(double* S, int K0, double* piv) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x % 32, r = lane / 2, h = lane % 2;
  double x[8];
#pragma unroll
  for (int m = 0; m < 8; ++m) x[m] = S[slot_at(r, 8 * h + m)];
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
    if (r == p) {
#pragma unroll
      for (int m = 0; m < 8; ++m) x[m] = x[m] * inv;  // a_pc = a_pc / a_pp
      if (h == hp) x[mp] = -inv;                      // a_pp = -1 / a_pp
    } else {
      const double f = arp * inv;
#pragma unroll
      for (int m = 0; m < 8; ++m) x[m] = core::sweep_entry(x[m], f, y[m]);  // a_rc -= (a_rp / a_pp) a_pc
      if (h == hp) x[mp] = f;                                                // a_rp = a_rp / a_pp
    }
  }
#pragma unroll
  for (int m = 0; m < 8; ++m) S[slot_at(r, 8 * h + m)] = x[m];
}

// M^{-1} of the packed lower triangle Ms (global) by the block sweep, one warp; W its shared memory
// (SweepPlan::warp_doubles), piv its D pivots (complete on return); out (global, D x D) takes the result.
template <int D>
__device__ void sweep_inverse_warp(const double* Ms, double* W, double* piv, double* out) {
  using Pl = SweepPlan<D>;
  constexpr int NB = Pl::NB, L = Pl::LOWER, SS = SWB * SWB;
  const int lane = threadIdx.x % 32, r = lane / 2, h = lane % 2, sr = swz(r);
  const SlotOffsets off;
  SlotMap map = SlotMap::identity(Pl::SLOTS);
  auto slot = [&](int e) { return W + map.get(e) * SS; };
  // The packed lower triangle straight into the slots (the identity map) by 8-byte cp.async, every copy in flight
  // at once: lane l fills row l / 2, columns 8 (l % 2) + m of each lower block, a diagonal block's upper entries
  // from their mirror in Ms.
#pragma unroll
  for (int bi = 0; bi < NB; ++bi)
#pragma unroll
    for (int bj = 0; bj <= bi; ++bj) {
      const int R = SWB * bi + r;
      double* dst = W + lower_block(bi, bj) * SS + SWB * r;
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        const int c = 8 * h + m, C = SWB * bj + c;
        const double* src = Ms + (bi > bj || c <= r ? packed_index(R, C) : packed_index(C, R));
        __pipeline_memcpy_async(dst + (c ^ sr), src, 8);
      }
    }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncwarp();
#pragma unroll 1
  for (int kb = 0; kb < NB; ++kb) {
    const int K0 = kb * SWB;
    double* Pn = slot(lower_block(kb, kb));  // -P after the diagonal sweep
    sweep_diagonal_block(Pn, K0, piv);
    __syncwarp();
    // N_o = P A_Ko into buffer o - (o > kb): as it stands where o < kb (block K's row: -(Pn A_Ko)), transposed
    // where o > kb (block K's column: -(A_oK Pn^T), the same products in the same order). The chains run on -P
    // (each fma of the chain negated exactly) and the sign returns at the store.
#pragma unroll
    for (int ob = 0; ob < NB - 1; ++ob) {
      const int o = ob + (ob >= kb ? 1 : 0);
      double acc[2][2][2];
      if (o < kb) dmma_16<false, false>(acc, Pn, slot(lower_block(kb, o)), off);
      else dmma_16<false, true>(acc, slot(lower_block(o, kb)), Pn, off);
      double* buf = slot(L + ob);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) *reinterpret_cast<double2*>(buf + off.fc[mt][nt]) = make_double2(-acc[mt][nt][0], -acc[mt][nt][1]);
    }
    __syncwarp();
    // A_ij -= A_iK N_j for the lower blocks outside K: A_iK as it stands where i > kb, else A_Ki transposed; N_j
    // from its buffer, transposed where j > kb. (A + (-x) and A - x are the same rounding.)
#pragma unroll
    for (int ib = 0; ib < NB - 1; ++ib)
#pragma unroll
      for (int jb = 0; jb <= ib; ++jb) {
        const int i = ib + (ib >= kb ? 1 : 0), j = jb + (jb >= kb ? 1 : 0);
        double acc[2][2][2];
        dmma_16(acc, i > kb ? slot(lower_block(i, kb)) : slot(lower_block(kb, i)), i < kb, slot(L + jb), j > kb, off);
        double* T = slot(lower_block(i, j));
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
            double2* t = reinterpret_cast<double2*>(T + off.fc[mt][nt]);
            const double2 v = *t;
            *t = make_double2(v.x - acc[mt][nt][0], v.y - acc[mt][nt][1]);
          }
      }
    __syncwarp();
    // The N_o take block K's row and column: their buffers' slots swap with the old blocks'.
    sweep::end_sweep_step(map, NB, kb);
  }
  // out = -A block by block, the lower blocks as they stand, the upper ones their mirrors' transposes, a diagonal
  // block's upper entries from its lower ones: lane l writes rows l / 8 + 4 i, columns 2 (l % 8), + 1 (a row's
  // 16 entries by 8 consecutive lanes).
  const int orow = lane / 8, ocol = 2 * (lane % 8);
#pragma unroll
  for (int bi = 0; bi < NB; ++bi)
#pragma unroll
    for (int bj = 0; bj < NB; ++bj) {
      const double* S = slot(bi >= bj ? lower_block(bi, bj) : lower_block(bj, bi));
#pragma unroll
      for (int i = 0; i < SWB / 4; ++i) {
        const int rr = orow + 4 * i;
        double2 v;
        if (bi > bj || (bi == bj && ocol + 1 <= rr)) {
          v = *reinterpret_cast<const double2*>(S + slot_at(rr, ocol));
        } else if (bi < bj || ocol >= rr) {
          v = make_double2(S[slot_at(ocol, rr)], S[slot_at(ocol + 1, rr)]);
        } else {  // ocol + 1 = rr on the diagonal: (rr, rr - 1) below, (rr, rr) on it
          v = make_double2(S[slot_at(rr, ocol)], S[slot_at(rr, rr)]);
        }
        *reinterpret_cast<double2*>(out + (SWB * bi + rr) * D + SWB * bj + ocol) = make_double2(-v.x, -v.y);
      }
    }
}
