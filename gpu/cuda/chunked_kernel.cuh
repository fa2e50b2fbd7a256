// The chunked VLA forward kernel (docs/CHUNKED.md; twin: the chunked reference
// with the operand policy of gpu/include/vla/gpu/chunked.hpp).
//
// One block of NT threads per (b, h) runs the T/C chunks in order; A, S and the
// chunk's inputs stay in shared memory. Per chunk: 15 matrix products (bf16 or
// tf32 tensor cores through mma.sync with float accumulation, or float SIMT for
// chunked-fp32), an L D L^T of the C x C Gram matrix and two unit-triangular
// solves in float, and the element-wise steps (feature map, normalisations,
// readout) in float.
//
// Kernel v6 (speed; the maths and the operands' rounding points of v2;
// docs/CHUNKED.md, section 7):
// * a product is a set of 16 x 16 output tiles, one warp each; a warp loads its
//   operands' fragments straight from the float matrices in the layout they are
//   stored in (a transposed operand is read transposed), rounds them to bf16
//   (cvt.rn.bf16x2.f32) or tf32 (cvt.rna.tf32.f32) in registers and runs
//   mma.sync: no staging copy and no barrier inside a
//   product. Independent products share one phase and one barrier; masks and
//   the pivot scalings are applied to the fragments or the accumulators;
// * the L D L^T runs in one warp, in registers (no block barrier per column),
//   while the other warps compute A K, V - S K and ||S_c||^2;
// * the triangular solves keep each row in the registers of NT / D lanes and
//   broadcast x_i by shuffle (no barrier per column);
// * with one wave of blocks, the next chunk's inputs are fetched by cp.async
//   while this chunk computes; with several waves at C = 32 and u = k, two
//   blocks per SM (Traits::smem_bytes, chunked_dispatch.cuh).
//
//
// Kernel v7 adds a second schedule of the same per-chunk operations,
// chunked_forward_pipelined (end of this file): the gate of chunk c + 1 and the
// state of chunk c share the barrier-separated phases, on double-buffered chunk
// data; launched at C = 32 for one wave of blocks (chunked_dispatch.cuh,
// ChunkedLayout). The masked products Z Y and R triu(Ah^T Phi_q) are causal
// (product<..., CAUSAL>) and the column norms rescale where the sum of squares
// overflows (col_norms): docs/CHUNKED.md, section 6.
//
// Shared-memory matrices are float, row-major with a padded leading dimension.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/precision.hpp"

namespace vla::gpu::chunked {

constexpr int NT = 256;  // threads per block (8 warps)
constexpr int NW = NT / 32;

// chunked-tf32: float in and out as chunked-fp32, products on tf32 tensor cores.
struct PrecTf32 : PrecFp32 {};
template <class Prec>
inline constexpr bool tf32_products = std::is_same_v<Prec, PrecTf32>;

template <int D_, int C_, class Prec_>
struct Traits {
  static constexpr int D = D_, C = C_;
  using Prec = Prec_;
  static constexpr bool tc_tf32 = tf32_products<Prec>;
  static constexpr bool tc_bf16 = Prec::bf16_io;
  static constexpr int LDD = D + 4;  // float leading dimensions (padding against bank conflicts)
  static constexpr int LDC = C + 4;
  // Vectors: pivots, column scalars (2), increments (C each), n (D), per-warp partials (8), misc (8).
  static constexpr int vPiv = 0, vCol = vPiv + C, vCol2 = vCol + C, vInc = vCol2 + C, vN = vInc + C, vRed = vN + D,
                       vMisc = vRed + 8, vEnd = vMisc + 8;
  // Float matrices after the vectors: A, S (D x D); K, V, Q, N, P, W (D x C);
  // C1, C2, C3 (C x C); U (D x C) last, left out of the allocation when u is k.
  static constexpr int fA = (vEnd + 31) / 32 * 32, fS = fA + D * LDD, fK = fS + D * LDD, fV = fK + D * LDC, fQ = fV + D * LDC,
                       fN = fQ + D * LDC, fP = fN + D * LDC, fW = fP + D * LDC, fC1 = fW + D * LDC, fC2 = fC1 + C * LDC,
                       fC3 = fC2 + C * LDC, fU = fC3 + C * LDC, floats = fU + D * LDC;
  static constexpr int float_bytes = ((floats * 4 + 127) / 128) * 128;
  static constexpr int float_bytes_no_u = ((fU * 4 + 127) / 128) * 128;
  // The next chunk's raw inputs (q, k, v, u), fetched by cp.async while this
  // chunk computes, after the float matrices; used where a launch has one wave
  // (B H <= SMs) and they fit. C = 32 asks for two blocks per SM (128 registers),
  // which several waves use when u is k (the paper preset: no U, no prefetch).
  static constexpr int raw_bytes = 4 * C * D * int(sizeof(typename Prec::In));
  static constexpr bool can_prefetch = float_bytes + raw_bytes <= 232448;
  static constexpr int max_smem_bytes = float_bytes + (can_prefetch ? raw_bytes : 0);
  static constexpr int min_blocks = C == 32 ? 2 : 1;
  static constexpr int smem_bytes(bool prefetch, bool u_is_k) {
    return prefetch && can_prefetch ? float_bytes + raw_bytes : u_is_k ? float_bytes_no_u : float_bytes;
  }
  static_assert(max_smem_bytes <= 232448, "chunked kernel: shared-memory plan exceeds 227 KiB");
  static_assert(D % 16 == 0 && C % 32 == 0 && C <= 64 && NT % C == 0 && NT % D == 0 && NT / D <= 32 && NT / C <= 32 &&
                    C >= NT / D,
                "tile shapes");
};

// Rounds two floats to bf16 with round to nearest even, as the host twin does
// (core::round_bf16), in one instruction (cvt.rn.bf16x2.f32); lo in the low half.
__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

// Rounds to tf32 as the tensor cores' conversion does (twin: gpu::round_tf32).
__device__ __forceinline__ float to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // tf32 needs sm_80 or newer: build with CMAKE_CUDA_ARCHITECTURES=90 for the H200
  return x;
#else
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#endif
}
__device__ __forceinline__ std::uint32_t tf32_bits(float x) { return __float_as_uint(to_tf32(x)); }

// How a product's result meets the output matrix: out = P, out += P, out -= P.
enum class Acc { set, add, sub };

// Element-wise epilogues on a product's result (row i, column j): none, the
// gate's Y = triu(D^{-1} Z^T K) (piv), the readout's triu mask.
struct NoEpi {
  __device__ float operator()(int, int, float x) const { return x; }
};
struct TriuDivEpi {
  const float* piv;
  __device__ float operator()(int i, int j, float x) const { return i <= j ? x / piv[i] : 0.0f; }
};
struct TriuEpi {
  __device__ float operator()(int i, int j, float x) const { return i <= j ? x : 0.0f; }
};

// A product operand: the M x K (or K x N) matrix x with leading dimension ld, or
// with T the transpose of the stored matrix; with DIV, column k of the operand
// is divided by div[k] before rounding (Z D^{-1}).
template <bool T, bool DIV = false>
struct Opnd {
  const float* x;
  int ld;
  const float* div = nullptr;
  __device__ __forceinline__ float at(int i, int k) const {
    const float v = T ? x[k * ld + i] : x[i * ld + k];
    if constexpr (DIV) return v / div[k];
    return v;
  }
};

__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // bf16 and tf32 mma need sm_80 or newer
#else
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // bf16 and tf32 mma need sm_80 or newer
#else
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// An operand as the tensor cores see it (bf16 or tf32 rounding; chunked-fp32: as is).
template <class Tr>
__device__ __forceinline__ float tc_operand(float x) {
  if constexpr (Tr::tc_bf16) return __bfloat162float(__float2bfloat16_rn(x));  // cvt.rn, as pack_bf16
  if constexpr (Tr::tc_tf32) return to_tf32(x);
  return x;
}

// This warp's share of out (M x N, ld ldo) {=, +=, -=} epi(opA opB), K the
// inner dimension, in 16 x 16 tiles dealt round-robin to warps [0, nw) starting
// at `slot` (advanced by the tile count, so that the products of one phase
// share the warps out). No barrier: the phase's caller synchronises.
//
// CAUSAL (K = N = C, opB upper triangular: the masked products Z Y and
// R triu(Ah^T Phi_q)): output column j is sum_{k<=j} opA(i, k) opB(k, j) and no
// term k > j is ever formed (ref::ChunkStructure::masked_product), so that a
// later step's Inf or NaN never meets an earlier step's masked zero
// (0 * Inf = NaN). The k-tiles before the output tile run on the tensor cores,
// the diagonal k-tile on the CUDA cores for k <= j only, with the same operand
// rounding (a product of two bf16 or tf32 operands is exact in float), and the
// k-tiles past it are skipped. So o_t and ||S_t|| depend on the steps <= t
// alone, bit for bit (tests/gpu/test_chunked_cuda.cpp, "causal").
template <class Tr, int M, int N, int K, Acc MODE, class OA, class OB, class Epi = NoEpi, bool CAUSAL = false>
__device__ void product(float* out, int ldo, OA a, OB b, int& slot, int warp, int nw, Epi epi = {}) {
  static_assert(!CAUSAL || (K == N && N == Tr::C), "causal products are C x C on the right");
  constexpr int TM = M / 16, TN = N / 16, NTILES = TM * TN;
  const int lane = threadIdx.x % 32;
  int first = (warp - slot) % nw;
  if (first < 0) first += nw;
  slot += NTILES;
  for (int tile = first; tile < NTILES; tile += nw) {
    const int r0 = (tile / TN) * 16, c0 = (tile % TN) * 16;
    if constexpr (Tr::tc_bf16 || Tr::tc_tf32) {
      // Fragment layouts of mma.sync m16n8k16 (bf16) / m16n8k8 (tf32), PTX ISA:
      // g = lane / 4 indexes rows of A and columns of B, q = lane % 4 the k pairs.
      const int g = lane / 4, q = lane % 4;
      float acc[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[h][v] = MODE == Acc::add ? out[(r0 + g + 8 * (v / 2)) * ldo + c0 + 8 * h + 2 * q + v % 2] : 0.0f;
      if constexpr (Tr::tc_bf16) {
#pragma unroll
        for (int k0 = 0; k0 < K; k0 += 16) {
          if (CAUSAL && k0 >= c0) break;  // the diagonal tile below, none past it
          std::uint32_t fa[4], fb[2][2];
#pragma unroll
          for (int v = 0; v < 4; ++v) {
            const int i = r0 + g + 8 * (v % 2), k = k0 + 2 * q + 8 * (v / 2);
            fa[v] = pack_bf16(a.at(i, k), a.at(i, k + 1));
          }
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int v = 0; v < 2; ++v) {
              const int k = k0 + 2 * q + 8 * v, j = c0 + 8 * h + g;
              fb[h][v] = pack_bf16(b.at(k, j), b.at(k + 1, j));
            }
          mma_bf16(acc[0], fa, fb[0]);
          mma_bf16(acc[1], fa, fb[1]);
        }
      } else {
#pragma unroll
        for (int k0 = 0; k0 < K; k0 += 8) {
          if (CAUSAL && k0 >= c0) break;
          std::uint32_t fa[4], fb[2][2];
#pragma unroll
          for (int v = 0; v < 4; ++v) fa[v] = tf32_bits(a.at(r0 + g + 8 * (v % 2), k0 + q + 4 * (v / 2)));
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int v = 0; v < 2; ++v) fb[h][v] = tf32_bits(b.at(k0 + q + 4 * v, c0 + 8 * h + g));
          mma_tf32(acc[0], fa, fb[0]);
          mma_tf32(acc[1], fa, fb[1]);
        }
      }
      if constexpr (CAUSAL) {
        // The diagonal k-tile, terms k <= j only (rows r0 + g, r0 + g + 8; columns c0 + 8 h + 2 q + w).
#pragma unroll
        for (int kk = 0; kk < 16; ++kk) {
          const int k = c0 + kk;
          const float a0 = tc_operand<Tr>(a.at(r0 + g, k)), a1 = tc_operand<Tr>(a.at(r0 + g + 8, k));
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int w = 0; w < 2; ++w) {
              const int j = c0 + 8 * h + 2 * q + w;
              if (k <= j) {
                const float bkj = tc_operand<Tr>(b.at(k, j));
                acc[h][w] = core::vfma(a0, bkj, acc[h][w]);
                acc[h][2 + w] = core::vfma(a1, bkj, acc[h][2 + w]);
              }
            }
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int i = r0 + g + 8 * (v / 2), j = c0 + 8 * h + 2 * q + v % 2;
          float& o = out[i * ldo + j];
          const float x = epi(i, j, acc[h][v]);
          o = MODE == Acc::sub ? o - x : x;
        }
    } else {
      // chunked-fp32: float products on the CUDA cores (no TF32), k in
      // increasing order; lane l computes 8 outputs of row r0 + l / 2.
      const int i = r0 + lane / 2, j0 = c0 + 8 * (lane % 2);
      float s[8];
#pragma unroll
      for (int x = 0; x < 8; ++x) s[x] = MODE == Acc::add ? out[i * ldo + j0 + x] : 0.0f;
#pragma unroll 4
      for (int k = 0; k < K; ++k) {
        if (CAUSAL && k > j0 + 7) break;  // causal: terms k <= j only
        const float av = a.at(i, k);
#pragma unroll
        for (int x = 0; x < 8; ++x)
          if (!CAUSAL || k <= j0 + x) s[x] = core::vfma(av, b.at(k, j0 + x), s[x]);
      }
#pragma unroll
      for (int x = 0; x < 8; ++x) {
        float& o = out[i * ldo + j0 + x];
        const float y = epi(i, j0 + x, s[x]);
        o = MODE == Acc::sub ? o - y : y;
      }
    }
  }
}

// Column dot products x_c . y_c of two rows x C matrices (ld LDC), c < len,
// into col[]: NT / C consecutive lanes per column, partial sums over rows,
// butterfly. No barrier.
template <class Tr, int ROWS>
__device__ void col_dots(const float* x, const float* y, float* col, int len) {
  constexpr int TPC = NT / Tr::C;
  const int c = threadIdx.x / TPC, part = threadIdx.x % TPC;
  float s = 0.0f;
  for (int r = part; r < ROWS; r += TPC) s = core::vfma(x[r * Tr::LDC + c], y[r * Tr::LDC + c], s);
#pragma unroll
  for (int m = TPC / 2; m >= 1; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  if (part == 0 && c < len) col[c] = s;
}

// Column norms ||x_c|| of a rows x C matrix (ld LDC), c < len, into nrm[]:
// sqrtf of col_dots' x_c . x_c, and where that sum overflows float (|x_c| above
// about 1.8e19) the same sum of x_c 2^-64 (exact scaling), rooted and times 2^64
// (ref::col_norm): a key, u or gate that large still gets its unit direction
// where the recurrence has one. No barrier.
template <class Tr, int ROWS>
__device__ void col_norms(const float* x, float* nrm, int len) {
  constexpr int TPC = NT / Tr::C;
  const int c = threadIdx.x / TPC, part = threadIdx.x % TPC;
  float s = 0.0f, t = 0.0f;
  for (int r = part; r < ROWS; r += TPC) {
    const float v = x[r * Tr::LDC + c], w = v * 0x1p-64f;
    s = core::vfma(v, v, s);
    t = core::vfma(w, w, t);
  }
#pragma unroll
  for (int m = TPC / 2; m >= 1; m /= 2) {
    s += __shfl_xor_sync(0xffffffffu, s, m);
    t += __shfl_xor_sync(0xffffffffu, t, m);
  }
  if (part == 0 && c < len) nrm[c] = isinf(s) ? sqrtf(t) * 0x1p64f : sqrtf(s);
}

// X (D x C, ld LDC) <- X U^{-1} for the unit upper triangular U with U(i, t) =
// cf[i * LDC + t] (i < t), columns t < len: x_t -= sum_{i<t} U(i, t) x_i,
// right-looking; columns t >= len come out 0. Rows are independent: the NT / D
// lanes of one row hold its columns t = s (mod NT / D) in registers and x_i is
// broadcast by shuffle (no barrier per column). With TWO, a second system
// (X2, cf2, len2) is solved in the same loop, interleaved (two independent
// chains; len 0: that system is left alone). No barrier.
template <class Tr, bool TWO>
__device__ void solve_rows(float* X, const float* cf, int len, float* X2, const float* cf2, int len2) {
  constexpr int TPR = NT / Tr::D, NC = Tr::C / TPR, LDC = Tr::LDC;
  const int s = threadIdx.x % TPR;
  float* row = X + (threadIdx.x / TPR) * LDC;
  float* row2 = TWO ? X2 + (threadIdx.x / TPR) * LDC : nullptr;
  float x[NC], y[NC];
#pragma unroll
  for (int m = 0; m < NC; ++m) {
    x[m] = len > 0 ? row[s + TPR * m] : 0.0f;
    if constexpr (TWO) y[m] = len2 > 0 ? row2[s + TPR * m] : 0.0f;
  }
  const int last = TWO && len2 > len ? len2 : len;
#pragma unroll
  for (int i = 0; i < Tr::C - 1; ++i) {
    if (i >= last - 1) break;  // uniform over the block
    const float xi = __shfl_sync(0xffffffffu, x[i / TPR], i % TPR, TPR);
    float yi = 0.0f;
    if constexpr (TWO) yi = __shfl_sync(0xffffffffu, y[i / TPR], i % TPR, TPR);
#pragma unroll
    for (int m = i / TPR; m < NC; ++m)
      if (TPR * m > i || s + TPR * m > i) {
        if (i < len - 1) x[m] -= cf[i * LDC + s + TPR * m] * xi;
        if constexpr (TWO)
          if (i < len2 - 1) y[m] -= cf2[i * LDC + s + TPR * m] * yi;
      }
  }
#pragma unroll
  for (int m = 0; m < NC; ++m) {
    if (len > 0) row[s + TPR * m] = s + TPR * m < len ? x[m] : 0.0f;
    if constexpr (TWO)
      if (len2 > 0) row2[s + TPR * m] = s + TPR * m < len2 ? y[m] : 0.0f;
  }
}

// One system (as solve_rows), then a block barrier.
template <class Tr>
__device__ void unit_upper_solve(float* X, const float* cf, int len) {
  solve_rows<Tr, false>(X, cf, len, nullptr, nullptr, 0);
  __syncthreads();
}

// L D L^T of I + G (G in the lower triangle of g, C x C, ld LDC; rows, columns
// < len) by one warp: lane l holds rows l, l + 32 in registers, right-looking,
// column j's entries broadcast by shuffle. Pivots through core::sm_delta (the
// vla-v3 floor) into piv (1 past len); L^T is left in the strict upper triangle
// (g[i][t] = L(t, i), 0 past len), so unit_upper_solve on P gives Z = P L^{-T}.
// No block barrier: the caller synchronises.
template <class Tr>
__device__ void ldl_warp(float* g, float* piv, int len, double floor) {
  constexpr int C = Tr::C, RPL = C / 32, LDC = Tr::LDC;
  const int lane = threadIdx.x % 32;
  float a[RPL][C];
#pragma unroll
  for (int q = 0; q < RPL; ++q)
#pragma unroll
    for (int c = 0; c < C; ++c) a[q][c] = c <= 32 * q + 31 ? g[(lane + 32 * q) * LDC + c] : 0.0f;
  __syncwarp();
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const float gjj = __shfl_sync(0xffffffffu, a[j / 32][j], j % 32);
    const float dj = j < len ? core::sm_delta(gjj, floor) : 1.0f;
    const float inv = __frcp_rn(dj);  // = 1.0f / dj (both correctly rounded); L(r, j) = g(r, j) * inv
    if (lane == 0) piv[j] = dj;
    float l[RPL];
#pragma unroll
    for (int q = 0; q < RPL; ++q) {
      const int r = lane + 32 * q;
      l[q] = r > j && r < len ? a[q][j] * inv : 0.0f;
      if (r > j) g[j * LDC + r] = l[q];
    }
    // g(r, c) -= L(r, j) g(c, j) for j < c <= r.
#pragma unroll
    for (int c = j + 1; c < C; ++c) {
      const float gcj = __shfl_sync(0xffffffffu, a[c / 32][j], c % 32);
#pragma unroll
      for (int q = 0; q < RPL; ++q)
        if (32 * q + 31 >= c && lane + 32 * q >= c) a[q][c] -= l[q] * gcj;
    }
  }
}

// Length of the chunk starting after step t0 (ends at a ridge step; as ref::chunk_length).
__device__ __forceinline__ int chunk_len(int t0, int T, int C, int ridge_every) {
  int len = C < T - t0 ? C : T - t0;
  if (ridge_every > 0) {
    const int next_ridge = (t0 / ridge_every + 1) * ridge_every;
    len = len < next_ridge - t0 ? len : next_ridge - t0;
  }
  return len;
}

// Issues cp.async copies of the chunk [t0, t0 + len) of q, k, v (and u) into raw
// (4 arrays of C x D elements, rows past len left as they are).
template <class Tr>
__device__ void fetch_chunk(unsigned char* raw, const FusedParams& p, int b, int h, int t0, int len) {
  using In = typename Tr::Prec::In;
  constexpr int D = Tr::D, PIECES = D * int(sizeof(In)) / 16;  // 16-byte pieces per row
  const void* src[4] = {p.q, p.k, p.v, p.u};
  for (int w = 0; w < 4; ++w) {
    if (!src[w]) continue;
    for (int e = threadIdx.x; e < len * PIECES; e += NT) {
      const int c = e / PIECES, x = e % PIECES;
      const unsigned char* g = static_cast<const unsigned char*>(src[w]) +
                               (((std::size_t(b) * p.T + t0 + c) * p.H + h) * D) * sizeof(In) + 16 * x;
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(raw + ((w * Tr::C + c) * D) * sizeof(In) + 16 * x));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
      __trap();  // cp.async needs sm_80 or newer
#else
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(g) : "memory");
#endif
    }
  }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// The chunk [t0, t0 + len) into shared memory (a block barrier first, so that
// the previous readers of these buffers are done): phi(k) into K and N, phi(q)
// into Q, v, u; zero past len; with prefetch, from raw (fetched by cp.async),
// then the next chunk's fetch is issued. Then the unit keys, u's scaling, and
// the running normaliser n_t (the recurrence's order) in N, read after later
// barriers.
template <class Tr>
__device__ void load_chunk(const FusedParams& p, int b, int h, int t0, int len, bool prefetch, unsigned char* raw, float* K,
                           float* N, float* Q, float* V, float* U, float* col, float* nv) {
  using Prec = typename Tr::Prec;
  using In = typename Prec::In;
  constexpr int D = Tr::D, C = Tr::C, LDC = Tr::LDC;
  const int tid = threadIdx.x;
  const In* gq = static_cast<const In*>(p.q);
  const In* gk = static_cast<const In*>(p.k);
  const In* gv = static_cast<const In*>(p.v);
  const In* gu = static_cast<const In*>(p.u);
  const bool u_is_k = !gu && !p.u_unit_scaled;
  const float sqrt_d = sqrtf(float(D));
  // Load the chunk: phi(k) into K and N, phi(q) into Q, v, u; zero past len.
  {
    constexpr int PER = C * D / NT;
    In lk[PER], lq[PER], lv[PER], lu[PER];
    if (Tr::can_prefetch && prefetch) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
      asm volatile("cp.async.wait_all;" ::: "memory");
#endif
      __syncthreads();
      const In* rq = reinterpret_cast<const In*>(raw);
#pragma unroll
      for (int x = 0; x < PER; ++x) {
        const int e = tid + x * NT;  // = c * D + j
        lq[x] = rq[e];
        lk[x] = rq[C * D + e];
        lv[x] = rq[2 * C * D + e];
        lu[x] = gu ? rq[3 * C * D + e] : In(0);
      }
    } else {
      __syncthreads();
#pragma unroll
      for (int x = 0; x < PER; ++x) {
        const int e = tid + x * NT, c = e / D, j = e % D;
        const std::size_t o = ((std::size_t(b) * p.T + t0 + (c < len ? c : 0)) * p.H + h) * D + j;
        lk[x] = gk[o];
        lq[x] = gq[o];
        lv[x] = gv[o];
        lu[x] = gu ? gu[o] : In(0);
      }
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
      if (!u_is_k) U[j * LDC + c] = in && gu ? Prec::load(lu[x]) : 0.0f;
    }
  }
  __syncthreads();
  if constexpr (Tr::can_prefetch)
    if (prefetch && t0 + len < p.T) fetch_chunk<Tr>(raw, p, b, h, t0 + len, chunk_len(t0 + len, p.T, C, p.ridge_every));
  if (p.normalize_key) {
    col_norms<Tr, D>(K, col, len);
    __syncthreads();
    for (int e = tid; e < D * C; e += NT)
      if (e % C < len) K[(e / C) * LDC + e % C] /= col[e % C];
    __syncthreads();
  }
  if (!gu && p.u_unit_scaled) {
    for (int e = tid; e < D * C; e += NT) U[(e / C) * LDC + e % C] = K[(e / C) * LDC + e % C];
    __syncthreads();
  }
  if (p.u_unit_scaled) {
    col_norms<Tr, D>(U, col, len);
    __syncthreads();
    for (int e = tid; e < D * C; e += NT)
      if (e % C < len) {
        float& x = U[(e / C) * LDC + e % C];
        x = (x / col[e % C]) / sqrt_d;
      }
    __syncthreads();
  }
  // Running normaliser n_t (the recurrence's order) in N (read after later barriers).
  for (int j = tid; j < D; j += NT) {
    float n = nv[j];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (c >= len) break;
      n = n + N[j * LDC + c];
      N[j * LDC + c] = n;
    }
    nv[j] = n;
  }
}

// ||S_c||_F^2 of the D x D state S (ld LDD), partial sums of warps 1..NW-1
// into red[warp] (called by those warps only). No barrier.
template <class Tr>
__device__ void state_sq_norm(const float* S, float* red) {
  constexpr int D = Tr::D;
  float s2 = 0.0f;
  for (int e = threadIdx.x - 32; e < D * D; e += NT - 32) {
    const float x = S[(e / D) * Tr::LDD + e % D];
    s2 = core::vfma(x, x, s2);
  }
  for (int m = 16; m >= 1; m /= 2) s2 += __shfl_xor_sync(0xffffffffu, s2, m);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s2;
}

// The increments of ||S_t||_F^2 over the chunk, inc[t] = 2 r_t.(S_c a^_t) +
// sum_{i<=t} (2 - [i = t]) (r_i.r_t)(a^_i.a^_t) (rr = R^T R, aa = Ah^T Ah, sa[t] =
// r_t.(S_c a^_t)), and ||S_c||^2 into misc[0] from the warps' partials. No barrier.
template <class Tr>
__device__ void norm_increments(const float* rr, const float* aa, const float* sa, const float* red, float* inc, float* misc, int len) {
  constexpr int LDC = Tr::LDC;
  const int tid = threadIdx.x;
  if (tid < len) {
    const int t = tid;
    float x = 2.0f * sa[t] + rr[t * LDC + t] * aa[t * LDC + t];
    for (int i = 0; i < t; ++i) x += 2.0f * rr[i * LDC + t] * aa[i * LDC + t];
    inc[t] = x;
  }
  if (tid == 0) {
    float tot = 0.0f;
    for (int w = 1; w < NW; ++w) tot += red[w];
    misc[0] = tot;
  }
}

// ||S_t|| and o_t of the chunk [t0, t0 + len): y (D x C, ld LDC) the readout,
// den the ratio denominators n_t . phi(q_t). No barrier.
template <class Tr>
__device__ void write_outputs(const FusedParams& p, int b, int h, int t0, int len, const float* y, const float* den, const float* inc,
                              const float* misc) {
  using Prec = typename Tr::Prec;
  using Out = typename Prec::Out;
  constexpr int D = Tr::D, C = Tr::C, LDC = Tr::LDC;
  const int tid = threadIdx.x;
  Out* go = static_cast<Out*>(p.o);
  if (tid < len) {
    float n2 = misc[0];
    for (int i = 0; i <= tid; ++i) n2 += inc[i];
    p.state_norm[(std::size_t(b) * p.T + t0 + tid) * p.H + h] = sqrtf(n2 > 0.0f ? n2 : 0.0f);
  }
  for (int e = tid; e < C * D; e += NT) {
    const int c = e / D, j = e % D;
    if (c >= len) continue;
    float x = y[j * LDC + c];
    if (p.ratio) x = x / core::readout_den(den[c], p.den_floor);
    const std::size_t o = ((std::size_t(b) * p.T + t0 + c) * p.H + h) * D + j;
    go[o] = Prec::out_bits(x);
  }
}

// prefetch: fetch the next chunk by cp.async (the launch gave the raw region:
// Traits::smem_bytes(true, .)).
template <class Tr>
__global__ void __launch_bounds__(NT, Tr::min_blocks) chunked_forward(FusedParams p, bool prefetch) {
  constexpr int D = Tr::D, C = Tr::C, LDD = Tr::LDD, LDC = Tr::LDC;
  constexpr Acc SET = Acc::set, ADD = Acc::add, SUB = Acc::sub;
  using N_ = Opnd<false>;  // stored as used
  using T_ = Opnd<true>;   // used transposed
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* f = reinterpret_cast<float*>(smem_raw);
  float *A = f + Tr::fA, *S = f + Tr::fS, *K = f + Tr::fK, *U = f + Tr::fU, *V = f + Tr::fV, *Q = f + Tr::fQ, *N = f + Tr::fN,
        *P = f + Tr::fP, *W = f + Tr::fW, *C1 = f + Tr::fC1, *C2 = f + Tr::fC2, *C3 = f + Tr::fC3;
  float* vec = f;
  float *piv = vec + Tr::vPiv, *col = vec + Tr::vCol, *col2 = vec + Tr::vCol2, *inc = vec + Tr::vInc, *nv = vec + Tr::vN,
        *red = vec + Tr::vRed, *misc = vec + Tr::vMisc;
  unsigned char* raw = smem_raw + Tr::float_bytes;

  const int bh = blockIdx.x, b = bh / p.H, h = bh % p.H, tid = threadIdx.x, warp = tid / 32;
  // U is K itself when u is not given and not rescaled (the paper preset).
  const bool u_is_k = !p.u && !p.u_unit_scaled;
  const float* Uop = u_is_k ? K : U;

  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    A[i * LDD + j] = i == j ? p.inv_lambda0 : 0.0f;
    S[i * LDD + j] = 0.0f;
  }
  for (int j = tid; j < D; j += NT) nv[j] = 0.0f;
  prefetch = prefetch && Tr::can_prefetch;
  if constexpr (Tr::can_prefetch)
    if (prefetch) fetch_chunk<Tr>(raw, p, b, h, 0, chunk_len(0, p.T, C, p.ridge_every));

  for (int t0 = 0; t0 < p.T;) {
    const int len = chunk_len(t0, p.T, C, p.ridge_every);
    const bool ridge = core::ridge_due(long(t0) + len, p.ridge_every);
    load_chunk<Tr>(p, b, h, t0, len, prefetch, raw, K, N, Q, V, U, col, nv);

    // Gate. P = A U, G = U^T P (C1).
    int slot = 0;
    product<Tr, D, C, D, SET>(P, LDC, N_{A, LDD}, N_{Uop, LDC}, slot, warp, NW);
    __syncthreads();
    slot = 0;
    product<Tr, C, C, D, SET>(C1, LDC, T_{Uop, LDC}, N_{P, LDC}, slot, warp, NW);
    // Ratio denominators n_t . phi(q_t) (N is free afterwards: S Ah goes there).
    if (p.ratio) col_dots<Tr, D>(N, Q, col2, len);
    __syncthreads();
    // I + G = L D L^T (warp 0), meanwhile W = A K, V <- V - S K and ||S_c||^2.
    if (warp == 0) {
      ldl_warp<Tr>(C1, piv, len, p.delta_floor);
    } else {
      slot = 0;
      product<Tr, D, C, D, SET>(W, LDC, N_{A, LDD}, N_{K, LDC}, slot, warp - 1, NW - 1);
      product<Tr, D, C, D, SUB>(V, LDC, N_{S, LDD}, N_{K, LDC}, slot, warp - 1, NW - 1);
      state_sq_norm<Tr>(S, red);
    }
    __syncthreads();
    // Z = P L^{-T} (in P).
    unit_upper_solve<Tr>(P, C1, len);
    // Y = triu(D^{-1} Z^T K) (C2).
    slot = 0;
    product<Tr, C, C, D, SET>(C2, LDC, T_{P, LDC}, N_{K, LDC}, slot, warp, NW, TriuDivEpi{piv});
    __syncthreads();
    // W = A K - Z Y (causal); A_{c+1} = A_c - (Z D^{-1}) Z^T.
    slot = 0;
    product<Tr, D, C, C, SUB, N_, N_, NoEpi, true>(W, LDC, N_{P, LDC}, N_{C2, LDC}, slot, warp, NW);
    product<Tr, D, D, C, SUB>(A, LDD, Opnd<false, true>{P, LDC, piv}, T_{P, LDC}, slot, warp, NW);
    __syncthreads();
    if (ridge) {
      for (int j = tid; j < D; j += NT) {
        W[j * LDC + len - 1] += p.ridge * K[j * LDC + len - 1];
        A[j * LDD + j] += p.ridge;
      }
      __syncthreads();
    }
    if (p.normalize_gate) {
      col_norms<Tr, D>(W, col, len);
      __syncthreads();
      for (int e = tid; e < D * C; e += NT)
        if (e % C < len) W[(e / C) * LDC + e % C] /= col[e % C];
      __syncthreads();
    }

    // State. T = I + strict_upper(Ah^T K) (C1), triu(Ah^T Q) (C2), S Q (P),
    // S Ah (N), Ah^T Ah (C3).
    slot = 0;
    product<Tr, C, C, D, SET>(C1, LDC, T_{W, LDC}, N_{K, LDC}, slot, warp, NW);
    product<Tr, C, C, D, SET>(C2, LDC, T_{W, LDC}, N_{Q, LDC}, slot, warp, NW, TriuEpi{});
    product<Tr, D, C, D, SET>(P, LDC, N_{S, LDD}, N_{Q, LDC}, slot, warp, NW);
    product<Tr, D, C, D, SET>(N, LDC, N_{S, LDD}, N_{W, LDC}, slot, warp, NW);
    product<Tr, C, C, D, SET>(C3, LDC, T_{W, LDC}, N_{W, LDC}, slot, warp, NW);
    __syncthreads();
    // R T = V - S K (R in V).
    unit_upper_solve<Tr>(V, C1, len);
    // Readout Y = S Q + R triu(Ah^T Q) (P, causal); R^T R (C1); S_{c+1} = S_c + R Ah^T;
    // r_t . (S_c a^_t).
    col_dots<Tr, D>(V, N, col, len);
    slot = 0;
    product<Tr, D, C, C, ADD, N_, N_, NoEpi, true>(P, LDC, N_{V, LDC}, N_{C2, LDC}, slot, warp, NW);
    product<Tr, C, C, D, SET>(C1, LDC, T_{V, LDC}, N_{V, LDC}, slot, warp, NW);
    product<Tr, D, D, C, ADD>(S, LDD, N_{V, LDC}, T_{W, LDC}, slot, warp, NW);
    __syncthreads();
    // ||S_t||_F^2 = ||S_c||^2 + prefix sums of the increments; o.
    norm_increments<Tr>(C1, C3, col, red, inc, misc, len);
    __syncthreads();
    write_outputs<Tr>(p, b, h, t0, len, P, col2, inc, misc);
    t0 += len;
  }
  __syncthreads();
  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    p.S[(std::size_t(bh) * D + i) * D + j] = S[i * LDD + j];
    p.A[(std::size_t(bh) * D + i) * D + j] = A[i * LDD + j];
  }
}

// ---- Kernel v7: the gate of chunk c + 1 pipelined with the state of chunk c ----
//
// The gate of a chunk (P = A U, G, L D L^T, Z, Y, W, the A update, the gate's
// normalisation) does not depend on S or v; the state of a chunk (V - S K, the R
// solve, the readout, the S update, the norms) needs only S and the chunk's
// gates. So one block runs them skewed by one chunk: each pass of the loop runs
// the gate of chunk g = s + 1 and the state of chunk s in the same
// barrier-separated phases, on double-buffered chunk data (K, Q, V, W and the
// ratio denominators, by chunk parity): the state's products fill the seven
// warps beside the one-warp L D L^T, and the two triangular solves (Z of chunk g,
// R of chunk s) run interleaved in the same registers' loop. Every product, mask,
// division and operand rounding is v6's, in the same order for each chunk, so
// the twin is unchanged and the bits are the plain kernel's. 12 barriers per
// chunk for the paper preset (plain: 16). C = 32 only: the plan needs 195,200 B
// (bf16 inputs) or 211,584 B (float) at D = 64, one block per SM, with the next
// chunk prefetched; launched for chunked-bf16 and -tf32 at one wave of blocks
// (chunked_dispatch.cuh, use_pipelined).
template <class Tr>
struct PipePlan {
  static constexpr int D = Tr::D, C = Tr::C, LDD = Tr::LDD, LDC = Tr::LDC;
  // Vectors: pivots, the gate's column scalars, the state's, ratio denominators
  // (2, by parity), increments, n, per-warp partials, misc.
  static constexpr int vPiv = 0, vColG = vPiv + C, vColS = vColG + C, vDen = vColS + C, vInc = vDen + 2 * C, vN = vInc + C,
                       vRed = vN + D, vMisc = vRed + 8, vEnd = vMisc + 8;
  // A, S (D x D); K, Q, V, W by parity, N, P (Z), Ps (readout), Ns (S Ah) (D x C);
  // the gate's C1, C2 and the state's C1, C2, C3 (C x C); U last.
  static constexpr int DC = D * LDC, CC = C * LDC;
  static constexpr int fA = (vEnd + 31) / 32 * 32, fS = fA + D * LDD, fK = fS + D * LDD, fQ = fK + 2 * DC, fV = fQ + 2 * DC,
                       fW = fV + 2 * DC, fN = fW + 2 * DC, fP = fN + DC, fPs = fP + DC, fNs = fPs + DC, fC1g = fNs + DC,
                       fC2g = fC1g + CC, fC1s = fC2g + CC, fC2s = fC1s + CC, fC3s = fC2s + CC, fU = fC3s + CC, floats = fU + DC;
  static constexpr int float_bytes = ((floats * 4 + 127) / 128) * 128;
  static constexpr int smem_bytes = float_bytes + Tr::raw_bytes;
  static constexpr bool fits = C == 32 && Tr::can_prefetch && smem_bytes <= 232448;
};

template <class Tr>
__global__ void __launch_bounds__(NT, 1) chunked_forward_pipelined(FusedParams p) {
  using Pl = PipePlan<Tr>;
  constexpr int D = Tr::D, C = Tr::C, LDD = Tr::LDD, LDC = Tr::LDC;
  constexpr Acc SET = Acc::set, ADD = Acc::add, SUB = Acc::sub;
  using N_ = Opnd<false>;
  using T_ = Opnd<true>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* f = reinterpret_cast<float*>(smem_raw);
  float *A = f + Pl::fA, *S = f + Pl::fS, *N = f + Pl::fN, *P = f + Pl::fP, *Ps = f + Pl::fPs, *Ns = f + Pl::fNs, *U = f + Pl::fU,
        *C1g = f + Pl::fC1g, *C2g = f + Pl::fC2g, *C1s = f + Pl::fC1s, *C2s = f + Pl::fC2s, *C3s = f + Pl::fC3s;
  float *piv = f + Pl::vPiv, *colg = f + Pl::vColG, *cols = f + Pl::vColS, *inc = f + Pl::vInc, *nv = f + Pl::vN,
        *red = f + Pl::vRed, *misc = f + Pl::vMisc;
  unsigned char* raw = smem_raw + Pl::float_bytes;
  const int bh = blockIdx.x, b = bh / p.H, h = bh % p.H, tid = threadIdx.x, warp = tid / 32;
  const bool u_is_k = !p.u && !p.u_unit_scaled;

  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    A[i * LDD + j] = i == j ? p.inv_lambda0 : 0.0f;
    S[i * LDD + j] = 0.0f;
  }
  for (int j = tid; j < D; j += NT) nv[j] = 0.0f;
  fetch_chunk<Tr>(raw, p, b, h, 0, chunk_len(0, p.T, C, p.ridge_every));

  // g: the gate's chunk (starting after t0g steps, buffers of parity pg); s: the state's.
  int t0g = 0, t0s = 0, lens = 0, pg = 0;
  bool has_s = false;
  for (;;) {
    const bool has_g = t0g < p.T;
    if (!has_g && !has_s) break;
    const int lg = has_g ? chunk_len(t0g, p.T, C, p.ridge_every) : 0, ps = pg ^ 1;
    float *Kg = f + Pl::fK + pg * Pl::DC, *Qg = f + Pl::fQ + pg * Pl::DC, *Vg = f + Pl::fV + pg * Pl::DC, *Wg = f + Pl::fW + pg * Pl::DC;
    float *Ks = f + Pl::fK + ps * Pl::DC, *Qs = f + Pl::fQ + ps * Pl::DC, *Vs = f + Pl::fV + ps * Pl::DC, *Ws = f + Pl::fW + ps * Pl::DC;
    float *deng = f + Pl::vDen + pg * C, *dens = f + Pl::vDen + ps * C;
    const float* Uop = u_is_k ? Kg : U;
    const bool ridge = has_g && core::ridge_due(long(t0g) + lg, p.ridge_every);
    // Gate: the chunk's inputs (K normalised, U, running n in N), then P = A U.
    if (has_g) load_chunk<Tr>(p, b, h, t0g, lg, true, raw, Kg, N, Qg, Vg, U, colg, nv);
    int slot = 0;
    if (has_g) product<Tr, D, C, D, SET>(P, LDC, N_{A, LDD}, N_{Uop, LDC}, slot, warp, NW);
    __syncthreads();
    // Gate: G = U^T P (C1g), ratio denominators n_t . phi(q_t).
    slot = 0;
    if (has_g) {
      product<Tr, C, C, D, SET>(C1g, LDC, T_{Uop, LDC}, N_{P, LDC}, slot, warp, NW);
      if (p.ratio) col_dots<Tr, D>(N, Qg, deng, lg);
    }
    __syncthreads();
    // Gate: I + G = L D L^T (warp 0), W = A K. State: T = I + strict_upper(Ah^T K)
    // (C1s), triu(Ah^T Q) (C2s), S Q (Ps), S Ah (Ns), Ah^T Ah (C3s), V - S K, ||S_s||^2.
    if (warp == 0) {
      if (has_g) ldl_warp<Tr>(C1g, piv, lg, p.delta_floor);
    } else {
      slot = 0;
      if (has_g) product<Tr, D, C, D, SET>(Wg, LDC, N_{A, LDD}, N_{Kg, LDC}, slot, warp - 1, NW - 1);
      if (has_s) {
        product<Tr, C, C, D, SET>(C1s, LDC, T_{Ws, LDC}, N_{Ks, LDC}, slot, warp - 1, NW - 1);
        product<Tr, C, C, D, SET>(C2s, LDC, T_{Ws, LDC}, N_{Qs, LDC}, slot, warp - 1, NW - 1, TriuEpi{});
        product<Tr, D, C, D, SET>(Ps, LDC, N_{S, LDD}, N_{Qs, LDC}, slot, warp - 1, NW - 1);
        product<Tr, D, C, D, SET>(Ns, LDC, N_{S, LDD}, N_{Ws, LDC}, slot, warp - 1, NW - 1);
        product<Tr, C, C, D, SET>(C3s, LDC, T_{Ws, LDC}, N_{Ws, LDC}, slot, warp - 1, NW - 1);
        product<Tr, D, C, D, SUB>(Vs, LDC, N_{S, LDD}, N_{Ks, LDC}, slot, warp - 1, NW - 1);
        state_sq_norm<Tr>(S, red);
      }
    }
    __syncthreads();
    // Z = P L^{-T} (gate, in P) and R T = V - S K (state, in Vs), interleaved.
    solve_rows<Tr, true>(P, C1g, has_g ? lg : 0, Vs, C1s, has_s ? lens : 0);
    __syncthreads();
    // Gate: Y = triu(D^{-1} Z^T K) (C2g). State: r_t . (S a^_t); readout
    // Y = S Q + R triu(Ah^T Q) (Ps, causal); R^T R (C1s); S += R Ah^T.
    slot = 0;
    if (has_g) product<Tr, C, C, D, SET>(C2g, LDC, T_{P, LDC}, N_{Kg, LDC}, slot, warp, NW, TriuDivEpi{piv});
    if (has_s) {
      col_dots<Tr, D>(Vs, Ns, cols, lens);
      product<Tr, D, C, C, ADD, N_, N_, NoEpi, true>(Ps, LDC, N_{Vs, LDC}, N_{C2s, LDC}, slot, warp, NW);
      product<Tr, C, C, D, SET>(C1s, LDC, T_{Vs, LDC}, N_{Vs, LDC}, slot, warp, NW);
      product<Tr, D, D, C, ADD>(S, LDD, N_{Vs, LDC}, T_{Ws, LDC}, slot, warp, NW);
    }
    __syncthreads();
    // Gate: W = A K - Z Y (causal); A -= (Z D^{-1}) Z^T. State: the norms' increments.
    slot = 0;
    if (has_g) {
      product<Tr, D, C, C, SUB, N_, N_, NoEpi, true>(Wg, LDC, N_{P, LDC}, N_{C2g, LDC}, slot, warp, NW);
      product<Tr, D, D, C, SUB>(A, LDD, Opnd<false, true>{P, LDC, piv}, T_{P, LDC}, slot, warp, NW);
    }
    if (has_s) norm_increments<Tr>(C1s, C3s, cols, red, inc, misc, lens);
    __syncthreads();
    // State: o and ||S_t|| of chunk s. Gate: ridge, then the gates' normalisation.
    if (has_s) write_outputs<Tr>(p, b, h, t0s, lens, Ps, dens, inc, misc);
    if (ridge) {
      for (int j = tid; j < D; j += NT) {
        Wg[j * LDC + lg - 1] += p.ridge * Kg[j * LDC + lg - 1];
        A[j * LDD + j] += p.ridge;
      }
    }
    if (has_g && p.normalize_gate) {
      if (ridge) __syncthreads();
      col_norms<Tr, D>(Wg, colg, lg);
      __syncthreads();
      for (int e = tid; e < D * C; e += NT)
        if (e % C < lg) Wg[(e / C) * LDC + e % C] /= colg[e % C];
    }
    has_s = has_g;
    t0s = t0g;
    lens = lg;
    t0g += lg;
    pg ^= 1;
    __syncthreads();
  }
  __syncthreads();
  for (int e = tid; e < D * D; e += NT) {
    const int i = e / D, j = e % D;
    p.S[(std::size_t(bh) * D + i) * D + j] = S[i * LDD + j];
    p.A[(std::size_t(bh) * D + i) * D + j] = A[i * LDD + j];
  }
}

}  // namespace vla::gpu::chunked
