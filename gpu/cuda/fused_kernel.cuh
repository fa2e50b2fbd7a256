// The fused VLA forward kernel: one block per (batch, head) runs all T steps with
// A, S and n in registers and shared memory (layout: fused_traits.hpp). Per
// element it calls the formulas of core/formulas.hpp and the roundings of
// precision.hpp; its reduction order is the one TwinPolicy (twin_policy.hpp)
// reproduces on the host. Build with --fmad=false: the only FMAs are the
// explicit vfma calls.
//
// Features. Everything that depends on the inputs alone (phi(k), k^, u, phi(q),
// n_t and the ratio denominator n_t . phi(q_t)) is computed once per chunk of
// kChunk steps by the whole block, each row group taking different steps, and
// kept in shared memory. (Computed per step instead, every row group would
// repeat it: measured, that was ~40% of the instructions of a step.)
//
// One step t, one block-wide barrier (B) where the gate can be taken from z
// (core::gate_from_z_exact: u = k^, no ridge this step, delta unfloored):
//   before B  one pass over this thread's rows of A_{t-1} and S_{t-1}:
//             z = A u and S k^ (row sums by reduce-scatter: each lane ends with
//             one row), published by rows with r = v - S k^; off the chain, the
//             readout of step t-1 (o, partials of ||S_{t-1}||_F^2)
//   after B   z's column segment; delta = 1 + u.z and ||z||^2 in one pair of
//             shuffle trees; g = z (1 / delta); A update (+ ridge); a = z (1 / ||z||)
//             (or g when the gate is not normalised); S update (quotients by one
//             reciprocal: TwinPolicy::divide_all)
// Elsewhere (ridge steps, floored delta, u given or unit-scaled) the gate is
// w = A_t k^: one more product, exchange and barrier. z and r are double-buffered
// by step parity, so the next step's publication cannot overwrite them early.
// Inputs travel global -> shared memory by cp.async into a ring of 2 kChunk
// steps, a chunk ahead of the features that read them.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "check.cuh"
#include "vla/core/formulas.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"

namespace vla::gpu::detail {

constexpr int kChunk = 16;         // steps per feature chunk
constexpr int kRing = 2 * kChunk;   // raw input ring (steps)

// Sum over the G lanes of a row group by the xor butterfly (offsets G/2 .. 1).
template <int G>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int m = G / 2; m >= 1; m /= 2) x = x + __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

// Row sums over the G lanes of a group, scattered: x[i] is this lane's partial
// of row i (i < R); the lane returns the full sum of row c / (G / R). Each level
// halves the rows a lane carries: lanes with bit M of c set keep the upper half
// and send the lower one to their partner c ^ M. Every sum pairs the same lanes
// as group_sum's butterfly, so a row's value is bit for bit group_sum's; it
// costs R - 1 + log2(G) shuffles for the R rows instead of R log2(G).
template <int G, int R>
__device__ __forceinline__ float group_reduce_scatter(const float (&x)[R], int c) {
  static_assert(R >= 1 && R <= G && (R & (R - 1)) == 0, "R: a power of two, at most G");
  if constexpr (R == 1) {
    return group_sum<G>(x[0]);
  } else {
    constexpr int H = R / 2, M = G / 2;
    const bool upper = (c & M) != 0;
    float y[H];
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const float send = upper ? x[i] : x[i + H];
      const float keep = upper ? x[i + H] : x[i];
      y[i] = keep + __shfl_xor_sync(0xffffffffu, send, M);
    }
    return group_reduce_scatter<M, H>(y, c);
  }
}

// This lane's partials of M_r . x for its R rows (R independent FMA chains).
template <class Tr>
__device__ __forceinline__ void row_partials(const float (&M)[Tr::R][Tr::CW], const float (&x)[Tr::CW], float (&out)[Tr::R]) {
#pragma unroll
  for (int rr = 0; rr < Tr::R; ++rr) {
    float acc = 0.0f;
#pragma unroll
    for (int jj = 0; jj < Tr::CW; ++jj) acc = core::vfma(M[rr][jj], x[jj], acc);
    out[rr] = acc;
  }
}

// a.b over D columns: this lane's CW-segment by sequential FMAs, then the group tree.
template <class Tr>
__device__ __forceinline__ float seg_dot(const float (&a)[Tr::CW], const float (&b)[Tr::CW]) {
  float acc = 0.0f;
#pragma unroll
  for (int jj = 0; jj < Tr::CW; ++jj) acc = core::vfma(a[jj], b[jj], acc);
  return group_sum<Tr::G>(acc);
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

// N consecutive floats from shared memory, N = 1, 2 or a multiple of 4 (aligned).
template <int N>
__device__ __forceinline__ void load_small(const float* p, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
    load_floats<N>(p, out);
  } else if constexpr (N == 2) {
    const float2 x = *reinterpret_cast<const float2*>(p);
    out[0] = x.x;
    out[1] = x.y;
  } else {
    static_assert(N == 1, "N: 1, 2 or a multiple of 4");
    out[0] = p[0];
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
  alignas(16) float kh[2][kChunk][Tr::D];  // features of a chunk, by chunk parity
  alignas(16) float u[2][kChunk][Tr::D];
  alignas(16) float phiq[2][kChunk][Tr::D];
  alignas(16) float scan[kChunk][Tr::D];   // a chunk's phi(k_t), then n_t
  alignas(16) float z[2][Tr::D];           // z = A_{t-1} u_t by rows, by step parity
  alignas(16) float r[2][Tr::D];           // r = v_t - S_{t-1} k^_t by rows, by step parity
  alignas(16) float w[Tr::D];              // w = A_t k^_t by rows (where the gate needs it)
  float den[2][kChunk];                    // ratio denominators, by chunk parity
  float frob[2][Tr::NW];                   // per-warp partials of ||S_t||_F^2, by step parity
};

template <class Tr, class Prec>
__global__ void __launch_bounds__(Tr::NT, 1) vla_fused_kernel(const __grid_constant__ FusedParams p) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, R = Tr::R, NT = Tr::NT, NW = Tr::NW, GROUPS = Tr::GROUPS;
  constexpr int kElemsPer16B = 16 / static_cast<int>(sizeof(In));
  constexpr int kChunksPerVec = D / kElemsPer16B;
  extern __shared__ __align__(16) unsigned char vla_smem[];
  auto& sm = *reinterpret_cast<FusedSmem<Tr, Prec>*>(vla_smem);

  const int tid = threadIdx.x;
  const int c = tid % G;   // lane in the row group: owns columns c*CW ..
  const int gi = tid / G;  // row group: owns rows gi*R ..
  const int lane = tid % 32, warp = tid / 32;
  const int b = blockIdx.x / p.H, h = blockIdx.x % p.H;
  const int T = p.T;
  const std::size_t stride = std::size_t(p.H) * D;              // elements between steps
  const std::size_t base = (std::size_t(b) * T * p.H + h) * D;  // element (b, 0, h, 0)
  const In* const q_in = static_cast<const In*>(p.q) + base;
  const In* const k_in = static_cast<const In*>(p.k) + base;
  const In* const v_in = static_cast<const In*>(p.v) + base;
  const In* const u_in = static_cast<const In*>(p.u) + base;
  const int nvec = p.u != nullptr ? 4 : 3;

  // Starts the copies of step t's inputs into its ring slot; always commits a
  // group (empty past T) so that group counting stays uniform.
  auto issue = [&](int t) {
    if (t < T) {
      const int slot = t % kRing;
      for (int ch = tid; ch < nvec * kChunksPerVec; ch += NT) {
        const int vec = ch / kChunksPerVec, part = ch % kChunksPerVec;
        const In* src = vec == 0 ? q_in : vec == 1 ? k_in : vec == 2 ? v_in : u_in;  // no array: no local memory
        __pipeline_memcpy_async(&sm.ring[slot][vec][part * kElemsPer16B], src + std::size_t(t) * stride + part * kElemsPer16B, 16);
      }
    }
    __pipeline_commit();
  };

  // State: A = I / lambda0, S = 0 (this thread's rows x column segment); n = 0
  // (the column segment, used by row group 0 only, which runs the n scan).
  float A[R][CW], S[R][CW], n[CW];
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) {
      A[rr][jj] = (gi * R + rr == c * CW + jj) ? p.inv_lambda0 : 0.0f;
      S[rr][jj] = 0.0f;
    }
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) n[jj] = 0.0f;

  // Features of steps t0 .. t0 + ns - 1 (ns <= kChunk). Row group gi takes steps
  // gi, gi + GROUPS, ...; every lane of a warp runs every pass (the shuffles need
  // the whole warp), a group past the chunk's end on a copy of step t0, unstored.
  // Ends with a barrier: the features are visible when it returns (the
  // denominators after the next barrier).
  auto features = [&](int t0) {
    const int ns = min(kChunk, T - t0), buf = (t0 / kChunk) & 1;
#pragma unroll 1
    for (int s0 = 0; s0 < kChunk; s0 += GROUPS) {
      const int s = s0 + gi, se = s < ns ? s : 0;
      const In* slot = &sm.ring[(t0 + se) % kRing][0][0];
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
      if (nvec == 4) {
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
      load_inputs<Prec, CW>(slot + 0 * D + c * CW, x);
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) phiq[jj] = core::phi(x[jj], p.elu1);
      if (s < ns) {
#pragma unroll
        for (int jj = 0; jj < CW; jj += 4) {
          *reinterpret_cast<float4*>(&sm.kh[buf][s][c * CW + jj]) = make_float4(kh[jj], kh[jj + 1], kh[jj + 2], kh[jj + 3]);
          *reinterpret_cast<float4*>(&sm.u[buf][s][c * CW + jj]) = make_float4(u[jj], u[jj + 1], u[jj + 2], u[jj + 3]);
          *reinterpret_cast<float4*>(&sm.phiq[buf][s][c * CW + jj]) = make_float4(phiq[jj], phiq[jj + 1], phiq[jj + 2], phiq[jj + 3]);
          *reinterpret_cast<float4*>(&sm.scan[s][c * CW + jj]) = make_float4(phik[jj], phik[jj + 1], phik[jj + 2], phik[jj + 3]);
        }
      }
    }
    __syncthreads();
    // n_t = n_{t-1} + phi(k_t), in step order, by the lanes of row group 0; the
    // loads of NB steps issued together (only the additions are a chain; NB
    // bounded so that the batch does not push A and S out of registers).
    if (gi == 0) {
      constexpr int NB = CW <= 4 ? 4 : 1;
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
    __syncthreads();
    if (p.ratio) {
#pragma unroll 1
      for (int s0 = 0; s0 < kChunk; s0 += GROUPS) {
        const int s = s0 + gi, se = s < ns ? s : 0;
        float nt[CW], phiq[CW];
        load_floats<CW>(&sm.scan[se][c * CW], nt);
        load_floats<CW>(&sm.phiq[buf][se][c * CW], phiq);
        const float den = core::readout_den(seg_dot<Tr>(nt, phiq), p.den_floor);
        if (s < ns && c == 0) sm.den[buf][s] = den;
      }
    }
  };

  // This lane's row after a reduce-scatter (lanes c % SPAN == 0 own it; the
  // other lanes of the span hold copies).
  constexpr int SPAN = G / R;
  const int row = gi * R + c / SPAN;
  const bool owner = c % SPAN == 0;
  const bool u_is_kh = p.u == nullptr && !p.u_unit_scaled;  // u = k^: the gate may come from z

  // Readout of step t with S = S_t: o_t (one row per owner lane), and this warp's
  // partial of ||S_t||_F^2: the rows' sums, then the warp's rows by the shuffle
  // tree over lanes 16, 8, .., SPAN apart (TwinPolicy::sum's order).
  auto readout = [&](int t) {
    const int buf = (t / kChunk) & 1, s = t % kChunk;
    float phiq[CW], yp[R], np[R];
    load_floats<CW>(&sm.phiq[buf][s][c * CW], phiq);
    row_partials<Tr>(S, phiq, yp);
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      float acc = 0.0f;
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) acc = core::vfma(S[rr][jj], S[rr][jj], acc);
      np[rr] = acc;
    }
    const float y = group_reduce_scatter<G, R>(yp, c);
    float f = group_reduce_scatter<G, R>(np, c);
    if (owner) {
      auto* o = static_cast<typename Prec::Out*>(p.o) + base + std::size_t(t) * stride + row;
      *o = Prec::out_bits(p.ratio ? y / sm.den[buf][s] : y);
    }
#pragma unroll
    for (int m = 16; m >= SPAN; m /= 2) f = f + __shfl_xor_sync(0xffffffffu, f, m);
    if (lane == 0) sm.frob[t & 1][warp] = f;
  };

  auto finish_norm = [&](int t) {
    if (tid == 0) {
      float s = 0.0f;
#pragma unroll
      for (int w = 0; w < NW; ++w) s = s + sm.frob[t & 1][w];
      p.state_norm[(std::size_t(b) * T + t) * p.H + h] = core::vsqrt(s);
    }
  };

  for (int s = 0; s < kRing - 1; ++s) issue(s);
  __pipeline_wait_prior(kChunk - 1);  // steps 0 .. kChunk-1 (this thread's copies) have landed
  __syncthreads();
  features(0);

  // k^_t and u_t, loaded one step ahead (after the features of their chunk)
  // where registers allow (CW <= 4; at D = 128 the 16 floats would spill).
  constexpr bool kAhead = CW <= 4;
  float kh[CW], u[CW];
  auto load_keys = [&](int t) {
    const int buf = (t / kChunk) & 1, st = t % kChunk;
    load_floats<CW>(&sm.kh[buf][st][c * CW], kh);
    load_floats<CW>(u_is_kh ? &sm.kh[buf][st][c * CW] : &sm.u[buf][st][c * CW], u);
  };
  if constexpr (kAhead) load_keys(0);

#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    const int par = t & 1;
    if constexpr (!kAhead) load_keys(t);

    // Before B: z = A_{t-1} u and r = v - S_{t-1} k^ by rows, published.
    {
      float zp[R], sp[R];
      row_partials<Tr>(A, u, zp);
      row_partials<Tr>(S, kh, sp);
      const float z = group_reduce_scatter<G, R>(zp, c);
      const float sk = group_reduce_scatter<G, R>(sp, c);
      if (owner) {
        sm.z[par][row] = z;
        sm.r[par][row] = Prec::load(sm.ring[t % kRing][2][row]) - sk;
      }
    }
    if (t > 0) readout(t - 1);
    __syncthreads();  // B: z and r visible to all

    if (t > 0) finish_norm(t - 1);
    float zc[CW], zr[R], r[R];
    load_floats<CW>(&sm.z[par][c * CW], zc);
    load_small<R>(&sm.z[par][gi * R], zr);
    load_small<R>(&sm.r[par][gi * R], r);
    // delta = 1 + u.z and, where the gate may come from z, ||z||^2: two dots in
    // the twin's order (lane segments, then the group tree), their trees interleaved.
    const bool want_zz = u_is_kh && p.normalize_gate;
    float dz = 0.0f, zz = 0.0f;
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) dz = core::vfma(u[jj], zc[jj], dz);
    if (want_zz) {
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) zz = core::vfma(zc[jj], zc[jj], zz);
    }
#pragma unroll
    for (int m = G / 2; m >= 1; m /= 2) {
      dz = dz + __shfl_xor_sync(0xffffffffu, dz, m);
      zz = zz + __shfl_xor_sync(0xffffffffu, zz, m);
    }
    const float delta = core::sm_delta(dz, p.delta_floor);
    const bool ridge = core::ridge_due(t + 1, p.ridge_every);
    // Quotients by one denominator as TwinPolicy::divide_all: one IEEE
    // reciprocal, then products (a division each would be ~60 cycles, serialised
    // by its slow-path branch).
    const float inv_delta = 1.0f / delta;
    float g[CW];
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) g[jj] = zc[jj] * inv_delta;
    if (ridge) {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) {
          float a = core::sm_entry(A[rr][jj], zr[rr], g[jj]);
          if (gi * R + rr == c * CW + jj) a = a + p.ridge;
          A[rr][jj] = Prec::store_state(a);
        }
    } else {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) A[rr][jj] = Prec::store_state(core::sm_entry(A[rr][jj], zr[rr], g[jj]));
    }

    // Gate a (the branch is uniform: every lane holds the same delta and dz).
    float a[CW];
    if (u_is_kh && !ridge && delta == 1.0f + dz && delta > 0.0f) {  // core::gate_from_z_exact
      if (p.normalize_gate) {
        const float inv_nz = 1.0f / core::vsqrt(zz);
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a[jj] = zc[jj] * inv_nz;
      } else {
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a[jj] = g[jj];
      }
    } else {
      float wp[R];
      row_partials<Tr>(A, kh, wp);
      const float w = group_reduce_scatter<G, R>(wp, c);
      if (owner) sm.w[row] = w;
      __syncthreads();  // w visible to all
      load_floats<CW>(&sm.w[c * CW], a);
      if (p.normalize_gate) {
        const float inv_nw = 1.0f / core::vsqrt(seg_dot<Tr>(a, a));
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a[jj] = a[jj] * inv_nw;
      }
    }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) S[rr][jj] = Prec::store_state(core::state_entry(S[rr][jj], r[rr], a[jj]));
    issue(t + kRing - 1);  // into the slot of step t-1, whose last reader (its r) finished before B
    if (t + 1 < T && (t + 1) % kChunk == 0) {
      __pipeline_wait_prior(kChunk - 1);  // the next chunk's inputs (this thread's copies) have landed
      __syncthreads();
      features(t + 1);
    }
    if constexpr (kAhead)
      if (t + 1 < T) load_keys(t + 1);
  }

  readout(T - 1);
  __syncthreads();
  finish_norm(T - 1);

  const std::size_t bh = std::size_t(b) * p.H + h;
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    const std::size_t at = bh * D * D + std::size_t(gi * R + rr) * D + c * CW;
#pragma unroll
    for (int jj = 0; jj < CW; jj += 4) {
      *reinterpret_cast<float4*>(p.S + at + jj) = make_float4(S[rr][jj], S[rr][jj + 1], S[rr][jj + 2], S[rr][jj + 3]);
      *reinterpret_cast<float4*>(p.A + at + jj) = make_float4(A[rr][jj], A[rr][jj + 1], A[rr][jj + 2], A[rr][jj + 3]);
    }
  }
  __pipeline_wait_prior(0);  // no copy may outlive the block
}

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

// Launches the kernel for head dimension D and precision Prec (checked);
// instantiated once per precision in fused_<kind>.cu.
template <int D, class Prec>
void launch_typed(const FusedParams& p, cudaStream_t stream) {
  using Tr = FusedTraits<D>;
  ensure_smem_limit<Tr, Prec>();
  vla_fused_kernel<Tr, Prec><<<p.B * p.H, Tr::NT, smem_bytes<Tr, Prec>(), stream>>>(p);
  VLA_CUDA_CHECK(cudaGetLastError());
}

template <int D, class Prec>
KernelInfo kernel_info_typed() {
  using Tr = FusedTraits<D>;
  cudaFuncAttributes attr{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&attr, vla_fused_kernel<Tr, Prec>));
  ensure_smem_limit<Tr, Prec>();
  KernelInfo k;
  k.threads = Tr::NT;
  k.registers = attr.numRegs;
  k.shared_bytes = smem_bytes<Tr, Prec>();
  k.local_bytes = static_cast<int>(attr.localSizeBytes);
  VLA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, vla_fused_kernel<Tr, Prec>, Tr::NT, smem_bytes<Tr, Prec>()));
  return k;
}

// The four head dimensions of one precision (defined in fused_<kind>.cu).
template <class Prec>
void launch_prec(const FusedParams& p, cudaStream_t stream);
template <class Prec>
KernelInfo kernel_info_prec(int d);

}  // namespace vla::gpu::detail
