// Stage 2 of the chunk-parallel ("scan") form: the state, given stage 1's gates
// (the maths: docs/CHUNKED.md section 8.3 and ref::run_chunked_scan; the
// interface: scan_stages.cuh). Float arithmetic, explicit FMAs, IEEE division
// and square root (built with --fmad=false -prec-div=true -prec-sqrt=true); the
// v6 pass sums float products in double and rounds once.
//
// v3: the sequential pass over chunks carries S only; the per-step readout and
// norms run afterwards in parallel over (b, h, chunk). Shared-memory wavefronts
// bound v1/v2 (a word every lane of a warp reads costs a wavefront per lane's
// word, so a row per thread paid one wavefront per FMA): every kernel here holds
// a register tile of several rows of S, so that each word it loads feeds
// several FMAs. Three kernels on one stream:
//  1. state_prep_kernel, one block per (b, h, chunk), all chunks at once:
//       T(i,t) = a^_i . k^_t for i < t (the strict upper part of Ah^T K),
//       Kt = K T^{-1}, Vt = V T^{-1} by forward substitution over the chunk's
//       steps (column t: kt_t = k^_t - sum_{i<t} kt_i T(i,t), i in order; a
//       thread takes one column of K or of V), written to scratch as
//       [b, h, step, D] floats. Shared memory bounds it (ncu on the H200: the
//       L1 data pipe at 92-96% of peak once 8 blocks fit on an SM; the report
//       2026-12-04-h200-scan-state-readout.md), so rows are 16-byte aligned and
//       every operand that the lanes do not share moves as float4; T is stored
//       over the a^ rows (not read again): 8 blocks per SM at D = 64, C = 32.
//  2. state_pass_kernel, one block per (b, h, 8 rows of S), sequential over
//       chunks; a thread holds R rows x E consecutive columns of S in registers
//       (scan_state.cuh StateConfig; default 2 x 2 for D = 64), the D/E threads of a row
//       group are consecutive lanes of one warp. Per chunk (a^ and kt of the
//       chunk, vt of the block's rows staged in shared memory by cp.async,
//       double-buffered, one block barrier per chunk):
//         - S_c (the state entering the chunk) to scratch [b, h, chunk, D, D];
//         - partial dot products of the thread's slices of its rows of S_c with
//           kt_t (FMA chain over the slice's columns in order), a batch of steps
//           at a time in registers, summed over the row group's lanes by one
//           shuffle reduce-scatter per batch (a fixed binary tree of lanes);
//           r_t,i = vt_t,i - (S_c kt_t)_i, written to scratch over vt_t,i (the
//           pass reads vt of a chunk before it writes that chunk's r) and to
//           shared memory for the row group's lanes (a warp barrier);
//         - per step t in order: S_ij = fma(r_t,i, a^_t,j, S_ij) (core::state_entry).
//       Two FMAs per entry and step, no per-step reduction or barrier.
//     v5, state_pass_lanedot_kernel (launch_state's pass at D = 64 below 64 heads,
//       scan_state.cuh state_config; built for D >= 32): the same
//       loads, S_c and steps, but r_t computed whole by lane t of a warp from the
//       warp's rows of S_c staged in shared memory (four FMA chains over the
//       columns, no reduce-scatter), and the next chunk's loads from per-thread
//       pointers carried from chunk to chunk (scan_state.cuh StateConfig::lanedot).
//     v6, state_pass_dmma_kernel (scan_pass_dmma.cuh; launch_state's pass at
//       D >= 32): the same loads and outputs, but r = fl(vt - S_c kt) and the state
//       handed on, fl(S_c + R Ah^T), as two FP64 tensor-core products per chunk
//       (sums in double of exact products of floats, one rounding to float each):
//       no per-step loop in the pass (ref::ScanStatePolicy::chunk_products).
//  3. state_readout_kernel, one block per (b, h, chunk), all chunks at once:
//       from S_c and the chunk's r, a^, phi(q), den (shared memory), a thread
//       holds 4 rows x D/8 columns of S (2 D threads) and repeats the chunk's steps
//       from S_c (the FMAs of v4/v5 in their order: S_t bit for bit theirs; after
//       v6, S_t within float rounding of fl(S_c + R Ah^T) at the chunk's end),
//       then per step:
//         y_t,i = S_t,i. phi(q_t): FMA chain over the thread's columns in order,
//                 the row's 8 partials summed by a shuffle reduce-scatter (a
//                 fixed binary tree of lanes, 4 steps at a time),
//         o_t,i = y_t,i / den_t (ratio readout) or y_t,i (raw), as float or bf16
//                 (core::bf16_bits_rne);
//         the thread's partial of ||S_t||_F^2: per row an FMA chain of s_ij^2
//                 over its columns in order, the four rows summed pairwise; the
//                 warp's partials by a fixed tree of lanes (4 steps at a time);
//                 after the chunk, ||S_t||_F = sqrt of the warps' partials
//                 summed in warp order.
//       The final S is the pass's.
// The maths is the spec's (y_t = S_t phi(q_t) from the explicit S_t); only the
// order of the sums over a row's columns and over S's entries is this kernel's.
// Every sum has a fixed order independent of the launch's timing: deterministic.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.cuh"
#include "dmma_tile.cuh"
#include "scan_prep_core.cuh"
#include "scan_state.cuh"
#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"
#include "vla/reference/scan_state_policy.hpp"

namespace vla::gpu::scan {
namespace {

constexpr int kThreads = 128;  // threads of a prep block

// Scratch layout: Kt and Vt (then R over Vt) as [B*H, N*C, D] floats, then the
// states entering the chunks as [B*H, N, D, D] floats.
struct ScratchLayout {
  std::size_t kt = 0, vt = 0, sc = 0, x = 0, bytes = 0;  // x: the look-ahead pass's X_c (C x C floats a chunk), where it runs
};

std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

ScratchLayout scratch_layout(int B, int T, int H, int D, int C) {
  const std::size_t bh = static_cast<std::size_t>(B) * H;
  const std::size_t n_chunks = (static_cast<std::size_t>(T) + C - 1) / C;
  const std::size_t tile = align256(bh * n_chunks * C * D * sizeof(float));
  ScratchLayout l;
  l.kt = 0;
  l.vt = tile;
  l.sc = 2 * tile;
  l.x = l.sc + align256(bh * n_chunks * D * D * sizeof(float));
  const bool look = ref::scan_state_policy(D, C) == ref::ScanStatePolicy::lookahead;
  l.bytes = l.x + (look ? align256(bh * n_chunks * C * C * sizeof(float)) : 0);
  return l;
}

__device__ __forceinline__ std::size_t row_index(int b, int t, int h, int T, int H) {
  return (static_cast<std::size_t>(b) * T + t) * H + h;
}

// IT loads per thread, NB at a time: a batch's loads are all issued before its
// stores (load(i) returns what store(i, x) writes).
template <int IT, int NB, class V, class Load, class Store>
__device__ __forceinline__ void load_batched(Load load, Store store) {
  static_assert(IT % NB == 0, "whole batches");
#pragma unroll 1
  for (int i0 = 0; i0 < IT; i0 += NB) {
    V x[NB];
#pragma unroll
    for (int i = 0; i < NB; ++i) x[i] = load(i0 + i);
#pragma unroll
    for (int i = 0; i < NB; ++i) store(i0 + i, x[i]);
  }
}

// ---------------------------------------------------------------- kernel 1

// The prep's shared memory: a^, k^ and v rows at a stride of D + 4 floats (16-byte
// rows: the loads land as float4, T's products read float4 along j, a quarter
// warp's 16-byte loads of 8 rows hit distinct banks); T(i, t) where the a^ rows
// were once T is formed (they are not read again) when it fits there (C <= D).
// D = 64, C = 32: 26.1 KB, 8 blocks per SM (with the 1 KB the SM reserves per
// block), as the launch bound's 64 registers allow; 28.9 KB and 7 with T apart.
// At C = 64 shared memory allows at most 6 blocks (4 at D = 64), and T's larger
// register tile spills at 64 registers: the bound asks for 4 there.
template <int D, int C>
struct PrepShape {
  static constexpr int LD = PrepRows<D, C>::LD;
  static constexpr int LT = PrepRows<D, C>::LT;  // rows of T 16-byte aligned (float4 loads of T(i, t..t+3))
  static constexpr bool t_over_a = C * LT <= C * LD;
  static constexpr std::size_t smem_bytes =
      (3 * static_cast<std::size_t>(C) * LD + (t_over_a ? 0 : static_cast<std::size_t>(C) * LT)) * sizeof(float);
};

template <int D, int C, bool BF16>
__global__ void __launch_bounds__(kThreads, C <= 32 ? 8 : 4)
    state_prep_kernel(StateParams p, int n_chunks, int c_begin, int n_seg, float* __restrict__ kt_out, float* __restrict__ vt_out) {
  using Sh = PrepShape<D, C>;
  constexpr int LD = Sh::LD;
  constexpr int Q = D / 4;  // 16-byte pieces of a row
  extern __shared__ __align__(16) float psmem[];
  float* As = psmem;         // a^_t rows
  float* Ks = As + C * LD;   // k^_t rows, then kt_t in place
  float* Vs = Ks + C * LD;   // v_t rows, then vt_t in place
  float* Tm = Sh::t_over_a ? As : Vs + C * LD;  // T(i, t), i < t

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / n_seg, c = c_begin + blockIdx.x % n_seg;  // chunks [c_begin, c_begin + n_seg)
  const int b = bh / H, h = bh % H;
  const int t0 = c * C;
  const int cc = min(C, T - t0);

  // The chunk's rows as 16-byte pieces of a^ and k^ and 4 elements of v, two
  // pieces of the thread in flight at a time (four spill at 64 registers; eight
  // blocks with two each keep about 80 KB of loads in flight per SM); rows past
  // cc: zeros. v as one vector load per piece where its pointer allows (the
  // caller's tensor), else element by element.
  {
    constexpr int IT = C * Q / kThreads;
    static_assert(C * Q % kThreads == 0, "whole rows per sweep");
    const bool v_vec = (reinterpret_cast<std::uintptr_t>(p.v) & (BF16 ? 7u : 15u)) == 0;
    struct Piece {
      float4 a, k, v;
    };
    load_batched<IT, (IT < 2 ? IT : 2), Piece>(
        [&](int i) {
          const int e = i * kThreads + threadIdx.x;
          const int t = e / Q, q = e % Q;
          const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
          Piece x{z, z, z};
          if (t < cc) {
            const std::size_t g = row_index(b, t0 + t, h, T, H) * D + 4 * q;
            x.a = __ldg(reinterpret_cast<const float4*>(p.in.gate + g));
            x.k = __ldg(reinterpret_cast<const float4*>(p.in.khat + g));
            if constexpr (BF16) {
              const auto* v = static_cast<const unsigned short*>(p.v) + g;
              unsigned short u[4];
              if (v_vec) {
                const uint2 w = __ldg(reinterpret_cast<const uint2*>(v));
                u[0] = w.x & 0xffffu, u[1] = w.x >> 16, u[2] = w.y & 0xffffu, u[3] = w.y >> 16;  // little-endian
              } else {
                for (int m = 0; m < 4; ++m) u[m] = __ldg(v + m);
              }
              x.v = make_float4(core::bf16_bits_to_float(u[0]), core::bf16_bits_to_float(u[1]), core::bf16_bits_to_float(u[2]),
                                core::bf16_bits_to_float(u[3]));
            } else {
              const float* v = static_cast<const float*>(p.v) + g;
              x.v = v_vec ? __ldg(reinterpret_cast<const float4*>(v)) : make_float4(__ldg(v), __ldg(v + 1), __ldg(v + 2), __ldg(v + 3));
            }
          }
          return x;
        },
        [&](int i, const Piece& x) {
          const int e = i * kThreads + threadIdx.x;
          const int o = (e / Q) * LD + 4 * (e % Q);
          *reinterpret_cast<float4*>(As + o) = x.a;
          *reinterpret_cast<float4*>(Ks + o) = x.k;
          *reinterpret_cast<float4*>(Vs + o) = x.v;
        });
  }
  __syncthreads();

  const std::size_t base = (static_cast<std::size_t>(bh) * n_chunks * C + t0) * D;
  prep_chunk_core<D, C, kThreads, Sh::t_over_a>(As, Ks, Vs, Tm, cc, kt_out + base, vt_out + base);
}

// ---------------------------------------------------------------- kernel 2

// E consecutive floats to memory (16-byte aligned when E % 4 == 0, 8 when E == 2).
template <int E>
__device__ __forceinline__ void stv(float* dst, const float (&x)[E]) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int q = 0; q < E / 4; ++q)
      reinterpret_cast<float4*>(dst)[q] = make_float4(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
  } else if constexpr (E == 2) {
    *reinterpret_cast<float2*>(dst) = make_float2(x[0], x[1]);
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) dst[e] = x[e];
  }
}

// The thread's R x E tile of S (rows at stride D): from p.S entering chunk c_begin
// (zeros at the start), to p.S at the end (scalar accesses: p.S need not be
// 16-byte aligned), S_c to scratch (vector stores).
template <int D, int R, int E>
__device__ __forceinline__ void load_tile(float (&s)[R][E], const float* S, int c_begin) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int e = 0; e < E; ++e) s[rr][e] = c_begin == 0 ? 0.0f : S[rr * D + e];
}
template <int D, int R, int E>
__device__ __forceinline__ void store_tile(float* S, const float (&s)[R][E]) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int e = 0; e < E; ++e) S[rr * D + e] = s[rr][e];
}
template <int D, int R, int E>
__device__ __forceinline__ void store_tile_vec(float* S, const float (&s)[R][E]) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr) stv<E>(S + rr * D, s[rr]);
}

// The pass's ring of `stages` chunk buffers in shared memory, stages - 1 - lag
// chunks loaded ahead: load(c, buf) issues chunk c's cp.async into buffer buf
// (nothing past the segment) and commits one group per call, so that the ring's
// group count stays uniform. lag = 1 keeps chunk c - 1's buffer intact while
// chunk c is worked on (the v6 pass's folded readout reads it one chunk behind).
struct ChunkRing {
  int stages, lag, buf, next;  // chunk c's buffer (advanced by advance), the buffer loaded next
  template <class Load>
  __device__ __forceinline__ ChunkRing(int stages_, int c_begin, Load& load, int lag_ = 0)
      : stages(stages_), lag(lag_), buf(stages_ - 1), next(stages_ - 1 - lag_) {
    for (int k = 0; k < stages - 1 - lag; ++k) load(c_begin + k, k);
  }
  // Chunk c staged for all threads and every thread done with chunk c-1 - lag (the
  // buffer reloaded next, and the block's other per-chunk shared memory); chunk
  // c + stages - 1 - lag's loads issued. Returns chunk c's buffer.
  template <class Load>
  __device__ __forceinline__ int advance(int c, Load& load) {
    buf = buf + 1 == stages ? 0 : buf + 1;
    // Groups committed: stages - 1 - lag + (c - c_begin); chunk c's is the (c - c_begin + 1)-th.
    const int pending = stages - 2 - lag;
    if (pending <= 0) {
      __pipeline_wait_prior(0);
    } else if (pending == 1) {
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(2);
    }
    __syncthreads();
    load(c + stages - 1 - lag, next);
    next = next + 1 == stages ? 0 : next + 1;
    return buf;
  }
};

// The cp.async loads of one chunk for the v5 and v6 passes: a^ and kt rows (D
// floats at strides LA and LK from the buffer's start and from C LA), the block's
// G columns of vt (from C (LA + LK)), rows past a short last chunk zeros. The
// thread's pieces are steps tq + (NT/Q) i, 16 bytes at column 4 qq of a^ and kt,
// and steps tv + (NT/QG) i, 16 bytes at block column 4 qv of vt; loads are issued
// for chunks c_begin, c_begin + 1, ... in order, the source pointers advancing by
// a chunk per call; one cp.async group committed per call (ChunkRing's count).
// LQ > 0 (the v6 pass with the readout folded in): also phi(q) rows at stride LQ
// from C (LA + LK + G), same pieces as a^, and the chunk's C ratio denominators
// after them (1 where the readout is raw; 4-byte pieces: den_t are H apart).
template <int D, int C, int G, int NT, int LA, int LK, int LQ = 0>
struct ChunkLoader {
  static constexpr int Q = D / 4;                    // 16-byte pieces of a row
  static constexpr int PIECES = C * Q / NT;          // a^ and kt pieces per thread and chunk
  static constexpr int QG = G / 4;                   // 16-byte pieces of the block's vt row
  static constexpr int VP = (C * QG + NT - 1) / NT;  // vt pieces per thread (the last sweep partial when C QG < NT)
  static_assert(C * Q % NT == 0 && NT % Q == 0 && NT % QG == 0 && (C * QG <= NT || C * QG % NT == 0), "whole rows per sweep");
  static_assert(LQ == 0 || (C <= NT && LQ % 4 == 0), "a thread per denominator; 16-byte phi(q) rows");
  float* smem;
  std::size_t buf_floats, a_step;
  int T, H, c_end, tid, tq, tv, a_dst0, k_dst0, v_dst0, q_dst0, d_dst;
  const float *a_next, *k_next, *v_next, *q_next, *d_next;
  // Block (b, h) of head bh, whose rows of S start at row0; scratch rows nc_steps per head.
  __device__ __forceinline__ ChunkLoader(float* smem_, std::size_t buf_floats_, const StateParams& p, const float* kt_in,
                                         const float* vt_r, int b, int h, int bh, int row0, std::size_t nc_steps, int c_begin,
                                         int c_end_)
      : smem(smem_), buf_floats(buf_floats_), a_step(static_cast<std::size_t>(p.H) * D), T(p.T), H(p.H), c_end(c_end_), tid(threadIdx.x) {
    const int qq = tid % Q, qv = tid % QG;
    tq = tid / Q;
    tv = tid / QG;
    a_dst0 = tq * LA + 4 * qq;
    k_dst0 = C * LA + tq * LK + 4 * qq;
    v_dst0 = C * LA + C * LK + tv * G + 4 * qv;
    a_next = p.in.gate + row_index(b, tq, h, T, p.H) * D + 4 * qq + static_cast<std::size_t>(c_begin) * C * a_step;
    k_next = kt_in + (static_cast<std::size_t>(bh) * nc_steps + tq + static_cast<std::size_t>(c_begin) * C) * D + 4 * qq;
    v_next = vt_r + (static_cast<std::size_t>(bh) * nc_steps + tv + static_cast<std::size_t>(c_begin) * C) * D + row0 + 4 * qv;
    q_dst0 = C * (LA + LK + G) + tq * LQ + 4 * qq;
    d_dst = C * (LA + LK + G + LQ) + tid;
    q_next = LQ > 0 ? p.in.phiq + (a_next - p.in.gate) : nullptr;
    d_next = LQ > 0 && p.in.den && tid < C ? p.in.den + row_index(b, c_begin * C + tid, h, T, p.H) : nullptr;
  }
  __device__ __forceinline__ void operator()(int c, int buf) {
    if (c < c_end) {
      float* base = smem + buf * buf_floats;
      const int cc = min(C, T - c * C);
      const std::size_t a_piece = static_cast<std::size_t>(NT / Q) * a_step;
#pragma unroll
      for (int i = 0; i < PIECES; ++i) {
        float* ad = base + a_dst0 + (NT / Q) * i * LA;
        float* kd = base + k_dst0 + (NT / Q) * i * LK;
        float* qd = base + q_dst0 + (NT / Q) * i * LQ;
        if (cc == C || tq + (NT / Q) * i < cc) {
          __pipeline_memcpy_async(ad, a_next + i * a_piece, 16);
          __pipeline_memcpy_async(kd, k_next + (NT / Q) * i * D, 16);
          if constexpr (LQ > 0) __pipeline_memcpy_async(qd, q_next + i * a_piece, 16);
        } else {
          *reinterpret_cast<float4*>(ad) = make_float4(0.f, 0.f, 0.f, 0.f);
          *reinterpret_cast<float4*>(kd) = make_float4(0.f, 0.f, 0.f, 0.f);
          if constexpr (LQ > 0) *reinterpret_cast<float4*>(qd) = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
      if constexpr (LQ > 0) {
        if (tid < C) {
          if (d_next && tid < cc) __pipeline_memcpy_async(base + d_dst, d_next, 4);
          else base[d_dst] = 1.0f;
        }
      }
#pragma unroll
      for (int i = 0; i < VP; ++i) {
        if (C * QG % NT != 0 && tid + i * NT >= C * QG) break;
        float* vd = base + v_dst0 + (NT / QG) * i * G;
        if (cc == C || tv + (NT / QG) * i < cc) {
          __pipeline_memcpy_async(vd, v_next + (NT / QG) * i * D, 16);
        } else {
          *reinterpret_cast<float4*>(vd) = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
      a_next += static_cast<std::size_t>(C) * a_step;
      k_next += static_cast<std::size_t>(C) * D;
      v_next += static_cast<std::size_t>(C) * D;
      if constexpr (LQ > 0) {
        q_next += static_cast<std::size_t>(C) * a_step;
        if (d_next) d_next += static_cast<std::size_t>(C) * H;
      }
    }
    __pipeline_commit();
  }
};

// The frame of both passes: the thread's R x E tile of S from p.S (S_out: its
// first entry), chunks [c_begin, c_end) in order through the ring, S_c to scratch
// (sc: the tile's first entry in chunk 0's S_c; chunks D^2 apart), then
// body(s, buffer, t0, cc) for the chunk (its first step t0, its cc steps), and
// the tile back to p.S.
template <int D, int C, int R, int E, class Load, class Body>
__device__ __forceinline__ void pass_frame(float* S_out, float* sc, const float* smem, std::size_t buf_floats, int c_begin,
                                           int c_end, int stages, int T, Load& load, Body&& body) {
  float s[R][E];
  load_tile<D>(s, S_out, c_begin);
  ChunkRing ring(stages, c_begin, load);
  for (int c = c_begin; c < c_end; ++c) {
    const float* buf = smem + ring.advance(c, load) * buf_floats;
    store_tile_vec<D>(sc + static_cast<std::size_t>(c) * D * D, s);
    const int t0 = c * C;
    body(s, buf, t0, min(C, T - t0));
  }
  store_tile<D>(S_out, s);
}

// The pass's steps over one chunk, t in order: S_ij = fma(r_t,i, a^_t,j, S_ij)
// (core::state_entry), a^ rows at stride D in As, r as [row][step] in Rs (rows
// r0.. of the thread). A full chunk fully unrolled (its loads free to move ahead
// of earlier steps' FMAs), r four steps per load; a short last chunk one step at
// a time. The readout repeats exactly these FMAs in this order.
template <int D, int C, int R, int E>
__device__ __forceinline__ void chunk_steps(float (&s)[R][E], const float* As, const float* Rs, int r0, int j0, int cc) {
  if (cc == C) {
#pragma unroll
    for (int t = 0; t < C; t += 4) {
      float rv[R][4];
#pragma unroll
      for (int rr = 0; rr < R; ++rr) lds<4>(rv[rr], Rs + (r0 + rr) * C + t);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float a[E];
        lds<E>(a, As + (t + u) * D + j0);
#pragma unroll
        for (int rr = 0; rr < R; ++rr)
#pragma unroll
          for (int e = 0; e < E; ++e) s[rr][e] = core::state_entry(s[rr][e], rv[rr][u], a[e]);
      }
    }
  } else {
#pragma unroll 1
    for (int t = 0; t < cc; ++t) {
      float a[E];
      lds<E>(a, As + t * D + j0);
#pragma unroll
      for (int rr = 0; rr < R; ++rr) {
        const float rv = Rs[(r0 + rr) * C + t];
#pragma unroll
        for (int e = 0; e < E; ++e) s[rr][e] = core::state_entry(s[rr][e], rv, a[e]);
      }
    }
  }
}

// Reduce-scatter of the N live values v[0..N) over the lanes of a group of 2W
// consecutive lanes (lane bit W and below: `sl`): at each level the lanes l and
// l ^ W add their values pairwise, the lane without bit W keeping the lower
// half, the other the upper half. After the levels W, W/2, ..., 1 a lane holds
// in v[0..N/(2W)) the sums of the values t = sl * N/(2W) + k over the group,
// each by the same fixed binary tree of lanes (float addition is commutative,
// so both lanes of a pair compute the same bits).
template <int N, int W, int NV>
__device__ __forceinline__ void reduce_scatter(float (&v)[NV], int sl) {
  if constexpr (W >= 1) {
    static_assert(N % 2 == 0, "a value per lane at least");
    constexpr int Hf = N / 2;
    const bool up = (sl & W) != 0;
#pragma unroll
    for (int k = 0; k < Hf; ++k) {
      const float send = up ? v[k] : v[k + Hf];
      const float keep = up ? v[k + Hf] : v[k];
      v[k] = keep + __shfl_xor_sync(0xffffffffu, send, W);
    }
    reduce_scatter<Hf, W / 2>(v, sl);
  }
}

// The levels W, W/2, ..., WSTOP of the same reduce-scatter when each lane holds
// its values permuted so that at every level its kept half sits in v[0..N/2) and
// the half it gives away in v[N/2..N) (the producer stores logical value m of a
// lane at m XOR (the lane's bits W..WSTOP, scaled to N)): no selects, the same
// pairs summed in the same tree.
template <int N, int W, int WSTOP, int NV>
__device__ __forceinline__ void reduce_scatter_permuted(float (&v)[NV]) {
  if constexpr (W >= WSTOP && W >= 1) {
    constexpr int Hf = N / 2;
#pragma unroll
    for (int k = 0; k < Hf; ++k) v[k] = v[k] + __shfl_xor_sync(0xffffffffu, v[k + Hf], W);
    reduce_scatter_permuted<Hf, W / 2, WSTOP>(v);
  }
}

// A pass block: G rows of S (G = 4, 8 or 16) as G/R row groups; a thread holds R
// rows x E consecutive columns (register tile: each shared-memory word it loads
// feeds R FMAs), the SL = D/E threads of a row group are consecutive lanes of one
// warp. r's partial sums are reduced U = SL/R steps at a time (R*U = SL values,
// one whole sum per lane after the reduce-scatter). A ring of `stages` chunk
// buffers (a^ and kt rows, vt of the block's rows), stages - 1 chunks loaded ahead.
template <int D, int C, int R, int E, int G>
struct PassShape {
  static constexpr int SL = D / E;    // lanes of a row group
  static constexpr int NRG = G / R;   // row groups of a block
  static constexpr int NT = NRG * SL;  // threads
  static constexpr int U = SL / R;    // steps per reduce-scatter
  static constexpr std::size_t buf_floats = 2 * static_cast<std::size_t>(C) * D + static_cast<std::size_t>(C) * G;
  static constexpr std::size_t smem_bytes(int stages) {
    return (stages * buf_floats + static_cast<std::size_t>(G) * C) * sizeof(float);
  }
  static_assert(D % E == 0 && SL <= 32 && 32 % SL == 0 && G % R == 0 && SL % R == 0 && C % U == 0,
                "a row group's lanes in one warp, one whole sum per lane");
  static_assert(NT % 32 == 0 && G % 4 == 0 && (R == 1 || R == 2 || R == 4) && C % 4 == 0,
                "whole warps; 16-byte vt pieces; r loads; steps four at a time");
};

// Chunks [c_begin, c_end) of the sequential pass (a segment: launch_state may
// split the pass into segments so that the readout of one overlaps the pass of
// the next). S enters from p.S (zeros when c_begin = 0) and leaves to p.S.
// PROBE (timing only, wrong values; StateConfig::probe): 1 leaves out r's dot
// products and reduce-scatter (r = vt), 2 the steps, 3 both.
template <int D, int C, int R, int E, int G, int PROBE = 0>
__global__ void __launch_bounds__(PassShape<D, C, R, E, G>::NT, 1)
    state_pass_kernel(StateParams p, int n_chunks, int c_begin, int c_end, int stages, const float* __restrict__ kt_in,
                      float* __restrict__ vt_r, float* __restrict__ sc_out) {
  using Sh = PassShape<D, C, R, E, G>;
  constexpr int SL = Sh::SL, NT = Sh::NT, U = Sh::U;
  constexpr int NG = D / G;  // row blocks of a head
  extern __shared__ __align__(16) float smem[];
  float* Rs = smem + stages * Sh::buf_floats;  // r of the block's rows, [G][C] (a row's steps contiguous)

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / NG, grp = blockIdx.x % NG;
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x;
  const int rg = tid / SL, sl = tid % SL;
  const int j0 = sl * E;
  const int r0 = rg * R;            // the thread's first row within the block
  const int i0 = grp * G + r0;      // ... within S
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;

  // The chunk's a^ and kt rows (all D columns) and vt of the block's rows; rows
  // past a short last chunk are zeros. One commit per call (an empty group when
  // c is past the segment), so that the ring's group count stays uniform.
  auto load_chunk = [&](int c, int buf) {
    if (c < c_end) {
      float* As = smem + buf * Sh::buf_floats;
      float* Ks = As + C * D;
      float* Vs = Ks + C * D;
      const int t0 = c * C, cc = min(C, T - t0);
      constexpr int Q = D / 4;  // 16-byte pieces of a row
      const float* kt = kt_in + (static_cast<std::size_t>(bh) * nc_steps + t0) * D;
      for (int e = tid; e < C * Q; e += NT) {
        const int t = e / Q, q = e % Q;
        if (t < cc) {
          __pipeline_memcpy_async(As + t * D + 4 * q, p.in.gate + row_index(b, t0 + t, h, T, H) * D + 4 * q, 16);
          __pipeline_memcpy_async(Ks + 4 * e, kt + 4 * e, 16);
        } else {
          *reinterpret_cast<float4*>(As + t * D + 4 * q) = make_float4(0.f, 0.f, 0.f, 0.f);
          *reinterpret_cast<float4*>(Ks + 4 * e) = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
      constexpr int QG = G / 4;
      for (int e = tid; e < C * QG; e += NT) {
        const int t = e / QG, q = e % QG;
        if (t < cc) {
          __pipeline_memcpy_async(Vs + t * G + 4 * q,
                                  vt_r + (static_cast<std::size_t>(bh) * nc_steps + t0 + t) * D + grp * G + 4 * q, 16);
        } else {
          *reinterpret_cast<float4*>(Vs + t * G + 4 * q) = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
    }
    __pipeline_commit();
  };

  // Per chunk (after S_c to scratch, for the readout):
  auto chunk = [&](float (&s)[R][E], const float* As, int t0, int cc) {
    const float* Ks = As + C * D;
    const float* Vs = Ks + C * D;

    // r of the chunk from S_c, U steps at a time: partial dot products over the
    // thread's columns (FMA chain, columns in order), summed over the row group's
    // lanes by a reduce-scatter (steps' levels permuted, rows' levels with selects);
    // lane sl ends with step sb + sl / R, row r0 + sl % R.
    const int swz = sl / R;  // step u of the batch sits in slot u ^ swz
#pragma unroll
    for (int sb = 0; sb < C; sb += U) {
      float v[U * R];
      if constexpr ((PROBE & 1) != 0) {
        v[0] = 0.0f;
      } else {
#pragma unroll
        for (int pu = 0; pu < U; ++pu) {
          float k[E];
          lds<E>(k, Ks + (sb + (pu ^ swz)) * D + j0);
#pragma unroll
          for (int rr = 0; rr < R; ++rr) {
            float acc = 0.0f;
#pragma unroll
            for (int e = 0; e < E; ++e) acc = fmaf(s[rr][e], k[e], acc);
            v[pu * R + rr] = acc;
          }
        }
        reduce_scatter_permuted<U * R, SL / 2, R>(v);  // lane bits SL/2 .. R: the steps
        reduce_scatter<R, R / 2>(v, sl);                // lane bits R/2 .. 1: the rows
      }
      const int t = sb + sl / R, row = r0 + sl % R;
      const float r = Vs[t * G + row] - v[0];  // zero rows past cc give r = 0 there: never stored
      Rs[row * C + t] = r;
      if (t < cc) vt_r[(static_cast<std::size_t>(bh) * nc_steps + t0 + t) * D + grp * G + row] = r;
    }
    __syncwarp();

    if constexpr ((PROBE & 2) == 0) chunk_steps<D, C>(s, As, Rs, r0, j0, cc);
  };
  pass_frame<D, C, R, E>(p.S + (static_cast<std::size_t>(bh) * D + i0) * D + j0,
                         sc_out + (static_cast<std::size_t>(bh) * n_chunks * D + i0) * D + j0, smem, Sh::buf_floats, c_begin, c_end,
                         stages, T, load_chunk, chunk);
}

// v5, the lane-dot pass: r's dot products computed whole in a lane (lane = step,
// no reduce-scatter), the next chunk's loads from per-thread pointers carried
// from chunk to chunk (a branch-free path for full chunks). 4 warps of R rows x
// E = D/32 columns per thread, blocks of G = 4 R rows; a warp's rows of S_c go
// through shared memory (each lane reads the same word: broadcasts).
template <int D, int C, int R>
struct LaneDotShape {
  static constexpr int E = D / 32, G = 4 * R, NT = 128;
  static constexpr int LK = D + 4;  // kt row stride: a quarter warp's 16-byte loads of 8 rows hit distinct banks
  static constexpr std::size_t buf_floats =
      static_cast<std::size_t>(C) * D + static_cast<std::size_t>(C) * LK + static_cast<std::size_t>(C) * G;
  static constexpr std::size_t smem_bytes(int stages) {
    return (stages * buf_floats + static_cast<std::size_t>(G) * C + static_cast<std::size_t>(G) * D) * sizeof(float);
  }
  static_assert(D % 32 == 0 && C % 32 == 0 && (R == 2 || R == 4), "a row over a warp's lanes; steps over lanes; r rows as one vector");
};

// Chunks [c_begin, c_end) of the sequential pass, as state_pass_kernel (same
// inputs, outputs and S_ij FMAs in the same order); only r's sums differ in order:
// r_t,i = vt_t,i - ((c0 + c1) + (c2 + c3)), c_k the FMA chain of S_c,ij kt_t,j over
// j = 4 jb + k, jb in order.
template <int D, int C, int R>
__global__ void __launch_bounds__(128, 1)
    state_pass_lanedot_kernel(StateParams p, int n_chunks, int c_begin, int c_end, int stages,
                              const float* __restrict__ kt_in, float* __restrict__ vt_r, float* __restrict__ sc_out) {
  using Sh = LaneDotShape<D, C, R>;
  constexpr int E = Sh::E, G = Sh::G, NT = Sh::NT, LK = Sh::LK;
  constexpr int NG = D / G;  // row blocks of a head
  extern __shared__ __align__(16) float smem[];
  float* Rs = smem + stages * Sh::buf_floats;  // r of the block's rows, [G][C]
  float* Ss = Rs + G * C;                      // S_c rows of the block, [G][D]

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / NG, grp = blockIdx.x % NG;
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x, lane = tid % 32;
  const int j0 = lane * E;
  const int r0 = (tid / 32) * R;  // the warp's first row within the block
  const int i0 = grp * G + r0;    // ... within S
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;

  ChunkLoader<D, C, G, NT, D, LK> load_chunk(smem, Sh::buf_floats, p, kt_in, vt_r, b, h, bh, grp * G, nc_steps, c_begin, c_end);

  // Per chunk (after S_c to scratch, for the readout):
  auto chunk = [&](float (&s)[R][E], const float* As, int t0, int cc) {
    const float* Ks = As + C * D;
    const float* Vs = Ks + C * LK;
    // The warp's rows of S_c to shared memory (only this warp reads them: a warp barrier).
    store_tile_vec<D>(Ss + r0 * D + j0, s);
    __syncwarp();

    // r_t,i = vt_t,i - S_c,i. kt_t for step t = lane + 32 m of the chunk.
#pragma unroll
    for (int m = 0; m < C / 32; ++m) {
      const int t = lane + 32 * m;
      float acc[R][4];
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[rr][k] = 0.0f;
#pragma unroll
      for (int jb = 0; jb < D / 4; ++jb) {
        const float4 kv = *reinterpret_cast<const float4*>(Ks + t * LK + 4 * jb);
#pragma unroll
        for (int rr = 0; rr < R; ++rr) {
          const float4 sv = *reinterpret_cast<const float4*>(Ss + (r0 + rr) * D + 4 * jb);
          acc[rr][0] = fmaf(sv.x, kv.x, acc[rr][0]);
          acc[rr][1] = fmaf(sv.y, kv.y, acc[rr][1]);
          acc[rr][2] = fmaf(sv.z, kv.z, acc[rr][2]);
          acc[rr][3] = fmaf(sv.w, kv.w, acc[rr][3]);
        }
      }
      float vt[R], r[R];
      lds<R>(vt, Vs + t * G + r0);
#pragma unroll
      for (int rr = 0; rr < R; ++rr) {
        r[rr] = vt[rr] - ((acc[rr][0] + acc[rr][1]) + (acc[rr][2] + acc[rr][3]));  // zero rows past cc: r = 0, never stored
        Rs[(r0 + rr) * C + t] = r[rr];
      }
      if (t < cc) stv<R>(vt_r + (static_cast<std::size_t>(bh) * nc_steps + t0 + t) * D + grp * G + r0, r);
    }
    __syncwarp();

    chunk_steps<D, C>(s, As, Rs, r0, j0, cc);
  };
  pass_frame<D, C, R, E>(p.S + (static_cast<std::size_t>(bh) * D + i0) * D + j0,
                         sc_out + (static_cast<std::size_t>(bh) * n_chunks * D + i0) * D + j0, smem, Sh::buf_floats, c_begin, c_end,
                         stages, T, load_chunk, chunk);
}

#include "scan_pass_dmma.cuh"  // v6: the pass on FP64 tensor cores (uses ChunkRing, row_index)
#include "scan_pass_look.cuh"  // v7: v6 with the residuals one chunk ahead (ScanStatePolicy::lookahead)

// ---------------------------------------------------------------- kernel 3

// A readout block: one (b, h, chunk), NT = 2 D threads (4 warps at D = 64). A
// thread holds RR = 4 rows x ER = D/8 consecutive columns of S; the SLR = 8
// threads of a row group are consecutive lanes. Every step costs three FMAs per
// entry of S (the step, y's, the norm's), so the kernel keeps the FMA pipe fed:
// y's chains are ER long (one per row), the norm's partial is four ER-long
// chains (one per row) summed pairwise, and the cross-lane sums are batched over
// UR = 4 steps (y: 16 values reduce-scattered over the row group's 8 lanes, 2
// whole sums per lane; the norm: 4 values over the warp, one step per 8 lanes),
// so that no step waits on a long chain or a barrier.
template <int D, int C>
struct ReadShape {
  static constexpr int RR = 4, SLR = 8, ER = D / SLR;
  static constexpr int NT = (D / RR) * SLR;  // threads
  static constexpr int NW = NT / 32;         // warps
  static constexpr int UR = 4;
  static constexpr int NPL = RR * UR / SLR;  // whole y sums per lane: rows 2m, 2m + 1 of one step
  // a^, phi(q), r rows, den, the norm partials, n_c (the den split's).
  static constexpr std::size_t smem_bytes =
      (3 * static_cast<std::size_t>(C) * D + C + static_cast<std::size_t>(C) * NW + D) * sizeof(float);
  static_assert(D % 16 == 0 && NT % 32 == 0 && NPL == 2 && C % UR == 0 && UR == 4, "whole warps; the reductions below");
};

template <int D, int C, bool BF16, bool NORMS = true>
__global__ void __launch_bounds__(ReadShape<D, C>::NT, D <= 64 ? 5 : 1)
    state_readout_kernel(StateParams p, int n_chunks, int c_begin, int n_seg, const float* __restrict__ r_in,
                         const float* __restrict__ sc_in) {
  using Sh = ReadShape<D, C>;
  constexpr int RR = Sh::RR, ER = Sh::ER, SLR = Sh::SLR, NT = Sh::NT, NW = Sh::NW, UR = Sh::UR;
  constexpr unsigned kAll = 0xffffffffu;
  extern __shared__ __align__(16) float rsmem[];
  float* As = rsmem;       // a^_t rows [C][D]
  float* Qs = As + C * D;  // phi(q_t) rows
  float* Rs = Qs + C * D;  // r_t rows
  float* Ds = Rs + C * D;  // den_t
  float* NP = Ds + C;      // norm partials [C][NW], one per warp
  float* Ns = NP + C * NW; // n_c (the den split's sums of the chunks before c)

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / n_seg, c = c_begin + blockIdx.x % n_seg;  // chunks [c_begin, c_begin + n_seg)
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int rg = tid / SLR, sl = tid % SLR;
  const int j0 = sl * ER;
  const int r0 = rg * RR;
  const int t0 = c * C, cc = min(C, T - t0);
  const bool ratio = p.in.den != nullptr;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;

  // S_c's rows and n_c first: their loads are in flight with the chunk's rows below, not after the den
  // phase (three dependent round trips a block otherwise). The same values: the same bits (every scan
  // case's line unchanged); the readout 0.251 -> 0.246 ms at B = 1, H = 16, T = 16,384 and 3.69 -> 3.56
  // at B = 8, H = 128 (H100, docs/CHUNKED.md 8.38).
  float s[RR][ER];
#pragma unroll
  for (int rr = 0; rr < RR; ++rr) {
    const float* src = sc_in + ((static_cast<std::size_t>(bh) * n_chunks + c) * D + r0 + rr) * D + j0;
    if constexpr (ER % 4 == 0) {
#pragma unroll
      for (int q = 0; q < ER / 4; ++q) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(src) + q);
        s[rr][4 * q] = v.x;
        s[rr][4 * q + 1] = v.y;
        s[rr][4 * q + 2] = v.z;
        s[rr][4 * q + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int e = 0; e < ER; ++e) s[rr][e] = __ldg(src + e);
    }
  }
  static_assert(NT >= D, "a thread an entry of n_c");
  const bool nsplit = ratio && p.in.nsum;
  const float ncv = nsplit && tid < D ? __ldg(p.in.nsum + (static_cast<std::size_t>(bh) * n_chunks + c) * D + tid) : 0.0f;
  // The den phase's input of the thread's step likewise (TPD threads a step, one step each where NT / TPD >= C):
  // loaded after that phase's dot products, it was a dependent round trip there (3.5% of the readout's stall
  // samples on that line, ncu on an H100). The same value: the same bits; the readout 0.234-0.237 ms against
  // 0.243 at B = 1, H = 16, T = 16,384 (H100, docs/CHUNKED.md 8.44).
  constexpr int TPD = NT >= C ? NT / C : 1;
  constexpr bool kDenFirst = NT / TPD >= C;
  const int t_den = tid / TPD;
  const float den_in = kDenFirst && ratio && t_den < cc ? __ldg(p.in.den + row_index(b, t0 + t_den, h, T, H)) : 0.0f;
  auto den_of = [&](int t) { return kDenFirst ? den_in : p.in.den[row_index(b, t0 + t, h, T, H)]; };  // step t < cc
  {
    constexpr int Q = D / 4;
    const float* rr = r_in + (static_cast<std::size_t>(bh) * nc_steps + t0) * D;
    constexpr int IT = C * Q / NT;  // pieces per thread, 4 at a time (rows past cc: zeros)
    static_assert(C * Q % NT == 0, "whole rows per sweep");
    struct Piece {
      float4 a, q, r;
    };
    load_batched<IT, (IT < 4 ? IT : 4), Piece>(
        [&](int i) {
          const int e = i * NT + tid;
          const int t = e / Q, q = e % Q;
          const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
          Piece x{z, z, z};
          if (t < cc) {
            const std::size_t g = row_index(b, t0 + t, h, T, H) * D + 4 * q;
            x.a = __ldg(reinterpret_cast<const float4*>(p.in.gate + g));
            x.q = __ldg(reinterpret_cast<const float4*>(p.in.phiq + g));
            x.r = __ldg(reinterpret_cast<const float4*>(rr) + e);
          }
          return x;
        },
        [&](int i, const Piece& x) {
          const int e = i * NT + tid;
          reinterpret_cast<float4*>(As)[e] = x.a;
          reinterpret_cast<float4*>(Qs)[e] = x.q;
          reinterpret_cast<float4*>(Rs)[e] = x.r;
        });
  }
  if (tid < D) Ns[tid] = ncv;
  // The den split (GateOut::nsum set): den_t = readout_den(n_c . phi(q_t) + L_t . phi(q_t)), the second from
  // scan_prep; the first by TPD threads a step (consecutive lanes), each an fma chain over its D / TPD entries
  // from its slice's entry t on (wrapping: the lanes' Qs reads in distinct banks), then the lanes' sums by a
  // fixed xor tree. Why not one thread a step: its 64-term chain before the loop took the readout from 0.234 to
  // 0.262 ms (H100, docs/CHUNKED.md 8.34). Without nsum (stage 2 alone, scan_state_check) den holds the whole
  // denominators.
  __syncthreads();  // Qs and Ns complete
  {
    constexpr int DP = D / TPD;
    static_assert(TPD <= 32 && 32 % TPD == 0 && D % TPD == 0 && (DP & (DP - 1)) == 0, "a step's threads in one warp; (j + t) mod DP by a mask");
    const int part = tid % TPD;
    for (int t = tid / TPD; t < C; t += NT / TPD) {  // warp-uniform trip count: NT / TPD divides C or exceeds it
      float den = 1.0f;
      if (nsplit) {
        const float* nc = Ns + part * DP;
        const float* qt = Qs + t * D + part * DP;
        float acc = 0.0f;
#pragma unroll 8
        for (int j = 0; j < DP; ++j) {
          const int d = (j + t) & (DP - 1);
          acc = fmaf(nc[d], qt[d], acc);
        }
#pragma unroll
        for (int m = 1; m < TPD; m *= 2) acc += __shfl_xor_sync(kAll, acc, m);
        if (t < cc) den = core::readout_den(acc + den_of(t), p.den_floor);
      } else if (ratio && t < cc) {
        den = den_of(t);
      }
      if (part == 0) Ds[t] = den;
    }
  }
  __syncthreads();

  // Steps past a short last chunk see zero r and a^ (S unchanged) and store nothing.
#pragma unroll 1
  for (int g = 0; g < cc; g += UR) {
    float yv[UR * RR], nv[UR];
#pragma unroll
    for (int u = 0; u < UR; ++u) {
      const int t = g + u;
      float rv[RR], a[ER], q[ER], nr[RR];
      lds<RR>(rv, Rs + t * D + r0);
      lds<ER>(a, As + t * D + j0);
      lds<ER>(q, Qs + t * D + j0);
#pragma unroll
      for (int rr = 0; rr < RR; ++rr) {
        float y = 0.0f, n = 0.0f;
#pragma unroll
        for (int e = 0; e < ER; ++e) {
          s[rr][e] = core::state_entry(s[rr][e], rv[rr], a[e]);
          y = fmaf(s[rr][e], q[e], y);
          if constexpr (NORMS) n = fmaf(s[rr][e], s[rr][e], n);
        }
        yv[u * RR + rr] = y;
        nr[rr] = n;
      }
      nv[u] = (nr[0] + nr[1]) + (nr[2] + nr[3]);
    }
    // y: lane sl of the row group ends with step g + sl/2, rows r0 + 2 (sl % 2) + k (k = 0, 1).
    reduce_scatter<UR * RR, SLR / 2>(yv, sl);
    {
      const int t = g + sl / 2, row = r0 + 2 * (sl % 2);
      if (t < cc) {
        const std::size_t gi = row_index(b, t0 + t, h, T, H) * D + row;
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const float o = ratio ? yv[k] / Ds[t] : yv[k];
          if constexpr (BF16) {
            static_cast<std::uint16_t*>(p.o)[gi + k] = core::bf16_bits_rne(o);
          } else {
            static_cast<float*>(p.o)[gi + k] = o;
          }
        }
      }
    }
    // The norm's partials over the warp, by one fixed tree: the lanes l and l ^ 16
    // split the steps into halves, l and l ^ 8 into single steps (lane bits 16, 8
    // name step (lane / 8) % 4), then lane bits 4, 2, 1 are summed by a butterfly
    // (both lanes of a pair add the same two values: the same bits).
    if constexpr (NORMS) {
      const bool up16 = (lane & 16) != 0, up8 = (lane & 8) != 0;
      const float m0 = (up16 ? nv[2] : nv[0]) + __shfl_xor_sync(kAll, up16 ? nv[0] : nv[2], 16);
      const float m1 = (up16 ? nv[3] : nv[1]) + __shfl_xor_sync(kAll, up16 ? nv[1] : nv[3], 16);
      float m = (up8 ? m1 : m0) + __shfl_xor_sync(kAll, up8 ? m0 : m1, 8);
      m += __shfl_xor_sync(kAll, m, 4);
      m += __shfl_xor_sync(kAll, m, 2);
      m += __shfl_xor_sync(kAll, m, 1);
      if ((lane & 7) == 0) NP[(g + lane / 8) * NW + warp] = m;
    }
  }
  if constexpr (!NORMS) return;
  __syncthreads();
  // ||S_t||_F = sqrt of the warps' partials summed in warp order.
  for (int t = tid; t < cc; t += NT) {
    const float* x = NP + t * NW;
    float acc = x[0];
#pragma unroll
    for (int w = 1; w < NW; ++w) acc += x[w];
    p.state_norm[row_index(b, t0 + t, h, T, H)] = core::vsqrt(acc);
  }
}

// ---------------------------------------------------------------- launch

// The streams and events of the overlapped schedule (StateConfig::segments > 1),
// one set per device, created on first use and kept for the process (enqueueing
// under aux_mutex, so that concurrent callers do not interleave their records of
// the shared events).
struct Aux {
  cudaStream_t prep = nullptr, pass = nullptr, read = nullptr;
  std::vector<cudaEvent_t> ev;
};
std::mutex aux_mutex;

Aux& aux_for_current_device() {
  static std::map<int, Aux> all;
  int dev = 0;
  VLA_CUDA_CHECK(cudaGetDevice(&dev));
  Aux& x = all[dev];
  if (!x.pass) {
    int least = 0, greatest = 0;
    VLA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // The pass is the critical path: its blocks first when prep and readout blocks
    // compete for the SMs. Non-blocking: no implicit order with the legacy stream.
    VLA_CUDA_CHECK(cudaStreamCreateWithPriority(&x.pass, cudaStreamNonBlocking, greatest));
    VLA_CUDA_CHECK(cudaStreamCreateWithPriority(&x.prep, cudaStreamNonBlocking, least));
    VLA_CUDA_CHECK(cudaStreamCreateWithPriority(&x.read, cudaStreamNonBlocking, least));
  }
  return x;
}

cudaEvent_t aux_event(Aux& x, std::size_t i) {
  while (x.ev.size() <= i) {
    cudaEvent_t e = nullptr;
    VLA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    x.ev.push_back(e);
  }
  return x.ev[i];
}

// Segments of the pass (0 or 1: one launch, no overlap), at most one per chunk.
int segments_for(const StateConfig& cfg, int n_chunks) { return std::max(1, std::min(cfg.segments, n_chunks)); }

// The two passes as launch_typed's policy: kernel, threads, rows per block, shared memory.
template <int D, int C, int R, int E, int G, int PROBE = 0>
struct ReducePass {  // v4: r's partial dot products summed by a reduce-scatter over a row group's lanes
  using Sh = PassShape<D, C, R, E, G>;
  static constexpr int NT = Sh::NT, rows = G, min_stages = 2;
  static constexpr bool folded = false;
  static std::size_t smem_bytes(int stages) { return Sh::smem_bytes(stages); }
  static auto kernel() { return state_pass_kernel<D, C, R, E, G, PROBE>; }
};
template <int D, int C, int R>
struct LaneDotPass {  // v5: r's dot products whole in a lane
  using Sh = LaneDotShape<D, C, R>;
  static constexpr int NT = Sh::NT, rows = Sh::G, min_stages = 2;
  static constexpr bool folded = false;
  static std::size_t smem_bytes(int stages) { return Sh::smem_bytes(stages); }
  static auto kernel() { return state_pass_lanedot_kernel<D, C, R>; }
};

template <int D, int C>
struct LookPass {  // v7: R one chunk ahead, both products of a chunk side by side; X_c from state_x_kernel first
  using Sh = LookPassShape<D, C>;
  static constexpr int NT = Sh::NT, rows = Sh::G, min_stages = Sh::min_stages;
  static constexpr bool folded = false, lookahead = true;
  static std::size_t smem_bytes(int stages) { return Sh::smem_bytes(stages); }
  static auto kernel() { return state_pass_look_kernel<D, C>; }
};

template <int D, int C, int MT, int NW, int FR = 0>
struct DmmaPass {  // v6: r and the chunk's update as DMMA products; FR: the readout folded in
  using Sh = DmmaPassShape<D, C, MT, NW, FR>;
  static constexpr int NT = Sh::NTALL, rows = Sh::G, min_stages = Sh::min_stages;
  static constexpr bool folded = FR != 0;
  static std::size_t smem_bytes(int stages) { return Sh::smem_bytes(stages); }
  static auto kernel() { return state_pass_dmma_kernel<D, C, MT, NW, FR>; }
};

// After a pass with the readout folded in: ||S_t||_F from the pass blocks' partials
// (norm_part[b h][step][block], ng blocks a head), summed in block order.
__global__ void __launch_bounds__(256) state_norm_final_kernel(StateParams p, int n_chunks, int ng, const float* __restrict__ part) {
  const std::size_t total = static_cast<std::size_t>(p.B) * p.H * p.T;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * p.C;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int bh = static_cast<int>(i / p.T), t = static_cast<int>(i % p.T);
    const float* x = part + (static_cast<std::size_t>(bh) * nc_steps + t) * ng;
    float acc = x[0];
    for (int g = 1; g < ng; ++g) acc += x[g];
    p.state_norm[row_index(bh / p.H, t, bh % p.H, p.T, p.H)] = core::vsqrt(acc);
  }
}

template <int D, int C, bool BF16, class Pass>
void launch_typed(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  const ScratchLayout l = scratch_layout(p.B, p.T, p.H, D, C);
  auto* base = static_cast<char*>(p.scratch);
  auto* kt = reinterpret_cast<float*>(base + l.kt);
  auto* vt = reinterpret_cast<float*>(base + l.vt);
  auto* sc = reinterpret_cast<float*>(base + l.sc);
  const int n_chunks = (p.T + C - 1) / C;
  const long long bh = static_cast<long long>(p.B) * p.H;
  using RS = ReadShape<D, C>;
  constexpr std::size_t prep_smem = PrepShape<D, C>::smem_bytes;

  int dev = 0, smem_optin = 0;
  VLA_CUDA_CHECK(cudaGetDevice(&dev));
  VLA_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  constexpr bool folded = Pass::folded;
  if (folded && !p.state_norm)
    throw std::invalid_argument("scan state: the folded readout (StateConfig::fused_readout) always forms the norms: state_norm is required");
  if (folded && p.in.nsum)
    throw std::invalid_argument("scan state: the folded readout (StateConfig::fused_readout) reads den whole, not the den split's parts (GateOut::nsum)");
  constexpr int min_stages = Pass::min_stages;
  int stages = std::max(min_stages, std::min(4, cfg.stages));
  while (stages > min_stages && Pass::smem_bytes(stages) > static_cast<std::size_t>(smem_optin)) --stages;
  const std::size_t pass_smem = Pass::smem_bytes(stages);
  if (pass_smem > static_cast<std::size_t>(smem_optin))
    throw std::invalid_argument("scan state: the pass needs " + std::to_string(pass_smem) + " bytes of shared memory at D=" +
                                std::to_string(D) + " C=" + std::to_string(C) + ", above the device's " + std::to_string(smem_optin) +
                                (folded ? " (the folded readout's ring; StateConfig::fused_readout false uses less)" : ""));
  VLA_CUDA_CHECK(cudaFuncSetAttribute(state_prep_kernel<D, C, BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(prep_smem)));
  VLA_CUDA_CHECK(cudaFuncSetAttribute(Pass::kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(pass_smem)));
  VLA_CUDA_CHECK(cudaFuncSetAttribute(state_readout_kernel<D, C, BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(RS::smem_bytes)));
  VLA_CUDA_CHECK(cudaFuncSetAttribute(state_readout_kernel<D, C, BF16, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(RS::smem_bytes)));
  // The look-ahead pass's X_c = Ah_c^T Kt_c+1 (state_x_kernel), from the prep's Kt: after the prep, or
  // before the pass where the prep ran elsewhere (StateParams::prep_done).
  constexpr bool look = requires { Pass::lookahead; };
  auto x_products = [&](cudaStream_t st) {
    if constexpr (look) {
      if (n_chunks > 1) {
        state_x_kernel<D, C><<<static_cast<unsigned>(bh * (n_chunks - 1)), 256, 0, st>>>(p, n_chunks, kt, sc + x_after_sc(p.B * p.H, n_chunks, D));
        VLA_CUDA_CHECK(cudaGetLastError());
      }
    }
  };
  auto prep = [&](int c0, int c1, cudaStream_t st) {
    state_prep_kernel<D, C, BF16><<<static_cast<unsigned>(bh * (c1 - c0)), kThreads, prep_smem, st>>>(p, n_chunks, c0, c1 - c0, kt, vt);
    VLA_CUDA_CHECK(cudaGetLastError());
    x_products(st);  // every chunk's (the look-ahead pass runs as one segment)
  };
  auto pass = [&](int c0, int c1, cudaStream_t st) {
    if (look && c0 != 0) throw std::invalid_argument("scan state: the look-ahead pass runs from the first chunk (one segment)");
    if (look && p.prep_done) x_products(st);
    Pass::kernel()<<<static_cast<unsigned>(bh * (D / Pass::rows)), Pass::NT, pass_smem, st>>>(p, n_chunks, c0, c1, stages, kt, vt, sc);
    VLA_CUDA_CHECK(cudaGetLastError());
  };
  auto readout = [&](int c0, int c1, cudaStream_t st) {
    if constexpr (folded) {
      // The pass wrote o and the norm partials (over sc); the norms' last sum here.
      (void)c0, (void)c1;
      const std::size_t total = static_cast<std::size_t>(bh) * p.T;
      const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 65535));
      state_norm_final_kernel<<<blocks, 256, 0, st>>>(p, n_chunks, D / Pass::rows, sc);
    } else if (p.state_norm) {
      state_readout_kernel<D, C, BF16><<<static_cast<unsigned>(bh * (c1 - c0)), RS::NT, RS::smem_bytes, st>>>(p, n_chunks, c0, c1 - c0, vt, sc);
    } else {  // o and S only (StateParams::state_norm null): the step and y's fma an entry, not the norm's
      state_readout_kernel<D, C, BF16, false><<<static_cast<unsigned>(bh * (c1 - c0)), RS::NT, RS::smem_bytes, st>>>(p, n_chunks, c0, c1 - c0, vt, sc);
    }
    VLA_CUDA_CHECK(cudaGetLastError());
  };

  const int K = segments_for(cfg, n_chunks);
  auto bound = [&](int k) { return static_cast<int>(static_cast<long long>(n_chunks) * k / K); };
  if (parts == (kPrep | kPass | kReadout) && K > 1 && !folded) {
    // Overlapped: prep of segment k (stream prep) -> pass of segment k (stream
    // pass, after pass k-1) -> readout of segment k (stream read), so that the
    // readout of k and the prep of later segments run beside the pass of k+1.
    // Every kernel computes the same values as in one sequence: deterministic.
    // Measured slower than the plain sequence on the H200 (the pass slows down
    // beside the other kernels: reports/gpu/2026-12-03-h200-scan-state.md), hence
    // not launch_state's choice.
    std::lock_guard<std::mutex> lock(aux_mutex);
    Aux& x = aux_for_current_device();
    cudaEvent_t start = aux_event(x, 0), done = aux_event(x, 1);
    VLA_CUDA_CHECK(cudaEventRecord(start, s));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(x.prep, start, 0));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(x.pass, start, 0));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(x.read, start, 0));
    for (int k = 0; k < K; ++k) {
      prep(bound(k), bound(k + 1), x.prep);
      VLA_CUDA_CHECK(cudaEventRecord(aux_event(x, 2 + k), x.prep));
    }
    for (int k = 0; k < K; ++k) {
      VLA_CUDA_CHECK(cudaStreamWaitEvent(x.pass, aux_event(x, 2 + k), 0));
      pass(bound(k), bound(k + 1), x.pass);
      VLA_CUDA_CHECK(cudaEventRecord(aux_event(x, 2 + K + k), x.pass));
    }
    for (int k = 0; k < K; ++k) {
      VLA_CUDA_CHECK(cudaStreamWaitEvent(x.read, aux_event(x, 2 + K + k), 0));
      readout(bound(k), bound(k + 1), x.read);
    }
    // The last readout follows every pass (events) and every prep: one join.
    VLA_CUDA_CHECK(cudaEventRecord(done, x.read));
    VLA_CUDA_CHECK(cudaStreamWaitEvent(s, done, 0));
    return;
  }
  if (parts & kPrep) prep(0, n_chunks, s);
  if (parts & kPass)
    for (int k = 0; k < K; ++k) pass(bound(k), bound(k + 1), s);
  if (parts & kReadout) readout(0, n_chunks, s);
}

// The passes built. v4 (rows x columns per thread, rows per block): 4 x E0 and
// 1 x E0 with 8-row blocks for every D (E0 = max(D/32, 1): a row's lanes fill a
// warp); for D = 64 also 2 x 2 and 1 x 4 (8 rows), 1 x 2 and 2 x 2 (4 rows).
// v5 (lanedot): 2 or 4 rows x D/32 columns (8- or 16-row blocks) for D >= 32.
template <int D, int C, bool BF16>
void launch_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  constexpr int E0 = D >= 32 ? D / 32 : 1;
  const int r = cfg.rows, e = cfg.elems, g = cfg.group;
  if (cfg.lookahead) {
    if constexpr (D >= 32 && D % C == 0 && D <= 64) {
      if (ref::scan_state_policy(D, C) != ref::ScanStatePolicy::lookahead)
        throw std::invalid_argument("scan state: the look-ahead pass needs the look-ahead scratch (ref::scan_state_policy)");
      if (segments_for(cfg, (p.T + C - 1) / C) > 1) throw std::invalid_argument("scan state: the look-ahead pass runs as one segment");
      return launch_typed<D, C, BF16, LookPass<D, C>>(p, s, cfg, parts);
    }
    throw std::invalid_argument("scan state: the look-ahead pass is built for D = 32, 64 with C <= D only (D=" + std::to_string(D) +
                                " C=" + std::to_string(C) + ")");
  }
  if (cfg.dmma != 0) {
    if (cfg.probe != 0) throw std::invalid_argument("scan state: timing probes built for the v4 pass only");
    if constexpr (D >= 32) {
      constexpr int FR = BF16 ? 2 : 1;  // the folded readout's output type
      // v6 with MT row tiles and NW warps, with or without the folded readout.
      auto v6 = [&]<int MT, int NW>() {
        return cfg.fused_readout ? launch_typed<D, C, BF16, DmmaPass<D, C, MT, NW, FR>>(p, s, cfg, parts)
                                 : launch_typed<D, C, BF16, DmmaPass<D, C, MT, NW>>(p, s, cfg, parts);
      };
      if (cfg.dmma_warps == 4) {
        if (cfg.dmma == 1) return v6.template operator()<1, 4>();
        if (cfg.dmma == 2) return v6.template operator()<2, 4>();
      }
      if constexpr (D >= 64)
        if (cfg.dmma_warps == 8) {
          if (cfg.dmma == 1) return v6.template operator()<1, 8>();
          if (cfg.dmma == 2) return v6.template operator()<2, 8>();
        }
    }
    throw std::invalid_argument("scan state: DMMA pass with " + std::to_string(cfg.dmma) + " row tiles and " +
                                std::to_string(cfg.dmma_warps) + " warps per block not built for D=" + std::to_string(D) +
                                " (1 or 2 tiles of 8 rows; 4 warps at D >= 32, 8 at D >= 64)");
  }
  if (cfg.lanedot) {
    if (cfg.probe != 0) throw std::invalid_argument("scan state: timing probes built for the v4 pass only");
    if constexpr (D >= 32) {
      if (r == 2) return launch_typed<D, C, BF16, LaneDotPass<D, C, 2>>(p, s, cfg, parts);
      if (r == 4) return launch_typed<D, C, BF16, LaneDotPass<D, C, 4>>(p, s, cfg, parts);
    }
    throw std::invalid_argument("scan state: lane-dot pass with " + std::to_string(r) + " rows per thread not built for D=" +
                                std::to_string(D) + " (2 or 4 rows, D >= 32)");
  }
  if constexpr (D == 64 && C == 32) {  // the timing probes, for launch_state's v4 tile at B H < 64
    if (cfg.probe != 0 && r == 2 && e == 2 && g == 8) {
      if (cfg.probe == 1) return launch_typed<D, C, BF16, ReducePass<D, C, 2, 2, 8, 1>>(p, s, cfg, parts);
      if (cfg.probe == 2) return launch_typed<D, C, BF16, ReducePass<D, C, 2, 2, 8, 2>>(p, s, cfg, parts);
      if (cfg.probe == 3) return launch_typed<D, C, BF16, ReducePass<D, C, 2, 2, 8, 3>>(p, s, cfg, parts);
    }
  }
  if (cfg.probe != 0) throw std::invalid_argument("scan state: timing probes built for D=64 C=32 tile 2 x 2 x 8 only");
  if (r == 4 && e == E0 && g == 8) return launch_typed<D, C, BF16, ReducePass<D, C, 4, E0, 8>>(p, s, cfg, parts);
  if (r == 1 && e == E0 && g == 8) return launch_typed<D, C, BF16, ReducePass<D, C, 1, E0, 8>>(p, s, cfg, parts);
  if constexpr (D == 64) {
    if (r == 2 && e == 2 && g == 8) return launch_typed<D, C, BF16, ReducePass<D, C, 2, 2, 8>>(p, s, cfg, parts);
    if (r == 1 && e == 4 && g == 8) return launch_typed<D, C, BF16, ReducePass<D, C, 1, 4, 8>>(p, s, cfg, parts);
    if (r == 1 && e == 2 && g == 4) return launch_typed<D, C, BF16, ReducePass<D, C, 1, 2, 4>>(p, s, cfg, parts);
    if (r == 2 && e == 2 && g == 4) return launch_typed<D, C, BF16, ReducePass<D, C, 2, 2, 4>>(p, s, cfg, parts);
  }
  throw std::invalid_argument("scan state: " + std::to_string(r) + " rows of " + std::to_string(e) + " columns per thread in " +
                              std::to_string(g) + "-row blocks not built for D=" + std::to_string(D));
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

StateConfig state_config_pass(int B, int H, int D, int C, bool lanedot) {
  (void)C;
  const bool few_heads = static_cast<long long>(B) * H < 64;
  StateConfig cfg;
  if (lanedot && D >= 32) {
    // v5, measured on the H200 (reports/gpu/2026-12-04-h200-scan-state-lanedot.md):
    // 2 rows per thread below 64 heads, 4 from 64 heads on (B H = 1024: 4 x 2 / 16
    // 11.72 ms against 2 x 2 / 8 12.68); a ring of 3 (B H = 16: pass 0.554 ms against
    // 0.572 with 2; 4 gains 0.005 more).
    cfg.lanedot = true;
    cfg.rows = few_heads ? 2 : 4;
    cfg.elems = D / 32;
    cfg.group = 4 * cfg.rows;
    cfg.stages = 3;
    cfg.segments = 1;
    return cfg;
  }
  // v4, measured on the H200 (reports/gpu/2026-12-03-h200-scan-state.md): at D = 64,
  // 2 x 2 when the pass has few blocks (B H = 16: 4 warps per SM, latency-bound;
  // 1 x 2 with 8 warps and 4-row blocks are slower), 4 x 2 when it has many
  // (B H = 1024: the fewest shared-memory loads per FMA); a ring of 2 chunk buffers
  // (3 and 4 gain nothing); one segment (the overlapped schedule is slower). The
  // other D: 4 x max(D/32, 1), v3's tile.
  cfg.rows = D == 64 && few_heads ? 2 : 4;
  cfg.elems = D >= 32 ? D / 32 : 1;
  cfg.group = 8;
  cfg.stages = 2;
  cfg.segments = 1;
  return cfg;
}

StateConfig state_config(int B, int H, int D, int C) {
  // v6 (DMMA) where built (D >= 32), measured faster than v4 and v5 in the same
  // process on the H200 (reports/gpu/2026-12-04-h200-scan-pass-dmma.md): below 64
  // heads 8-row blocks (8 warps at D = 64: pass 0.411 ms at B = 1, H = 16, T = 16,384,
  // against 0.427 with 4 warps and v5's 0.553; D = 32: 0.270 against v4's 0.706),
  // from 64 heads on 16-row blocks of 4 warps (B = 8, H = 128, T = 4,096: 3.43 ms
  // against v4's 4.38); a ring of 3. Its sums are those of the CPU twin
  // (ref::run_chunked_scan<float, double>: the chunk's state products in double,
  // rounded once): ref::scan_state_policy makes the choice for both. D = 16: v4
  // (per-step float updates; the twin's per_step policy).
  if (ref::scan_state_policy(D, C) == ref::ScanStatePolicy::lookahead) {
    // v7 (scan_pass_look.cuh, docs/CHUNKED.md 8.24): R one chunk ahead, one barrier a chunk.
    // A ring of 4: with lag 1 (chunks c and c + 1 resident) a chunk's loads are issued two chunks
    // ahead, as v6's ring of 3 issues them (a ring of 3 measured 0.81 ms for X and the pass at
    // B = 1, H = 16, T = 16,384 on an H100, against v6's 0.42).
    StateConfig cfg = state_config_pass(B, H, D, C, false);
    cfg.lookahead = true;
    cfg.stages = 4;
    return cfg;
  }
  if (ref::scan_state_policy(D, C) != ref::ScanStatePolicy::per_step) {
    const bool few_heads = static_cast<long long>(B) * H < 64;
    StateConfig cfg = state_config_pass(B, H, D, C, false);
    cfg.dmma = few_heads ? 1 : 2;
    // 4 warps a block (r's product not split over S's columns at C = 32): the pass alone
    // 0.396-0.397 ms against 0.402-0.403 with 8 warps at B = 1, H = 16, T = 16,384, and 1.559-1.563
    // against 1.582-1.587 at T = 65,536 (H100, 2026-12-07, reports/gpu/2026-12-07-h100-state-prep-pass.md);
    // 8.13's 8-warp choice was measured before the pass's conversions left its chain (8.34).
    cfg.dmma_warps = 4;
    cfg.stages = 3;
    // Not the folded readout (StateConfig::fused_readout): correct but slower where measured
    // (H100, 2026-12-05, reports/gpu/2026-12-05-h100-steps-4x16-folded-readout.md: the stage
    // 0.867 ms against 0.783 at B = 1, H = 16, T = 16,384; 11.58 against 8.56 at B = 8, H = 128).
    return cfg;
  }
  return state_config_pass(B, H, D, C, false);
}

int state_segments(int T, int C, StateConfig cfg) { return segments_for(cfg, (T + C - 1) / C); }

void state_prep_targets(const StateParams& p, float** kt, float** vt) {
  const ScratchLayout l = scratch_layout(p.B, p.T, p.H, p.D, p.C);
  *kt = reinterpret_cast<float*>(static_cast<char*>(p.scratch) + l.kt);
  *vt = reinterpret_cast<float*>(static_cast<char*>(p.scratch) + l.vt);
}

void launch_state_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts) {
  if (p.prep_done) parts &= ~kPrep;  // Kt, Vt from stage 1 (scan_gate.cu steps_kernel)
  if (p.B < 1 || p.T < 1 || p.H < 1) throw std::invalid_argument("scan state: B, T and H must be >= 1");
  if (!p.v || !p.in.khat || !p.in.phiq || !p.in.gate || !p.o || !p.S || !p.scratch)
    throw std::invalid_argument("scan state: v, khat, phiq, gate, o, S and scratch are required");
  if (!aligned16(p.in.gate) || !aligned16(p.in.khat) || !aligned16(p.in.phiq) || !aligned16(p.scratch))
    throw std::invalid_argument("scan state: gate, khat, phiq and scratch must be 16-byte aligned");
  if (p.bf16_io) {
    launch_d<true>(p, s, cfg, parts);
  } else {
    launch_d<false>(p, s, cfg, parts);
  }
}

void launch_state(const StateParams& p, cudaStream_t s) {
  launch_state_config(p, s, state_config(p.B, p.H, p.D, p.C), kPrep | kPass | kReadout);
}

}  // namespace vla::gpu::scan
