// The chunked VLA forward kernel (docs/CHUNKED.md; twin: the chunked reference
// with the operand policy of gpu/include/vla/gpu/chunked.hpp).
//
// One block of NT threads per (b, h) runs the T/C chunks in order; A, S and the
// chunk's inputs stay in shared memory. Per chunk: 13 matrix products (bf16
// tensor cores through WMMA with float accumulation, or float SIMT for
// chunked-fp32), an L D L^T of the C x C Gram matrix and two unit-triangular
// solves in float (right-looking: one barrier per column), and the
// element-wise steps (feature map, normalisations, readout) in float.
//
// Shared-memory matrices are float, row-major with a padded leading dimension;
// a product stages its operands, read through accessors (transpose, scale,
// sign, mask), into bf16 tiles and runs WMMA 16x16x16 on them, or (chunked-tf32)
// into float tiles of tf32 values (cvt.rna.tf32.f32) and runs WMMA 16x16x8 tf32.
#pragma once

#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/precision.hpp"

namespace vla::gpu::chunked {

constexpr int NT = 256;  // threads per block (8 warps)

// chunked-tf32: float in and out as chunked-fp32, products on tf32 tensor cores.
struct PrecTf32 : PrecFp32 {};
template <class Prec>
inline constexpr bool tf32_products = std::is_same_v<Prec, PrecTf32>;

template <int D_, int C_, class Prec_>
struct Traits {
  static constexpr int D = D_, C = C_;
  using Prec = Prec_;
  static constexpr bool tc_tf32 = tf32_products<Prec>;
  static constexpr bool tc = Prec::bf16_io || tc_tf32;  // tensor cores for the bf16 and tf32 policies
  static constexpr int LDD = D + 4;           // float leading dimensions (padding against bank conflicts)
  static constexpr int LDC = C + 4;
  static constexpr int MX = D > C ? D : C;
  static constexpr int LDS = MX + 8;  // bf16 staging leading dimension (multiple of 8)
  // Float matrices: A, S (D x D); K, U, V, Q, N, P, W (D x C); C1, C2 (C x C).
  static constexpr int fA = 0, fS = fA + D * LDD, fK = fS + D * LDD, fU = fK + D * LDC, fV = fU + D * LDC, fQ = fV + D * LDC,
                       fN = fQ + D * LDC, fP = fN + D * LDC, fW = fP + D * LDC, fC1 = fW + D * LDC, fC2 = fC1 + C * LDC,
                       fvec = fC2 + C * LDC;
  // Vectors: pivots (C), column scalars (C), increments (C), n (D), misc (8).
  static constexpr int vPiv = 0, vCol = vPiv + C, vInc = vCol + C, vN = vInc + C, vMisc = vN + D, vEnd = vMisc + 8;
  static constexpr int floats = fvec + vEnd;
  static constexpr int staging_elems = tc ? 2 * MX * LDS : 0;  // bf16 (2 bytes) or tf32 in float (4 bytes)
  static constexpr int smem_bytes = ((floats * 4 + 127) / 128) * 128 + staging_elems * (tc_tf32 ? 4 : 2);
  static_assert(smem_bytes <= 232448, "chunked kernel: shared-memory plan exceeds 227 KiB");
  static_assert(D % 16 == 0 && C % 16 == 0 && NT % C == 0 && NT % D == 0 && NT / D <= 32 && NT / C <= 32, "tile shapes");
};

// Rounds to bf16 exactly as the host twin does (core::round_bf16, RNE).
__device__ __forceinline__ __nv_bfloat16 to_bf16(float x) { return __ushort_as_bfloat16(core::bf16_bits_rne(x)); }

// Rounds to tf32 as the tensor cores' conversion does (twin: gpu::round_tf32).
__device__ __forceinline__ float to_tf32(float x) { return nvcuda::wmma::__float_to_tf32(x); }

// Tensor-core product: the operands staged through `cvt` into Stored tiles (bf16,
// or float holding tf32 values, whose fragments then need no conversion), then
// WMMA 16x16xKS with fragments of element type Frag and float accumulation.
template <class Tr, int M, int N, int K, bool ACC, class Frag, class Stored, int KS, class FA, class FB, class Cvt>
__device__ void mm_tc(float* out, int ldo, FA a, FB b, Stored* sa, Cvt cvt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // bf16 and tf32 WMMA need sm_80 or newer: build with CMAKE_CUDA_ARCHITECTURES=90 for the H200
#else
  using namespace nvcuda;
  constexpr int LA = K + 8, LB = N + 8;  // leading dimensions (multiples of 16 bytes)
  Stored* sb = sa + Tr::MX * Tr::LDS;
  for (int e = threadIdx.x; e < M * K; e += NT) sa[(e / K) * LA + e % K] = cvt(a(e / K, e % K));
  for (int e = threadIdx.x; e < K * N; e += NT) sb[(e / N) * LB + e % N] = cvt(b(e / N, e % N));
  __syncthreads();
  const int warp = threadIdx.x / 32;
  constexpr int TM = M / 16, TN = N / 16;
  for (int tile = warp; tile < TM * TN; tile += NT / 32) {
    const int r0 = (tile / TN) * 16, c0 = (tile % TN) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, KS, float> acc;
    if constexpr (ACC) {
      wmma::load_matrix_sync(acc, out + r0 * ldo + c0, ldo, wmma::mem_row_major);
    } else {
      wmma::fill_fragment(acc, 0.0f);
    }
#pragma unroll
    for (int k0 = 0; k0 < K; k0 += KS) {
      wmma::fragment<wmma::matrix_a, 16, 16, KS, Frag, wmma::row_major> fa;
      wmma::fragment<wmma::matrix_b, 16, 16, KS, Frag, wmma::row_major> fb;
      wmma::load_matrix_sync(fa, sa + r0 * LA + k0, LA);
      wmma::load_matrix_sync(fb, sb + k0 * LB + c0, LB);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out + r0 * ldo + c0, acc, ldo, wmma::mem_row_major);
  }
#endif
}

// out (M x N, ld ldo) = [out +] sum_k a(i, k) b(k, j). Operands through accessors.
// Barriers before and after: callers need none around a product.
template <class Tr, int M, int N, int K, bool ACC, class FA, class FB>
__device__ void mm(float* out, int ldo, FA a, FB b, __nv_bfloat16* st) {
  __syncthreads();
  if constexpr (Tr::tc_tf32) {
    mm_tc<Tr, M, N, K, ACC, nvcuda::wmma::precision::tf32, float, 8>(out, ldo, a, b, reinterpret_cast<float*>(st),
                                                                     [](float x) { return to_tf32(x); });
  } else if constexpr (Tr::tc) {
    mm_tc<Tr, M, N, K, ACC, __nv_bfloat16, __nv_bfloat16, 16>(out, ldo, a, b, st, [](float x) { return to_bf16(x); });
  } else {
    // chunked-fp32: float products on the CUDA cores (no TF32), k in increasing order.
    for (int e = threadIdx.x; e < M * N; e += NT) {
      const int i = e / N, j = e % N;
      float acc = ACC ? out[i * ldo + j] : 0.0f;
      for (int k = 0; k < K; ++k) acc = core::vfma(a(i, k), b(k, j), acc);
      out[i * ldo + j] = acc;
    }
  }
  __syncthreads();
}

// Squared norms of the columns c < len of a rows x C matrix (ld LDC) into col[]:
// NT / C consecutive lanes per column, partial sums over rows, butterfly.
template <class Tr, int ROWS>
__device__ void col_dots(const float* x, const float* y, float* col, int len) {
  constexpr int TPC = NT / Tr::C;
  const int c = threadIdx.x / TPC, part = threadIdx.x % TPC;
  float s = 0.0f;
  for (int r = part; r < ROWS; r += TPC) s = core::vfma(x[r * Tr::LDC + c], y[r * Tr::LDC + c], s);
#pragma unroll
  for (int m = TPC / 2; m >= 1; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  if (part == 0 && c < len) col[c] = s;
  __syncthreads();
}

// X (D x C, ld LDC) <- X U^{-1} for the unit upper triangular U with U(i, t) =
// cf[i * LDC + t] (i < t), columns t < len: x_t -= sum_{i<t} U(i, t) x_i,
// right-looking. Rows are independent: NT / D lanes of one warp per row, one
// warp barrier per column.
template <class Tr>
__device__ void unit_upper_solve(float* X, const float* cf, int len) {
  constexpr int TPR = NT / Tr::D;
  const int j = threadIdx.x / TPR, s = threadIdx.x % TPR;
  float* row = X + j * Tr::LDC;
  __syncthreads();
  for (int i = 0; i < len - 1; ++i) {
    const float xi = row[i];
    for (int t = i + 1 + ((s - (i + 1)) % TPR + TPR) % TPR; t < len; t += TPR) row[t] -= cf[i * Tr::LDC + t] * xi;
    __syncwarp();
  }
  __syncthreads();
}

// In place L D L^T of I + G (G in the lower triangle of g, C x C, ld LDC; rows,
// columns < len). Pivots through core::sm_delta (the vla-v3 floor); L^T is left
// in the strict upper triangle (g[i][t] = L(t, i)), so unit_upper_solve on P
// gives Z = P L^{-T}. Right-looking: one block barrier per column.
template <class Tr>
__device__ void ldl(float* g, float* piv, int len, double floor) {
  constexpr int RG = NT / Tr::C;  // row groups
  const int c = threadIdx.x % Tr::C, rg = threadIdx.x / Tr::C;
  __syncthreads();
  for (int j = 0; j < len; ++j) {
    const float dj = core::sm_delta(g[j * Tr::LDC + j], floor);
    const float inv = 1.0f / dj;  // one division per column; L(r, j) = g(r, j) * inv
    if (threadIdx.x == 0) piv[j] = dj;
    if (c > j && c < len) {
      const float lc = g[c * Tr::LDC + j] * inv;  // L(c, j)
      // rows r >= c with r = rg (mod RG): g(r, c) -= g(r, j) L(c, j)
      for (int r = c + ((rg - c) % RG + RG) % RG; r < len; r += RG) g[r * Tr::LDC + c] -= g[r * Tr::LDC + j] * lc;
    }
    if (threadIdx.x > j && threadIdx.x < len) g[j * Tr::LDC + threadIdx.x] = g[threadIdx.x * Tr::LDC + j] * inv;
    __syncthreads();
  }
  for (int i = len + threadIdx.x; i < Tr::C; i += NT) piv[i] = 1.0f;
  __syncthreads();
}

template <class Tr>
__global__ void __launch_bounds__(NT, 1) chunked_forward(FusedParams p) {
  using Prec = typename Tr::Prec;
  using In = typename Prec::In;
  using Out = typename Prec::Out;
  constexpr int D = Tr::D, C = Tr::C, LDD = Tr::LDD, LDC = Tr::LDC;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* f = reinterpret_cast<float*>(smem_raw);
  float *A = f + Tr::fA, *S = f + Tr::fS, *K = f + Tr::fK, *U = f + Tr::fU, *V = f + Tr::fV, *Q = f + Tr::fQ, *N = f + Tr::fN,
        *P = f + Tr::fP, *W = f + Tr::fW, *C1 = f + Tr::fC1, *C2 = f + Tr::fC2;
  float* vec = f + Tr::fvec;
  float *piv = vec + Tr::vPiv, *col = vec + Tr::vCol, *inc = vec + Tr::vInc, *nv = vec + Tr::vN, *misc = vec + Tr::vMisc;
  __nv_bfloat16* st = reinterpret_cast<__nv_bfloat16*>(smem_raw + ((Tr::floats * 4 + 127) / 128) * 128);

  const int bh = blockIdx.x, b = bh / p.H, h = bh % p.H, tid = threadIdx.x;
  const In* gq = static_cast<const In*>(p.q);
  const In* gk = static_cast<const In*>(p.k);
  const In* gv = static_cast<const In*>(p.v);
  const In* gu = static_cast<const In*>(p.u);
  Out* go = static_cast<Out*>(p.o);

  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    A[i * LDD + j] = i == j ? p.inv_lambda0 : 0.0f;
    S[i * LDD + j] = 0.0f;
  }
  for (int j = tid; j < D; j += NT) nv[j] = 0.0f;

  const float sqrt_d = sqrtf(float(D));
  for (int t0 = 0; t0 < p.T;) {
    int len = C < p.T - t0 ? C : p.T - t0;
    if (p.ridge_every > 0) {
      const int next_ridge = (t0 / p.ridge_every + 1) * p.ridge_every;
      len = len < next_ridge - t0 ? len : next_ridge - t0;
    }
    const bool ridge = core::ridge_due(long(t0) + len, p.ridge_every);
    __syncthreads();
    // Load the chunk: phi(k) into K and N, phi(q) into Q, v, u; zero past len.
    // All global loads of the chunk are issued before any is used (latency once per chunk).
    {
      constexpr int PER = C * D / NT;
      In lk[PER], lq[PER], lv[PER], lu[PER];
#pragma unroll
      for (int x = 0; x < PER; ++x) {
        const int e = tid + x * NT, c = e / D, j = e % D;
        const std::size_t o = ((std::size_t(b) * p.T + t0 + (c < len ? c : 0)) * p.H + h) * D + j;
        lk[x] = gk[o];
        lq[x] = gq[o];
        lv[x] = gv[o];
        lu[x] = gu ? gu[o] : In(0);
      }
#pragma unroll
      for (int x = 0; x < PER; ++x) {
        const int e = tid + x * NT, c = e / D, j = e % D;
        const bool in = c < len;
        const float kk = in ? core::phi(Prec::load(lk[x]), p.elu1) : 0.0f;
        K[j * LDC + c] = kk;
        N[j * LDC + c] = kk;
        Q[j * LDC + c] = in ? core::phi(Prec::load(lq[x]), p.elu1) : 0.0f;
        V[j * LDC + c] = in ? Prec::load(lv[x]) : 0.0f;
        U[j * LDC + c] = in && gu ? Prec::load(lu[x]) : 0.0f;
      }
    }
    __syncthreads();
    if (p.normalize_key) {
      col_dots<Tr, D>(K, K, col, len);
      for (int e = tid; e < D * C; e += NT)
        if (e % C < len) K[(e / C) * LDC + e % C] /= sqrtf(col[e % C]);
      __syncthreads();
    }
    if (!gu)
      for (int e = tid; e < D * C; e += NT) U[(e / C) * LDC + e % C] = K[(e / C) * LDC + e % C];
    __syncthreads();
    if (p.u_unit_scaled) {
      col_dots<Tr, D>(U, U, col, len);
      for (int e = tid; e < D * C; e += NT)
        if (e % C < len) {
          float& x = U[(e / C) * LDC + e % C];
          x = (x / sqrtf(col[e % C])) / sqrt_d;
        }
      __syncthreads();
    }
    // Running normaliser n_t (the recurrence's order) in N.
    for (int j = tid; j < D; j += NT) {
      float n = nv[j];
      for (int c = 0; c < len; ++c) {
        n = n + N[j * LDC + c];
        N[j * LDC + c] = n;
      }
      nv[j] = n;
    }

    // Gate. P = A U, G = U^T P, I + G = L D L^T, Z = P L^{-T} (in P).
    mm<Tr, D, C, D, false>(P, LDC, [&](int i, int k) { return A[i * LDD + k]; }, [&](int k, int j) { return U[k * LDC + j]; }, st);
    mm<Tr, C, C, D, false>(C1, LDC, [&](int i, int k) { return U[k * LDC + i]; }, [&](int k, int j) { return P[k * LDC + j]; }, st);
    ldl<Tr>(C1, piv, len, p.delta_floor);
    unit_upper_solve<Tr>(P, C1, len);
    // Y = triu(D^{-1} Z^T K); W = A K - Z Y.
    mm<Tr, C, C, D, false>(C2, LDC, [&](int i, int k) { return P[k * LDC + i]; }, [&](int k, int j) { return K[k * LDC + j]; }, st);
    for (int e = tid; e < C * C; e += NT) {
      const int i = e / C, t = e % C;
      C2[i * LDC + t] = i <= t ? C2[i * LDC + t] / piv[i] : 0.0f;
    }
    mm<Tr, D, C, D, false>(W, LDC, [&](int i, int k) { return A[i * LDD + k]; }, [&](int k, int j) { return K[k * LDC + j]; }, st);
    mm<Tr, D, C, C, true>(W, LDC, [&](int i, int k) { return -P[i * LDC + k]; }, [&](int k, int j) { return C2[k * LDC + j]; }, st);
    if (ridge)
      for (int j = tid; j < D; j += NT) W[j * LDC + len - 1] += p.ridge * K[j * LDC + len - 1];
    __syncthreads();
    if (p.normalize_gate) {
      col_dots<Tr, D>(W, W, col, len);
      for (int e = tid; e < D * C; e += NT)
        if (e % C < len) W[(e / C) * LDC + e % C] /= sqrtf(col[e % C]);
      __syncthreads();
    }
    // A_{c+1} = A_c - (Z D^{-1}) Z^T (+ ridge I).
    mm<Tr, D, D, C, true>(A, LDD, [&](int i, int k) { return -(P[i * LDC + k] / piv[k]); },
                          [&](int k, int j) { return P[j * LDC + k]; }, st);
    if (ridge)
      for (int i = tid; i < D; i += NT) A[i * LDD + i] += p.ridge;

    // State. T = I + strict_upper(Ah^T K) (C1); R T = V - S K (R in V).
    mm<Tr, C, C, D, false>(C1, LDC, [&](int i, int k) { return W[k * LDC + i]; }, [&](int k, int j) { return K[k * LDC + j]; }, st);
    mm<Tr, D, C, D, true>(V, LDC, [&](int i, int k) { return -S[i * LDD + k]; }, [&](int k, int j) { return K[k * LDC + j]; }, st);
    unit_upper_solve<Tr>(V, C1, len);
    // Readout Y = S Q + R triu(Ah^T Q) (in P); Gram terms of ||S_t||.
    mm<Tr, C, C, D, false>(C2, LDC, [&](int i, int k) { return W[k * LDC + i]; }, [&](int k, int j) { return Q[k * LDC + j]; }, st);
    mm<Tr, D, C, D, false>(P, LDC, [&](int i, int k) { return S[i * LDD + k]; }, [&](int k, int j) { return Q[k * LDC + j]; }, st);
    mm<Tr, D, C, C, true>(P, LDC, [&](int i, int k) { return V[i * LDC + k]; },
                          [&](int k, int j) { return k <= j ? C2[k * LDC + j] : 0.0f; }, st);
    mm<Tr, D, C, D, false>(U, LDC, [&](int i, int k) { return S[i * LDD + k]; }, [&](int k, int j) { return W[k * LDC + j]; }, st);
    mm<Tr, C, C, D, false>(C1, LDC, [&](int i, int k) { return V[k * LDC + i]; }, [&](int k, int j) { return V[k * LDC + j]; }, st);
    mm<Tr, C, C, D, false>(C2, LDC, [&](int i, int k) { return W[k * LDC + i]; }, [&](int k, int j) { return W[k * LDC + j]; }, st);
    // ||S_c||_F^2 (block reduction: per-thread partials, warp butterfly, warps in order).
    {
      float s2 = 0.0f;
      for (int e = tid; e < D * D; e += NT) {
        const float x = S[(e / D) * LDD + e % D];
        s2 = core::vfma(x, x, s2);
      }
      for (int m = 16; m >= 1; m /= 2) s2 += __shfl_xor_sync(0xffffffffu, s2, m);
      if (tid % 32 == 0) inc[tid / 32] = s2;  // inc[] reused as scratch before the increments
      __syncthreads();
      if (tid == 0) {
        float tot = 0.0f;
        for (int w = 0; w < NT / 32; ++w) tot += inc[w];
        misc[0] = tot;
      }
      __syncthreads();
    }
    col_dots<Tr, D>(V, U, col, len);  // r_t . (S_c a^_t)
    if (tid < len) {
      const int t = tid;
      float x = 2.0f * col[t] + C1[t * LDC + t] * C2[t * LDC + t];
      for (int i = 0; i < t; ++i) x += 2.0f * C1[i * LDC + t] * C2[i * LDC + t];
      inc[t] = x;
    }
    __syncthreads();
    if (tid == 0) {
      float n2 = misc[0];
      for (int t = 0; t < len; ++t) {
        n2 += inc[t];
        inc[t] = n2;
      }
    }
    __syncthreads();
    if (tid < len) {
      const float n2 = inc[tid];
      p.state_norm[(std::size_t(b) * p.T + t0 + tid) * p.H + h] = sqrtf(n2 > 0.0f ? n2 : 0.0f);
    }
    // Ratio denominators n_t . phi(q_t), then o.
    if (p.ratio) col_dots<Tr, D>(N, Q, col, len);
    for (int e = tid; e < C * D; e += NT) {
      const int c = e / D, j = e % D;
      if (c >= len) continue;
      float y = P[j * LDC + c];
      if (p.ratio) y = y / core::readout_den(col[c], p.den_floor);
      const std::size_t o = ((std::size_t(b) * p.T + t0 + c) * p.H + h) * D + j;
      go[o] = Prec::out_bits(y);
    }
    // S_{c+1} = S_c + R Ah^T.
    mm<Tr, D, D, C, true>(S, LDD, [&](int i, int k) { return V[i * LDC + k]; }, [&](int k, int j) { return W[j * LDC + k]; }, st);
    t0 += len;
  }
  __syncthreads();
  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    p.S[(std::size_t(bh) * D + i) * D + j] = S[i * LDD + j];
    p.A[(std::size_t(bh) * D + i) * D + j] = A[i * LDD + j];
  }
}

}  // namespace vla::gpu::chunked
