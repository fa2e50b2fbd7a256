// The state stage's per-chunk preparation (docs/CHUNKED.md 8.3), shared by the
// state stage's prep kernel (scan_state.cu state_prep_kernel) and the gate
// stage's steps kernel, which does it in each chunk's epilogue where it fits
// (scan_gate.cu steps_kernel, 8.18): from the chunk's a^, k^ and v rows in shared
// memory, T(i, t) = a^_i . k^_t for i < t (the strict upper part of Ah^T K), then
// Kt = K T^{-1} and Vt = V T^{-1} by forward substitution over the chunk's steps,
// written to the state scratch. One function, so that both kernels compute the
// same floats in the same order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace vla::gpu::scan {

// E consecutive floats from shared memory (16-byte aligned when E % 4 == 0).
template <int E>
__device__ __forceinline__ void lds(float (&x)[E], const float* src) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int q = 0; q < E / 4; ++q) {
      const float4 v = reinterpret_cast<const float4*>(src)[q];
      x[4 * q] = v.x;
      x[4 * q + 1] = v.y;
      x[4 * q + 2] = v.z;
      x[4 * q + 3] = v.w;
    }
  } else if constexpr (E == 2) {
    const float2 v = *reinterpret_cast<const float2*>(src);
    x[0] = v.x;
    x[1] = v.y;
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) x[e] = src[e];
  }
}

// The rows' strides: a^, k^ and v rows at D + 4 floats (16-byte rows: float4 loads;
// a quarter warp's 16-byte loads of 8 rows hit distinct banks), T's at C + 4.
template <int D, int C>
struct PrepRows {
  static constexpr int LD = D + 4, LT = C + 4;
};

// The chunk's cc steps (rows past cc of As, Ks and Vs: zeros or anything; only
// rows below cc are read for the stored results) by the block's NT threads, all of
// which call it: T into Tm (T_OVER_A: Tm is As, overwritten once every thread has
// read a^), Kt and Vt in place of Ks and Vs, then rows 0..cc-1 of both to kt_dst
// and vt_dst (16-byte aligned; rows D floats apart). Block barriers inside.
template <int D, int C, int NT, bool T_OVER_A>
__device__ __forceinline__ void prep_chunk_core(float* As, float* Ks, float* Vs, float* Tm, int cc, float* __restrict__ kt_dst,
                                                float* __restrict__ vt_dst) {
  static_assert(C % 16 == 0 && D % 4 == 0, "C must be a multiple of 16; rows as 16-byte pieces");
  constexpr int LD = PrepRows<D, C>::LD, LT = PrepRows<D, C>::LT;
  constexpr int Q = D / 4;  // 16-byte pieces of a row
  // T(i, t) = a^_i . k^_t (j in order, four columns per shared-memory load), a 16 x TY
  // grid of threads (TY = NT / 16), each C/TY x C/16 entries.
  {
    constexpr int TY = NT / 16, MI = C / TY, MT = C / 16;
    static_assert(NT % 16 == 0 && C % TY == 0 && C % 16 == 0, "whole tiles");
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[MI][MT];
#pragma unroll
    for (int m = 0; m < MI; ++m)
#pragma unroll
      for (int n = 0; n < MT; ++n) acc[m][n] = 0.0f;
#pragma unroll 2
    for (int j = 0; j < D; j += 4) {
      float a[MI][4], k[MT][4];
#pragma unroll
      for (int m = 0; m < MI; ++m) lds<4>(a[m], As + (ty + TY * m) * LD + j);
#pragma unroll
      for (int n = 0; n < MT; ++n) lds<4>(k[n], Ks + (tx + 16 * n) * LD + j);
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int m = 0; m < MI; ++m)
#pragma unroll
          for (int n = 0; n < MT; ++n) acc[m][n] = fmaf(a[m][u], k[n][u], acc[m][n]);
    }
    if constexpr (T_OVER_A) __syncthreads();  // every thread done with a^ before T overwrites it
#pragma unroll
    for (int m = 0; m < MI; ++m)
#pragma unroll
      for (int n = 0; n < MT; ++n) {
        const int i = ty + TY * m, t = tx + 16 * n;
        if (i < t) Tm[i * LT + t] = acc[m][n];
      }
  }
  __syncthreads();

  // Forward substitution, one column of K or of V per thread (2 D columns: every
  // thread busy at D = 64): x_t = x_t - sum_{i<t} x_i T(i,t), i in order.
  if constexpr (C <= 32 && 2 * D >= NT) {
    // The column whole in registers (C <= 32: within the prep's 64-register bound; at 2 D < NT,
    // i.e. D <= 32 in the state prep, ptxas spills 28 bytes, so those keep the loop below), i outer:
    // row i of T as float4 pieces from the one holding T(i, i + 1) (each piece a broadcast feeding
    // four FMAs a lane), and no shared-memory load of x_i at all. At C = 32 a column's shared-memory
    // loads fall from 288 (the loop below) to 168 (32 of x, 136 of T): the state prep 3% faster at
    // D = 64 (H100, reports/gpu/2026-12-07-h100-state-prep-pass.md). Each x_t's FMAs are the same
    // sequence as one step at a time (i ascending, fmaf(-T(i,t), x_i, x_t)): the same bits. Rows past
    // cc: zeros or anything, read but never stored, and x_t for t < cc uses only rows i < t.
    for (int col = threadIdx.x; col < 2 * D; col += NT) {
      float* X = col < D ? Ks : Vs;  // warp-uniform at D >= 32
      const int j = col < D ? col : col - D;
      float x[C];
#pragma unroll
      for (int t = 0; t < C; ++t) x[t] = X[t * LD + j];
#pragma unroll
      for (int i = 0; i < C - 1; ++i) {
#pragma unroll
        for (int p = (i + 1) / 4; p < C / 4; ++p) {
          float tq[4];
          lds<4>(tq, Tm + i * LT + 4 * p);
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (4 * p + e > i) x[4 * p + e] = fmaf(-tq[e], x[i], x[4 * p + e]);
        }
      }
#pragma unroll
      for (int t = 0; t < C; ++t)
        if (t < cc) X[t * LD + j] = x[t];
    }
  } else {
    // C = 64 (the column does not fit the registers), or few columns. Eight steps at a time: the terms i < tb for
    // x_tb..x_tb+7 (two float4 loads of T(i, tb..tb+7) for their eight FMAs), then the terms
    // tb <= i < t; for each x_t that is the same sequence of FMAs as one step at a time.
    for (int col = threadIdx.x; col < 2 * D; col += NT) {
      float* X = col < D ? Ks : Vs;  // warp-uniform at D >= 32
      const int j = col < D ? col : col - D;
      for (int tb = 0; tb < cc; tb += 8) {
        float x[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = X[(tb + k) * LD + j];  // rows past cc are zeros, never stored
#pragma unroll 2
        for (int i = 0; i < tb; ++i) {
          const float xi = X[i * LD + j];
          float tv[8];
          lds<8>(tv, Tm + i * LT + tb);
#pragma unroll
          for (int k = 0; k < 8; ++k) x[k] = fmaf(-tv[k], xi, x[k]);
        }
#pragma unroll
        for (int k = 1; k < 8; ++k)
#pragma unroll
          for (int i = 0; i < k; ++i) x[k] = fmaf(-Tm[(tb + i) * LT + tb + k], x[i], x[k]);
#pragma unroll
        for (int k = 0; k < 8; ++k)
          if (tb + k < cc) X[(tb + k) * LD + j] = x[k];
      }
    }
  }
  __syncthreads();

  // Kt and Vt out as 16-byte pieces ([b, h, step, D]: the chunk's rows are contiguous).
  for (int e = threadIdx.x; e < cc * Q; e += NT) {
    const int o = (e / Q) * LD + 4 * (e % Q);
    reinterpret_cast<float4*>(kt_dst)[e] = *reinterpret_cast<const float4*>(Ks + o);
    reinterpret_cast<float4*>(vt_dst)[e] = *reinterpret_cast<const float4*>(Vs + o);
  }

}

}  // namespace vla::gpu::scan
