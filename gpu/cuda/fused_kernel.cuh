// The fused VLA forward kernel: one block per (batch, head) runs all T steps with
// A, S and n in registers and shared memory (layout: fused_traits.hpp). Per
// element it calls the formulas of core/formulas.hpp and the roundings of
// precision.hpp; its reduction order is the one TwinPolicy (twin_policy.hpp)
// reproduces on the host. Build with --fmad=false: the only FMAs are the
// explicit vfma calls.
//
// Two sides (kernel v4, reports/gpu/FLOOR.md). The block has 2 NT threads: the
// A side (threads 0 .. NT-1) holds A, the S side (NT .. 2 NT-1) holds S, each in
// the traits' layout (row groups of G lanes, R rows x CW columns per thread).
// They meet only at z = A_{t-1} u, which the A side publishes before the step's
// barrier; every other exchange stays inside a warp. Each scheduler gets twice
// the warps, each with about half of a step's instructions. Where the traits
// do not split (D = 128: 64 floats of state per thread would not fit beside the
// rest in the 128 registers of a 512-thread block), NT threads hold both and
// run both sides' parts in turn (the `sides` helper).
//
// Features. Everything that depends on the inputs alone (phi(k), k^, u, phi(q),
// n_t and the ratio denominator n_t . phi(q_t)) is computed once per chunk of
// kChunk steps by the whole block, each row group taking different steps, and
// kept in shared memory.
//
// One step t, one block-wide barrier (B) where the gate can be taken from z
// (core::gate_from_z_exact: u = k^, no ridge this step, delta unfloored):
//   before B  A side: z = A u (row sums by reduce-scatter: each lane ends with one
//             row), published by rows; the rows of its own group by shuffles.
//             S side: S k^ and, for the readout of step t-1, S phi(q) and the row
//             norms of S, their three reduce-scatters interleaved; r = v - S k^
//             by shuffles; y = S phi(q) and the row norms to shared memory
//   after B   both: z's column segment, delta = 1 + u.z by the group tree.
//             A side: g = z (1 / delta), the A update (+ ridge).
//             S side: ||z||^2 by the same tree, a = z (1 / ||z||) (or g when the
//             gate is not normalised), the S update.
// Elsewhere (ridge steps, floored delta, u given or unit-scaled) the gate is
// w = A_t k^: the A side takes one more product and publishes it, one more barrier.
// Outputs off the chain. o_t = y_t / den_t and ||S_t||_F (the row norms summed
// in TwinPolicy::sum's order) are written a chunk at a time, two chunks behind
// (coalesced stores, the divisions spread over the block), and at the end.
// Inputs travel global -> shared memory by cp.async into a ring of 2 kChunk
// steps, a chunk ahead of the features that read them; each copying thread's
// source and slot offset are fixed, computed once.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "check.cuh"
#include "device_sms.cuh"
#include "vla/core/formulas.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"

namespace vla::gpu::detail {

constexpr int kChunk = 16;         // steps per feature chunk
constexpr int kRing = 2 * kChunk;   // raw input ring (steps)
static_assert((kChunk & (kChunk - 1)) == 0, "slots and parities by masks");

// Threads per block: the A side and the S side, NT each (one set of NT holding
// both where the traits do not split them).
template <class Tr>
__host__ __device__ constexpr int block_threads() {
  return Tr::SPLIT ? 2 * Tr::NT : Tr::NT;
}

// NV sums over the G lanes of a row group by the xor butterfly (offsets G/2 ..
// 1), their levels interleaved; each is bit for bit the single butterfly.
template <int G, int NV>
__device__ __forceinline__ void group_sums(float (&x)[NV]) {
#pragma unroll
  for (int m = G / 2; m >= 1; m /= 2)
#pragma unroll
    for (int v = 0; v < NV; ++v) x[v] = x[v] + __shfl_xor_sync(0xffffffffu, x[v], m);
}

template <int G>
__device__ __forceinline__ float group_sum(float x) {
  float y[1] = {x};
  group_sums<G, 1>(y);
  return y[0];
}

// Row sums over the G lanes of a group, scattered, for NV vectors at once: x[v][i]
// is this lane's partial of row i (i < R) of vector v; out[v] is the full sum of
// row c / (G / R). Each level halves the rows a lane carries: lanes with bit M of
// c set keep the upper half and send the lower one to their partner c ^ M. Every
// sum pairs the same lanes as group_sum's butterfly, so a row's value is bit for
// bit group_sum's; it costs R - 1 + log2(G) shuffles per vector instead of
// R log2(G), and the NV vectors' levels overlap.
template <int G, int R, int NV>
__device__ __forceinline__ void group_reduce_scatter(const float (&x)[NV][R], int c, float (&out)[NV]) {
  static_assert(R >= 1 && R <= G && (R & (R - 1)) == 0, "R: a power of two, at most G");
  if constexpr (R == 1) {
#pragma unroll
    for (int v = 0; v < NV; ++v) out[v] = x[v][0];
    group_sums<G, NV>(out);
  } else {
    constexpr int H = R / 2, M = G / 2;
    const bool upper = (c & M) != 0;
    float y[NV][H];
#pragma unroll
    for (int i = 0; i < H; ++i)
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        const float send = upper ? x[v][i] : x[v][i + H];
        const float keep = upper ? x[v][i + H] : x[v][i];
        y[v][i] = keep + __shfl_xor_sync(0xffffffffu, send, M);
      }
    group_reduce_scatter<M, H, NV>(y, c, out);
  }
}

// After a reduce-scatter, lane k (G / R) of each group holds row k of the group:
// the R rows of this lane's group, copied by shuffles (exact).
template <int G, int R>
__device__ __forceinline__ void group_rows(float x, float (&out)[R]) {
#pragma unroll
  for (int k = 0; k < R; ++k) out[k] = __shfl_sync(0xffffffffu, x, k * (G / R), G);
}

// TwinPolicy's tree_sum in registers: x[k] absorbs x[k + m] for m = N/2, .., 1.
template <int N>
__device__ __forceinline__ float pairwise_sum(float (&x)[N]) {
  if constexpr (N > 1) {
#pragma unroll
    for (int k = 0; k < N / 2; ++k) x[k] = x[k] + x[k + N / 2];
    return pairwise_sum<N / 2>(reinterpret_cast<float(&)[N / 2]>(x));
  }
  return x[0];
}

// This lane's partials of M_r . x for its RN rows (RN independent FMA chains).
template <int RN, int CW>
__device__ __forceinline__ void row_partials(const float (&M)[RN][CW], const float (&x)[CW], float (&out)[RN]) {
#pragma unroll
  for (int rr = 0; rr < RN; ++rr) {
    float acc = 0.0f;
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) acc = core::vfma(M[rr][jj], x[jj], acc);
    out[rr] = acc;
  }
}

// This lane's segment of a.b: CW sequential FMAs from zero (the group tree follows).
template <int CW>
__device__ __forceinline__ float seg_partial(const float (&a)[CW], const float (&b)[CW]) {
  float acc = 0.0f;
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) acc = core::vfma(a[jj], b[jj], acc);
  return acc;
}

// a.b over D columns: this lane's CW-segment by sequential FMAs, then the group tree.
template <class Tr>
__device__ __forceinline__ float seg_dot(const float (&a)[Tr::CW], const float (&b)[Tr::CW]) {
  return group_sum<Tr::G>(seg_partial<Tr::CW>(a, b));
}

// CW consecutive floats from shared memory (16-byte loads).
template <int CW>
__device__ __forceinline__ void load_floats(const float* p, float (&out)[CW]) {
#pragma unroll
  for (int j = 0; j < CW; j += 4) {
    const float4 x = *reinterpret_cast<const float4*>(p + j);
    out[j] = x.x;
    out[j + 1] = x.y;
    out[j + 2] = x.z;
    out[j + 3] = x.w;
  }
}

// The gate where it is not taken from z: this lane's column segment of
// w = A_t k^ (published by rows in shared memory), divided by ||w|| when the
// gate is normalised (one IEEE reciprocal, then products: TwinPolicy::divide_all).
// Every lane of the row group must call it (the norm's group tree).
template <class Tr>
__device__ __forceinline__ void gate_from_w(const float* w_seg, bool normalize, float (&a)[Tr::CW]) {
  load_floats<Tr::CW>(w_seg, a);
  if (normalize) {
    const float inv_nw = 1.0f / core::vsqrt(seg_dot<Tr>(a, a));
#pragma unroll
    for (int jj = 0; jj < Tr::CW; ++jj) a[jj] = a[jj] * inv_nw;
  }
}

// CW consecutive inputs (float or bf16 bits) from shared memory, as floats.
template <class Prec, int CW>
__device__ __forceinline__ void load_inputs(const typename Prec::In* p, float (&out)[CW]) {
  if constexpr (Prec::bf16_io) {
#pragma unroll
    for (int j = 0; j < CW; j += 4) {
      const uint2 x = *reinterpret_cast<const uint2*>(p + j);
      out[j] = Prec::load(static_cast<std::uint16_t>(x.x & 0xffffu));
      out[j + 1] = Prec::load(static_cast<std::uint16_t>(x.x >> 16));
      out[j + 2] = Prec::load(static_cast<std::uint16_t>(x.y & 0xffffu));
      out[j + 3] = Prec::load(static_cast<std::uint16_t>(x.y >> 16));
    }
  } else {
    load_floats<CW>(p, out);
  }
}

template <class Tr, class Prec>
struct FusedSmem {
  using In = typename Prec::In;
  alignas(16) In ring[kRing][4][Tr::D];    // raw q, k, v, u of step t in slot t % kRing
  // Per-step vectors of two chunks, step t in slot t % kRing (the chunk's parity
  // and its step in the chunk):
  alignas(16) float kh[kRing][Tr::D];      // features, written a chunk ahead
  alignas(16) float u[kRing][Tr::D];
  alignas(16) float phiq[kRing][Tr::D];
  alignas(16) float y[kRing][Tr::D];       // S_t phi(q_t) by rows (o before the ratio)
  alignas(16) float fr[kRing][Tr::D];      // ||row i of S_t||^2
  alignas(16) float scan[kChunk][Tr::D];   // a chunk's phi(k_t), then n_t
  alignas(16) float z[2][Tr::D];           // z = A_{t-1} u_t by rows, by step parity
  alignas(16) float w[Tr::D];              // w = A_t k^_t by rows (where the gate needs it)
  float den[2][kChunk];                    // ratio denominators, by chunk parity
  float frw[2][kChunk][Tr::NW];            // per-warp partials of ||S_t||_F^2, by chunk parity
};

// This thread's input copy (at most one 16-byte piece per step; kernels of any
// block size with at least 4 D / (16-byte pieces) threads): its source at step
// 0 and its offset in a ring slot, fixed for the whole run.
template <class Tr, class Prec>
struct InputCopies {
  using In = typename Prec::In;
  static constexpr int kElemsPer16B = 16 / static_cast<int>(sizeof(In));
  static constexpr int kChunksPerVec = Tr::D / kElemsPer16B;
  const In* src;  // step t's, t = 0, 1, ..
  In* dst;        // + slot * 4 D
  std::size_t stride;
  int T;
  bool copies;
  __device__ InputCopies(FusedSmem<Tr, Prec>& sm, const FusedParams& p, int tid, std::size_t base, std::size_t stride_)
      : stride(stride_), T(p.T) {
    const int nvec = p.u != nullptr ? 4 : 3;
    copies = tid < nvec * kChunksPerVec;
    const int cvec = tid / kChunksPerVec, cpart = tid % kChunksPerVec;
    const void* const vec = cvec == 0 ? p.q : cvec == 1 ? p.k : cvec == 2 ? p.v : p.u;  // no array: no local memory
    src = copies ? static_cast<const In*>(vec) + base + cpart * kElemsPer16B : nullptr;
    dst = &sm.ring[0][0][0] + cvec * Tr::D + cpart * kElemsPer16B;
  }
  // Starts the copies of step t's inputs into its ring slot (called for t = 0,
  // 1, 2, .. in order); always commits a group (empty past T) so that group
  // counting stays uniform.
  __device__ __forceinline__ void issue(int t) {
    if (t < T && copies) {
      __pipeline_memcpy_async(dst + (t & (kRing - 1)) * (4 * Tr::D), src, 16);
      src += stride;
    }
    __pipeline_commit();
  }
};

// Features of steps t0 .. t0 + ns - 1 (ns <= kChunk) by a block of BLOCK
// threads: k^ and u, and where `readout`, phi(q) and phi(k) (for the n scan).
// Block row group fgi takes steps fgi, fgi + BLOCK / G, ...; every lane of a
// warp runs every pass (the shuffles need the whole warp), a group past the
// chunk's end on a copy of step t0, unstored. S_SIDE (the cluster kernel's S
// blocks with feature warps, v7): the readout's vectors and v_t as floats (in
// sm.u: an S block needs no u), no u.
template <class Tr, class Prec, int BLOCK, bool S_SIDE = false>
__device__ void feature_vectors(FusedSmem<Tr, Prec>& sm, const FusedParams& p, int t0, int ns, int fgi, int c, bool readout) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, CW = Tr::CW, FGROUPS = BLOCK / Tr::G;
  const int slot0 = t0 & (kRing - 1);
#pragma unroll 1
  for (int s0 = 0; s0 < kChunk; s0 += FGROUPS) {
    const int s = s0 + fgi, se = s < ns ? s : 0;
    const In* slot = &sm.ring[(t0 + se) & (kRing - 1)][0][0];
    float x[CW], phik[CW], kh[CW], u[CW], phiq[CW];
    load_inputs<Prec, CW>(slot + 1 * D + c * CW, x);
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) phik[jj] = core::phi(x[jj], p.elu1);
    if (p.normalize_key) {
      const float nk = core::vsqrt(seg_dot<Tr>(phik, phik));
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) kh[jj] = phik[jj] / nk;
    } else {
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) kh[jj] = phik[jj];
    }
    if constexpr (S_SIDE) {
      load_inputs<Prec, CW>(slot + 2 * D + c * CW, u);  // v_t (exact as floats)
    } else {
      if (p.u != nullptr) {
        load_inputs<Prec, CW>(slot + 3 * D + c * CW, u);
      } else {
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) u[jj] = kh[jj];
      }
      if (p.u_unit_scaled) {
        const float nu = core::vsqrt(seg_dot<Tr>(u, u));
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) u[jj] = (u[jj] / nu) * p.inv_sqrt_dk;
      }
    }
    if (S_SIDE || readout) {
      load_inputs<Prec, CW>(slot + 0 * D + c * CW, x);
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) phiq[jj] = core::phi(x[jj], p.elu1);
    }
    if (s < ns) {
#pragma unroll
      for (int jj = 0; jj < CW; jj += 4) {
        *reinterpret_cast<float4*>(&sm.kh[slot0 + s][c * CW + jj]) = make_float4(kh[jj], kh[jj + 1], kh[jj + 2], kh[jj + 3]);
        *reinterpret_cast<float4*>(&sm.u[slot0 + s][c * CW + jj]) = make_float4(u[jj], u[jj + 1], u[jj + 2], u[jj + 3]);
        if (S_SIDE || readout) {
          *reinterpret_cast<float4*>(&sm.phiq[slot0 + s][c * CW + jj]) = make_float4(phiq[jj], phiq[jj + 1], phiq[jj + 2], phiq[jj + 3]);
          *reinterpret_cast<float4*>(&sm.scan[s][c * CW + jj]) = make_float4(phik[jj], phik[jj + 1], phik[jj + 2], phik[jj + 3]);
        }
      }
    }
  }
}

// n_t = n_{t-1} + phi(k_t) over the ns steps of a chunk, in step order, by the
// lanes of one row group (n: their column segments); the loads of NB steps
// issued together (only the additions are a chain).
template <class Tr, class Prec>
__device__ void scan_n(FusedSmem<Tr, Prec>& sm, int ns, int c, float (&n)[Tr::CW]) {
  constexpr int CW = Tr::CW, NB = CW <= 4 ? 4 : 1;
#pragma unroll 1
  for (int s0 = 0; s0 < ns; s0 += NB) {
    float x[NB][CW];
#pragma unroll
    for (int k = 0; k < NB; ++k)
      if (s0 + k < ns) load_floats<CW>(&sm.scan[s0 + k][c * CW], x[k]);
#pragma unroll
    for (int k = 0; k < NB; ++k) {
      if (s0 + k < ns) {
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) n[jj] = n[jj] + x[k][jj];
#pragma unroll
        for (int jj = 0; jj < CW; jj += 4)
          *reinterpret_cast<float4*>(&sm.scan[s0 + k][c * CW + jj]) = make_float4(n[jj], n[jj + 1], n[jj + 2], n[jj + 3]);
      }
    }
  }
}

// The ratio denominators n_t . phi(q_t) of a chunk's ns steps (after scan_n and a barrier).
template <class Tr, class Prec, int BLOCK>
__device__ void ratio_dens(FusedSmem<Tr, Prec>& sm, const FusedParams& p, int t0, int ns, int fgi, int c) {
  constexpr int CW = Tr::CW, FGROUPS = BLOCK / Tr::G;
  const int buf = (t0 / kChunk) & 1, slot0 = t0 & (kRing - 1);
#pragma unroll 1
  for (int s0 = 0; s0 < kChunk; s0 += FGROUPS) {
    const int s = s0 + fgi, se = s < ns ? s : 0;
    float nt[CW], phiq[CW];
    load_floats<CW>(&sm.scan[se][c * CW], nt);
    load_floats<CW>(&sm.phiq[slot0 + se][c * CW], phiq);
    const float den = core::readout_den(seg_dot<Tr>(nt, phiq), p.den_floor);
    if (s < ns && c == 0) sm.den[buf][s] = den;
  }
}

// o of the steps of chunk ck (kChunk steps from ck kChunk, fewer at the end),
// rows r0 .. r0 + nrows - 1, from y and the denominators, by 16-byte pieces.
template <class Tr, class Prec, int BLOCK>
__device__ void write_o(FusedSmem<Tr, Prec>& sm, const FusedParams& p, int ck, std::size_t base, std::size_t stride, int r0, int nrows, int tid) {
  const int t0 = ck * kChunk, ns = min(kChunk, p.T - t0), buf = ck & 1, slot0 = t0 & (kRing - 1), pieces = nrows / 4;
  for (int i = tid; i < ns * pieces; i += BLOCK) {
    const int s = i / pieces, col = r0 + (i % pieces) * 4;
    float y[4];
    load_floats<4>(&sm.y[slot0 + s][col], y);
    if (p.ratio) {
      const float den = sm.den[buf][s];
#pragma unroll
      for (int j = 0; j < 4; ++j) y[j] = y[j] / den;
    }
    auto* o = static_cast<typename Prec::Out*>(p.o) + base + std::size_t(t0 + s) * stride + col;
    if constexpr (Prec::bf16_io) {
      *reinterpret_cast<uint2*>(o) = make_uint2(Prec::out_bits(y[0]) | (unsigned(Prec::out_bits(y[1])) << 16),
                                                Prec::out_bits(y[2]) | (unsigned(Prec::out_bits(y[3])) << 16));
    } else {
      *reinterpret_cast<float4*>(o) = make_float4(Prec::out_bits(y[0]), Prec::out_bits(y[1]), Prec::out_bits(y[2]), Prec::out_bits(y[3]));
    }
  }
}

// ||S_t||_F^2's partial of one warp of the twin's layout: its RPW = 32 R / G
// consecutive row norms (one per span of G / R lanes) by the shuffle tree.
template <class Tr>
__device__ __forceinline__ float warp_rows_sum(const float* fr) {
  constexpr int RPW = 32 * Tr::R / Tr::G;
  float x[RPW];
#pragma unroll
  for (int k = 0; k < RPW; ++k) x[k] = fr[k];
  return pairwise_sum<RPW>(x);
}

// One matrix-vector product's rows in the layout (M: this thread's R rows x CW
// columns): this lane's partials, the group's reduce-scatter, the lanes owning
// a row store it at out_row; returns this lane's row.
template <int G, int R, int CW>
__device__ __forceinline__ float product_rows(const float (&M)[R][CW], const float (&x)[CW], int c, bool owner, float* out_row) {
  float part[1][R], y[1];
  row_partials(M, x, part[0]);
  group_reduce_scatter<G, R, 1>(part, c, y);
  if (owner) *out_row = y[0];
  return y[0];
}

// A_t = A_{t-1} - z g^T with g = z (1 / delta) (TwinPolicy::divide_all), + ridge
// on the diagonal where due, each entry as core::sm_entry and stored as the
// precision's state: this thread's rows row0 .. and columns col0 .. (zc: z's
// column segment, zrow: z of its rows).
template <class Prec, int R, int CW>
__device__ __forceinline__ void update_a(float (&MA)[R][CW], const float (&zc)[CW], const float (&zrow)[R], float inv_delta, bool ridge,
                                         float ridge_value, int row0, int col0) {
  float g[CW];
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) g[jj] = zc[jj] * inv_delta;
  if (ridge) {
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) {
        float e = core::sm_entry(MA[rr][jj], zrow[rr], g[jj]);
        if (row0 + rr == col0 + jj) e = e + ridge_value;
        MA[rr][jj] = Prec::store_state(e);
      }
  } else {
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) MA[rr][jj] = Prec::store_state(core::sm_entry(MA[rr][jj], zrow[rr], g[jj]));
  }
}

// S_t = S_{t-1} + r a^T on this thread's rows (core::state_entry), stored as the precision's state.
template <class Prec, int R, int CW>
__device__ __forceinline__ void update_s(float (&MS)[R][CW], const float (&rrow)[R], const float (&a)[CW]) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) MS[rr][jj] = Prec::store_state(core::state_entry(MS[rr][jj], rrow[rr], a[jj]));
}

// This thread's rows of a D x D state to global memory (out: its first row's column segment).
template <int D, int R, int CW>
__device__ __forceinline__ void write_rows(const float (&X)[R][CW], float* out) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; jj += 4)
      *reinterpret_cast<float4*>(out + rr * D + jj) = make_float4(X[rr][jj], X[rr][jj + 1], X[rr][jj + 2], X[rr][jj + 3]);
}

// The scalars of step t once z's column segment zc is loaded: delta = 1 + u.z
// (core::sm_delta) and, where want_zz (only where both_trees), 1 / ||z||: dots
// in the twin's order (lane segments, then the group tree, both trees
// interleaved where both_trees); the ridge test and whether the gate may come
// from z (core::gate_from_z_exact; the same in every thread of the block).
struct StepScalars {
  float delta, inv_nz;
  bool ridge, exact;
};
template <int G, int CW>
__device__ __forceinline__ StepScalars step_scalars(const FusedParams& p, int t, const float (&u)[CW], const float (&zc)[CW], bool both_trees,
                                                    bool want_zz, bool u_is_kh) {
  StepScalars r{};
  float dz;
  if (both_trees) {
    float dots[2] = {seg_partial<CW>(u, zc), want_zz ? seg_partial<CW>(zc, zc) : 0.0f};
    group_sums<G, 2>(dots);
    dz = dots[0];
    // 1 / ||z|| ahead of the test whether the gate may come from z (its
    // latency overlaps the test; unused where it may not).
    if (want_zz) r.inv_nz = 1.0f / core::vsqrt(dots[1]);
  } else {
    dz = group_sum<G>(seg_partial<CW>(u, zc));
  }
  r.delta = core::sm_delta(dz, p.delta_floor);
  r.ridge = core::ridge_due(t + 1, p.ridge_every);
  r.exact = u_is_kh && !r.ridge && r.delta == 1.0f + dz && r.delta > 0.0f;
  return r;
}

// step_scalars with the group sums through shared memory (the cluster kernel's
// SMEM_TREES): this lane's partials to its group's slots q (G each: u.z, then
// z.z where both_trees), every partial of the group back in lane order, and
// pairwise_sum, whose pairing is the butterfly's (x[k] + x[k + G/2], ..): the
// same bits as group_sums. The whole warp calls it.
template <int G, int CW>
__device__ __forceinline__ StepScalars step_scalars_smem(const FusedParams& p, int t, const float (&u)[CW], const float (&zc)[CW],
                                                         bool both_trees, bool want_zz, bool u_is_kh, float* q, int c) {
  StepScalars r{};
  float x[G];
  q[c] = seg_partial<CW>(u, zc);
  if (both_trees) q[G + c] = want_zz ? seg_partial<CW>(zc, zc) : 0.0f;
  __syncwarp();
  load_floats<G>(q, x);
  const float dz = pairwise_sum<G>(x);
  if (both_trees && want_zz) {
    float y[G];
    load_floats<G>(q + G, y);
    r.inv_nz = 1.0f / core::vsqrt(pairwise_sum<G>(y));
  }
  r.delta = core::sm_delta(dz, p.delta_floor);
  r.ridge = core::ridge_due(t + 1, p.ridge_every);
  r.exact = u_is_kh && !r.ridge && r.delta == 1.0f + dz && r.delta > 0.0f;
  return r;
}

template <class Tr, class Prec>
__global__ void __launch_bounds__(block_threads<Tr>(), Tr::MIN_BLOCKS) vla_fused_kernel(const __grid_constant__ FusedParams p) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, R = Tr::R, NT = Tr::NT, NW = Tr::NW;
  constexpr int BLOCK = block_threads<Tr>();
  static_assert(BLOCK >= 4 * InputCopies<Tr, Prec>::kChunksPerVec, "one 16-byte copy per thread and step at most");
  extern __shared__ __align__(16) unsigned char vla_smem[];
  auto& sm = *reinterpret_cast<FusedSmem<Tr, Prec>*>(vla_smem);

  const int tid = threadIdx.x;
  const bool s_side = Tr::SPLIT && tid >= NT;  // warp-uniform: NT is a multiple of 32
  const bool doA = !s_side, doS = !Tr::SPLIT || s_side;  // this thread's matrices
  const int lt = tid - (s_side ? NT : 0);
  const int c = lt % G;   // lane in the row group: owns columns c*CW ..
  const int gi = lt / G;  // row group of the side: owns rows gi*R ..
  const int fgi = tid / G;  // row group of the block (features)
  const int b = blockIdx.x / p.H, h = blockIdx.x % p.H;
  const int T = p.T;
  const std::size_t stride = std::size_t(p.H) * D;              // elements between steps
  const std::size_t base = (std::size_t(b) * T * p.H + h) * D;  // element (b, 0, h, 0)
  InputCopies<Tr, Prec> copy(sm, p, tid, base, stride);
  auto issue = [&](int t) { copy.issue(t); };

  // State: A = I / lambda0, S = 0 (this thread's rows x column segment); split,
  // MA and MS are one array, A on the A side and S on the S side. n = 0 (the
  // column segment, used by the block's row group 0 only, which runs the n scan).
  float M[Tr::SPLIT ? 1 : 2][R][CW], n[CW];
  auto& MA = M[0];
  auto& MS = M[Tr::SPLIT ? 0 : 1];
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) {
      MA[rr][jj] = (doA && gi * R + rr == c * CW + jj) ? p.inv_lambda0 : 0.0f;
      if constexpr (!Tr::SPLIT) MS[rr][jj] = 0.0f;
    }
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) n[jj] = 0.0f;

  // o and ||S_t||_F of the steps of chunk ck (kChunk steps from ck kChunk, fewer
  // at the end), from y and fr: rows (o by 16-byte pieces, the row norms' per-warp
  // trees), then, after a barrier, norms (the warps' partials in warp order, the
  // square root) by the S side's threads. TwinPolicy::sum is this order.
  auto flush_rows = [&](int ck) {
    const int t0 = ck * kChunk, ns = min(kChunk, T - t0), buf = ck & 1, slot0 = t0 & (kRing - 1);
    write_o<Tr, Prec, BLOCK>(sm, p, ck, base, stride, 0, D, tid);
    constexpr int RPW = 32 * R / G;  // rows per warp (one per span of G / R lanes)
    for (int i = tid; i < ns * NW; i += BLOCK) {
      const int s = i / NW, w = i % NW;
      sm.frw[buf][s][w] = warp_rows_sum<Tr>(&sm.fr[slot0 + s][w * RPW]);
    }
  };
  auto flush_norms = [&](int ck) {
    const int t0 = ck * kChunk, ns = min(kChunk, T - t0), buf = ck & 1;
    const int i = tid - (Tr::SPLIT ? NT : 0);
    if (i >= 0 && i < ns) {
      float total = 0.0f;
#pragma unroll
      for (int w = 0; w < NW; ++w) total = total + sm.frw[buf][i][w];
      p.state_norm[(std::size_t(b) * T + t0 + i) * p.H + h] = core::vsqrt(total);
    }
  };

  // Features of steps t0 .. t0 + ns - 1 (ns <= kChunk) by the whole block
  // (feature_vectors, scan_n, ratio_dens). Writes the outputs of the chunk two
  // behind first (its buffers are the ones this chunk's readouts will fill).
  // Ends with a barrier: the features are visible when it returns (the
  // denominators after the next barrier).
  auto features = [&](int t0) {
    const int ns = min(kChunk, T - t0);
    if (t0 >= 2 * kChunk) flush_rows(t0 / kChunk - 2);
    feature_vectors<Tr, Prec, BLOCK>(sm, p, t0, ns, fgi, c, true);
    __syncthreads();
    if (t0 >= 2 * kChunk) flush_norms(t0 / kChunk - 2);
    if (fgi == 0) scan_n<Tr, Prec>(sm, ns, c, n);
    __syncthreads();
    if (p.ratio) ratio_dens<Tr, Prec, BLOCK>(sm, p, t0, ns, fgi, c);
  };

  // This lane's row after a reduce-scatter (lanes c % SPAN == 0 own it; the
  // other lanes of the span hold copies).
  constexpr int SPAN = G / R;
  const int row = gi * R + c / SPAN;
  const bool owner = c % SPAN == 0;
  const bool u_is_kh = p.u == nullptr && !p.u_unit_scaled;  // u = k^: the gate may come from z
  const bool want_zz = doS && u_is_kh && p.normalize_gate;

  for (int s = 0; s < kRing - 1; ++s) issue(s);
  __pipeline_wait_prior(kChunk - 1);  // steps 0 .. kChunk-1 (this thread's copies) have landed
  __syncthreads();
  features(0);

  // This lane's slices of the per-step buffers (step t: + (t % kRing) D, or 4 D for the ring).
  const float* const kh_seg = &sm.kh[0][c * CW];
  const float* const u_seg = u_is_kh ? kh_seg : &sm.u[0][c * CW];
  const float* const phiq_seg = &sm.phiq[0][c * CW];
  const In* const v_at = &sm.ring[0][2][row];
  float* const y_at = &sm.y[0][row];
  float* const fr_at = &sm.fr[0][row];
  // k^_t, u_t, phi(q_{t-1}) and v_t (this lane's row), loaded a step ahead where
  // registers allow (CW <= 4; at D = 128 the floats would spill).
  constexpr bool kAhead = CW <= 4;
  float kh[CW], u[CW], phiq_prev[CW], v_row = 0.0f;
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) phiq_prev[jj] = 0.0f;
  auto load_step = [&](int t) {
    const int at = (t & (kRing - 1)) * D;
    load_floats<CW>(kh_seg + at, kh);
    load_floats<CW>(u_seg + at, u);
    if (doS) {
      v_row = Prec::load(v_at[4 * at]);
      if (t > 0) load_floats<CW>(phiq_seg + ((t - 1) & (kRing - 1)) * D, phiq_prev);
    }
  };
  if constexpr (kAhead) load_step(0);

  // S side: this lane's partials of the readout of S (S phi(q) and the row norms).
  auto readout_partials = [&](const float (&phiq)[CW], float (&yp)[R], float (&np)[R]) {
    row_partials(MS, phiq, yp);
#pragma unroll
    for (int rr = 0; rr < R; ++rr) np[rr] = seg_partial<CW>(MS[rr], MS[rr]);
  };

  // The A side's part of a stage, then the S side's: one or the other where the
  // sides are split (a warp-uniform branch), both in turn where not.
  auto sides = [&](auto&& a_part, auto&& s_part) {
    if constexpr (Tr::SPLIT) {
      if (s_side) s_part();
      else a_part();
    } else {
      a_part();
      s_part();
    }
  };

#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    const int par = t & 1;
    if constexpr (!kAhead) load_step(t);

    // Before B. A side: z = A_{t-1} u by rows, published; the group's rows kept.
    // S side: r = v - S_{t-1} k^ (the group's rows), and the readout of step t-1.
    float xr[Tr::SPLIT ? 1 : 2][R];  // z (A) and r (S) of this thread's rows, one array when split
    auto& zrow = xr[0];
    auto& rrow = xr[Tr::SPLIT ? 0 : 1];
    sides([&] {
      group_rows<G, R>(product_rows<G, R, CW>(MA, u, c, owner, &sm.z[par][row]), zrow);
    }, [&] {
      float red[3];
      if constexpr (CW <= 4) {
        float part[3][R];
        row_partials(MS, kh, part[0]);
        readout_partials(phiq_prev, part[1], part[2]);
        group_reduce_scatter<G, R, 3>(part, c, red);
      } else {  // at D = 128 three interleaved rounds would spill: S k^ first, then the readout's two
        float one[1][R], two[2][R], r1[1], r2[2];
        row_partials(MS, kh, one[0]);
        group_reduce_scatter<G, R, 1>(one, c, r1);
        readout_partials(phiq_prev, two[0], two[1]);
        group_reduce_scatter<G, R, 2>(two, c, r2);
        red[0] = r1[0];
        red[1] = r2[0];
        red[2] = r2[1];
      }
      group_rows<G, R>(v_row - red[0], rrow);
      if (t > 0 && owner) {
        const int at = ((t - 1) & (kRing - 1)) * D;
        y_at[at] = red[1];
        fr_at[at] = red[2];
      }
    });
    __syncthreads();  // B: z visible to all

    float zc[CW];
    load_floats<CW>(&sm.z[par][c * CW], zc);
    // delta = 1 + u.z and, on the S side where the gate may come from z, 1 / ||z||.
    const StepScalars sc = step_scalars<G, CW>(p, t, u, zc, doS, want_zz, u_is_kh);
    const float delta = sc.delta, inv_nz = sc.inv_nz;
    const bool ridge = sc.ridge, exact = sc.exact;
    // Quotients by one denominator as TwinPolicy::divide_all: one IEEE
    // reciprocal, then products.
    float a[CW];
    sides([&] {
      update_a<Prec, R, CW>(MA, zc, zrow, 1.0f / delta, ridge, p.ridge, gi * R, c * CW);
      if (!exact) product_rows<G, R, CW>(MA, kh, c, owner, &sm.w[row]);  // w = A_t k^ for the S side's gate
    }, [&] {
      if (!exact) return;
      if (p.normalize_gate) {
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a[jj] = zc[jj] * inv_nz;
      } else {
        const float inv_delta = 1.0f / delta;
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a[jj] = zc[jj] * inv_delta;
      }
    });
    if (!exact) {
      __syncthreads();  // w visible to the S side
      if (doS) gate_from_w<Tr>(&sm.w[c * CW], p.normalize_gate, a);
    }
    if (doS) update_s<Prec, R, CW>(MS, rrow, a);
    issue(t + kRing - 1);  // into the slot of step t-1, whose last reader (its v) finished before B
    if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
      __pipeline_wait_prior(kChunk - 1);  // the next chunk's inputs (this thread's copies) have landed
      __syncthreads();
      features(t + 1);
    }
    if constexpr (kAhead)
      if (t + 1 < T) load_step(t + 1);
  }

  // The readout of step T-1, then the outputs of the chunks not yet written.
  if (doS) {
    const int at = ((T - 1) & (kRing - 1)) * D;
    float phiq[CW], part[2][R], red[2];
    load_floats<CW>(phiq_seg + at, phiq);
    readout_partials(phiq, part[0], part[1]);
    group_reduce_scatter<G, R, 2>(part, c, red);
    if (owner) {
      y_at[at] = red[0];
      fr_at[at] = red[1];
    }
  }
  __syncthreads();
  const int last = (T - 1) / kChunk;
  if (last >= 1) flush_rows(last - 1);
  flush_rows(last);
  __syncthreads();
  if (last >= 1) flush_norms(last - 1);
  flush_norms(last);

  const std::size_t at = (std::size_t(b) * p.H + h) * D * D + std::size_t(gi * R) * D + c * CW;  // this thread's first entry
  if (doA) write_rows<D, R, CW>(MA, p.A + at);
  if (doS) write_rows<D, R, CW>(MS, p.S + at);
  __pipeline_wait_prior(0);  // no copy may outlive the block
}

}  // namespace vla::gpu::detail

#include "cluster_kernel.cuh"  // kernels v5 and v6: the cluster layout (uses the pieces above)

namespace vla::gpu::detail {

// Shared memory of one block (dynamic: above the 48 KB static limit for D = 128).
template <class Tr, class Prec>
constexpr int smem_bytes() {
  return static_cast<int>(sizeof(FusedSmem<Tr, Prec>));
}

// Raises the kernel's dynamic shared memory limit once (every launch checks it).
template <class Tr, class Prec>
void ensure_smem_limit() {
  static const cudaError_t e =
      cudaFuncSetAttribute(vla_fused_kernel<Tr, Prec>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<Tr, Prec>());
  VLA_CUDA_CHECK(e);
}

// Launches the kernel in layout Tr (checked).
template <class Tr, class Prec>
void launch_layout(const FusedParams& p, cudaStream_t stream) {
  ensure_smem_limit<Tr, Prec>();
  vla_fused_kernel<Tr, Prec><<<p.B * p.H, block_threads<Tr>(), smem_bytes<Tr, Prec>(), stream>>>(p);
  VLA_CUDA_CHECK(cudaGetLastError());
}

// Blocks of layout Tr that run at once on the current device (one wave).
template <class Tr, class Prec>
long long wave_blocks() {
  static const int per_sm = [] {
    ensure_smem_limit<Tr, Prec>();
    int n = 0;
    VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, vla_fused_kernel<Tr, Prec>, block_threads<Tr>(), smem_bytes<Tr, Prec>()));
    return n;
  }();
  return static_cast<long long>(per_sm) * device_sms();
}

// Whether launch p at head dimension D runs the many-heads layout: asked for,
// or (automatic; the launches that the cluster layout does not take) at D = 32
// and 64 always, elsewhere where its B*H blocks exceed one wave of the few-heads
// layout and a wave of the many-heads one holds more. Measured on the H200
// (reports/gpu/FLOOR.md, "The layouts' reach"; 44 to 256 heads, T = 4096, fp32):
// the many-heads blocks are faster at D = 32 (0.64 against 0.70 us per step) and
// D = 64 (0.87 against 0.96) at every count of heads, slower at D = 16 (0.64
// against 0.57). Where the few-heads layout is unsplit already (D = 128) it is
// the only one.
template <int D, class Prec>
bool many_heads(const FusedParams& p) {
  if constexpr (!FusedTraits<D>::SPLIT) return false;
  if (p.layout == FusedLayout::few_heads) return false;
  if (p.layout == FusedLayout::many_heads) return true;
  if constexpr (D == 32 || D == 64) {
    return true;
  } else {
    const long long few = wave_blocks<FusedTraits<D>, Prec>();
    return static_cast<long long>(p.B) * p.H > few && wave_blocks<FusedTraitsManyHeads<D>, Prec>() > few;
  }
}

// The cluster kernel (kernel v8) that launch p at head dimension D runs, if any:
// asked for, or (automatic) where its B*H clusters run at once (one wave, SMs
// shared where they fit: cluster_wave), the shipped build while its wave holds
// them, else (D = 32, 64) the wide build (FusedTraitsClusterWide) while its wave
// does; beyond, none (the choice of many_heads). Asked for beyond every wave,
// the build with the larger wave.
enum class ClusterBuild { none, shipped, wide };
template <int D, class Prec>
ClusterBuild cluster_build(const FusedParams& p) {
  if (p.layout != FusedLayout::cluster && p.layout != FusedLayout::automatic) return ClusterBuild::none;
  const long long heads = static_cast<long long>(p.B) * p.H;
  if (heads <= cluster_wave<FusedTraitsClusterShipped<D>, Prec>()) return ClusterBuild::shipped;
  if constexpr (kClusterWide<D>) {
    if (p.layout == FusedLayout::cluster || heads <= cluster_wave<FusedTraitsClusterWide<D>, Prec>()) return ClusterBuild::wide;
  }
  return p.layout == FusedLayout::cluster ? ClusterBuild::shipped : ClusterBuild::none;
}

// The kernel that launch p runs at head dimension D, for the launch and for its
// report alike (so that they cannot disagree): cluster(Tr{}) with the cluster
// build's traits that cluster_build chooses, else layout(Tr{}, layout) with the
// one-block layout's (many_heads, else few-heads).
template <int D, class Prec, class Cluster, class Layout>
decltype(auto) with_kernel(const FusedParams& p, Cluster cluster, Layout layout) {
  const ClusterBuild cb = cluster_build<D, Prec>(p);
  if (cb == ClusterBuild::shipped) return cluster(FusedTraitsClusterShipped<D>{});
  if constexpr (kClusterWide<D>)
    if (cb == ClusterBuild::wide) return cluster(FusedTraitsClusterWide<D>{});
  if constexpr (FusedTraits<D>::SPLIT)
    if (many_heads<D, Prec>(p)) return layout(FusedTraitsManyHeads<D>{}, FusedLayout::many_heads);
  return layout(FusedTraits<D>{}, FusedLayout::few_heads);
}

// Launches the kernel for head dimension D and precision Prec that with_kernel chooses.
template <int D, class Prec>
void launch_typed(const FusedParams& p, cudaStream_t stream) {
  with_kernel<D, Prec>(
      p, [&](auto tr) { launch_cluster<decltype(tr), Prec>(p, stream); },
      [&](auto tr, FusedLayout) { launch_layout<decltype(tr), Prec>(p, stream); });
}

template <class Tr, class Prec>
KernelInfo kernel_info_layout() {
  cudaFuncAttributes attr{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&attr, vla_fused_kernel<Tr, Prec>));
  ensure_smem_limit<Tr, Prec>();
  KernelInfo k;
  k.threads = block_threads<Tr>();
  k.registers = attr.numRegs;
  k.shared_bytes = smem_bytes<Tr, Prec>();
  k.local_bytes = static_cast<int>(attr.localSizeBytes);
  VLA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, vla_fused_kernel<Tr, Prec>, block_threads<Tr>(), smem_bytes<Tr, Prec>()));
  return k;
}

// The kernel that launch p runs: its resources and its layout.
template <int D, class Prec>
KernelInfo kernel_info_typed(const FusedParams& p) {
  return with_kernel<D, Prec>(
      p, [](auto tr) { return cluster_kernel_info<decltype(tr), Prec>(); },
      [](auto tr, FusedLayout layout) {
        KernelInfo k = kernel_info_layout<decltype(tr), Prec>();
        k.layout = layout;
        return k;
      });
}

// Calls f(std::integral_constant<int, D>{}) for head dimension d.
template <class F>
decltype(auto) dispatch_d(int d, F&& f) {
  switch (d) {
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
  }
  throw std::invalid_argument("fused kernel: head dimension " + std::to_string(d) + " is not one of 16, 32, 64, 128");
}

// The four head dimensions of one precision (instantiated in fused_<kind>.cu
// by VLA_FUSED_INSTANCES, one file per precision so that they compile in parallel).
template <class Prec>
void launch_prec(const FusedParams& p, cudaStream_t stream);
template <class Prec>
KernelInfo kernel_info_prec(const FusedParams& p);

#define VLA_FUSED_INSTANCES(PREC)                                                                                    \
  template <>                                                                                                        \
  void launch_prec<PREC>(const FusedParams& p, cudaStream_t stream) {                                                \
    dispatch_d(p.D, [&](auto d) { launch_typed<decltype(d)::value, PREC>(p, stream); });                            \
  }                                                                                                                  \
  template <>                                                                                                        \
  KernelInfo kernel_info_prec<PREC>(const FusedParams& p) {                                                          \
    return dispatch_d(p.D, [&](auto d) { return kernel_info_typed<decltype(d)::value, PREC>(p); });                 \
  }

}  // namespace vla::gpu::detail
