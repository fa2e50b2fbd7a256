// Stage 2 of the chunk-parallel ("scan") form: the state, given stage 1's gates
// (the maths: /tmp/scan_spec.md "Stage 2", docs/CHUNKED.md section 8; the
// interface: scan_stages.cuh). Float arithmetic, explicit FMAs, IEEE division
// and square root (built with --fmad=false -prec-div=true -prec-sqrt=true).
//
// Three kernels on one stream:
//  1. state_prep_kernel, one block per (b, h, chunk), all chunks at once:
//       T(i,t) = a^_i . k^_t for i < t (the strict upper part of Ah^T K),
//       Kt = K T^{-1}, Vt = V T^{-1} by forward substitution over the chunk's
//       steps (column t: kt_t = k^_t - sum_{i<t} kt_i T(i,t), i in order),
//       written to scratch as [b, h, step, D] floats.
//  2. state_pass_kernel, one block per (b, h, group of G rows of S), sequential
//       over chunks: a thread holds E consecutive entries of one row of S in
//       registers. Per chunk, with the chunk's a^, phi(q), kt, vt, den staged in
//       shared memory (cp.async, double-buffered: the next chunk's loads overlap
//       this chunk's work), phases A, B over sub-chunks of 32 steps, then C, D
//       likewise (the partial sums' records hold one sub-chunk), U steps'
//       operands loaded into registers before any is used:
//         A  partial dot products of each row of S_c with kt_t over the thread's
//            columns, all t of the chunk;
//         B  r_t,i = vt_t,i - (sum of the row's partials, slices in order);
//         C  per step t in order: S_ij = fma(r_t,i, a^_t,j, S_ij) (core::state_entry),
//            partial y = sum_j S_ij phi(q)_j and partial ||row||^2 over the
//            thread's columns (FMA chains, j in order);
//         D  y_t,i = sum of the row's partials (slices in order), o = y / den_t
//            (raw y without den), stored as float or bf16 (core::bf16_bits_rne);
//            the row's squared norm likewise;
//         E  the block's partial ||S_t||_F^2 = sum of its rows' squared norms
//            (rows in order) to scratch [b, h, t, group].
//     The only dependency across steps is one FMA per entry of S (r of a whole
//     chunk comes from the state entering it), so the pass is throughput-bound.
//  3. state_norm_kernel: ||S_t||_F = sqrt(sum of the groups' partials, groups in
//     order): deterministic, independent of the launch's timing.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "check.cuh"
#include "scan_state.cuh"
#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"

namespace vla::gpu::scan {
namespace {

constexpr int kThreads = 128;  // every kernel of the stage runs blocks of 128 threads
constexpr int kSlices = 16;    // 8-row blocks: a row's D columns in 16 slices of D/16

// Scratch layout: Kt and Vt as [B*H, N*C, D] floats, then the norm partials as
// [B*H, T, D/8] floats (the most row groups a head has: 8-row blocks).
struct ScratchLayout {
  std::size_t kt = 0, vt = 0, part = 0, bytes = 0;
};

std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

ScratchLayout scratch_layout(int B, int T, int H, int D, int C) {
  const std::size_t bh = static_cast<std::size_t>(B) * H;
  const std::size_t n_chunks = (static_cast<std::size_t>(T) + C - 1) / C;
  const std::size_t tile = align256(bh * n_chunks * C * D * sizeof(float));
  ScratchLayout l;
  l.kt = 0;
  l.vt = tile;
  l.part = 2 * tile;
  l.bytes = l.part + align256(bh * static_cast<std::size_t>(T) * (D / 8) * sizeof(float));
  return l;
}

__device__ __forceinline__ std::size_t row_index(int b, int t, int h, int T, int H) {
  return (static_cast<std::size_t>(b) * T + t) * H + h;
}

// ---------------------------------------------------------------- kernel 1

template <int D, int C>
constexpr std::size_t prep_smem_bytes() {
  return (3 * static_cast<std::size_t>(C) * (D + 1) + static_cast<std::size_t>(C) * (C + 4)) * sizeof(float);
}

template <int D, int C, bool BF16>
__global__ void __launch_bounds__(kThreads) state_prep_kernel(StateParams p, int n_chunks, float* __restrict__ kt_out,
                                                              float* __restrict__ vt_out) {
  static_assert(C % 16 == 0, "C must be a multiple of 16");
  constexpr int LD = D + 1;  // odd stride: a warp reading 16 rows at one column hits 16 banks
  constexpr int LT = C + 4;   // rows of T 16-byte aligned (float4 loads of T(i, t..t+3))
  extern __shared__ __align__(16) float psmem[];
  float* As = psmem;         // a^_t rows
  float* Ks = As + C * LD;   // k^_t rows, then kt_t in place
  float* Vs = Ks + C * LD;   // v_t rows, then vt_t in place
  float* Tm = Vs + C * LD;   // T(i, t), i < t

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / n_chunks, c = blockIdx.x % n_chunks;
  const int b = bh / H, h = bh % H;
  const int t0 = c * C;
  const int cc = min(C, T - t0);

  for (int e = threadIdx.x; e < C * D; e += kThreads) {
    const int t = e / D, j = e % D;
    float a = 0.0f, k = 0.0f, v = 0.0f;
    if (t < cc) {
      const std::size_t g = row_index(b, t0 + t, h, T, H) * D + j;
      a = p.in.gate[g];
      k = p.in.khat[g];
      if constexpr (BF16) {
        v = core::bf16_bits_to_float(static_cast<const std::uint16_t*>(p.v)[g]);
      } else {
        v = static_cast<const float*>(p.v)[g];
      }
    }
    As[t * LD + j] = a;
    Ks[t * LD + j] = k;
    Vs[t * LD + j] = v;
  }
  __syncthreads();

  // T(i, t) = a^_i . k^_t (j in order), a 16 x 8 grid of threads, each C/8 x C/16 entries.
  {
    constexpr int MI = C / 8, MT = C / 16;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[MI][MT];
#pragma unroll
    for (int m = 0; m < MI; ++m)
#pragma unroll
      for (int n = 0; n < MT; ++n) acc[m][n] = 0.0f;
#pragma unroll 4
    for (int j = 0; j < D; ++j) {
      float a[MI], k[MT];
#pragma unroll
      for (int m = 0; m < MI; ++m) a[m] = As[(ty + 8 * m) * LD + j];
#pragma unroll
      for (int n = 0; n < MT; ++n) k[n] = Ks[(tx + 16 * n) * LD + j];
#pragma unroll
      for (int m = 0; m < MI; ++m)
#pragma unroll
        for (int n = 0; n < MT; ++n) acc[m][n] = fmaf(a[m], k[n], acc[m][n]);
    }
#pragma unroll
    for (int m = 0; m < MI; ++m)
#pragma unroll
      for (int n = 0; n < MT; ++n) {
        const int i = ty + 8 * m, t = tx + 16 * n;
        if (i < t) Tm[i * LT + t] = acc[m][n];
      }
  }
  __syncthreads();

  // Forward substitution, one column of K or V per thread: x_t = x_t - sum_{i<t} x_i T(i,t),
  // i in order. Four steps at a time: the terms i < tb for x_tb..x_tb+3 (one load of x_i
  // and one of T(i, tb..tb+3) for four FMAs), then the terms tb <= i < t; for each x_t
  // that is the same sequence of FMAs as one step at a time.
  for (int col = threadIdx.x; col < 2 * D; col += kThreads) {
    float* X = col < D ? Ks : Vs;
    const int j = col < D ? col : col - D;
    for (int tb = 0; tb < cc; tb += 4) {
      float x[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) x[k] = X[(tb + k) * LD + j];  // rows past cc are zeros, never stored
#pragma unroll 4
      for (int i = 0; i < tb; ++i) {
        const float xi = X[i * LD + j];
        const float4 tv = *reinterpret_cast<const float4*>(Tm + i * LT + tb);
        x[0] = fmaf(-tv.x, xi, x[0]);
        x[1] = fmaf(-tv.y, xi, x[1]);
        x[2] = fmaf(-tv.z, xi, x[2]);
        x[3] = fmaf(-tv.w, xi, x[3]);
      }
#pragma unroll
      for (int k = 1; k < 4; ++k)
#pragma unroll
        for (int i = 0; i < k; ++i) x[k] = fmaf(-Tm[(tb + i) * LT + tb + k], x[i], x[k]);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (tb + k < cc) X[(tb + k) * LD + j] = x[k];
    }
  }
  __syncthreads();

  const std::size_t base = (static_cast<std::size_t>(bh) * n_chunks * C + t0) * D;
  for (int e = threadIdx.x; e < cc * D; e += kThreads) {
    const int t = e / D, j = e % D;
    kt_out[base + e] = Ks[t * LD + j];
    vt_out[base + e] = Vs[t * LD + j];
  }
}

// ---------------------------------------------------------------- kernel 2

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

// A pass block: G rows of S, each in SL = D / E slices of E columns, one thread
// per slice. Partial sums pass through shared records, one per (step, row) of a
// sub-chunk of CS steps; U steps at a time are loaded into registers before any
// is computed or stored (a store to shared memory keeps later loads behind it).
template <int D, int C, int G, int E>
struct PassShape {
  static constexpr int SL = D / E;                 // slices of a row
  static constexpr int NT = G * SL;                // threads
  static constexpr int CS = C < 32 ? C : 32;       // steps per sub-chunk of partial records
  static constexpr int U = E >= 8 ? 4 : (E == 4 ? 8 : 16);  // steps loaded at once
  static constexpr int PS = SL + 4;                // record stride of the r partials (floats; padded against bank conflicts)
  static constexpr int YS = 2 * SL + 4;            // record stride of the (y, ||row||^2) partials
  static constexpr std::size_t buf_floats = 3 * static_cast<std::size_t>(C) * D + C * G + C;
  static constexpr std::size_t rec_floats = static_cast<std::size_t>(CS) * G * (PS > YS ? PS : YS);
  static constexpr std::size_t fixed_floats = rec_floats + 2 * C * G;
  static constexpr int NBUF = (2 * buf_floats + fixed_floats) * sizeof(float) <= 200 * 1024 ? 2 : 1;
  static constexpr std::size_t smem_bytes = (NBUF * buf_floats + fixed_floats) * sizeof(float);
  static_assert(SL % 4 == 0 && D % E == 0 && C % CS == 0 && CS % U == 0, "whole records, sub-chunks and batches");
  static_assert(NT % (D / 4) == 0 && NT >= C, "loads by whole rows; one thread per step for the norm partials");
};

template <int D, int C, int G, int E, bool BF16>
__global__ void __launch_bounds__(PassShape<D, C, G, E>::NT, 1)
    state_pass_kernel(StateParams p, int n_chunks, const float* __restrict__ kt_in, const float* __restrict__ vt_in,
                      float* __restrict__ part) {
  using Sh = PassShape<D, C, G, E>;
  constexpr int SL = Sh::SL, NT = Sh::NT, CS = Sh::CS, U = Sh::U, PS = Sh::PS, YS = Sh::YS, NBUF = Sh::NBUF;
  constexpr int NG = D / G;      // row groups of a head
  constexpr int NGMAX = D / 8;   // the partials' stride (scratch_layout)
  extern __shared__ __align__(16) float smem[];
  float* bufs = smem;                        // NBUF x {As, Qs, Ks, Vs, Ds}
  float* REC = smem + NBUF * Sh::buf_floats;  // CS*G records: r partials (stride PS) or (y, n) partials (stride YS)
  float* R = REC + Sh::rec_floats;            // r_t,i of the chunk
  float* NR = R + C * G;                      // rows' squared norms of the chunk

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / NG, grp = blockIdx.x % NG;
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x;
  const int row = tid / SL, sl = tid % SL;
  const int j0 = sl * E;
  const int i_row = grp * G + row;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;
  const bool ratio = p.in.den != nullptr;
  const std::size_t step_stride = static_cast<std::size_t>(H) * D;  // floats between steps of [B, T, H, D]

  auto load_chunk = [&](int c, int buf) {
    float* As = bufs + buf * Sh::buf_floats;
    float* Qs = As + C * D;
    float* Ks = Qs + C * D;
    float* Vs = Ks + C * D;
    float* Ds = Vs + C * G;
    const int t0 = c * C, cc = min(C, T - t0);
    constexpr int Q = D / 4;      // 16-byte pieces of a row
    constexpr int RS = NT / Q;    // rows per sweep of the block
    {
      const int q4 = tid % Q;
      int t = tid / Q;
      const std::size_t g0 = row_index(b, t0 + t, h, T, H) * D + 4 * q4;
      const float* ga = p.in.gate + g0;
      const float* gq = p.in.phiq + g0;
      for (; t < cc; t += RS, ga += RS * step_stride, gq += RS * step_stride) {
        __pipeline_memcpy_async(As + t * D + 4 * q4, ga, 16);
        __pipeline_memcpy_async(Qs + t * D + 4 * q4, gq, 16);
      }
    }
    const float* kt = kt_in + (static_cast<std::size_t>(bh) * nc_steps + t0) * D;
    for (int e = tid; e < cc * Q; e += NT) __pipeline_memcpy_async(Ks + 4 * e, kt + 4 * e, 16);
    constexpr int QG = G / 4;
    for (int e = tid; e < cc * QG; e += NT) {
      const int t = e / QG, q = e % QG;
      const float* vt = vt_in + (static_cast<std::size_t>(bh) * nc_steps + t0 + t) * D + grp * G + 4 * q;
      __pipeline_memcpy_async(Vs + t * G + 4 * q, vt, 16);
    }
    if (ratio && tid < cc) __pipeline_memcpy_async(Ds + tid, p.in.den + row_index(b, t0 + tid, h, T, H), 4);
    __pipeline_commit();
  };

  float s[E];
#pragma unroll
  for (int e = 0; e < E; ++e) s[e] = 0.0f;

  load_chunk(0, 0);
  for (int c = 0; c < n_chunks; ++c) {
    const int buf = NBUF == 2 ? (c & 1) : 0;
    if constexpr (NBUF == 2) {
      if (c + 1 < n_chunks) {
        load_chunk(c + 1, buf ^ 1);
        __pipeline_wait_prior(1);
      } else {
        __pipeline_wait_prior(0);
      }
    } else {
      if (c > 0) load_chunk(c, 0);
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    const float* As = bufs + buf * Sh::buf_floats;
    const float* Qs = As + C * D;
    const float* Ks = Qs + C * D;
    const float* Vs = Ks + C * D;
    const float* Ds = Vs + C * G;
    const int t0 = c * C, cc = min(C, T - t0);

    // r of the chunk from the state entering it, a sub-chunk of records at a time.
    for (int sb = 0; sb < cc; sb += CS) {
      const int se = min(cc, sb + CS);
      // A: the row's partial dot products with kt_t over this thread's columns.
      for (int tb = sb; tb < se; tb += U) {
        float k[U][E];
#pragma unroll
        for (int u = 0; u < U; ++u) lds<E>(k[u], Ks + (tb + u) * D + j0);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          float acc = 0.0f;
#pragma unroll
          for (int e = 0; e < E; ++e) acc = fmaf(s[e], k[u][e], acc);
          REC[((tb - sb + u) * G + row) * PS + sl] = acc;  // rows past cc: records never read
        }
      }
      __syncthreads();
      // B: r_t,i = vt_t,i - (S_c kt_t)_i, the slices summed in order.
      for (int pr = tid; pr < (se - sb) * G; pr += NT) {
        float x[SL];
        lds<SL>(x, REC + pr * PS);
        float acc = x[0];
#pragma unroll
        for (int q = 1; q < SL; ++q) acc += x[q];
        R[sb * G + pr] = Vs[sb * G + pr] - acc;
      }
      __syncthreads();
    }
    // The steps, t in order, a sub-chunk of records at a time.
    for (int sb = 0; sb < cc; sb += CS) {
      const int se = min(cc, sb + CS);
      // C: S_ij = fma(r_t,i, a^_t,j, S_ij); partial y and ||row||^2 over this thread's columns.
      for (int tb = sb; tb < se; tb += U) {
        float a[U][E], q[U][E], r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          lds<E>(a[u], As + (tb + u) * D + j0);
          lds<E>(q[u], Qs + (tb + u) * D + j0);
          r[u] = R[(tb + u) * G + row];
        }
        const int live = se - tb;  // steps of this batch that exist (>= U but in a short last chunk)
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (u < live) {
            float y = 0.0f, n = 0.0f;
#pragma unroll
            for (int e = 0; e < E; ++e) {
              s[e] = core::state_entry(s[e], r[u], a[u][e]);
              y = fmaf(s[e], q[u][e], y);
              n = fmaf(s[e], s[e], n);
            }
            *reinterpret_cast<float2*>(REC + ((tb - sb + u) * G + row) * YS + 2 * sl) = make_float2(y, n);
          }
        }
      }
      __syncthreads();
      // D: y_t,i and the rows' squared norms, slices in order; o = y / den.
      for (int pr = tid; pr < (se - sb) * G; pr += NT) {
        float x[2 * SL];
        lds<2 * SL>(x, REC + pr * YS);
        float y = x[0], n = x[1];
#pragma unroll
        for (int q = 1; q < SL; ++q) {
          y += x[2 * q];
          n += x[2 * q + 1];
        }
        const int t = sb + pr / G, rr = pr % G;
        const float o = ratio ? y / Ds[t] : y;
        const std::size_t g = row_index(b, t0 + t, h, T, H) * D + grp * G + rr;
        if constexpr (BF16) {
          static_cast<std::uint16_t*>(p.o)[g] = core::bf16_bits_rne(o);
        } else {
          static_cast<float*>(p.o)[g] = o;
        }
        NR[sb * G + pr] = n;
      }
      __syncthreads();
    }
    // E: the block's partial ||S_t||_F^2, rows in order.
    if (tid < cc) {
      float acc = NR[tid * G];
#pragma unroll
      for (int rr = 1; rr < G; ++rr) acc += NR[tid * G + rr];
      part[(static_cast<std::size_t>(bh) * T + t0 + tid) * NGMAX + grp] = acc;
    }
    // The next iteration's loads into this buffer and its writes of REC, R and NR
    // come after the barriers that follow.
  }

  float* S = p.S + (static_cast<std::size_t>(bh) * D + i_row) * D + j0;
#pragma unroll
  for (int e = 0; e < E; ++e) S[e] = s[e];
}

// ---------------------------------------------------------------- kernel 3

__global__ void state_norm_kernel(const float* __restrict__ part, float* __restrict__ norm, int B, int T, int H, int n_groups,
                                  int stride) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t total = static_cast<std::size_t>(B) * T * H;
  if (idx >= total) return;
  const int h = static_cast<int>(idx % H);
  const int t = static_cast<int>((idx / H) % T);
  const int b = static_cast<int>(idx / (static_cast<std::size_t>(H) * T));
  const float* x = part + ((static_cast<std::size_t>(b) * H + h) * T + t) * stride;
  float acc = x[0];
  for (int g = 1; g < n_groups; ++g) acc += x[g];
  norm[idx] = core::vsqrt(acc);
}

// ---------------------------------------------------------------- launch

template <int D, int C, int G, int E, bool BF16>
void launch_typed(const StateParams& p, cudaStream_t s, unsigned parts) {
  const ScratchLayout l = scratch_layout(p.B, p.T, p.H, D, C);
  auto* base = static_cast<char*>(p.scratch);
  auto* kt = reinterpret_cast<float*>(base + l.kt);
  auto* vt = reinterpret_cast<float*>(base + l.vt);
  auto* part = reinterpret_cast<float*>(base + l.part);
  const int n_chunks = (p.T + C - 1) / C;
  const int bh = p.B * p.H;

  if (parts & kPrep) {
    constexpr std::size_t prep_smem = prep_smem_bytes<D, C>();
    VLA_CUDA_CHECK(cudaFuncSetAttribute(state_prep_kernel<D, C, BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(prep_smem)));
    state_prep_kernel<D, C, BF16>
        <<<static_cast<unsigned>(static_cast<std::size_t>(bh) * n_chunks), kThreads, prep_smem, s>>>(p, n_chunks, kt, vt);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
  if (parts & kPass) {
    using Sh = PassShape<D, C, G, E>;
    VLA_CUDA_CHECK(cudaFuncSetAttribute(state_pass_kernel<D, C, G, E, BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(Sh::smem_bytes)));
    state_pass_kernel<D, C, G, E, BF16>
        <<<static_cast<unsigned>(static_cast<std::size_t>(bh) * (D / G)), Sh::NT, Sh::smem_bytes, s>>>(p, n_chunks, kt, vt, part);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
  if (parts & kNorm) {
    const std::size_t total = static_cast<std::size_t>(bh) * p.T;
    state_norm_kernel<<<static_cast<unsigned>((total + 255) / 256), 256, 0, s>>>(part, p.state_norm, p.B, p.T, p.H, D / G, D / 8);
    VLA_CUDA_CHECK(cudaGetLastError());
  }
}

// The configurations built: 8 rows of D/16 columns per thread (every D), and for
// D = 64 also 8 rows of 2 columns (256 threads) and 16 rows of 8 columns.
template <int D, int C, bool BF16>
void launch_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  if (cfg.rows == 8 && cfg.elems == D / kSlices) return launch_typed<D, C, 8, D / kSlices, BF16>(p, s, parts);
  if constexpr (D == 64) {
    if (cfg.rows == 8 && cfg.elems == 2) return launch_typed<D, C, 8, 2, BF16>(p, s, parts);
    if (cfg.rows == 16 && cfg.elems == 8) return launch_typed<D, C, 16, 8, BF16>(p, s, parts);
  }
  throw std::invalid_argument("scan state: " + std::to_string(cfg.rows) + " rows of " + std::to_string(cfg.elems) +
                              " columns per thread not built for D=" + std::to_string(D));
}

template <int D, bool BF16>
void launch_c(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  if (p.C == 32) return launch_config<D, 32, BF16>(p, s, cfg, parts);
  if (p.C == 64) return launch_config<D, 64, BF16>(p, s, cfg, parts);
  throw std::invalid_argument("scan state: chunk size C=" + std::to_string(p.C) + " not supported (32 or 64)");
}

template <bool BF16>
void launch_d(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  switch (p.D) {
    case 16: return launch_c<16, BF16>(p, s, cfg, parts);
    case 32: return launch_c<32, BF16>(p, s, cfg, parts);
    case 64: return launch_c<64, BF16>(p, s, cfg, parts);
    case 128: return launch_c<128, BF16>(p, s, cfg, parts);
    default: throw std::invalid_argument("scan state: D=" + std::to_string(p.D) + " not supported (16, 32, 64 or 128)");
  }
}

bool aligned16(const void* q) { return (reinterpret_cast<std::uintptr_t>(q) & 15u) == 0; }

}  // namespace

std::size_t state_scratch_bytes(int B, int T, int H, int D, int C) {
  if (B < 1 || T < 1 || H < 1 || D < 8 || C < 1) return 0;
  return scratch_layout(B, T, H, D, C).bytes;
}

StateConfig state_config(int B, int H, int D, int C) {
  (void)B;
  (void)H;
  (void)C;
  return StateConfig{8, D / kSlices};
}

void launch_state_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  if (p.B < 1 || p.T < 1 || p.H < 1) throw std::invalid_argument("scan state: B, T and H must be >= 1");
  if (!p.v || !p.in.khat || !p.in.phiq || !p.in.gate || !p.o || !p.S || !p.state_norm || !p.scratch)
    throw std::invalid_argument("scan state: v, khat, phiq, gate, o, S, state_norm and scratch are required");
  if (!aligned16(p.in.gate) || !aligned16(p.in.phiq) || !aligned16(p.scratch))
    throw std::invalid_argument("scan state: gate, phiq and scratch must be 16-byte aligned");
  if (p.bf16_io) {
    launch_d<true>(p, s, cfg, parts);
  } else {
    launch_d<false>(p, s, cfg, parts);
  }
}

void launch_state(const StateParams& p, cudaStream_t s) {
  launch_state_config(p, s, state_config(p.B, p.H, p.D, p.C), kPrep | kPass | kNorm);
}

}  // namespace vla::gpu::scan
