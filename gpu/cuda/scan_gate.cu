// Stage 1 of the scan form, the gate (scan_gate.cuh says which kernel does what;
// docs/CHUNKED.md section 8, segments 8.10; maths: ref::run_chunked_scan with
// ref::scan_segment_chunks(C, B H, T) chunks per segment). The features are
// float, exactly the formulas of core/ (phi, the column norm with its 2^-64
// rescaling where the sum of squares overflows, sm_delta, readout_den); the gate
// is double from the Gram matrices on, rounded to float once. Every reduction
// has a fixed order: a launch's results do not depend on scheduling.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "check.cuh"
#include "device_sms.cuh"
#include "dmma_tile.cuh"
#include "scan_gate.cuh"
#include "scan_prep_core.cuh"
#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"
#include "vla/gpu/packed_lower.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/sweep_layout.hpp"
#include "vla/reference/scan_gate_form.hpp"
#include "vla/reference/scan_segment.hpp"

namespace vla::gpu::scan {
namespace {

constexpr int NT = 256;  // threads per block
constexpr int NW = NT / 32;  // warps per block

__host__ __device__ inline int n_chunks(int T, int C) { return (T + C - 1) / C; }
// Segments of ref::scan_segment_chunks(C, B H, T) chunks: one factorisation of M_c each.
__host__ __device__ inline int n_segments(int BH, int T, int C) {
  const int L = ref::scan_segment_chunks(C, BH, T);
  return (n_chunks(T, C) + L - 1) / L;
}
// A launch's segment (chunks) and segment count.
__host__ __device__ inline int segment_chunks(const GateParams& g) { return ref::scan_segment_chunks(g.C, g.B * g.H, g.T); }
__host__ __device__ inline int n_segments(const GateParams& g) { return n_segments(g.B * g.H, g.T, g.C); }
__host__ __device__ inline std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }

// Byte offsets of the gate's scratch buffers.
struct ScratchLayout {
  std::size_t m = 0, nsum = 0, u = 0, ainv = 0, status = 0, total = 0;
};
__host__ __device__ inline ScratchLayout scratch_layout(int B, int T, int H, int D, int C, bool u_separate) {
  const std::size_t bh = std::size_t(B) * H, N = std::size_t(n_chunks(T, C)), NS = std::size_t(n_segments(int(B) * H, T, C)),
                    steps = std::size_t(B) * T * H * D;
  ScratchLayout l;
  l.m = 0;
  l.nsum = l.m + align256(bh * (NS + 1) * std::size_t(packed_size(D)) * sizeof(double));
  l.u = l.nsum + align256(bh * N * D * sizeof(float));
  l.ainv = l.u + (u_separate ? align256(steps * sizeof(float)) : 0);
  l.status = l.ainv + align256(bh * NS * std::size_t(D) * D * sizeof(double));
  l.total = l.status + align256(sizeof(unsigned));
  return l;
}

struct Scratch {
  double* M;     // [B H][NS + 1][D (D + 1) / 2]: segment s - 1's Gram matrix in slot s, then (in place) M at segment s's start
  float* nsum;   // [B H][N][D]: sigma_c, then (in place) n_c
  float* u;      // [B, T, H, D] where u is not k^, else null
  double* ainv;  // [B H][NS][D][D]: A at segment s's start, M^{-1} of slot s (the per-step gate form)
  unsigned* status;  // 0, or the float bits of the largest refused condition bound (check_start_factor)
};
__device__ inline Scratch scratch_of(const GateParams& g) {
  const bool u_sep = g.u || g.u_unit_scaled;
  const ScratchLayout l = scratch_layout(g.B, g.T, g.H, g.D, g.C, u_sep);
  auto* base = static_cast<unsigned char*>(g.scratch);
  return {reinterpret_cast<double*>(base + l.m), reinterpret_cast<float*>(base + l.nsum), u_sep ? reinterpret_cast<float*>(base + l.u) : nullptr,
          reinterpret_cast<double*>(base + l.ainv), reinterpret_cast<unsigned*>(base + l.status)};
}

// Column norm of a vector spread over a group of TPG consecutive lanes (partial
// sums of squares s of x and t of x 2^-64, each lane's elements in order, then a
// butterfly): sqrt(s), or where s overflows sqrt(t) 2^64, as ref::col_norm.
// Every lane of the warp calls it.
template <int TPG, class F>
__device__ __forceinline__ F group_norm(F s, F t) {
#pragma unroll
  for (int m = TPG / 2; m >= 1; m /= 2) {
    s += __shfl_xor_sync(0xffffffffu, s, m);
    t += __shfl_xor_sync(0xffffffffu, t, m);
  }
  return isinf(s) ? core::vsqrt(t) * F(0x1p64) : core::vsqrt(s);
}
// One entry's terms of the two sums of squares: of x (s) and of x 2^-64 (t).
template <class F>
__device__ __forceinline__ void add_norm_terms(F x, F& s, F& t) {
  const F w = x * F(0x1p-64);
  s = core::vfma(x, x, s);
  t = core::vfma(w, w, t);
}
template <int TPG, class F, int PER>
__device__ __forceinline__ F col_norm(const F (&x)[PER]) {
  F s = F(0), t = F(0);
#pragma unroll
  for (int m = 0; m < PER; ++m) add_norm_terms(x[m], s, t);
  return group_norm<TPG, F>(s, t);
}

// ---------------------------------------------------------------------------
// scan_prep: features, normaliser chunk sums, the segments' Gram matrices. Block
// (segment, head bh), the segment's chunks in order; while one chunk is worked
// on, the next one's raw rows of q, k (and u) travel to shared memory by
// cp.async (two stages), so no global load latency sits on the block's chain.
// Features: NT / C lanes per step, lane s holding the step's entries d = s + TPS m
// (this assignment fixes the order of the norm's sums). The Gram matrix U^T U of
// the segment on the FP64 tensor cores: each 8 x 8 tile of its lower triangle
// one DMMA chain over k-blocks of four steps, ascending through the segment,
// i.e. every entry's sequential fma chain over the steps in order (dmma_tile.cuh;
// rows past the stream's end are zeros, and fma(0, 0, acc) = acc: the accumulator
// starts at +0 and never becomes -0).
// Inputs (q, k, u) must be 16-byte aligned (cudaMalloc's are); launch_scan refuses others (require_aligned_inputs).
template <class Prec, int D, int C>
struct PrepPlan {
  using In = typename Prec::In;
  static constexpr int TPS = NT / C, PER = D / TPS;
  static constexpr int PIECES = D * int(sizeof(In)) / 16;  // 16-byte pieces per raw row
  // Raw rows padded so that the TPS lanes of the 32 / TPS steps of a warp's load hit distinct banks
  // (row stride = 4 or 8 banks mod 32, a multiple of 16 bytes for cp.async).
  static constexpr int PAD = TPS * int(sizeof(In)) > 16 ? TPS * int(sizeof(In)) : 16;
  static constexpr int ROWB = D * int(sizeof(In)) + PAD, TILE = C * ROWB;  // bytes: one raw row, one chunk's rows of q, k or u
  // phi(k) (for sigma) and phi(q) as floats, stride = 8 or 24 (mod 32): the four steps of a feature
  // store hit distinct banks. u (for the Gram) as doubles, converted once where it is stored rather
  // than in every DMMA fragment that reads it (each entry is read by up to D/8 tiles' fragments: ~10
  // quarter-rate conversions a lane and k-block at D = 64, against 8 a lane and chunk), stride = 4
  // (mod 16) doubles: each half-warp's fragment load (4 steps x 4 consecutive doubles) in distinct banks.
  // The gate prep 2% faster (H100, reports/gpu/2026-12-07-h100-pass-kt-ahead-gram-double.md), the same bits;
  // shared memory still allows four blocks an SM for bf16 inputs with u = k^ (three, not four, with a given u).
  static constexpr int LDU = D + 8, LDUD = D + 4;
  static constexpr int TD = D / 8, TILES = TD * (TD + 1) / 2, TPW = (TILES + NW - 1) / NW;  // Gram tiles, per warp
  static int bytes(bool u_loaded) {
    return 2 * (u_loaded ? 3 : 2) * TILE + C * LDUD * int(sizeof(double)) + 2 * C * LDU * int(sizeof(float));
  }
  static_assert(NT % C == 0 && D % TPS == 0 && D * int(sizeof(In)) % 16 == 0 && C % 4 == 0 && (D & (D - 1)) == 0,
                "prep tiles; the den loop's (j + t) mod D by a mask");
};

// Four blocks per SM at C = 32 (at most 64 registers: 512 blocks at B H = 16, T = 16,384 are then one
// wave on 132 SMs); two at C = 64, whose 16 entries per lane and twice the tiles need more registers.
template <class Prec, int D, int C>
__global__ void __launch_bounds__(NT, C == 32 ? 4 : 2) prep_kernel(GateParams g) {
  using Pl = PrepPlan<Prec, D, C>;
  using In = typename Pl::In;
  constexpr int TPS = Pl::TPS, PER = Pl::PER, LDU = Pl::LDU, LDUD = Pl::LDUD, TPW = Pl::TPW, P = packed_size(D);
  const int SEG = segment_chunks(g);
  extern __shared__ __align__(16) unsigned char prep_smem[];
  const Scratch sc = scratch_of(g);
  const int seg = blockIdx.x, bh = blockIdx.y, b = bh / g.H, h = bh % g.H, N = n_chunks(g.T, C), NS = n_segments(g);
  const int tid = threadIdx.x, tl = tid / TPS, s = tid % TPS, warp = tid / 32, lane = tid % 32;
  const int nraw = g.u ? 3 : 2;  // raw tiles per stage: q, k (and u where given)
  double* su = reinterpret_cast<double*>(prep_smem + 2 * nraw * Pl::TILE);  // [C][LDUD] u of the chunk, 0 past len
  float* sphik = reinterpret_cast<float*>(su + C * LDUD);                  // [C][LDU] phi(k) of the chunk
  float* sphiq = sphik + C * LDU;                                         // [C][LDU] phi(q) of the chunk (the den split)
  const int c_begin = seg * SEG, c_end = min(N, c_begin + SEG);
  auto row_of = [&](int t) { return ((std::size_t(b) * g.T + t) * g.H + h) * D; };  // element offset of step t

  // Issue chunk c's rows of q, k (u) into stage c & 1 (rows past the stream's end are not fetched nor read).
  auto fetch = [&](int c) {
    const int t0 = c * C, len = min(C, g.T - t0);
    unsigned char* stage = prep_smem + (c & 1) * nraw * Pl::TILE;
#pragma unroll
    for (int w = 0; w < 3; ++w) {  // unrolled: the source pointer stays in a register
      if (w >= nraw) break;
      const auto* src = static_cast<const unsigned char*>(w == 0 ? g.q : w == 1 ? g.k : g.u);
      for (int e = tid; e < len * Pl::PIECES; e += NT) {
        const int t = e / Pl::PIECES, x = e % Pl::PIECES;
        const unsigned char* gp = src + row_of(t0 + t) * sizeof(In) + 16 * x;
        const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(stage + w * Pl::TILE + t * Pl::ROWB + 16 * x));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(gp) : "memory");
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };

  // Warp w's Gram tiles: the lower-triangle tiles (mt, nt), nt <= mt, of linear index w + NW j, as
  // 8 mt + 256 (8 nt) (one register each); -1 past the last tile.
  int tile[TPW];
#pragma unroll
  for (int j = 0; j < TPW; ++j) {
    int i = warp + NW * j, mt = 0;
    while (i > mt) i -= ++mt;  // row mt holds the tiles i = mt (mt + 1) / 2 ... + mt
    tile[j] = warp + NW * j < Pl::TILES ? 8 * mt + 256 * 8 * i : -1;
  }
  double acc[TPW][2] = {};

  if (c_begin < c_end) fetch(c_begin);
#pragma unroll 1
  for (int c = c_begin; c < c_end; ++c) {
    const int t0 = c * C, len = min(C, g.T - t0);
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // chunk c's raw rows landed for all; chunk c - 1's readers of su, sphik and of stage (c + 1) & 1 are done
    if (c + 1 < c_end) fetch(c + 1);
    const unsigned char* stage = prep_smem + (c & 1) * nraw * Pl::TILE;
    const In* rq = reinterpret_cast<const In*>(stage + tl * Pl::ROWB);
    const In* rk = reinterpret_cast<const In*>(stage + Pl::TILE + tl * Pl::ROWB);
    const In* ru = reinterpret_cast<const In*>(stage + 2 * Pl::TILE + tl * Pl::ROWB);
    const bool in = tl < len;
    const std::size_t o = row_of(t0 + (in ? tl : 0));
    float pk[PER], uu[PER];
#pragma unroll
    for (int m = 0; m < PER; ++m) {
      const int d = s + TPS * m;
      pk[m] = in ? core::phi(Prec::load(rk[d]), g.elu1) : 0.0f;
      const float pq = in ? core::phi(Prec::load(rq[d]), g.elu1) : 0.0f;
      if (in) g.out.phiq[o + d] = pq;
      sphik[tl * LDU + d] = pk[m];
      sphiq[tl * LDU + d] = pq;
    }
    // k^ = phi(k) / ||phi(k)|| (as is under --normalize none|gate).
    const float nk = g.normalize_key ? col_norm<TPS>(pk) : 1.0f;
#pragma unroll
    for (int m = 0; m < PER; ++m) {
      const int d = s + TPS * m;
      const float kh = in ? (g.normalize_key ? pk[m] / nk : pk[m]) : 0.0f;
      if (in) g.out.khat[o + d] = kh;
      uu[m] = g.u ? (in ? Prec::load(ru[d]) : 0.0f) : kh;
    }
    if (g.u_unit_scaled) {
      const float nu = col_norm<TPS>(uu), sqrt_d = core::vsqrt(float(D));
#pragma unroll
      for (int m = 0; m < PER; ++m) uu[m] = in ? (uu[m] / nu) / sqrt_d : 0.0f;
    }
#pragma unroll
    for (int m = 0; m < PER; ++m) {
      const int d = s + TPS * m;
      if (in && sc.u) sc.u[o + d] = uu[m];
      su[tl * LDUD + d] = static_cast<double>(uu[m]);
    }
    __syncthreads();  // su, sphik complete
    // sigma_c = sum of the chunk's phi(k), steps in order (the last warps: they hold the fewest Gram tiles).
    // The den split: the running sum L_t,d times phi(q_t)_d over sphik's entry; after the Gram tiles and a
    // block barrier, thread t < len sums step t's products over d (from d = t on, wrapping: lanes in distinct
    // banks), the in-chunk part of the ratio denominator, into g.out.den.
    if (tid >= NT - D) {
      const int d = tid - (NT - D);
      float sum = 0.0f;
#pragma unroll 8
      for (int t = 0; t < len; ++t) {
        sum = sum + sphik[t * LDU + d];
        sphik[t * LDU + d] = sum * sphiq[t * LDU + d];
      }
      sc.nsum[(std::size_t(bh) * N + c) * D + d] = sum;
    }
    // The Gram tiles, k-blocks of four steps ascending (a partial last k-block: zero rows).
    const int g8 = lane / 4, q4 = lane % 4;
#pragma unroll 2
    for (int kb = 0; kb < (len + 3) / 4; ++kb) {
      const double* rowp = su + (4 * kb + q4) * LDUD + g8;
#pragma unroll
      for (int j = 0; j < TPW; ++j)
        if (tile[j] >= 0) dmma_884(acc[j], rowp[tile[j] & 255], rowp[tile[j] >> 8]);
    }
    if (g.out.den) {
      __syncthreads();  // the products L_t,d phi(q_t)_d complete (the next chunk's fill follows the loop's barrier)
      for (int t = tid; t < len; t += NT) {
        float acc_den = 0.0f;
#pragma unroll 8
        for (int j = 0; j < D; ++j) acc_den = acc_den + sphik[t * LDU + ((j + t) & (D - 1))];
        g.out.den[(std::size_t(b) * g.T + t0 + t) * g.H + h] = acc_den;
      }
    }
  }
  // The segment's Gram matrix (packed) into slot seg + 1; segment 0 also slot 0 = lambda0 I. Lane
  // (g8, q4) of tile (mt, nt) holds entries (8 mt + g8, 8 nt + 2 q4 + e).
  double* slots = sc.M + std::size_t(bh) * (NS + 1) * P;
#pragma unroll
  for (int j = 0; j < TPW; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int r = (tile[j] & 255) + lane / 4, cc = (tile[j] >> 8) + 2 * (lane % 4) + e;
      if (tile[j] >= 0 && cc <= r) slots[std::size_t(seg + 1) * P + packed_index(r, cc)] = acc[j][e];
    }
  if (seg == 0)
    for (int e = tid; e < D * D; e += NT) {
      const int r = e / D, cc = e % D;
      if (cc <= r) slots[packed_index(r, cc)] = r == cc ? g.lambda0 : 0.0;
    }
}

// ---------------------------------------------------------------------------
// scan_prefix: the first m_blocks blocks scan M over the segments (one thread per
// (head, packed entry)), the rest n over the chunks (one thread per (head, d));
// each thread's sums in order. The loads of the next 16 (32) slots are issued
// before the stores of the current ones, so their latency is paid once per batch,
// not once per slot (the n scan walks 512 chunks at T = 16,384, C = 32).
template <int BATCH, class V>
__device__ __forceinline__ void scan_in_place(V* base, std::size_t stride, int n, bool exclusive) {
  V acc = V(0);
  V cur[BATCH], nxt[BATCH];
  auto load = [&](V(&v)[BATCH], int c0) {
#pragma unroll
    for (int x = 0; x < BATCH; ++x) v[x] = c0 + x < n ? base[std::size_t(c0 + x) * stride] : V(0);
  };
  load(cur, 0);
  for (int c0 = 0; c0 < n; c0 += BATCH) {
    const bool more = c0 + BATCH < n;
    if (more) load(nxt, c0 + BATCH);  // distinct slots from the stores below
#pragma unroll
    for (int x = 0; x < BATCH; ++x)
      if (c0 + x < n) {
        const V v = cur[x];
        if (exclusive) base[std::size_t(c0 + x) * stride] = acc;
        acc = (c0 + x == 0 && !exclusive) ? v : acc + v;  // inclusive: slot 0 as is (0 + v would turn -0 into +0)
        if (!exclusive) base[std::size_t(c0 + x) * stride] = acc;
      }
    if (more)
#pragma unroll
      for (int x = 0; x < BATCH; ++x) cur[x] = nxt[x];
  }
}

// n_c = sum_{j<c} sigma_j in place of sigma_c, in order, for (head bh, entry d); BATCH loads in flight.
template <int BATCH>
__device__ __forceinline__ void n_scan(const GateParams& g, const Scratch& sc, int bh, int d) {
  const int N = n_chunks(g.T, g.C), D = g.D;
  scan_in_place<BATCH>(sc.nsum + std::size_t(bh) * N * D + d, D, N, true);
}

__global__ void __launch_bounds__(NT) prefix_kernel(GateParams g, int m_blocks) {
  const Scratch sc = scratch_of(g);
  const int NS = n_segments(g), D = g.D, P = packed_size(D), BH = g.B * g.H;
  if (blockIdx.x == 0 && threadIdx.x == 0) *sc.status = 0u;  // before the kernels that factorise M (stream order)
  if (int(blockIdx.x) < m_blocks) {
    // Slot s = slot 0 + ... + slot s (slot 0 = lambda0 I), in order.
    const int idx = blockIdx.x * NT + threadIdx.x;
    if (idx >= BH * P) return;
    scan_in_place<16>(sc.M + std::size_t(idx / P) * (NS + 1) * P + idx % P, P, NS + 1, false);
  } else {
    const int idx = (blockIdx.x - m_blocks) * NT + threadIdx.x;
    if (idx >= BH * D) return;
    n_scan<32>(g, sc, idx / D, idx % D);
  }
}

// ---------------------------------------------------------------------------
// Block-level pieces of the gate (double).

// 1 / p for a column of ldl_block, by a shorter dependent sequence than the IEEE division's: rcp.approx
// (relative error e0, a few 2^-20 or less) and two Newton steps (error e0^2, then e0^4 < 2^-70 for
// e0 < 2^-17.5), then the last fma's one rounding: 1 / p to within 2^-53 (1 + 2^-16) relative. So
// l_rj = a_rj * (1 / p) carries one rounding more than the division a_rj / p: |l - a / p| <= about
// 2^-52 |a / p| instead of 2^-53, a relative change of 2^-53 per entry of L, far below the float rounding
// of the gates (2^-24, docs/CHUNKED.md 8.5): the gates' bits change, the error model does not.
// A pivot outside [2^-1000, 2^1000] (zero, subnormal, huge, inf, NaN) takes the IEEE division, so that
// rcp.approx's flush to zero and the Newton steps' overflow never act (the test is uniform: one pivot).
__device__ __forceinline__ bool pivot_in_range(double p) {
  const double ap = fabs(p);
  return ap >= 0x1p-1000 && ap <= 0x1p1000;
}
// pivot_recip's in-range sequence with no branch (the steps kernel's look-ahead keeps its step in one
// basic block, so that the compiler can interleave it with the sweep); `in_range` says whether it holds,
// and the caller takes 1.0 / p where it does not, as pivot_recip does.
__device__ __forceinline__ double pivot_recip_in_range(double p, bool& in_range) {
  in_range = pivot_in_range(p);
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
  double e = core::vfma(-p, y, 1.0);
  y = core::vfma(y, e, y);
  e = core::vfma(-p, y, 1.0);
  return core::vfma(y, e, y);
}
__device__ __forceinline__ double pivot_recip(double p) {
  if (!pivot_in_range(p)) return 1.0 / p;
  bool in_range;
  return pivot_recip_in_range(p, in_range);
}

// Steps [j0, j1) of ldl_block, in which the columns below MLO's are finished:
// column s + TPR m of a thread is dead for m < MLO, so only m >= MLO is visited,
// and a row r <= j has nothing left to update.
template <int N, int MLO, class Pivot>
__device__ __forceinline__ void ldl_steps(double (&a)[N / (NT / N)], int j0, int j1, int r, int s, double* Lout, int ldl, double* piv,
                                          Pivot pivot, double* colbuf) {
  constexpr int TPR = NT / N, CPT = N / TPR;
#pragma unroll 1
  for (int j = j0; j < j1; ++j) {
    const double* cb = colbuf + (j & 1) * N;
    const double pj = pivot(j, cb[j]);
    if (r == j && s == 0) piv[j] = pj;
    if (r > j) {
      const double lr = cb[r] * pivot_recip(pj);  // one rounding more than cb[r] / pj: see pivot_recip
      double* nb = colbuf + ((j + 1) & 1) * N;
#pragma unroll
      for (int m = MLO; m < CPT; ++m) {
        const int cc = s + TPR * m;
        if (cc == j) Lout[r * ldl + j] = lr;
        if (cc > j && cc <= r) a[m] = core::vfma(-lr, cb[cc], a[m]);
        if (cc == j + 1) nb[r] = a[m];  // column j + 1 for the next step (r >= j + 1 here)
      }
    }
    __syncthreads();
  }
}

// L D L^T of the symmetric n x n matrix (N = n) whose lower triangle load(r, c)
// gives (c <= r): right-looking, the trailing matrix in registers (thread
// (r = tid / TPR, s = tid % TPR) holds row r's columns s + TPR m), column j
// shared through colbuf (double-buffered). Pivot j is pivot(j, a_jj), a_jj the
// diagonal entry after the steps < j (for M: as is, the square-root-free
// Cholesky; for I + G: core::sm_delta, the Sherman-Morrison denominators, as
// ref::ldl_with_floor). L(r, j) = a_rj * (1 / pivot_j) (pivot_recip) into Lout[r ldl + j] (r > j),
// the pivots into piv. One barrier per column, the last at the end; the steps
// run in four quarters that skip the finished columns (ldl_steps). Lout may be
// the loaded matrix (every entry is read before the first barrier).
template <int N, class Load, class Pivot>
__device__ void ldl_block(Load load, double* Lout, int ldl, double* piv, Pivot pivot, double* colbuf) {
  constexpr int TPR = NT / N, CPT = N / TPR;
  static_assert(NT % N == 0 && TPR <= 32 && N % 4 == 0, "ldl tiles");
  const int r = threadIdx.x / TPR, s = threadIdx.x % TPR;
  double a[CPT];
#pragma unroll
  for (int m = 0; m < CPT; ++m) {
    const int cc = s + TPR * m;
    a[m] = cc <= r ? load(r, cc) : 0.0;
  }
  __syncthreads();  // Lout may alias what load reads
  if (s == 0) colbuf[r] = a[0];  // column 0
  __syncthreads();
  // Quarter q runs the steps j in [q N / 4, (q + 1) N / 4): columns s + TPR m < q N / 4 are finished for m < q CPT / 4.
  ldl_steps<N, 0>(a, 0, N / 4, r, s, Lout, ldl, piv, pivot, colbuf);
  ldl_steps<N, CPT / 4>(a, N / 4, N / 2, r, s, Lout, ldl, piv, pivot, colbuf);
  ldl_steps<N, CPT / 2>(a, N / 2, 3 * N / 4, r, s, Lout, ldl, piv, pivot, colbuf);
  ldl_steps<N, 3 * CPT / 4>(a, 3 * N / 4, N, r, s, Lout, ldl, piv, pivot, colbuf);
}

// One step of a triangular elimination on a vector held by TPC lanes in
// registers (x[m] is entry s + TPC m): entry i broadcast from its lane, then
// x_r -= coef(r) x_i for the entries r that keep(r) selects. Unrolled callers
// make i a constant, so x stays in registers.
template <int TPC, int RPT, class Keep, class Coef>
__device__ __forceinline__ void eliminate(double (&x)[RPT], int i, int s, Keep keep, Coef coef) {
  const double xi = __shfl_sync(0xffffffffu, x[i / TPC], i % TPC, TPC);
#pragma unroll
  for (int m = 0; m < RPT; ++m) {
    const int r = s + TPC * m;
    if (keep(r)) x[m] = core::vfma(-coef(r), xi, x[m]);
  }
}

// One column's x <- M^{-1} x in the registers of its TPC lanes (x[m]: row s + TPC m), M = L diag(piv) L^T:
// L y = x, y /= piv, L^T z = y. The forward steps i < first are skipped (first warp-uniform): the caller
// says that x_i = 0 for i < first in every column of the warp, so those steps would compute
// x_r - L_ri * 0 = x_r exactly (L finite: a factor with a non-finite entry is refused, 8.27).
template <int D, int TPC>
__device__ __forceinline__ void solve_column(double (&x)[D / TPC], int s, const double* L, int ldl, const double* piv, int first = 0) {
#pragma unroll
  for (int i = 0; i < D - 1; ++i)
    if (i >= first) eliminate<TPC>(x, i, s, [&](int r) { return r > i; }, [&](int r) { return L[r * ldl + i]; });
#pragma unroll
  for (int m = 0; m < D / TPC; ++m) x[m] = x[m] / piv[s + TPC * m];
#pragma unroll
  for (int i = D - 1; i > 0; --i) eliminate<TPC>(x, i, s, [&](int r) { return r < i; }, [&](int r) { return L[i * ldl + r]; });
}

// X (D rows, ld ldx, columns [0, ncols)) <- M^{-1} X with M = L diag(piv) L^T
// (L unit lower, strict part in L[r ldl + c]): per column, L y = x, y /= piv,
// L^T z = y. NB columns at a time, NT / NB lanes per column holding rows
// s + TPC m in registers, x_i broadcast by shuffle: no barrier.
template <int D, int NB>
__device__ void solve_m(double* X, int ldx, int ncols, const double* L, int ldl, const double* piv) {
  constexpr int TPC = NT / NB, RPT = D / TPC;
  static_assert(NT % NB == 0 && TPC <= 32 && D % TPC == 0, "solve tiles");
  const int s = threadIdx.x % TPC;
  for (int c0 = 0; c0 < ncols; c0 += NB) {
    const int col = c0 + threadIdx.x / TPC;
    double x[RPT];
#pragma unroll
    for (int m = 0; m < RPT; ++m) x[m] = X[(s + TPC * m) * ldx + col];
    solve_column<D, TPC>(x, s, L, ldl, piv);
#pragma unroll
    for (int m = 0; m < RPT; ++m) X[(s + TPC * m) * ldx + col] = x[m];
  }
}

// M^{-1} = solve_m<D, D> on the identity, the same operations in the same order (the same bits),
// with the identity's columns formed in registers and each entry handed to sink(r D + c, x) from
// them: no D x D buffer in shared memory. Why: with it (68 KB) and 100 registers a thread,
// scan_seg_inverse ran two blocks an SM, the 512 segment starts of B H = 16, T = 16,384 in two
// waves; without it (35 KB), at most 64 registers, four an SM: one wave (until 8.35, when
// scan_seg_inverse took the block sweep; scan_final_A, the Woodbury form's, still uses this).
template <int D, class Sink>
__device__ void solve_identity(const double* L, int ldl, const double* piv, Sink sink) {
  constexpr int TPC = NT / D, RPT = D / TPC;
  static_assert(NT % D == 0 && TPC <= 32 && D % TPC == 0, "solve tiles");
  const int s = threadIdx.x % TPC, col = threadIdx.x / TPC;
  double x[RPT];
#pragma unroll
  for (int m = 0; m < RPT; ++m) x[m] = s + TPC * m == col ? 1.0 : 0.0;
  // The identity's column col has x_i = 0 for i < col: the warp's forward steps below its first column change nothing.
  solve_column<D, TPC>(x, s, L, ldl, piv, (threadIdx.x / 32) * (32 / TPC));
#pragma unroll
  for (int m = 0; m < RPT; ++m) sink((s + TPC * m) * D + col, x[m]);
}

// Z = P L^{-T} in place on X's columns [0, C) (D rows, ld ldx), L the unit lower
// factor of I + G (strict part in LG[t ldg + i]): z_t = p_t - sum_{i<t} L(t, i) z_i.
// Rows are independent: NT / D lanes per row, columns s + TPR m in registers. No barrier.
template <int D, int C>
__device__ void solve_rows_lt(double* X, int ldx, const double* LG, int ldg) {
  constexpr int TPR = NT / D, CPT = C / TPR;
  static_assert(NT % D == 0 && TPR <= 32 && C % TPR == 0, "row solve tiles");
  const int row = threadIdx.x / TPR, s = threadIdx.x % TPR;
  double z[CPT];
#pragma unroll
  for (int m = 0; m < CPT; ++m) z[m] = X[row * ldx + s + TPR * m];
#pragma unroll
  for (int i = 0; i < C - 1; ++i) eliminate<TPR>(z, i, s, [&](int t) { return t > i; }, [&](int t) { return LG[t * ldg + i]; });
#pragma unroll
  for (int m = 0; m < CPT; ++m) X[row * ldx + s + TPR * m] = z[m];
}

// The refusal of a segment start beyond double (core::start_factor_refused, docs/CHUNKED.md 8.27),
// by one warp after the L D L^T of M (packed lower triangle Mp, pivots piv, both complete): the
// bound max M_ii / min pivot (+inf where a pivot is not positive or is NaN) enters the status word
// by atomicMax on its float bits (positive floats order as their bits); the host reads it after
// the launch (run_cuda_scan) and throws.
template <int D>
__device__ void check_start_factor(const double* Mp, const double* piv, unsigned* status) {
  const int lane = threadIdx.x % 32;
  double md = 0.0, mp = __builtin_huge_val();
  for (int i = lane; i < D; i += 32) {
    md = fmax(md, Mp[packed_index(i, i)]);
    mp = piv[i] > 0.0 ? fmin(mp, piv[i]) : -1.0;  // NaN or <= 0: failed (fmin would drop a NaN)
  }
  for (int m = 16; m >= 1; m /= 2) {
    md = fmax(md, __shfl_xor_sync(0xffffffffu, md, m));
    mp = fmin(mp, __shfl_xor_sync(0xffffffffu, mp, m));
  }
  const double bound = core::factor_condition_bound(md, mp);
  if (lane == 0 && core::start_factor_refused(bound, D, start_factor_unit_roundoff())) atomicMax(status, __float_as_uint(float(bound)));
}

#include "scan_sweep_inverse.cuh"  // scan_seg_inverse's block sweep (docs/CHUNKED.md 8.35, 8.37)

// The gate's staged loads: thread tid owns the pieces of Q floats at e = Q (tid + NT p), p < N, of a
// chunk's C x D floats (step e / D, entries e % D on), so that it reads only what its own cp.async
// copies wrote (cp.async.wait_all makes them visible to it).
template <int D, int C>
struct StagePieces {
  static constexpr int PT = C * D / NT, Q = PT < 4 ? PT : 4, N = PT / Q;
  static_assert(C * D % NT == 0 && PT % Q == 0 && D % Q == 0, "stage pieces");
};
// Fetches chunk c's k^ (and u) rows into stage ([C][D], then u's [C][D]) by cp.async, this thread's
// pieces, zeros past the stream's end; one commit group.
template <int D, int C, bool USEP>
__device__ __forceinline__ void stage_chunk(float* stage, const float* khat, const float* u, int b, int T, int H, int h, int c) {
  using SP = StagePieces<D, C>;
  const int t0 = c * C, len = min(C, T - t0);
#pragma unroll
  for (int p = 0; p < SP::N; ++p) {
    const int e = SP::Q * (threadIdx.x + NT * p), t = e / D, d = e % D;
    const std::size_t src = ((std::size_t(b) * T + t0 + (t < len ? t : 0)) * H + h) * D + d;
    const int n = t < len ? 4 * SP::Q : 0;  // bytes read; the rest of the piece is zero-filled
    auto copy = [&](float* dst, const float* from) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
                   "l"(from), "n"(4 * SP::Q), "r"(n)
                   : "memory");
    };
    copy(stage + e, khat + src);
    if constexpr (USEP) copy(stage + C * D + e, u + src);
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Shared-memory plan of the gate kernel (doubles). A union
// holds the factor of M (L, its pivots) at a segment's first chunk and, once the
// solves are done, W (u = k^; else W is X's K half), G and its pivots.
template <int D, int C, bool USEP>
struct GatePlan {
  static constexpr int R = USEP ? 2 * C : C;  // right-hand sides: [U | K], or K (u = k^: P = AK)
  // Leading dimensions = 4 (mod 16) for what the DMMA products read: a fragment's
  // 4 x 4 lanes of a half-warp then hit distinct banks (4 row + column).
  static constexpr int LDA = D + 4, LDM = D + 1, LDX = R + 4, LDW = USEP ? LDX : C + 4, LDG = C + 4;
  static constexpr int NMAX = D > C ? D : C;
  static constexpr int dA = 0, dX = dA + D * LDA, dCol = dX + D * LDX, dUnion = dCol + 2 * NMAX;
  static constexpr int dL = dUnion, dPivM = dL + D * LDM, dFactorEnd = dPivM + D;
  static constexpr int dW = dUnion, dG = USEP ? dUnion : dW + D * LDW, dPivG = dG + C * LDG, dWorkEnd = dPivG + 2 * C;  // pivots, then their reciprocals
  static constexpr int dEnd = dFactorEnd > dWorkEnd ? dFactorEnd : dWorkEnd;
  // k^, u rows as doubles (converted once per chunk: every product reads them in double).
  static constexpr int LDF = D + 4;
  static constexpr int fK = 0, fU = fK + C * LDF, fEnd = fU + (USEP ? C * LDF : 0);
  // The next chunk's k^ (and u) as floats (from sF on), fetched by cp.async while the chunk runs,
  // where the space fits and costs no block per SM (233,472 B per SM, 1 KiB reserved per block).
  static constexpr int sF = (dEnd + fEnd + 1) / 2 * 2, stage_floats = (USEP ? 2 : 1) * C * D;
  static constexpr int bytes_plain = (dEnd + fEnd) * 8, bytes_staged = sF * 8 + stage_floats * 4;
  static constexpr int per_sm(int b) { return 233472 / (b + 1024); }
  static constexpr bool STAGE = bytes_staged <= 232448 && per_sm(bytes_staged) == per_sm(bytes_plain);
  static constexpr int bytes = STAGE ? bytes_staged : bytes_plain;
  static_assert(bytes <= 232448, "gate plan exceeds 227 KiB");
  static_assert(D % 16 == 0 && R % 16 == 0 && C % 16 == 0, "8 x 8 x 4 DMMA tiles, strides 4 (mod 16)");
};

// scan_gate: the gates of one segment's chunks (block (segment, head bh)), in
// order. The first chunk: L D L^T of M_c (the segment's prefix), [P | AK] =
// M_c^{-1} [U | K] and, where the segment goes on, A_c = M_c^{-1}, all from that
// factor; a later chunk: [P | AK] = A_c [U | K] with the carried A_c. Then the
// in-chunk Woodbury form as ref::woodbury_gate, the gates, and the carry
// A_{c+1} = A_c - (Z D^{-1}) Z^T (ref::woodbury_downdate).
template <int D, int C, bool USEP>
__global__ void __launch_bounds__(NT, C == 32 ? 2 : 1) gate_kernel(GateParams g) {
  using Pl = GatePlan<D, C, USEP>;
  constexpr int TPS = NT / C, PER = D / TPS, LDA = Pl::LDA, LDX = Pl::LDX, LDG = Pl::LDG, LDW = Pl::LDW, LDF = Pl::LDF,
                P = packed_size(D);
  const int SEG = segment_chunks(g);
  extern __shared__ double smem[];
  double* A = smem + Pl::dA;  // the carried A_c
  double* X = smem + Pl::dX;
  double* colbuf = smem + Pl::dCol;
  double* L = smem + Pl::dL;
  double* pivM = smem + Pl::dPivM;
  double* W = USEP ? X + C : smem + Pl::dW;
  double* G = smem + Pl::dG;
  double* pivG = smem + Pl::dPivG;
  double* rpivG = pivG + C;  // 1 / pivG[i], once per chunk for Y's and the carry's D^{-1}
  double* Kf = smem + Pl::dEnd + Pl::fK;  // [C][LDF] k^ of the chunk's steps, 0 past len
  double* Uf = USEP ? smem + Pl::dEnd + Pl::fU : Kf;
  float* stage = reinterpret_cast<float*>(smem + Pl::sF);  // [USEP ? 2 : 1][C][D] where Pl::STAGE

  const Scratch sc = scratch_of(g);
  const int seg = blockIdx.x, bh = blockIdx.y, b = bh / g.H, h = bh % g.H, N = n_chunks(g.T, C), NS = n_segments(g);
  const int tid = threadIdx.x;
  const int c_begin = seg * SEG, c_end = min(N, c_begin + SEG);
  // Column col of [U | K] (u = k^: K), step-major floats.
  auto rhs = [&](int d, int col) { return USEP ? (col < C ? Uf[col * LDF + d] : Kf[(col - C) * LDF + d]) : Kf[col * LDF + d]; };
#pragma unroll 1
  for (int c = c_begin; c < c_end; ++c) {
    const int t0 = c * C, len = min(C, g.T - t0);
    const bool first = c == c_begin, carry = c + 1 < c_end;  // carry: a later chunk of this segment follows
    auto row_of = [&](int t) { return ((std::size_t(b) * g.T + t0 + t) * g.H + h) * D; };

    // The chunk's k^ (and u), in double. Staged: from the floats this thread's cp.async fetched while
    // the previous chunk ran (its own pieces); the next chunk's fetch into the same pieces is issued
    // after the barrier below, so it cannot overtake these reads. Else every load issued before the
    // first store, so that their latencies overlap.
    if constexpr (Pl::STAGE) {
      using SP = StagePieces<D, C>;
      if (first) stage_chunk<D, C, USEP>(stage, g.out.khat, sc.u, b, g.T, g.H, h, c);
      asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
      for (int p = 0; p < SP::N; ++p) {
        const int e = SP::Q * (tid + NT * p), t = e / D, d = e % D;
#pragma unroll
        for (int i = 0; i < SP::Q; ++i) {
          Kf[t * LDF + d + i] = stage[e + i];
          if constexpr (USEP) Uf[t * LDF + d + i] = stage[C * D + e + i];
        }
      }
    } else {
      constexpr int PT = C * D / NT;
      static_assert(C * D % NT == 0, "k^ tiles");
      float kv[PT], uv[USEP ? PT : 1];
#pragma unroll
      for (int j = 0; j < PT; ++j) {
        const int e = tid + NT * j, t = e / D, d = e % D;
        kv[j] = t < len ? g.out.khat[row_of(t) + d] : 0.0f;
        if constexpr (USEP) uv[j] = t < len ? sc.u[row_of(t) + d] : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < PT; ++j) {
        const int e = tid + NT * j, t = e / D, d = e % D;
        Kf[t * LDF + d] = kv[j];
        if constexpr (USEP) Uf[t * LDF + d] = uv[j];
      }
    }
    __syncthreads();
    if constexpr (Pl::STAGE)
      if (c + 1 < c_end) stage_chunk<D, C, USEP>(stage, g.out.khat, sc.u, b, g.T, g.H, h, c + 1);
    if (first) {
      // M_c = L D L^T (the loads come from global memory; the barriers inside also cover X and A), then
      // [P | AK] = M_c^{-1} [U | K] (u = k^: P = AK, one solve) and A_c = M_c^{-1} I where carried.
      for (int e = tid; e < D * Pl::R; e += NT) X[(e % D) * LDX + e / D] = rhs(e % D, e / D);
      if (carry)
        for (int e = tid; e < D * D; e += NT) A[(e / D) * LDA + e % D] = e / D == e % D ? 1.0 : 0.0;
      const double* Mc = sc.M + (std::size_t(bh) * (NS + 1) + seg) * P;
      ldl_block<D>([&](int r, int cc) { return Mc[packed_index(r, cc)]; }, L, Pl::LDM, pivM, [](int, double x) { return x; }, colbuf);
      if (tid < 32) check_start_factor<D>(Mc, pivM, sc.status);
      solve_m<D, (Pl::R < 64 ? Pl::R : 64)>(X, LDX, Pl::R, L, Pl::LDM, pivM);
      if (carry) solve_m<D, D>(A, LDA, D, L, Pl::LDM, pivM);
    } else {
      // [P | AK] = A_c [U | K] (DMMA).
      dmma_product<D, Pl::R, D, NW>([&](int m, int e) { return A[m * LDA + e]; }, rhs,
                                    [&](int m, int n, double v) { X[m * LDX + n] = v; });
    }
    __syncthreads();  // X complete; the factor of M (the union) no longer read
    if (g.stop_after == 1) continue;

    // W = AK (a copy when P = AK), G = U^T P (lower triangle).
    if constexpr (!USEP)
      for (int e = tid; e < D * C; e += NT) W[(e / C) * LDW + e % C] = X[(e / C) * LDX + e % C];
    // The C x C products G and Y (DMMA) are computed over the full square; the unused triangle is not stored.
    dmma_product<C, C, D, NW>([&](int i, int d) { return Uf[i * LDF + d]; }, [&](int d, int j) { return X[d * LDX + j]; },
                              [&](int i, int j, double v) {
                                if (j <= i) G[i * LDG + j] = v;
                              });
    __syncthreads();
    if (g.stop_after == 2) continue;
    // I + G = L D L^T, pivots through sm_delta (the floor), 1 past len (zero padding).
    const double floor = g.delta_floor;
    ldl_block<C>([&](int r, int cc) { return G[r * LDG + cc]; }, G, LDG, pivG,
                 [len, floor](int j, double x) { return j < len ? core::sm_delta(x, floor) : 1.0; }, colbuf);
    if (g.stop_after == 3) continue;
    // Z = P L^{-T} (in place of P). Beside it, 1 / D_i for Y and the carry: their entries become products
    // with it (one rounding more than the division, a relative 2^-53, as pivot_recip's multipliers: far
    // below the gates' float rounding, docs/CHUNKED.md 8.5) instead of D x C and C x C / 2 IEEE divisions.
    if (tid < C) rpivG[tid] = 1.0 / pivG[tid];
    solve_rows_lt<D, C>(X, LDX, G, LDG);
    __syncthreads();
    if (g.stop_after == 4) continue;
    // Y(i, t) = (z_i . k^_t) / D_i for i <= t, in G's upper triangle (L's strict lower part is no longer read).
    dmma_product<C, C, D, NW>([&](int i, int d) { return X[d * LDX + i]; }, [&](int d, int t) { return Kf[t * LDF + d]; },
                              [&](int i, int t, double v) {
                                if (t >= i) G[i * LDG + t] = v * rpivG[i];
                              });
    __syncthreads();
    if (g.stop_after == 5) continue;
    // W(:, t) -= sum_{i<=t} z_i Y(i, t): causal (ref::ChunkStructure::masked_product: term i enters column t
    // only for i <= t, so a later step never reaches an earlier gate). DMMA over the k-blocks below column
    // tile nt (i < 8 nt), then the terms 8 nt <= i <= t in order, by fma (a loop of t % 8 + 1 terms, not
    // eight predicated ones: the same operations).
    dmma_product<D, C, C, NW>(
        [&](int d, int i) { return X[d * LDX + i]; }, [&](int i, int t) { return G[i * LDG + t]; }, [](int nt) { return 2 * nt; },
        [&](int d, int t, double v) {
          for (int i = t & ~7; i <= t; ++i) v = core::vfma(X[d * LDX + i], G[i * LDG + t], v);
          if (t < len) W[d * LDW + t] -= v;
        });
    // For the carry: (Z D^{-1})^T into k^'s space (the products that read k^ are done; C rows of LDF >= D).
    if (carry && g.stop_after == 0)
      for (int e = tid; e < D * C; e += NT) {
        const int r = e % D, i = e / D;
        Kf[i * LDF + r] = X[r * LDX + i] * rpivG[i];
      }
    __syncthreads();
    if (g.stop_after == 6) continue;
    // a^_t = w_t / ||w_t|| (or w_t), rounded to float once.
    {
      const int t = tid / TPS, s = tid % TPS;
      double w[PER];
#pragma unroll
      for (int m = 0; m < PER; ++m) w[m] = t < len ? W[(s + TPS * m) * LDW + t] : 0.0;
      const double nw = g.normalize_gate ? col_norm<TPS>(w) : 1.0;
      if (t < len) {
        float* a = g.out.gate + row_of(t);
#pragma unroll
        for (int m = 0; m < PER; ++m) a[s + TPS * m] = float(g.normalize_gate ? w[m] / nw : w[m]);
      }
    }
    if (g.stop_after == 7 || !carry) continue;
    // The carry A_{c+1} = A_c - (Z D^{-1}) Z^T: the rank-C update (the chunk is full: a later chunk
    // follows) by DMMA, Z D^{-1} from the W phase (no barrier needed after a^: it reads W only).
    dmma_product<D, D, C, NW>([&](int r, int i) { return Kf[i * LDF + r]; }, [&](int i, int cc) { return X[cc * LDX + i]; },
                              [&](int r, int cc, double v) { A[r * LDA + cc] -= v; });
    __syncthreads();  // the next chunk rewrites k^'s space; its first barrier orders these writes of A before its product
  }
}

// M^{-1} of slot `slot` of head bh's M buffer: L D L^T, then the solves with I; sink(e, x) takes entry e = r D + c.
template <int D, class Sink>
__device__ void inverse_of_slot(const GateParams& g, int bh, int slot, double* smem, Sink sink) {
  constexpr int LDM = D + 1, P = packed_size(D);
  double* L = smem;
  double* piv = L + D * LDM;
  double* colbuf = piv + D;
  const Scratch sc = scratch_of(g);
  const int NS = n_segments(g);
  const double* Ms = sc.M + (std::size_t(bh) * (NS + 1) + slot) * P;
  ldl_block<D>([&](int r, int cc) { return Ms[packed_index(r, cc)]; }, L, LDM, piv, [](int, double x) { return x; }, colbuf);
  if (threadIdx.x < 32) check_start_factor<D>(Ms, piv, sc.status);
  solve_identity<D>(L, LDM, piv, sink);
}
// L, the pivots and the column buffer: no D x D buffer for X (solve_identity).
template <int D>
constexpr int inverse_bytes() {
  return (D * (D + 1) + 3 * D) * 8;
}

// scan_final_A: A = M_N^{-1} (block per head), rounded to float.
template <int D>
__global__ void __launch_bounds__(NT) final_a_kernel(GateParams g) {
  extern __shared__ double smem[];
  const int bh = blockIdx.x;
  inverse_of_slot<D>(g, bh, n_segments(g), smem, [&](int e, double x) { g.A[std::size_t(bh) * D * D + e] = float(x); });
}

// The n scan of head bh (scan_prefix's second part) by a whole scan_seg_inverse block: n_c = sum_{j<c} sigma_j in
// place, lane d's chain in order as n_scan's (the same bits), the sigma rows staged NSC chunks at a time in shared
// memory by cp.async, the next tile's copies in flight while the lanes sum this one. Why: n_scan<8>'s chain of
// 512 / 8 load round trips at T = 16,384 (2,048 / 8 at 65,536) bounded scan_seg_inverse once the inverses took
// ~40 us (docs/CHUNKED.md 8.35); a tile costs one round trip. stage: 2 NSC D floats.
template <int D, int NSC>
__device__ void n_scan_staged(const GateParams& g, const Scratch& sc, int bh, float* stage) {
  static_assert(NSC * D % 4 == 0, "16-byte pieces");
  const int N = n_chunks(g.T, g.C), tiles = (N + NSC - 1) / NSC;
  float* base = sc.nsum + std::size_t(bh) * N * D;  // 16-byte aligned: scratch_layout's 256-byte offsets, D % 4 == 0
  auto fetch = [&](int tile) {
    const int c0 = tile * NSC, pieces = min(NSC, N - c0) * D / 4;
    float* buf = stage + (tile & 1) * NSC * D;
    for (int e = threadIdx.x; e < pieces; e += blockDim.x) __pipeline_memcpy_async(buf + 4 * e, base + std::size_t(c0) * D + 4 * e, 16);
    __pipeline_commit();
  };
  fetch(0);
  float acc = 0.0f;
#pragma unroll 1
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      fetch(t + 1);  // the other buffer: free since the barrier that ended tile t - 1
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // tile t's copies visible to every lane
    const float* buf = stage + (t & 1) * NSC * D;
    const int c0 = t * NSC, nc = min(NSC, N - c0);
    if (threadIdx.x < D)
      for (int x = 0; x < nc; ++x) {
        const float v = buf[x * D + threadIdx.x];
        base[std::size_t(c0 + x) * D + threadIdx.x] = acc;  // exclusive: n_c, then acc + sigma_c
        acc = acc + v;
      }
    __syncthreads();  // this buffer free for tile t + 2
  }
}

// scan_seg_inverse: A at every segment's start, M^{-1} of its slot, in double, by the block sweep
// (scan_sweep_inverse.cuh), a warp per (segment, head), two a block; and the n scan of each head (only the
// readout reads n_c since the den split, so it runs beside the inverses, not before them). The grid's first
// B H blocks (linear order, dispatched first) are the n scans, so that their chains start in the first wave at
// every shape. Four blocks (eight warps) an SM: 54 KB of shared memory a block at D = 64.
template <int D>
__global__ void __launch_bounds__(NTI, 4) seg_inverse_kernel(GateParams g) {
  extern __shared__ double smem[];
  const int NS = n_segments(g), BH = g.B * g.H;
  const Scratch sc = scratch_of(g);
  if (int(blockIdx.x) < BH) {
    constexpr int NSC = SweepPlan<D>::bytes / (2 * D * 4);  // two tiles of the sigma rows in the inverses' shared memory
    n_scan_staged<D, NSC>(g, sc, blockIdx.x, reinterpret_cast<float*>(smem));
    return;
  }
  const int warp = threadIdx.x / 32, inv = (int(blockIdx.x) - BH) * (NTI / 32) + warp;
  if (inv >= BH * NS) return;  // the last block's second warp where B H NS is odd (no block barrier follows)
  const int seg = inv % NS, bh = inv / NS;
  const double* Ms = sc.M + (std::size_t(bh) * (NS + 1) + seg) * packed_size(D);
  double* W = smem + warp * SweepPlan<D>::warp_doubles;
  double* piv = W + SweepPlan<D>::warp_doubles - D;
  sweep_inverse_warp<D>(Ms, W, piv, sc.ainv + (std::size_t(bh) * NS + seg) * D * D);
  check_start_factor<D>(Ms, piv, sc.status);
}

// ---------------------------------------------------------------------------
// scan_steps: the gates of one segment (block (segment, head bh)) by the
// recurrence's own Sherman-Morrison step in double from the segment's A
// (ref::ScanGateForm::per_step, docs/CHUNKED.md 8.16). A lives in registers: a
// thread holds RP rows x CP consecutive columns, the CG = D / CP threads of a
// row group are consecutive lanes of one warp. Per step:
//   z_r = (A u)_r: each thread's CP columns by fma from zero in ascending order,
//       then the butterfly over the CG lanes (every lane gets the same bits); x = A k^
//       likewise where u is not k^;
//   the z exchange: the row group's first lane writes z_r to shared memory
//       (double-buffered by step parity) and its rows' share of u . z (and
//       k^ . z), sum_rr u_r z_r by fma in row order, one barrier;
//   u . z (and k^ . z): lane cg of every row group adds the shares of row groups
//       cg PG .. cg PG + PG - 1 (PG = D / RP / CG) by a pairwise tree, then the
//       butterfly over the CG lanes (every lane the same bits);
//   delta = sm_delta(u . z), g_r = z_r (1 / delta) (pivot_recip),
//   w_r = x_r - g_r (k^ . z) (core::sm_gate_entry; x = z and k^ . z = u . z where u = k^),
//   A_rc -= g_r z_c (core::sm_row_entry).
// The steps' inputs arrive 32 at a time (cp.async a chunk ahead, converted to
// double once); every 32 steps the gates a^ = w / ||w|| (col_norm, as scan_gate's)
// are rounded to float and written. Shared rows of u, k^ and z are padded by PAD
// doubles after every CP columns: unpadded, the CG lanes' column blocks lie a
// multiple of 128 bytes apart, in the same banks, and every 16-byte load of a
// step was a CG-way conflict (the first measurement, 2026-12-05: ~8,900 cycles a
// step where the FP64 work is ~700; docs/CHUNKED.md 8.16). The row shares of
// u . z replace each lane's own CP-column dot: the same sum in another order,
// without every row group reading u and z again. D = 64: 4 rows x 16 columns a
// thread (64 threads, 254 registers, 4 blocks an SM) with two fma chains a row:
// the kernel is latency-bound with few warps an SM (ncu, H100: FP64 pipe 30% busy,
// 0.56 eligible warps a scheduler at 2 x 16), and the larger tile gives each warp
// twice the independent fmas; 0.486 ms against 0.554 for 2 x 16 at B = 1, H = 16,
// T = 16,384 (reports/gpu/2026-12-05-h100-steps-4x16-folded-readout.md).
// -DVLA_STEPS_RP64=2 builds the 2 x 16 tile. LOOK (ref::ScanGateForm::lookahead,
// u = k^): the same tile and exchanges with the product one step ahead of the
// scalars (steps_lookahead; 0.469 against 0.488 ms, docs/CHUNKED.md 8.19).
#ifndef VLA_STEPS_RP64
#define VLA_STEPS_RP64 4
#endif
template <int D>
struct StepShape;
template <>
struct StepShape<64> {
  static constexpr int RP = VLA_STEPS_RP64, CP = 16;
};
template <>
struct StepShape<32> {
  static constexpr int RP = 2, CP = 8;
};
template <>
struct StepShape<16> {
  static constexpr int RP = 1, CP = 4;
};
template <int D, bool USEP, bool FOLD = false, bool LOOK = false>
struct StepPlan {
  static_assert(!(USEP && LOOK), "the look-ahead is built for u = k^ only");
  static constexpr int RP = StepShape<D>::RP, CP = StepShape<D>::CP, CG = D / CP, NTS = (D / RP) * CG, CH = 32;
  static constexpr int TPS = NTS / CH, PER = D / TPS;  // the gates' normalisation: TPS lanes per step
  // Blocks per SM the registers must allow (A alone is 2 RP CP registers a thread).
  static constexpr int MINB = D == 64 ? (USEP ? 3 : 4) : 8;
  static constexpr bool SPLIT = RP >= 4;  // two fma chains a row (the probe: 4 x 16 0.50 ms with, 0.65 without; 2 x 16 the same)
  static constexpr int LDW = D + 1;  // w rows: the TPS lanes of a step read distinct banks
  static constexpr int PAD = 2, LDU = D + PAD * CG;  // padded rows of u, k^, z: column c at col(c)
  static constexpr int PG = D / RP / CG, LDP = PG + 4;  // row shares of u . z: lane cg's PG of them, padded apart
  // u . z, and k^ . z where u is not k^; LOOK: the next step's c = z . u' and e = y' . u'
  static constexpr int NDOT = USEP || LOOK ? 2 : 1;
  // Shared memory (doubles): u (and k^) of the chunk's steps, z and the row shares (two parities), w; then the
  // next chunk's floats.
  static constexpr int oU = 0, oK = oU + CH * LDU, oZ = oK + (USEP ? CH * LDU : 0), oP = oZ + 2 * LDU,
                       oW = oP + 2 * NDOT * CG * LDP, oStage = oW + CH * LDW;
  static constexpr int stage_floats = (USEP ? 2 : 1) * CH * D;
  // FOLD (the state stage's prep in each chunk's epilogue, 8.18): v of the next chunk
  // as it arrives (raw: bf16 or float), after the stage; the epilogue's float rows
  // (a^ and k^ over z, the shares and w; v and T over u, read by then).
  static constexpr int v_stage_bytes = FOLD ? CH * D * 4 : 0;
  static constexpr int bytes = oStage * 8 + stage_floats * 4 + v_stage_bytes;
  static constexpr int LDF = PrepRows<D, CH>::LD, LTF = PrepRows<D, CH>::LT;
  static_assert(!FOLD || (!USEP && 2 * CH * LDF * 4 <= (oStage - oZ) * 8 && (CH * LDF + CH * LTF) * 4 <= (oZ - oU) * 8 &&
                          NTS % 16 == 0 && CH % (NTS / 16) == 0),
                "the epilogue's rows fit where z, w and u were (u = k^ only)");
  static_assert(32 % CG == 0 && NTS % CH == 0 && D % TPS == 0 && (CH * D) % (4 * NTS) == 0 && PG * CG * RP == D, "step tiles");
  static_assert(((CP + PAD) * 8) % 16 == 0 && (LDU * 8) % 16 == 0, "16-byte loads of a lane's columns");
  static_assert((PG & (PG - 1)) == 0, "the shares' pairwise tree");
  __host__ __device__ static constexpr int col(int c) { return c + (c / CP) * PAD; }
  __host__ __device__ static constexpr int share(int rg) { return rg + (rg / PG) * (LDP - PG); }
};

// One chunk's steps with the rank-1 look-ahead (ref::ScanGateForm::lookahead,
// ref::scan_lookahead_gates, docs/CHUNKED.md 8.19), u = k^. A (registers) runs one
// update behind: the sweep of step s applies step s - 1's update A_rc -= g_r z_c
// entry by entry and forms y' = A_{s-1} u_{s+1} from the updated entries (two
// fma chains a row where SPLIT, the butterfly over the CG lanes), while the
// step's own scalars come from what the last barrier published:
//   c = z_{s-1} . u_s and e = y . u_s (row shares, the pairwise tree and the
//       butterfly, as the plain steps' u . z), u . z = sm_lookahead_dot(e, c, c, 1 / delta_{s-1});
//   z_r = sm_lookahead_entry(y_r, g_{s-1,r}, c), delta, g_r = z_r (1 / delta), w_r;
// so the product is no longer behind the reductions, the barrier and the
// reciprocal of its own step: both run beside the sweep. One barrier a step; it
// publishes z_s (the next sweep's columns) and the next step's shares of c and e
// (parities as the plain steps). The chunk's first step has no pending update
// (g = 0 and z = 0: the sweep leaves A's bits), its last applies its own after
// the loop, so A leaves the chunk whole and the chunk loop is unchanged.
template <class Pl>
__device__ __forceinline__ void steps_lookahead(double (&a)[Pl::RP][Pl::CP], const double* Us, double* Zs, double* Ps, double* Ws, int len,
                                                double floor, int cg, int rg, int r0, int pc0) {
  constexpr int RP = Pl::RP, CP = Pl::CP, CG = Pl::CG, PG = Pl::PG, LDP = Pl::LDP, LDU = Pl::LDU, LDW = Pl::LDW;
  constexpr int PS = 2 * CG * LDP;  // one parity of the shares: c's, then e's
  // The pending update with g (rows) and z (columns zc), and y = A u' (un) from the updated entries.
  // upd false: the product alone (the chunk's first, nothing pending; zc not read). Both
  // calls pass a constant and the lambda is inlined: no branch in the loop.
  auto sweep = [&](bool upd, const double* zc, const double* un, const double (&g)[RP], double (&y)[RP]) {
    double y2[RP];
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) y[rr] = y2[rr] = 0.0;
#pragma unroll
    for (int cc = 0; cc < CP; ++cc) {
      const double uj = un[cc];
      const bool odd = Pl::SPLIT && (cc & 1);
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) {
        if (upd) a[rr][cc] = core::sm_row_entry(a[rr][cc], g[rr], zc[cc]);
        if (odd) y2[rr] = core::vfma(a[rr][cc], uj, y2[rr]);
        else y[rr] = core::vfma(a[rr][cc], uj, y[rr]);
      }
    }
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) {
      if constexpr (Pl::SPLIT) y[rr] += y2[rr];
#pragma unroll
      for (int m = CG / 2; m >= 1; m /= 2) y[rr] += __shfl_xor_sync(0xffffffffu, y[rr], m);
    }
  };
  auto update = [&](const double* zc, const double (&g)[RP]) {
#pragma unroll
    for (int cc = 0; cc < CP; ++cc) {
      const double zj = zc[cc];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) a[rr][cc] = core::sm_row_entry(a[rr][cc], g[rr], zj);
    }
  };
  // The row group's shares x . u_n of two vectors x (its rows), and their store into parity n's slots.
  auto row_shares = [&](int n, const double (&x0)[RP], const double (&x1)[RP], double& p0, double& p1) {
    const double* ur = Us + n * LDU;
    p0 = p1 = 0.0;
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) {
      const double uj = ur[Pl::col(r0 + rr)];
      p0 = core::vfma(uj, x0[rr], p0);
      p1 = core::vfma(uj, x1[rr], p1);
    }
  };
  auto store_shares = [&](int n, double p0, double p1) {
    double* ps = Ps + (n & 1) * PS;
    ps[Pl::share(rg)] = p0;
    ps[CG * LDP + Pl::share(rg)] = p1;
  };
  double y[RP], gp[RP], zero[RP];
#pragma unroll
  for (int rr = 0; rr < RP; ++rr) gp[rr] = zero[rr] = 0.0;
  double rdp = 0.0;
  // Prologue: y = A u_0 (nothing pending), step 0's shares (c = 0), z_{-1} = 0 in parity 1 (with
  // g = 0, step 0's sweep leaves A's bits: fma(-0, 0, a) = a).
  sweep(false, nullptr, Us + pc0, gp, y);
  if (cg == 0) {
    double p0, p1;
    row_shares(0, zero, y, p0, p1);
    store_shares(0, p0, p1);
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) Zs[LDU + Pl::col(r0 + rr)] = 0.0;
  }
  __syncthreads();
  // The step's body is one basic block up to the rare reciprocal fallback: the shares' loads, the sweep
  // (which needs only g_{s-1} and z_{s-1}), the reductions of c and e, z_s and the reciprocal, the
  // butterfly of y' and the next step's shares, so that the compiler interleaves the sweep's fmas with
  // the scalar chain (warps issue in order: a branch between them would serialise them; measured
  // 2026-12-05: with the sweep after the reciprocal's branch the look-ahead was slower, 0.515 against
  // 0.491 ms for the plain steps). At the
  // chunk's last step the product reads the last row again and is not used.
#pragma unroll 1
  for (int s = 0; s < len; ++s) {
    const double* ps = Ps + (s & 1) * PS;
    double qc[PG], qe[PG];
#pragma unroll
    for (int i = 0; i < PG; ++i) {
      qc[i] = ps[cg * LDP + i];
      qe[i] = ps[CG * LDP + cg * LDP + i];
    }
    // Step s - 1's update (its z in parity s - 1 = s + 1), and the next step's product.
    const bool next = s + 1 < len;
    const int n = next ? s + 1 : s;
    double yn[RP];
    sweep(true, Zs + ((s + 1) & 1) * LDU + pc0, Us + n * LDU + pc0, gp, yn);
#pragma unroll
    for (int m = PG / 2; m >= 1; m /= 2)
#pragma unroll
      for (int i = 0; i < m; ++i) {
        qc[i] += qc[i + m];
        qe[i] += qe[i + m];
      }
    double c = qc[0], e = qe[0];
#pragma unroll
    for (int m = CG / 2; m >= 1; m /= 2) {
      c += __shfl_xor_sync(0xffffffffu, c, m);
      e += __shfl_xor_sync(0xffffffffu, e, m);
    }
    const double uz = core::sm_lookahead_dot(e, c, c, rdp);
    const double delta = core::sm_delta(uz, floor);
    bool in_range;
    double rd = pivot_recip_in_range(delta, in_range);
    double z[RP];
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) z[rr] = core::sm_lookahead_entry(y[rr], gp[rr], c);
    // The row group's shares of the next step's c = z_s . u_{s+1} and e = y' . u_{s+1}.
    double pc, pe;
    row_shares(n, z, yn, pc, pe);
    if (cg == 0) {
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) Zs[(s & 1) * LDU + Pl::col(r0 + rr)] = z[rr];
      store_shares(s + 1, pc, pe);
    }
    if (!in_range) rd = 1.0 / delta;  // as pivot_recip: only for delta outside [2^-1000, 2^1000] (delta is ~1 or more)
    double gn[RP];
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) gn[rr] = z[rr] * rd;
    if (cg == 0)
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) Ws[s * LDW + r0 + rr] = core::sm_gate_entry(z[rr], gn[rr], uz);
    __syncthreads();  // z_s and step s + 1's shares complete; this step's readers of the other parity are done
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) {
      gp[rr] = gn[rr];
      y[rr] = yn[rr];
    }
    rdp = rd;
  }
  if (len > 0) update(Zs + ((len - 1) & 1) * LDU + pc0, gp);  // the last step's update: A leaves whole
}

// The final A (g.A, [B, H, D, D] floats) from a steps kernel's registers: this thread's
// rows r0 .. and columns c0 .. of the A its segment's last step left, rounded to float once.
template <int RP, int CP, class T>
__device__ __forceinline__ void store_final_a(const GateParams& g, int bh, int r0, int c0, const T (&a)[RP][CP]) {
  float* A = g.A + std::size_t(bh) * g.D * g.D;
#pragma unroll
  for (int rr = 0; rr < RP; ++rr)
#pragma unroll
    for (int cc = 0; cc < CP; ++cc) A[(r0 + rr) * g.D + c0 + cc] = static_cast<float>(a[rr][cc]);
}

// scan_steps in float, one warp a segment (chunked-scan-bf16 where u = k^:
// ref::kernel_scan_steps_float, ref::scan_lookahead_gates<float>, docs/CHUNKED.md
// 8.23). Block (segment, head bh) of 32 threads. Why: the double kernel above needs
// two warps for a segment's A (D^2 doubles), hence a block barrier a step, and with
// four segments an SM its step took ~1,800 cycles where a lone one's instruction
// stream is ~1,070 (8.19); in float a lane holds RP = D/8 rows x CP = D/4 columns
// of A (128 registers at D = 64), so a step's exchanges are shuffles and one
// __syncwarp, and the fmas issue at the FP32 pipe's rate. Lane l: row group
// rg = l / 4 (rows RP rg ..), cg = l % 4 (columns CP cg ..). The look-ahead as
// steps_lookahead: per step s the sweep applies step s - 1's update A_rc -= g_r z_c
// and forms y' = A_{s-1} u_{s+1} (one fma chain a row, ascending columns, then the
// butterfly over the 4 lanes of a row group); c = z_{s-1} . u_s and e = y . u_s
// (each lane its RP rows by fma, then the butterfly over the 8 row groups) give
// u . z = sm_lookahead_dot(e, c, c, 1 / delta_{s-1}), z_r = sm_lookahead_entry(y_r,
// g_{s-1,r}, c), delta = sm_delta(u . z), 1 / delta (__frcp_rn: the correctly
// rounded reciprocal, the twin's 1.0f / delta), g = z (1 / delta), w = sm_gate_entry
// (z, g, u . z). The four lanes of each row group share the publication of its rows
// of z_s (the next sweep's columns) and w_s to shared memory. A chunk's first step
// has nothing pending, its last applies its own update after the loop (A leaves the
// chunk whole, as the twin's).
// u (k^, float) arrives a chunk ahead by cp.async into the other of two padded
// buffers. Every 32 steps lane t forms ||w_t|| (its entries in order; the 2^-64
// rescaling where the sum of squares overflows, as ref::col_norm) and the warp
// writes a^ = w / ||w|| (the twin's division) row by row, coalesced.
//
// Where the chunk's w rows live (WOVER; the same operations on the same values, so the same bits: the
// device tests compare both, docs/CHUNKED.md 8.33): in a buffer of their own (C x (D + 1) floats), or
// over the chunk's u rows, step s writing w_s over u_s, which no later step of the chunk reads, with the
// entries rotated by s so that lane t reading row t's entry j (the norms) and the lanes reading one row
// (the gates' stores) hit distinct banks. The own buffer holds the kernel at seven blocks an SM by shared
// memory (924 a wave on 132 SMs), over u eight fit (the registers' bound, 1,056 a wave), but ptxas then
// spills 44 bytes instead of 24. Measured on an H100 (reports/gpu/2026-12-06-h100-head-check-w-over-u.md):
// over u the steps take 1.353 ms against 1.517 at B H = 16, T = 65,536 (2,048 segments: two waves
// instead of three) and 4.18 against 4.39 at B = 8, H = 128, but 0.387 against 0.377 at T = 16,384 (512
// segments, one wave either way). So the launcher takes WOVER only where the blocks exceed one wave of
// the own buffer's layout (steps_w_over_u).
template <int D, bool WOVER = false>
struct WarpStepPlan {
  static constexpr int RP = D / 8, CP = D / 4, CH = 32;
  // u rows padded by 4 floats after every CP columns: the four column blocks' 16-byte loads in distinct banks.
  static constexpr int PAD = 4, LDU = D + 4 * PAD, LDW = D + 1;
  // Shared floats: u of two chunks, z (two parities), w of the chunk's steps (none with WOVER), their norms.
  static constexpr int oU = 0, oZ = oU + 2 * CH * LDU, oW = oZ + 2 * LDU, oN = oW + (WOVER ? 0 : CH * LDW), floats = oN + CH;
  // w_s's entry r: row s of the w buffer, or of the chunk's u rows rotated by s (WOVER).
  __host__ __device__ static constexpr int wrow(int s, int r) { return WOVER ? s * LDU + ((r + s) & (D - 1)) : s * LDW + r; }
  static constexpr int bytes = floats * 4;
  static_assert(D % 16 == 0 && CP % 4 == 0 && (LDU * 4) % 16 == 0 && (D & (D - 1)) == 0, "16-byte pieces of u rows; wrow's wrap by a mask");
  __host__ __device__ static constexpr int col(int c) { return c + (c / CP) * PAD; }
};

// x[cg + 4 k] for lane cg of a row group (cg < 4), by selects: a register array indexed by a lane's
// number would go to local memory.
template <int RP>
__device__ __forceinline__ float lane_share(const float (&x)[RP], int k, int cg) {
  float v = x[4 * k];
#pragma unroll
  for (int m = 1; m < 4; ++m)
    if (4 * k + m < RP) v = cg == m ? x[4 * k + m] : v;
  return v;
}

template <int D, bool WOVER>
__global__ void __launch_bounds__(32, 8) steps_warp_kernel(GateParams g) {
  using Pl = WarpStepPlan<D, WOVER>;
  constexpr int RP = Pl::RP, CP = Pl::CP, CH = Pl::CH, LDU = Pl::LDU;
  extern __shared__ __align__(16) float wsm[];
  float* Ub = wsm + Pl::oU;
  float* Zs = wsm + Pl::oZ;
  float* Wown = wsm + Pl::oW;  // the w rows' own buffer (unused with WOVER)
  float* Ns = wsm + Pl::oN;
  const Scratch sc = scratch_of(g);
  const int seg = blockIdx.x, bh = blockIdx.y, b = bh / g.H, h = bh % g.H, NS = n_segments(g);
  const int lane = threadIdx.x, rg = lane / 4, cg = lane % 4, r0 = rg * RP, c0 = cg * CP, pc0 = Pl::col(c0);
  const int steps = segment_chunks(g) * g.C;
  const int t_begin = seg * steps, t_end = min(g.T, t_begin + steps);
  auto row_of = [&](int t) { return ((std::size_t(b) * g.T + t) * g.H + h) * D; };
  // The chunk at t0's rows of u = k^ into dst by cp.async, 16-byte pieces, zeros past t_end.
  auto fetch = [&](int t0, float* dst) {
#pragma unroll
    for (int e = 4 * lane; e < CH * D; e += 4 * 32) {
      const int t = e / D, d = e % D, ok = t0 + t < t_end;
      asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst + t * LDU + Pl::col(d)))),
                   "l"(g.out.khat + row_of(ok ? t0 + t : t0) + d), "r"(ok ? 16 : 0)
                   : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  if (t_begin < t_end) fetch(t_begin, Ub);
  float a[RP][CP];
  {
    const double* A0 = sc.ainv + (std::size_t(bh) * NS + seg) * D * D;  // M_c0^{-1} in double, rounded once (the twin's cast)
#pragma unroll
    for (int rr = 0; rr < RP; ++rr)
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) a[rr][cc] = static_cast<float>(A0[(r0 + rr) * D + c0 + cc]);
  }
  const double floor = g.delta_floor;
  // Sum over the 4 lanes of a row group (xor 1, 2) or over the 8 row groups (xor 4, 8, 16).
  auto over_columns = [](float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
  };
  auto over_rows = [](float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 4);
    x += __shfl_xor_sync(0xffffffffu, x, 8);
    return x + __shfl_xor_sync(0xffffffffu, x, 16);
  };
  // f(rr, u) for each of the row group's RP entries u of the u row at ur, rr ascending.
  auto for_u_row = [&](const float* ur, auto&& f) {
    if constexpr (RP % 4 == 0) {
      // The row group's RP entries of ur are contiguous (col keeps them in one CP block) and 16-byte aligned:
      // RP / 4 vector loads instead of RP and their addresses, the same fmas in the same order. The same bits;
      // the steps 0.263-0.268 -> 0.254-0.257 ms at B = 1, H = 16, T = 16,384 (H100, docs/CHUNKED.md 8.47).
      const float4* v = reinterpret_cast<const float4*>(ur + Pl::col(r0));
#pragma unroll
      for (int q = 0; q < RP / 4; ++q) {
        const float4 w = v[q];
        f(4 * q, w.x), f(4 * q + 1, w.y), f(4 * q + 2, w.z), f(4 * q + 3, w.w);
      }
    } else {
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) f(rr, ur[Pl::col(r0 + rr)]);
    }
  };
  // The row group's share x . u of one vector x (its rows) with the u row at ur.
  auto row_dot = [&](const float* ur, const float (&x)[RP]) {
    float p = 0.0f;
    for_u_row(ur, [&](int rr, float u) { p = core::vfma(u, x[rr], p); });
    return over_rows(p);
  };
  // row_dot of two vectors with one u row, its entries loaded once (the same fmas in the same order). With wrow's
  // mask and the output by stride below, the steps 0.257-0.259 -> 0.220-0.223 ms at B = 1, H = 16, T = 16,384, the
  // same bits (H100, docs/CHUNKED.md 8.48).
  auto row_dots = [&](const float* ur, const float (&x1)[RP], const float (&x2)[RP], float& d1, float& d2) {
    float p1 = 0.0f, p2 = 0.0f;
    for_u_row(ur, [&](int rr, float u) {
      p1 = core::vfma(u, x1[rr], p1);
      p2 = core::vfma(u, x2[rr], p2);
    });
    d1 = over_rows(p1);
    d2 = over_rows(p2);
  };
  int buf = 0;
#pragma unroll 1
  for (int t0 = t_begin; t0 < t_end; t0 += CH, buf ^= 1) {
    const int len = min(CH, t_end - t0);
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncwarp();  // the chunk's u landed for every lane; every lane is done with the last chunk's w and norms
    float* const Uw = Ub + buf * CH * LDU;  // the chunk's u rows (with WOVER, row s from step s on: w_s)
    const float* Us = Uw;
    float* const Ws = WOVER ? Uw : Wown;  // the chunk's w rows, entries at Pl::wrow
    if (t0 + CH < t_end) fetch(t0 + CH, Ub + (buf ^ 1) * CH * LDU);
    // Prologue: y = A u_0 (nothing pending), e = u_0 . y, c = 0 (z_{-1} = 0, g = 0).
    float y[RP], gp[RP], zc[CP];
#pragma unroll
    for (int rr = 0; rr < RP; ++rr) {
      y[rr] = gp[rr] = 0.0f;
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) y[rr] = core::vfma(a[rr][cc], Us[pc0 + cc], y[rr]);
      y[rr] = over_columns(y[rr]);
    }
#pragma unroll
    for (int cc = 0; cc < CP; ++cc) zc[cc] = 0.0f;
    float e = row_dot(Us, y), c = 0.0f, rdp = 0.0f;
#pragma unroll 2
    for (int s = 0; s < len; ++s) {
      // At the chunk's last step the product's row is unused: the last u row again, or with WOVER the z row
      // of the other parity (stable this step), not the own row, which this step overwrites with w_s.
      const int n = s + 1 < len ? s + 1 : s;
      const float* un = WOVER && n == s ? Zs + ((s + 1) & 1) * LDU : Us + n * LDU;
      // Step s - 1's update and the next step's product y' = A_{s-1} u_{s+1}.
      float yn[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) yn[rr] = 0.0f;
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) {
        const float uj = un[pc0 + cc];
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) {
          a[rr][cc] = core::sm_row_entry(a[rr][cc], gp[rr], zc[cc]);
          yn[rr] = core::vfma(a[rr][cc], uj, yn[rr]);
        }
      }
      // Step s's scalars and vectors from what the last step left.
      const float uz = core::sm_lookahead_dot(e, c, c, rdp);
      const float rd = __frcp_rn(core::sm_delta(uz, floor));
      float z[RP], gn[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) {
        z[rr] = core::sm_lookahead_entry(y[rr], gp[rr], c);
        gn[rr] = z[rr] * rd;
      }
      // The four lanes of a row group hold the same z and gn (each butterfly's sums come out equal in
      // every lane), so they share the row group's stores: lane cg writes rows r0 + cg + 4k, one store a
      // lane and k, where the first lane alone made RP of them (with RP gate entries and rotated indices).
      // The same values, so the same bits; the steps 0.280-0.287 -> 0.265-0.268 ms and the whole scan
      // 1.241-1.250 -> 1.226-1.233 ms at B = 1, H = 16, T = 16,384 (H100, docs/CHUNKED.md 8.47).
      float zk[(RP + 3) / 4], gk[(RP + 3) / 4];
#pragma unroll
      for (int k = 0; 4 * k < RP; ++k) {
        zk[k] = lane_share(z, k, cg);
        gk[k] = lane_share(gn, k, cg);
        if (cg + 4 * k < RP) {
          Zs[(s & 1) * LDU + Pl::col(r0 + cg + 4 * k)] = zk[k];
          if constexpr (!WOVER) Ws[Pl::wrow(s, r0 + cg + 4 * k)] = core::sm_gate_entry(zk[k], gk[k], uz);
        }
      }
      __syncwarp();  // z_s published (the other parity's readers finished before the last step's __syncwarp)
      // w_s over u_s after the barrier: every lane is then done with step s - 1, the last reader of row s.
      if constexpr (WOVER) {
#pragma unroll
        for (int k = 0; 4 * k < RP; ++k)
          if (cg + 4 * k < RP) Ws[Pl::wrow(s, r0 + cg + 4 * k)] = core::sm_gate_entry(zk[k], gk[k], uz);
      }
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) zc[cc] = Zs[(s & 1) * LDU + pc0 + cc];
      // The next step's c = z_s . u_{s+1} and e = y' . u_{s+1}: only the next step's scalars need them, not
      // its sweep, so with two steps unrolled their butterflies can issue between that sweep's fmas.
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) yn[rr] = over_columns(yn[rr]);
      float cn, en;
      row_dots(un, z, yn, cn, en);
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) {
        gp[rr] = gn[rr];
        y[rr] = yn[rr];
      }
      c = cn, e = en, rdp = rd;
    }
    // The last step's update: A leaves the chunk whole (len >= 1 here).
#pragma unroll
    for (int cc = 0; cc < CP; ++cc)
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) a[rr][cc] = core::sm_row_entry(a[rr][cc], gp[rr], zc[cc]);
    if constexpr (WOVER) __syncwarp();  // the last step's w, written after the loop's last barrier
    // a^_t = w_t / ||w_t|| (or w_t): lane t's norm, then the rows, coalesced.
    if (g.normalize_gate) {
      float s2 = 0.0f, s2l = 0.0f;
      if (lane < len)
#pragma unroll 8
        for (int j = 0; j < D; ++j) add_norm_terms(Ws[Pl::wrow(lane, j)], s2, s2l);
      Ns[lane] = group_norm<1, float>(s2, s2l);  // a step's whole sums in one lane: no butterfly
    }
    __syncwarp();  // the norms
    // Four steps' loads, divisions and stores in flight: one at a time, this loop held 23% of the
    // kernel's stall samples for 8% of its instructions (ncu, H100). Unrolled by 4 the steps kernel
    // takes 0.281-0.284 ms against 0.292-0.300 at B = 1, H = 16, T = 16,384 (by 8: 0.300-0.302, with
    // more spills); the same divisions, so the same bits (reports/gpu/2026-12-07-h100-steps-output-unroll.md).
    // Each step's row from the chunk's first by a stride of H D floats, and the lane's entries by a loop of
    // known trip count (D / 32), not a loop on the lane's number: no 64-bit row index and no branches per entry.
    float* const out0 = g.out.gate + row_of(t0);
    const std::size_t row_stride = std::size_t(g.H) * D;
#pragma unroll 4
    for (int t = 0; t < len; ++t) {
      float* const out = out0 + t * row_stride;
#pragma unroll
      for (int k = 0; k < (D + 31) / 32; ++k) {
        const int j = lane + 32 * k;
        if (D % 32 == 0 || j < D) out[j] = g.normalize_gate ? Ws[Pl::wrow(t, j)] / Ns[t] : Ws[Pl::wrow(t, j)];
      }
    }
  }
  // The stream's last segment hands on the final A = M_N^{-1}: the A its steps leave (no
  // scan_final_A kernel in the per-step forms; ref::run_chunked_scan's final A likewise).
  if (seg == NS - 1) store_final_a(g, bh, r0, c0, a);
}

template <int D, bool USEP, bool FOLD = false, bool LOOK = false>
__global__ void __launch_bounds__(StepPlan<D, USEP, FOLD, LOOK>::NTS, StepPlan<D, USEP, FOLD, LOOK>::MINB) steps_kernel(GateParams g) {
  using Pl = StepPlan<D, USEP, FOLD, LOOK>;
  constexpr int RP = Pl::RP, CP = Pl::CP, CG = Pl::CG, NTS = Pl::NTS, CH = Pl::CH, TPS = Pl::TPS, PER = Pl::PER, LDW = Pl::LDW,
                LDU = Pl::LDU, PG = Pl::PG, LDP = Pl::LDP, NDOT = Pl::NDOT;
  extern __shared__ double smem[];
  double* Us = smem + Pl::oU;
  double* Ks = USEP ? smem + Pl::oK : Us;
  double* Zs = smem + Pl::oZ;
  double* Ps = smem + Pl::oP;
  double* Ws = smem + Pl::oW;
  float* stage = reinterpret_cast<float*>(smem + Pl::oStage);
  const Scratch sc = scratch_of(g);
  const int seg = blockIdx.x, bh = blockIdx.y, b = bh / g.H, h = bh % g.H, NS = n_segments(g);
  const int tid = threadIdx.x, cg = tid % CG, rg = tid / CG, r0 = rg * RP, c0 = cg * CP, pc0 = Pl::col(c0);
  const int steps = segment_chunks(g) * g.C;
  const int t_begin = seg * steps, t_end = min(g.T, t_begin + steps);
  const float* usrc = USEP ? sc.u : g.out.khat;
  auto row_of = [&](int t) { return ((std::size_t(b) * g.T + t) * g.H + h) * D; };
  // The chunk at t0's rows of u (and k^) into the stage by cp.async, 16-byte pieces, zeros past t_end.
  auto fetch = [&](int t0) {
#pragma unroll
    for (int e = 4 * tid; e < CH * D; e += 4 * NTS) {
      const int t = e / D, d = e % D, ok = t0 + t < t_end;
      const std::size_t src = row_of(ok ? t0 + t : t0) + d;
#pragma unroll
      for (int w = 0; w < (USEP ? 2 : 1); ++w)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(stage + w * CH * D + e))),
                     "l"((w == 0 ? usrc : g.out.khat) + src), "r"(ok ? 16 : 0)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  if (t_begin < t_end) fetch(t_begin);
  // FOLD: v of the chunk at t0 as raw rows (D bf16 or float values each) into the v stage, 16-byte
  // pieces, zeros past t_end; issued a chunk ahead, after the epilogue that read the last ones.
  unsigned char* vstage = reinterpret_cast<unsigned char*>(stage + Pl::stage_floats);
  auto fetch_v = [&](int t0) {
    const int esz = g.bf16_io ? 2 : 4, per_row = D * esz / 16;
    for (int pc = tid; pc < CH * per_row; pc += NTS) {
      const int t = pc / per_row, q = pc % per_row, ok = t0 + t < t_end;
      const unsigned char* src = static_cast<const unsigned char*>(g.v) + row_of(ok ? t0 + t : t0) * esz + 16 * q;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(vstage + 16 * pc))),
                   "l"(src), "r"(ok ? 16 : 0)
                   : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  if constexpr (FOLD)
    if (t_begin < t_end) fetch_v(t_begin);
  double a[RP][CP];
  {
    const double* A0 = sc.ainv + (std::size_t(bh) * NS + seg) * D * D;
#pragma unroll
    for (int rr = 0; rr < RP; ++rr)
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) a[rr][cc] = A0[(r0 + rr) * D + c0 + cc];
  }
  const double floor = g.delta_floor;
#pragma unroll 1
  for (int t0 = t_begin; t0 < t_end; t0 += CH) {
    const int len = min(CH, t_end - t0);
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // the chunk's floats landed for all; the last chunk's readers of Us, Ks and Ws are done
    for (int e = tid; e < CH * D; e += NTS) {
      const int at = (e / D) * LDU + Pl::col(e % D);
      Us[at] = stage[e];
      if constexpr (USEP) Ks[at] = stage[CH * D + e];
    }
    __syncthreads();  // Us, Ks complete; the stage is free
    if (t0 + CH < t_end) fetch(t0 + CH);
    if constexpr (LOOK) {
      steps_lookahead<Pl>(a, Us, Zs, Ps, Ws, len, floor, cg, rg, r0, pc0);
    } else {
#pragma unroll 1
    for (int s = 0; s < len; ++s) {
      const double* us = Us + s * LDU + pc0;
      const double* ks = Ks + s * LDU + pc0;
      // With SPLIT two chains a row (even and odd columns), summed at the end: more
      // independent fmas a thread where fewer warps share an SM (Pl::SPLIT).
      double y[RP], x[RP], y2[RP], x2[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) y[rr] = x[rr] = y2[rr] = x2[rr] = 0.0;
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) {
        const double uj = us[cc];
        const bool odd = Pl::SPLIT && (cc & 1);
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) {
          if (odd) y2[rr] = core::vfma(a[rr][cc], uj, y2[rr]);
          else y[rr] = core::vfma(a[rr][cc], uj, y[rr]);
        }
        if constexpr (USEP) {
          const double kj = ks[cc];
#pragma unroll
          for (int rr = 0; rr < RP; ++rr) {
            if (odd) x2[rr] = core::vfma(a[rr][cc], kj, x2[rr]);
            else x[rr] = core::vfma(a[rr][cc], kj, x[rr]);
          }
        }
      }
      if constexpr (Pl::SPLIT) {
        for (int rr = 0; rr < RP; ++rr) {
          y[rr] += y2[rr];
          x[rr] += x2[rr];
        }
      }
#pragma unroll
      for (int m = CG / 2; m >= 1; m /= 2)
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) {
          y[rr] += __shfl_xor_sync(0xffffffffu, y[rr], m);
          if constexpr (USEP) x[rr] += __shfl_xor_sync(0xffffffffu, x[rr], m);
        }
      double* zs = Zs + (s & 1) * LDU;
      double* ps = Ps + (s & 1) * NDOT * CG * LDP;
      if (cg == 0) {
        const double* ur = Us + s * LDU;
        const double* kr = Ks + s * LDU;
        double pu = 0.0, pk = 0.0;
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) {
          const int c = Pl::col(r0 + rr);
          zs[c] = y[rr];
          pu = core::vfma(ur[c], y[rr], pu);
          if constexpr (USEP) pk = core::vfma(kr[c], y[rr], pk);
        }
        ps[Pl::share(rg)] = pu;
        if constexpr (USEP) ps[CG * LDP + Pl::share(rg)] = pk;
      }
      __syncthreads();  // z and the shares complete (the other parity's readers finished before the last step's barrier)
      double qu[PG], qk[PG];
#pragma unroll
      for (int i = 0; i < PG; ++i) {
        qu[i] = ps[cg * LDP + i];
        if constexpr (USEP) qk[i] = ps[CG * LDP + cg * LDP + i];
      }
#pragma unroll
      for (int m = PG / 2; m >= 1; m /= 2)
#pragma unroll
        for (int i = 0; i < m; ++i) {
          qu[i] += qu[i + m];
          if constexpr (USEP) qk[i] += qk[i + m];
        }
      double uz = qu[0], kz = 0.0;
      if constexpr (USEP) kz = qk[0];
#pragma unroll
      for (int m = CG / 2; m >= 1; m /= 2) {
        uz += __shfl_xor_sync(0xffffffffu, uz, m);
        if constexpr (USEP) kz += __shfl_xor_sync(0xffffffffu, kz, m);
      }
      if constexpr (!USEP) kz = uz;
      const double rd = pivot_recip(core::sm_delta(uz, floor));
      double gr[RP];
#pragma unroll
      for (int rr = 0; rr < RP; ++rr) gr[rr] = y[rr] * rd;
      if (cg == 0)
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) Ws[s * LDW + r0 + rr] = core::sm_gate_entry(USEP ? x[rr] : y[rr], gr[rr], kz);
#pragma unroll
      for (int cc = 0; cc < CP; ++cc) {
        const double zj = zs[pc0 + cc];
#pragma unroll
        for (int rr = 0; rr < RP; ++rr) a[rr][cc] = core::sm_row_entry(a[rr][cc], gr[rr], zj);
      }
    }
    }
    __syncthreads();  // the chunk's w complete
    {
      // a^_t = w_t / ||w_t|| (or w_t), rounded to float once.
      const int t = tid / TPS, sl = tid % TPS;
      double w[PER];
#pragma unroll
      for (int m = 0; m < PER; ++m) w[m] = t < len ? Ws[t * LDW + sl + TPS * m] : 0.0;
      // One division a step, then products: the per-entry division was 5% of the kernel's
      // instructions (ncu, H100, 2026-12-05); w (1 / ||w||) is within an ulp of double
      // of w / ||w|| before the rounding to float.
      const double inv = g.normalize_gate ? 1.0 / col_norm<TPS>(w) : 1.0;
      float af[PER];
#pragma unroll
      for (int m = 0; m < PER; ++m) af[m] = t < len ? float(w[m] * inv) : 0.0f;
      if (t < len) {
        float* out = g.out.gate + row_of(t0 + t);
#pragma unroll
        for (int m = 0; m < PER; ++m) out[sl + TPS * m] = af[m];
      }
      if constexpr (FOLD) {
        // The state stage's prep of this chunk (scan_prep_core.cuh, the prep kernel's
        // arithmetic): a^ (the floats just stored) and k^ (u, exact in double) as float
        // rows over z, the shares and w, then v and T over u.
        constexpr int LDF = Pl::LDF;
        float* Af = reinterpret_cast<float*>(smem + Pl::oZ);
        float* Kf = Af + CH * LDF;
        float* Vf = reinterpret_cast<float*>(smem + Pl::oU);
        float* Tf = Vf + CH * LDF;
        __syncthreads();  // every thread done with w
#pragma unroll
        for (int m = 0; m < PER; ++m) Af[t * LDF + sl + TPS * m] = af[m];
        for (int e = tid; e < CH * D; e += NTS) Kf[(e / D) * LDF + e % D] = static_cast<float>(Us[(e / D) * LDU + Pl::col(e % D)]);
        __syncthreads();  // every thread done with u; a^ and k^ rows complete
        for (int e = tid; e < CH * D; e += NTS) {
          const float x = g.bf16_io ? core::bf16_bits_to_float(reinterpret_cast<const std::uint16_t*>(vstage)[e])
                                    : reinterpret_cast<const float*>(vstage)[e];
          Vf[(e / D) * LDF + e % D] = x;
        }
        const std::size_t n_steps = static_cast<std::size_t>((g.T + CH - 1) / CH) * CH;  // the state scratch's rows a head
        const std::size_t base = (static_cast<std::size_t>(bh) * n_steps + t0) * D;
        prep_chunk_core<D, CH, NTS, false>(Af, Kf, Vf, Tf, len, g.kt_out + base, g.vt_out + base);  // barriers inside
        if (t0 + CH < t_end) fetch_v(t0 + CH);  // the v stage was read before the core's first barrier
      }
    }
  }
  // The stream's last segment hands on the final A = M_N^{-1}: the A its steps leave (no
  // scan_final_A kernel in the per-step forms; ref::run_chunked_scan's final A likewise).
  if (seg == NS - 1) store_final_a(g, bh, r0, c0, a);
}

// The float steps' layout (WarpStepPlan's WOVER): GateParams::steps_layout where forced, else w over u
// where the blocks (one a segment and head) exceed one wave of the own-buffer layout on this device.
template <int D>
bool steps_w_over_u(const GateParams& g) {
  if (g.steps_layout != ScanStepsLayout::automatic) return g.steps_layout == ScanStepsLayout::w_over_u;
  static const int per_sm = [] {  // the kernel's blocks an SM (its resources), asked once
    int n = 0;
    VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, steps_warp_kernel<D, false>, 32, WarpStepPlan<D, false>::bytes));
    return n;
  }();
  return static_cast<long long>(n_segments(g)) * g.B * g.H > static_cast<long long>(per_sm) * device_sms();
}

template <class Prec, int D, int C>
void launch_typed(const GateParams& g, cudaStream_t s) {
  const int BH = g.B * g.H, P = packed_size(D);
  const dim3 grid(n_segments(g), BH);  // scan_prep and scan_gate: a block per (segment, head)
  if (g.kernels & 1u) {
    const auto prep = prep_kernel<Prec, D, C>;
    const int bytes = PrepPlan<Prec, D, C>::bytes(g.u != nullptr);
    VLA_CUDA_CHECK(cudaFuncSetAttribute(prep, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    prep<<<grid, NT, bytes, s>>>(g);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
  // In the per-step forms the n scan runs in scan_seg_inverse's grid (its first B H blocks), beside the inverses.
  const bool n_beside_inverses = g.form != ref::ScanGateForm::woodbury;
  if (g.kernels & 2u) {
    const int m_blocks = (BH * P + NT - 1) / NT, n_blocks = n_beside_inverses ? 0 : (BH * D + NT - 1) / NT;
    prefix_kernel<<<m_blocks + n_blocks, NT, 0, s>>>(g, m_blocks);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
  // scan_final_A needs scan_prefix's results only, scan_gate does not: with a side
  // stream they run there beside scan_gate, forked after scan_prefix and joined before this returns
  // (the launch stays one stream-ordered unit on s, no host synchronisation); scan_gate is launched
  // first, so that its blocks are dispatched first and the side kernels take what it leaves.
  // The per-step forms' steps kernels write the final A themselves (store_final_a): scan_final_A
  // runs in the Woodbury form only.
  // The ratio denominators need no kernel of their own since the den split (docs/CHUNKED.md 8.34): scan_prep
  // writes the in-chunk part, the readout adds n_c . phi(q_t). Kernel bit 16 (scan_den) is free.
  const bool final_a = (g.kernels & 8u) && g.form == ref::ScanGateForm::woodbury, fork = g.side && final_a;
  const cudaStream_t s2 = fork ? g.side : s;
  if (fork) {
    VLA_CUDA_CHECK(cudaEventRecord(g.fork, s));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(g.side, g.fork, 0));
  }
  // A kernel of the gate's grid (a block per (segment, head)) on s.
  auto on_grid = [&](auto k, int threads, int bytes, dim3 blocks = dim3(0)) {
    VLA_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    k<<<blocks.x ? blocks : grid, threads, bytes, s>>>(g);
    VLA_CUDA_CHECK(cudaGetLastError());
  };
  const bool usep = g.u || g.u_unit_scaled;
  // The look-ahead where u = k^; u given or unit-scaled: the plain steps (ref::kernel_scan_gate_form).
  const bool look = ref::kernel_scan_gate_form(usep, g.form) == ref::ScanGateForm::lookahead;
  if (g.form == ref::ScanGateForm::woodbury) {
    if (g.kernels & 4u) {
      if (usep) on_grid(gate_kernel<D, C, true>, NT, GatePlan<D, C, true>::bytes);
      else on_grid(gate_kernel<D, C, false>, NT, GatePlan<D, C, false>::bytes);
    }
  } else {
    // Per step (8.16): A at every segment's start, then the segments' steps.
    // B H blocks of n scans, then the inverses two a block.
    if (g.kernels & 32u) on_grid(seg_inverse_kernel<D>, NTI, SweepPlan<D>::bytes, dim3(BH + (BH * n_segments(g) + NTI / 32 - 1) / (NTI / 32)));
    if (g.kernels & 4u) {
      if (usep) {
        on_grid(steps_kernel<D, true>, StepPlan<D, true>::NTS, StepPlan<D, true>::bytes);
      } else if (g.steps_float && look) {
        if (g.kt_out) throw std::invalid_argument("scan gate: the state prep folds into the double steps kernel only (GateParams::steps_float false)");
        if (steps_w_over_u<D>(g)) on_grid(steps_warp_kernel<D, true>, 32, WarpStepPlan<D, true>::bytes);
        else on_grid(steps_warp_kernel<D, false>, 32, WarpStepPlan<D, false>::bytes);
      } else if (g.kt_out) {
        if constexpr (C == 32 && D >= 32) {
          if (look) on_grid(steps_kernel<D, false, true, true>, StepPlan<D, false, true, true>::NTS, StepPlan<D, false, true, true>::bytes);
          else on_grid(steps_kernel<D, false, true>, StepPlan<D, false, true>::NTS, StepPlan<D, false, true>::bytes);
        } else {
          throw std::invalid_argument("scan gate: the state prep is folded into the steps kernel at C = 32, D >= 32 only");
        }
      } else if (look) {
        on_grid(steps_kernel<D, false, false, true>, StepPlan<D, false, false, true>::NTS, StepPlan<D, false, false, true>::bytes);
      } else {
        on_grid(steps_kernel<D, false>, StepPlan<D, false>::NTS, StepPlan<D, false>::bytes);
      }
    }
  }
  if (final_a) {
    const auto fa = final_a_kernel<D>;
    VLA_CUDA_CHECK(cudaFuncSetAttribute(fa, cudaFuncAttributeMaxDynamicSharedMemorySize, inverse_bytes<D>()));
    fa<<<BH, NT, inverse_bytes<D>(), s2>>>(g);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
  if (fork) {
    VLA_CUDA_CHECK(cudaEventRecord(g.join, g.side));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(s, g.join, 0));
  }
}

template <class Prec>
void launch_prec(const GateParams& g, cudaStream_t s) {
  if (g.D == 64 && g.C == 64) return launch_typed<Prec, 64, 64>(g, s);
  if (g.D == 64 && g.C == 32) return launch_typed<Prec, 64, 32>(g, s);
  if (g.D == 32 && g.C == 64) return launch_typed<Prec, 32, 64>(g, s);
  if (g.D == 32 && g.C == 32) return launch_typed<Prec, 32, 32>(g, s);
  if (g.D == 16 && g.C == 64) return launch_typed<Prec, 16, 64>(g, s);
  if (g.D == 16 && g.C == 32) return launch_typed<Prec, 16, 32>(g, s);
  throw std::invalid_argument("scan gate: (D, C) = (" + std::to_string(g.D) + ", " + std::to_string(g.C) +
                              ") not supported (D in {16, 32, 64}, C in {32, 64})");
}

}  // namespace

bool gate_folds_state_prep(int D, int C, bool u_separate, ref::ScanGateForm form) {
  return form != ref::ScanGateForm::woodbury && !u_separate && C == 32 && D >= 32;
}
bool gate_folds_state_prep_by_default(int D, int C, bool u_separate, ref::ScanGateForm form) {
#if VLA_SCAN_FOLD_STATE_PREP
  return gate_folds_state_prep(D, C, u_separate, form);
#else
  // Measured slower (H100, 2026-12-05: the scan 1.648 ms folded against 1.634 at B = 1, H = 16,
  // T = 16,384; 0.775 against 0.697 at T = 4,096; docs/CHUNKED.md 8.18): the steps kernel's
  // blocks run in step, so their epilogues coincide and the prep's work runs at 8 warps an SM
  // where its own kernel has 32. -DVLA_SCAN_FOLD_STATE_PREP=1 builds it as launch_scan's choice.
  (void)D, (void)C, (void)u_separate, (void)form;
  return false;
#endif
}

bool gate_supported(int D, int C) { return (D == 16 || D == 32 || D == 64) && (C == 32 || C == 64); }

const float* gate_nsum(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate) {
  return reinterpret_cast<const float*>(static_cast<const unsigned char*>(gate_scratch) + scratch_layout(B, T, H, D, C, u_separate).nsum);
}

const unsigned* gate_start_status(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate) {
  return reinterpret_cast<const unsigned*>(static_cast<const unsigned char*>(gate_scratch) + scratch_layout(B, T, H, D, C, u_separate).status);
}

SegmentStarts gate_segment_starts(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate) {
  const ScratchLayout l = scratch_layout(B, T, H, D, C, u_separate);
  const auto* base = static_cast<const unsigned char*>(gate_scratch);
  return {reinterpret_cast<const double*>(base + l.m), reinterpret_cast<const double*>(base + l.ainv), n_segments(B * H, T, C)};
}

std::size_t gate_scratch_bytes(int B, int T, int H, int D, int C, bool u_separate) {
  return scratch_layout(B, T, H, D, C, u_separate).total;
}

void launch_gate(const GateParams& g, cudaStream_t s) {
  if (g.B < 1 || g.T < 1 || g.H < 1) throw std::invalid_argument("scan gate: B, T and H must be >= 1");
  if (g.ratio && !g.out.den) throw std::invalid_argument("scan gate: the ratio readout needs the den buffer");
  if (g.bf16_io) launch_prec<PrecBf16>(g, s);
  else launch_prec<PrecFp32>(g, s);
}

}  // namespace vla::gpu::scan
