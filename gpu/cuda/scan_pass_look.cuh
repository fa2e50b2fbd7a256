// v7 of the scan form's sequential pass: the residuals one chunk ahead
// (ref::ScanStatePolicy::lookahead, docs/CHUNKED.md 8.21 and 8.24). Included by
// scan_state.cu inside its namespace (ChunkRing, ChunkLoader, row_index, dmma_884).
//
// Why: v6 (scan_pass_dmma.cuh) runs a chunk as r = Vt - S_c Kt, a barrier (r's
// slices), r complete, a barrier, then S_c+1 = S_c + R Ah^T and the ring's barrier:
// two dependent product phases and three barriers on the chain through S
// (~1,650 cycles a chunk at B = 1, H = 16, D = 64, C = 32). With
//   R_c+1 = Vt_c+1 - S_c Kt_c+1 - R_c X_c,   X_c = Ah_c^T Kt_c+1 (C x C),
// (S_c+1 = S_c + R_c Ah_c^T substituted: exact algebra) both of a chunk's products
// need only S_c and R_c, so they run side by side in one phase, and the ring's
// barrier is the only one a chunk.
//
// A block: one (b, h, 8 rows of S), NR = C / 8 "R warps" and NU = C / 8 "U warps"
// (16 warps at C = 64, 8 at C = 32). R warp w forms R_c+1's step tile w
// (rows x steps 8w .. 8w + 7 of chunk c + 1): one DMMA accumulator set over the
// k-blocks of S_c Kt_c+1^T (k over S's columns) and then of R_c X_c (k over chunk
// c's steps), four chains by k-block mod 4, summed in double; r = fl(vt - sum)
// (rounded to float once, as the twin: the three terms summed in double). U warp u
// holds S's column tiles TU u .. TU u + TU - 1 (TU = D / C) as DMMA accumulators
// (doubles holding floats) and forms S_c+1 = fl(S_c + R_c Ah_c^T) exactly as v6 does
// (the same chains, the same bits from the same R_c). S_c and R_c live in shared
// memory as doubles (A fragments), two parities each: chunk c reads parity c & 1
// and writes c + 1's. The ring (ChunkRing with lag 1) holds chunks c and c + 1:
// a^_c and X_c for chunk c's update and product, kt_c+1 and vt_c+1 for R_c+1.
// X_c comes from state_x_kernel (below), run after the prep.
// Chunk c_begin's R is Vt (the pass starts from S = 0: c_begin must be 0).
#pragma once

// Floats from the start of the S_c's to X in the state scratch (scan_state.cu scratch_layout: the S_c's
// region rounded up to 256 bytes).
__host__ __device__ inline std::size_t x_after_sc(int bh, int n_chunks, int D) {
  const std::size_t bytes = static_cast<std::size_t>(bh) * n_chunks * D * D * sizeof(float);
  return (bytes + 255) / 256 * 256 / sizeof(float);
}

template <int D, int C>
struct LookPassShape {
  static constexpr int G = 8;                // rows of S per block
  static constexpr int NR = C / 8, NU = C / 8, NW = NR + NU, NT = 32 * NW;
  static constexpr int TU = D / C;           // S's column tiles per U warp
  static constexpr int LA = D + 8, LK = D + 4, LX = C + 8;  // floats: a^ rows, kt rows, X rows (conflict-free fragments)
  static constexpr int LS = D + 4, LR = C + 4;              // doubles: S_c and R_c rows
  static constexpr int oX = C * LA + C * LK + C * G;        // X's rows after the loader's a^, kt, vt
  static constexpr std::size_t buf_floats = static_cast<std::size_t>(oX) + static_cast<std::size_t>(C) * LX;
  static constexpr std::size_t smem_bytes(int stages) {
    return stages * buf_floats * sizeof(float) + 2 * (static_cast<std::size_t>(G) * LS + static_cast<std::size_t>(G) * LR) * sizeof(double);
  }
  static constexpr int min_stages = 3;  // chunks c and c + 1 resident, c + 2 loading
  static_assert(D % C == 0 && TU >= 1 && D % 32 == 0 && C % 32 == 0, "whole column tiles per U warp");
  static_assert(buf_floats % 4 == 0 && (oX % 4) == 0 && (LX % 4) == 0, "16-byte aligned buffers and X rows");
};

// X_c = Ah_c^T Kt_c+1 for every chunk c with a successor, [b h][c][i][t] (i: chunk c's
// steps, t: chunk c + 1's): each entry an fma chain in double over the columns in
// order (the products of floats exact), rounded to float once. A block per (b h, c).
// Steps of a short last chunk past its length: the prep writes no kt rows there (the
// scratch holds anything), so they are taken as zeros and X's columns there are 0, as
// the pass's zero-filled kt and a^ rows make every other term of those steps.
template <int D, int C>
__global__ void __launch_bounds__(256) state_x_kernel(StateParams p, int n_chunks, const float* __restrict__ kt_in,
                                                      float* __restrict__ x_out) {
  constexpr int LD = D + 1;
  __shared__ float As[C * LD];
  __shared__ float Ks[C * LD];
  const int bh = blockIdx.x / (n_chunks - 1), c = blockIdx.x % (n_chunks - 1);
  const int b = bh / p.H, h = bh % p.H;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;
  const int cn = min(C, p.T - (c + 1) * C);  // chunk c + 1's length
  for (int e = threadIdx.x; e < C * D; e += blockDim.x) {
    const int t = e / D, j = e % D;
    As[t * LD + j] = p.in.gate[row_index(b, c * C + t, h, p.T, p.H) * D + j];  // chunk c is whole (not the last)
    Ks[t * LD + j] = t < cn ? kt_in[(static_cast<std::size_t>(bh) * nc_steps + (c + 1) * C + t) * D + j] : 0.0f;
  }
  __syncthreads();
  float* x = x_out + (static_cast<std::size_t>(bh) * n_chunks + c) * C * C;
  for (int e = threadIdx.x; e < C * C; e += blockDim.x) {
    const int i = e / C, t = e % C;
    double acc = 0.0;
#pragma unroll 8
    for (int j = 0; j < D; ++j) acc = fma(static_cast<double>(As[i * LD + j]), static_cast<double>(Ks[t * LD + j]), acc);
    x[e] = __double2float_rn(acc);
  }
}

template <int D, int C>
__global__ void __launch_bounds__(LookPassShape<D, C>::NT, 1)
    state_pass_look_kernel(StateParams p, int n_chunks, int c_begin, int c_end, int stages, const float* __restrict__ kt_in,
                           float* __restrict__ vt_r, float* __restrict__ sc_out) {
  using Sh = LookPassShape<D, C>;
  constexpr int G = Sh::G, NR = Sh::NR, NT = Sh::NT, TU = Sh::TU, LA = Sh::LA, LK = Sh::LK, LX = Sh::LX, LS = Sh::LS, LR = Sh::LR;
  constexpr int NG = D / G;
  extern __shared__ __align__(16) float smem[];
  double* Sd = reinterpret_cast<double*>(smem + stages * Sh::buf_floats);  // [2][G][LS]: S_c by parity
  double* Rd = Sd + 2 * G * LS;                                             // [2][G][LR]: R_c by parity

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / NG, grp = blockIdx.x % NG;
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
  const bool rw = warp < NR;           // an R warp (step tile warp) or a U warp (column tiles TU (warp - NR) ..)
  const int u0 = (warp - NR) * TU;     // the U warp's first column tile
  const int i0 = grp * G;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;
  ChunkLoader<D, C, G, NT, LA, LK> loader(smem, Sh::buf_floats, p, kt_in, vt_r, b, h, bh, i0, nc_steps, c_begin, c_end);
  // X_c rows by cp.async into the chunk's buffer, in the loader's commit group (issued before it commits);
  // X lies after the S_c's in the scratch (x_after_sc).
  const float* xsrc = sc_out + x_after_sc(p.B * p.H, n_chunks, D) + static_cast<std::size_t>(bh) * n_chunks * C * C;
  auto load = [&](int c, int buf) {
    if (c + 1 < c_end) {  // X_c is read only where chunk c + 1 exists
      float* xd = smem + buf * Sh::buf_floats + Sh::oX;
      for (int e = tid; e < C * C / 4; e += NT) {
        const int i = (4 * e) / C, t = (4 * e) % C;
        __pipeline_memcpy_async(xd + i * LX + t, xsrc + static_cast<std::size_t>(c) * C * C + 4 * e, 16);
      }
    }
    loader(c, buf);
  };

  // The U warps' tiles of S (from 0: c_begin = 0).
  double s[TU][2];
  float sf[TU][2];
#pragma unroll
  for (int j = 0; j < TU; ++j) s[j][0] = s[j][1] = 0.0, sf[j][0] = sf[j][1] = 0.0f;
  float* S_head = p.S + static_cast<std::size_t>(bh) * D * D;
  auto col_of = [&](int j, int e) { return 8 * (u0 + j) + 2 * q + e; };
  auto state_to_shared = [&](int par) {
#pragma unroll
    for (int j = 0; j < TU; ++j)
      *reinterpret_cast<double2*>(Sd + par * G * LS + g * LS + 8 * (u0 + j) + 2 * q) = make_double2(s[j][0], s[j][1]);
  };

  ChunkRing ring(stages, c_begin, load, 1);
  // Prologue: chunk c_begin staged; S_c_begin = 0 to parity c_begin & 1, R_c_begin = Vt (S = 0).
  {
    const int buf = ring.advance(c_begin, load);
    const float* Vs = smem + buf * Sh::buf_floats + C * LA + C * LK;
    if (!rw) state_to_shared(c_begin & 1);
    const int cc = min(C, T - c_begin * C);
    for (int e = tid; e < G * C; e += NT) {
      const int m = e / C, n = e % C;
      const float r = Vs[n * G + m];  // zero past cc
      Rd[(c_begin & 1) * G * LR + m * LR + n] = static_cast<double>(r);
      if (n < cc) vt_r[(static_cast<std::size_t>(bh) * nc_steps + c_begin * C + n) * D + i0 + m] = r;
    }
  }
  for (int c = c_begin; c < c_end; ++c) {
    // Chunk c + 1 staged and chunk c kept (lag 1); S_c, R_c in parity c & 1; every warp done with chunk c - 1.
    const int bn = ring.advance(c + 1, load);
    const int bc = bn == 0 ? stages - 1 : bn - 1;
    const float* Ac = smem + bc * Sh::buf_floats;      // a^_c rows
    const float* Xc = Ac + Sh::oX;                     // X_c rows (i: chunk c's steps)
    const float* Kn = smem + bn * Sh::buf_floats + C * LA;  // kt_c+1 rows
    const float* Vn = Kn + C * LK;                     // vt_c+1, [step][G]
    const double* Sc = Sd + (c & 1) * G * LS;
    const double* Rc = Rd + (c & 1) * G * LR;
    const int par = (c + 1) & 1;
    if (!rw) {
      // S_c for the readout, then S_c+1 = fl(S_c + R_c Ah_c^T) (v6's chains: S_c plus k-blocks 0 mod 4, the others from zero).
      float* sc = sc_out + (static_cast<std::size_t>(bh) * n_chunks + c) * D * D;
#pragma unroll
      for (int j = 0; j < TU; ++j) *reinterpret_cast<float2*>(sc + (i0 + g) * D + col_of(j, 0)) = make_float2(sf[j][0], sf[j][1]);
      double part[TU][3][2] = {};
#pragma unroll
      for (int kb = 0; kb < C / 4; ++kb) {
        const double af = Rc[g * LR + 4 * kb + q];
#pragma unroll
        for (int j = 0; j < TU; ++j) {
          const double bf = static_cast<double>(Ac[(4 * kb + q) * LA + 8 * (u0 + j) + g]);
          dmma_884((kb & 3) ? part[j][(kb & 3) - 1] : s[j], af, bf);
        }
      }
#pragma unroll
      for (int j = 0; j < TU; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          sf[j][e] = __double2float_rn((s[j][e] + part[j][0][e]) + (part[j][1][e] + part[j][2][e]));
          s[j][e] = static_cast<double>(sf[j][e]);
        }
      state_to_shared(par);
    } else if (c + 1 < c_end) {
      // R_c+1's step tile `warp`: S_c Kt_c+1^T (k over S's D columns), then R_c X_c (k over chunk c's C steps).
      double acc[4][2] = {};
#pragma unroll
      for (int kb = 0; kb < D / 4; ++kb)
        dmma_884(acc[kb & 3], Sc[g * LS + 4 * kb + q], static_cast<double>(Kn[(8 * warp + g) * LK + 4 * kb + q]));
#pragma unroll
      for (int kb = 0; kb < C / 4; ++kb)
        dmma_884(acc[(D / 4 + kb) & 3], Rc[g * LR + 4 * kb + q], static_cast<double>(Xc[(4 * kb + q) * LX + 8 * warp + g]));
      const int cn = min(C, T - (c + 1) * C);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int n = 8 * warp + 2 * q + e;
        const double d = (acc[0][e] + acc[1][e]) + (acc[2][e] + acc[3][e]);
        const float r = __double2float_rn(static_cast<double>(Vn[n * G + g]) - d);  // zero steps past cn: r = 0
        Rd[par * G * LR + g * LR + n] = static_cast<double>(r);
        if (n < cn) vt_r[(static_cast<std::size_t>(bh) * nc_steps + (c + 1) * C + n) * D + i0 + g] = r;
      }
    }
  }
  if (!rw)
#pragma unroll
    for (int j = 0; j < TU; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) S_head[(i0 + g) * D + col_of(j, e)] = sf[j][e];
}
