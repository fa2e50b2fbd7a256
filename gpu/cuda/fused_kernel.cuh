// The fused VLA forward kernel: one block per (batch, head) runs all T steps with
// A, S and n in registers (layout: fused_traits.hpp). Per element it calls the
// formulas of core/formulas.hpp and the roundings of precision.hpp; its
// reduction order is the one TwinPolicy (twin_policy.hpp) reproduces on the
// host. Build with --fmad=false: the only FMAs are the explicit vfma calls.
//
// One step t, in three barrier-separated regions (B1, B2 are __syncthreads):
//   before B1  z = A_{t-1} u_t by rows -> shared memory (computed at the end of step t-1)
//   R1         read z's column segment; delta = 1 + u.z; g = z / delta; A update
//              (+ ridge); w = A_t k^ by rows -> shared memory; r = v - S_{t-1} k^;
//              off the chain: the readout of step t-1 (o, ||S||_F partials) and the
//              key/query work of step t+1 (phi(k), k^, u, n, the ratio denominator)
//   R2         read w's column segment; a = w / ||w||; S update; state norm of t-1;
//              z for step t+1
// Inputs travel global -> shared memory by cp.async into a ring of kNbuf steps,
// kNbuf - 3 steps ahead of the step that needs them.
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

constexpr int kNbuf = 8;  // input ring depth (steps)

// Sum over the G lanes of a row group by the xor butterfly (offsets G/2 .. 1).
template <int G>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int m = G / 2; m >= 1; m /= 2) x = x + __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

// a.b over D columns: this lane's CW-segment by sequential FMAs, then the group tree.
template <class Tr>
__device__ __forceinline__ float seg_dot(const float (&a)[Tr::CW], const float (&b)[Tr::CW]) {
  float acc = 0.0f;
#pragma unroll
  for (int jj = 0; jj < Tr::CW; ++jj) acc = core::vfma(a[jj], b[jj], acc);
  return group_sum<Tr::G>(acc);
}

// out_r = M_r . x for this thread's R rows (R independent chains, interleaved).
template <class Tr>
__device__ __forceinline__ void row_dots(const float (&M)[Tr::R][Tr::CW], const float (&x)[Tr::CW], float (&out)[Tr::R]) {
#pragma unroll
  for (int rr = 0; rr < Tr::R; ++rr) {
    float acc = 0.0f;
#pragma unroll
    for (int jj = 0; jj < Tr::CW; ++jj) acc = core::vfma(M[rr][jj], x[jj], acc);
    out[rr] = acc;
  }
#pragma unroll
  for (int rr = 0; rr < Tr::R; ++rr) out[rr] = group_sum<Tr::G>(out[rr]);
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
  alignas(16) In ring[kNbuf][4][Tr::D];  // q, k, v, u of step t in slot t % kNbuf
  alignas(16) float z[Tr::D];            // z = A_{t-1} u_t, row-indexed
  alignas(16) float w[Tr::D];            // w = A_t k^_t, row-indexed
  float frob[2][Tr::NW];                 // per-warp partials of ||S_t||_F^2, by step parity
};

template <class Tr, class Prec>
__global__ void __launch_bounds__(Tr::NT, 1) vla_fused_kernel(const __grid_constant__ FusedParams p) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, R = Tr::R, NT = Tr::NT, GPW = Tr::GPW, NW = Tr::NW;
  constexpr int kElemsPer16B = 16 / static_cast<int>(sizeof(In));
  constexpr int kChunksPerVec = D / kElemsPer16B;
  __shared__ FusedSmem<Tr, Prec> sm;

  const int tid = threadIdx.x;
  const int c = tid % G;   // lane in the row group: owns columns c*CW ..
  const int gi = tid / G;  // row group: owns rows gi*R ..
  const int lane = tid % 32, warp = tid / 32;
  const int b = blockIdx.x / p.H, h = blockIdx.x % p.H;
  const int T = p.T;
  const std::size_t stride = std::size_t(p.H) * D;                      // elements between steps
  const std::size_t base = (std::size_t(b) * T * p.H + h) * D;          // element (b, 0, h, 0)
  const In* const q_in = static_cast<const In*>(p.q) + base;
  const In* const k_in = static_cast<const In*>(p.k) + base;
  const In* const v_in = static_cast<const In*>(p.v) + base;
  const In* const u_in = static_cast<const In*>(p.u) + base;
  const int nvec = p.u != nullptr ? 4 : 3;

  // Starts the copies of step t's inputs into its ring slot; always commits a
  // group (empty past T) so that group counting stays uniform.
  auto issue = [&](int t) {
    if (t < T) {
      const int slot = t % kNbuf;
      for (int ch = tid; ch < nvec * kChunksPerVec; ch += NT) {
        const int vec = ch / kChunksPerVec, part = ch % kChunksPerVec;
        const In* src = vec == 0 ? q_in : vec == 1 ? k_in : vec == 2 ? v_in : u_in;  // no array: no local memory
        __pipeline_memcpy_async(&sm.ring[slot][vec][part * kElemsPer16B], src + std::size_t(t) * stride + part * kElemsPer16B, 16);
      }
    }
    __pipeline_commit();
  };

  // State: A = I / lambda0, S = 0, n = 0 (this thread's rows x column segment).
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

  // Key and query work of step t (no dependence on A or S): k^, u, n_t and the
  // ratio denominator n_t . phi(q_t).
  auto prelude = [&](int t, float (&kh)[CW], float (&u)[CW], float& den) {
    const In* slot = &sm.ring[t % kNbuf][0][0];
    float x[CW], phik[CW];
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
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) n[jj] = n[jj] + phik[jj];
    den = 1.0f;
    if (p.ratio) {
      float phiq[CW];
      load_inputs<Prec, CW>(slot + 0 * D + c * CW, x);
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) phiq[jj] = core::phi(x[jj], p.elu1);
      den = core::readout_den(seg_dot<Tr>(n, phiq), p.den_floor);
    }
  };

  // Readout of step t with S = S_t: o_t rows, and this warp's partial of ||S_t||_F^2.
  auto readout = [&](int t, float den) {
    const In* slot = &sm.ring[t % kNbuf][0][0];
    float x[CW], phiq[CW];
    load_inputs<Prec, CW>(slot + 0 * D + c * CW, x);
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) phiq[jj] = core::phi(x[jj], p.elu1);
    float y[R], nr[R];
    row_dots<Tr>(S, phiq, y);
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      float acc = 0.0f;
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) acc = core::vfma(S[rr][jj], S[rr][jj], acc);
      nr[rr] = group_sum<G>(acc);
    }
    if (c == 0) {
      auto* o = static_cast<typename Prec::Out*>(p.o) + base + std::size_t(t) * stride + gi * R;
#pragma unroll
      for (int rr = 0; rr < R; ++rr) o[rr] = Prec::out_bits(Prec::store_out(p.ratio ? y[rr] / den : y[rr]));
    }
    float f = 0.0f;
#pragma unroll
    for (int rr = 0; rr < R; ++rr) f = f + nr[rr];
#pragma unroll
    for (int m = GPW / 2; m >= 1; m /= 2) f = f + __shfl_xor_sync(0xffffffffu, f, m * G);
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

  // z = A u by rows, published for the transpose.
  auto publish_z = [&](const float (&u)[CW]) {
    float z[R];
    row_dots<Tr>(A, u, z);
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
      if (c == rr % G) sm.z[gi * R + rr] = z[rr];
  };

  for (int s = 0; s < kNbuf - 1; ++s) issue(s);
  __pipeline_wait_prior(kNbuf - 2);  // step 0's copies (this thread's) have landed
  __syncthreads();

  float kh[CW], u[CW], den = 1.0f, den_prev = 1.0f;
  prelude(0, kh, u, den);
  publish_z(u);

  for (int t = 0; t < T; ++t) {
    __pipeline_wait_prior(kNbuf - 3);  // step t+1's copies have landed
    __syncthreads();                   // B1: z and step t+1's inputs visible to all

    // R1: Sherman-Morrison update and the gate's w.
    float zc[CW], z[R];
    load_floats<CW>(&sm.z[c * CW], zc);
#pragma unroll
    for (int rr = 0; rr < R; ++rr) z[rr] = sm.z[gi * R + rr];
    const float delta = core::sm_delta(seg_dot<Tr>(u, zc), p.delta_floor);
    float g[CW];
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) g[jj] = zc[jj] / delta;
    if (core::ridge_due(t + 1, p.ridge_every)) {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) {
          float a = core::sm_entry(A[rr][jj], z[rr], g[jj]);
          if (gi * R + rr == c * CW + jj) a = a + p.ridge;
          A[rr][jj] = Prec::store_state(a);
        }
    } else {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) A[rr][jj] = Prec::store_state(core::sm_entry(A[rr][jj], z[rr], g[jj]));
    }
    {
      float w[R];
      row_dots<Tr>(A, kh, w);
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
        if (c == rr % G) sm.w[gi * R + rr] = w[rr];
    }
    // r = v - S_{t-1} k^.
    float r[R];
    {
      float sk[R];
      row_dots<Tr>(S, kh, sk);
      const In* vrow = &sm.ring[t % kNbuf][2][gi * R];
#pragma unroll
      for (int rr = 0; rr < R; ++rr) r[rr] = Prec::load(vrow[rr]) - sk[rr];
    }
    if (t > 0) readout(t - 1, den_prev);
    float kh_n[CW], u_n[CW], den_n = 1.0f;
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) kh_n[jj] = u_n[jj] = 0.0f;
    if (t + 1 < T) prelude(t + 1, kh_n, u_n, den_n);
    __syncthreads();  // B2: w visible to all

    // R2: gate and state update.
    if (t > 0) finish_norm(t - 1);
    float a[CW];
    load_floats<CW>(&sm.w[c * CW], a);
    if (p.normalize_gate) {
      const float nw = core::vsqrt(seg_dot<Tr>(a, a));
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) a[jj] = a[jj] / nw;
    }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) S[rr][jj] = Prec::store_state(core::state_entry(S[rr][jj], r[rr], a[jj]));
    issue(t + kNbuf - 1);  // into the slot of step t-1, whose last reader finished before B2
    den_prev = den;
    den = den_n;
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) {
      kh[jj] = kh_n[jj];
      u[jj] = u_n[jj];
    }
    if (t + 1 < T) publish_z(u);
  }

  readout(T - 1, den_prev);
  __syncthreads();
  finish_norm(T - 1);

  const std::size_t bh = std::size_t(b) * p.H + h;
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    const std::size_t row = bh * D * D + std::size_t(gi * R + rr) * D + c * CW;
#pragma unroll
    for (int jj = 0; jj < CW; jj += 4) {
      *reinterpret_cast<float4*>(p.S + row + jj) = make_float4(S[rr][jj], S[rr][jj + 1], S[rr][jj + 2], S[rr][jj + 3]);
      *reinterpret_cast<float4*>(p.A + row + jj) = make_float4(A[rr][jj], A[rr][jj + 1], A[rr][jj + 2], A[rr][jj + 3]);
    }
  }
  __pipeline_wait_prior(0);  // no copy may outlive the block
}

// Launches the kernel for head dimension D and precision Prec (checked);
// instantiated once per precision in fused_<kind>.cu.
template <int D, class Prec>
void launch_typed(const FusedParams& p, cudaStream_t stream) {
  using Tr = FusedTraits<D>;
  vla_fused_kernel<Tr, Prec><<<p.B * p.H, Tr::NT, 0, stream>>>(p);
  VLA_CUDA_CHECK(cudaGetLastError());
}

template <int D, class Prec>
KernelInfo kernel_info_typed() {
  using Tr = FusedTraits<D>;
  cudaFuncAttributes attr{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&attr, vla_fused_kernel<Tr, Prec>));
  KernelInfo k;
  k.threads = Tr::NT;
  k.registers = attr.numRegs;
  k.shared_bytes = static_cast<int>(attr.sharedSizeBytes);
  k.local_bytes = static_cast<int>(attr.localSizeBytes);
  VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, vla_fused_kernel<Tr, Prec>, Tr::NT, 0));
  return k;
}

// The four head dimensions of one precision (defined in fused_<kind>.cu).
template <class Prec>
void launch_prec(const FusedParams& p, cudaStream_t stream);
template <class Prec>
KernelInfo kernel_info_prec(int d);

}  // namespace vla::gpu::detail
