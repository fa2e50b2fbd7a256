// v6 of the scan form's sequential pass: each chunk's two products on the FP64
// tensor cores (DMMA, mma.sync m8n8k4 f64; dmma_tile.cuh's dmma_884). Included by
// scan_state.cu inside its namespace (it uses ChunkRing and row_index from there).
//
// Why: the v5 pass (state_pass_lanedot_kernel) issues ~510 warp instructions per
// chunk and warp (256 FFMA, 110 LDS) at 0.28 per scheduler and cycle (ncu on the
// H200, B=1 H=16 T=16,384 D=64 C=32: one warp per scheduler, 42% of its stalls on
// shared-memory loads), ~1,800 cycles a chunk. Here a warp issues ~310 (16 DMMAs per
// product and their fragments' loads and float-to-double conversions): the pass
// takes 0.43 ms instead of 0.55 (4 warps), 0.41 with 8 warps
// (reports/gpu/2026-12-04-h200-scan-pass-dmma.md). What bounds it now (ncu): the
// DMMA chains' fixed latencies (48% of stalls) and the conversions (F2F, a quarter-
// rate pipe: ~45 per lane and chunk, ~360 cycles of it per scheduler).
//
// The maths per chunk (docs/CHUNKED.md 8.3; S_c the float state entering it):
//   r_t,i   = fl(vt_t,i - sum_j S_c,ij kt_t,j)       (the sum in double: DMMA chains)
//   S_c+1   = fl(S_c + sum_t r_t a^_t^T)             (the sum in double, rounded once)
// The operands are floats, so every product is exact in double and the only
// roundings are the double sums' and the final rounding to float: each entry is
// the float rounding of the exact value from the same float operands, up to a sum
// error of at most about n 2^-53 times the sum of the terms' magnitudes (n = D or
// C + 1 terms), where the per-step fmas of v4/v5 round to float at every step (the
// error model's float terms bound both).
// The state between chunks stays float (S_c, what the readout replays from, is
// exactly the pass's state); the readout's in-chunk S_t are its float replay of the
// chunk's steps from S_c with these r, so S_c+1 and the replay's last S_t agree to
// float rounding, not bit for bit (the v4/v5 passes: bit for bit).
//
// A block: one (b, h, 8 MT rows of S), NW = 4 or 8 warps. S's block rows live as DMMA
// accumulator fragments (lane l: rows 8 mt + l/4, columns 8 nt + 2 (l%4) + {0, 1}
// for the warp's D/(8 NW) column tiles nt), as doubles that hold float values. Per
// chunk: a^, kt and vt of the block's rows staged by cp.async (the v5 ring), S_c
// as doubles in shared memory (A fragments of r's product: rows x D), r's product
// split over the warps by step tiles, r as doubles in shared memory (A fragments
// of the update: rows x C), the update split over the warps by column tiles.
// Two block barriers per chunk (the ring's, and r complete before the update); a
// third with 8 warps at C = 32, where r's product is split over S's columns.
// Every DMMA chain is at most D/16 (r) or C/16 (the update) deep: four chains per
// tile, so that the warp's one chain through S waits on as few DMMA latencies as it can.
#pragma once

// FR (the readout folded into the pass, StateConfig::fused_readout): 0 off, 1 with
// float outputs, 2 with bf16 outputs. The block then has NRW = G / 2 more warps
// (the readout role, FoldedReadout below) and every ring buffer also holds the
// chunk's phi(q) rows and denominators.
// The value x is formed at this point of the warp's instruction stream: an empty volatile asm
// that reads and writes it, which the compiler does not move across the block barriers after it.
__device__ __forceinline__ void pin_issued(double& x) { asm volatile("" : "+d"(x)); }

template <int D, int C, int MT, int NW_ = 4, int FR = 0>
struct DmmaPassShape {
  static constexpr int G = 8 * MT;  // rows of S per block
  static constexpr int NW = NW_, NT = 32 * NW;
  static constexpr int NRW = FR ? G / 2 : 0, NTR = 32 * NRW, NTALL = NT + NTR;  // readout warps (two rows each), threads
  static constexpr int LQ = FR ? D + 4 : 0;  // phi(q) rows in the ring (16-byte rows, a warp's 8-byte loads conflict-free)
  // Row strides chosen so that each fragment load of a warp hits distinct banks:
  // a^ (B of the update: k = step by l%4, n = column by l/4): D + 8 floats;
  // kt (B of r's product: k = column by l%4, n = step by l/4): D + 4 floats;
  // S_c and r as doubles (A fragments: row by l/4, k by l%4): 4 (mod 16) doubles.
  static constexpr int LA = D + 8, LK = D + 4, LS = D + 4, LR = C + 4;
  // r's product: C/8 step tiles; with more warps than tiles its k (S's columns) is
  // split in KS slices, one per group of NW/KS warps, and the slices' partial sums
  // meet in shared memory (one more barrier per chunk).
  static constexpr int KS = NW > C / 8 ? NW / (C / 8) : 1;
  static constexpr int TNR = C / 8 * KS / NW;  // r's step tiles per warp
  static constexpr int TNS = D / 8 / NW;       // the state's column tiles per warp
  static constexpr std::size_t buf_floats = static_cast<std::size_t>(C) * LA + static_cast<std::size_t>(C) * LK +
                                            static_cast<std::size_t>(C) * G +
                                            (FR ? static_cast<std::size_t>(C) * LQ + C : 0);
  // The readout's shared memory (FR): S_c and r of the block's rows as floats, two
  // chunks (parity), and its norm partials [C][NRW].
  // Row strides: the pass's lanes store rows 8 mt + l/4 (LSF, LRF: distinct banks across
  // l/4); the readout's lanes read a row contiguously, or one word (broadcast).
  static constexpr int LSF = D + 8, LRF = C + 1;
  static constexpr std::size_t fold_floats =
      FR ? 2 * static_cast<std::size_t>(G) * LSF + 2 * static_cast<std::size_t>(G) * LRF + static_cast<std::size_t>(C) * NRW : 0;
  static constexpr std::size_t smem_bytes(int stages) {
    return stages * buf_floats * sizeof(float) +
           (static_cast<std::size_t>(G) * LS + static_cast<std::size_t>(G) * LR * KS) * sizeof(double) + fold_floats * sizeof(float);
  }
  static constexpr int min_stages = FR ? 3 : 2;  // FR: chunk c - 1's buffer kept while c is worked on (ChunkRing lag 1)
  static_assert(D % 32 == 0 && C % 32 == 0 && (MT == 1 || MT == 2) && TNS >= 1 && TNR >= 1 && D / 4 % KS == 0,
                "whole tiles per warp");
  static_assert(buf_floats % 4 == 0, "16-byte aligned ring buffers and double areas");
};

// The readout folded into the pass (FR): warps NW .. NW + NRW - 1 of the block, one
// chunk behind the pass's warps, warp rw holding rows 2 rw, 2 rw + 1 of the block's
// G rows of S, lane l columns EC l .. EC l + EC - 1 (EC = D / 32). For chunk c - 1,
// while the pass works on chunk c: from S_{c-1} and r of the block's rows (floats
// in shared memory, stored by the pass warps) and the chunk's a^, phi(q) and
// denominators (its ring buffer, kept by ChunkRing's lag), the readout kernel's
// per-step replay S_t = S_{t-1} + r_t a^_t^T (core::state_entry, the same FMAs in
// the same order per entry: S_t bit for bit the readout kernel's), then per step
// y_t,i = S_t,i . phi(q_t) (an FMA chain over the lane's columns, then a
// reduce-scatter over the warp's lanes, 32 steps at a time: lane l ends with step
// l's two rows) and the warp's partial of ||S_t||_F^2 (per row an FMA chain of
// squares, the two rows added, the same reduce-scatter); o_t = y_t / den_t or y_t
// stored as float or bf16; the block's partial, the warps' summed in warp order, to
// norm_part[b h][t][block] (state_norm_final_kernel adds the D / G blocks' in
// block order and takes the root). Why fold: the readout kernel re-read every S_c
// (D^2 floats a chunk) and r from DRAM and took 0.23 ms at B = 1, H = 16,
// T = 16,384 (H200) beside a pass that leaves most of each SM's issue slots idle
// (one block of 8 warps, latency-bound; docs/CHUNKED.md 8.16).
template <int D, int C, int MT, int NW, int FR>
__device__ __forceinline__ void folded_readout(const StateParams& p, const float* smem, float* fold, int stages, int c_begin,
                                               int c_end, int n_chunks, float* __restrict__ norm_part, int b, int h, int bh, int grp) {
  using Sh = DmmaPassShape<D, C, MT, NW, FR>;
  constexpr int G = Sh::G, NRW = Sh::NRW, NTR = Sh::NTR, EC = D / 32, LA = Sh::LA, LK = Sh::LK, LQ = Sh::LQ, LSF = Sh::LSF,
                LRF = Sh::LRF, NG = D / G;
  static_assert(C % 32 == 0 && D % 32 == 0 && G % 2 == 0, "32-step batches, whole lanes, row pairs");
  const int rtid = threadIdx.x - 32 * NW, rw = rtid / 32, lane = rtid % 32, m0 = 2 * rw, i0 = grp * G;
  const float* Sf = fold;
  const float* Rf = Sf + 2 * G * LSF;
  float* NPs = fold + 2 * G * LSF + 2 * G * LRF;
  const bool ratio = p.in.den != nullptr;
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;
  for (int c = c_begin; c <= c_end; ++c) {
    __syncthreads();  // the pass warps' ring barrier of chunk c (c < c_end), or their last barrier (c = c_end)
    if (c == c_begin) continue;
    const int cr = c - 1;  // the chunk read out
    const float* As = smem + static_cast<std::size_t>((cr - c_begin) % stages) * Sh::buf_floats;
    const float* Qs = As + C * (LA + LK + G);
    const float* Ds = Qs + C * LQ;
    const float* Sc = Sf + (cr & 1) * G * LSF;
    const float* Rc = Rf + (cr & 1) * G * LRF;
    const int t0 = cr * C, cc = min(C, p.T - t0);
    float s[2][EC];
#pragma unroll
    for (int k = 0; k < 2; ++k) lds<EC>(s[k], Sc + (m0 + k) * LSF + EC * lane);
#pragma unroll 1
    for (int tb = 0; tb < C; tb += 32) {
      float yv[64], nv[32];
#pragma unroll
      for (int u = 0; u < 32; ++u) {
        const int t = tb + u;
        float a[EC], q[EC];
        lds<EC>(a, As + t * LA + EC * lane);
        lds<EC>(q, Qs + t * LQ + EC * lane);
        float nk[2];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const float rv = Rc[(m0 + k) * LRF + t];  // zero past cc (the pass's r)
          float y = 0.0f, n = 0.0f;
#pragma unroll
          for (int e = 0; e < EC; ++e) {
            s[k][e] = core::state_entry(s[k][e], rv, a[e]);
            y = fmaf(s[k][e], q[e], y);
            n = fmaf(s[k][e], s[k][e], n);
          }
          yv[2 * u + k] = y;
          nk[k] = n;
        }
        nv[u] = nk[0] + nk[1];
      }
      reduce_scatter<64, 16>(yv, lane);  // lane l: step tb + l, rows m0 and m0 + 1
      reduce_scatter<32, 16>(nv, lane);  // lane l: step tb + l
      const int t = tb + lane;
      if (t < cc) {
        const std::size_t gi = row_index(b, t0 + t, h, p.T, p.H) * D + i0 + m0;
        const float o0 = ratio ? yv[0] / Ds[t] : yv[0], o1 = ratio ? yv[1] / Ds[t] : yv[1];
        if constexpr (FR == 2) {
          const std::uint32_t pair = static_cast<std::uint32_t>(core::bf16_bits_rne(o0)) |
                                     (static_cast<std::uint32_t>(core::bf16_bits_rne(o1)) << 16);
          *reinterpret_cast<std::uint32_t*>(static_cast<std::uint16_t*>(p.o) + gi) = pair;
        } else {
          *reinterpret_cast<float2*>(static_cast<float*>(p.o) + gi) = make_float2(o0, o1);
        }
      }
      NPs[t * NRW + rw] = nv[0];
    }
    asm volatile("bar.sync 2, %0;" ::"n"(NTR) : "memory");  // the readout warps' partials of the chunk
    for (int t = rtid; t < cc; t += NTR) {
      const float* x = NPs + t * NRW;
      float acc = x[0];
#pragma unroll
      for (int w = 1; w < NRW; ++w) acc += x[w];
      norm_part[(static_cast<std::size_t>(bh) * nc_steps + t0 + t) * NG + grp] = acc;
    }
  }
}

// sc_out: the states entering the chunks (for the readout kernel), or with FR the
// norm partials [b h][step][block] (folded_readout).
template <int D, int C, int MT, int NW = 4, int FR = 0>
__global__ void __launch_bounds__(DmmaPassShape<D, C, MT, NW, FR>::NTALL, 1)
    state_pass_dmma_kernel(StateParams p, int n_chunks, int c_begin, int c_end, int stages, const float* __restrict__ kt_in,
                           float* __restrict__ vt_r, float* __restrict__ sc_out) {
  using Sh = DmmaPassShape<D, C, MT, NW, FR>;
  constexpr int G = Sh::G, NT = Sh::NT, LA = Sh::LA, LK = Sh::LK, LS = Sh::LS, LR = Sh::LR, TNR = Sh::TNR, TNS = Sh::TNS;
  constexpr int KS = Sh::KS, KB = D / 4 / KS;  // r's k slices, k-blocks per slice
  constexpr int NG = D / G;  // row blocks of a head
  extern __shared__ __align__(16) float smem[];
  double* Sd = reinterpret_cast<double*>(smem + stages * Sh::buf_floats);  // S_c of the block's rows, [G][LS]
  double* Rd = Sd + G * LS;                                                 // r of the block's rows, [G][LR]
  double* Pd = Rd + G * LR;  // r's partial sums of slices 1..KS-1, [KS-1][G][LR]
  float* fold = reinterpret_cast<float*>(Rd + G * LR * KS);  // FR: S_c and r as floats [2][G][LSF], [2][G][LRF], norm partials

  const int T = p.T, H = p.H;
  const int bh = blockIdx.x / NG, grp = blockIdx.x % NG;
  const int b = bh / H, h = bh % H;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
  const int ks = warp / (NW / KS), wt = warp % (NW / KS);  // r's k slice, and the warp's step tiles within it
  const int i0 = grp * G;  // the block's first row within S
  const std::size_t nc_steps = static_cast<std::size_t>(n_chunks) * C;
  if constexpr (FR != 0) {
    if (warp >= NW) {
      folded_readout<D, C, MT, NW, FR>(p, smem, fold, stages, c_begin, c_end, n_chunks, sc_out, b, h, bh, grp);
      return;
    }
  }
  // The pass warps' own barrier: the block's (barrier 0) without a folded readout, else
  // barrier 1 of the NT pass threads (the readout warps meet them at the ring's only).
  auto pass_sync = [] {
    if constexpr (FR != 0) {
      asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");
    } else {
      __syncthreads();
    }
  };

  // The loads (v5's, with a^ at stride LA).
  ChunkLoader<D, C, G, NT, LA, LK, Sh::LQ> load_chunk(smem, Sh::buf_floats, p, kt_in, vt_r, b, h, bh, i0, nc_steps, c_begin, c_end);

  // The state's fragments: s[mt][j][e] = S(i0 + 8 mt + g, 8 (warp TNS + j) + 2 q + e),
  // as doubles for the products and as the floats they hold (sf) for the stores.
  double s[MT][TNS][2];
  float sf[MT][TNS][2];
  float* S_head = p.S + static_cast<std::size_t>(bh) * D * D;
  // f(mt, j, e, entry of S_head) for each of the thread's entries of S.
  auto each_entry = [&](auto f) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < TNS; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) f(mt, j, e, (i0 + 8 * mt + g) * D + 8 * (warp * TNS + j) + 2 * q + e);
  };
  each_entry([&](int mt, int j, int e, int at) {
    sf[mt][j][e] = c_begin == 0 ? 0.0f : S_head[at];
    s[mt][j][e] = static_cast<double>(sf[mt][j][e]);
  });
  auto state_to_shared = [&] {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < TNS; ++j)
        *reinterpret_cast<double2*>(Sd + (8 * mt + g) * LS + 8 * (warp * TNS + j) + 2 * q) = make_double2(s[mt][j][0], s[mt][j][1]);
  };
  state_to_shared();

  ChunkRing ring(stages, c_begin, load_chunk, FR != 0 ? 1 : 0);
  for (int c = c_begin; c < c_end; ++c) {
    // Chunk c staged, S_c in Sd, every warp done with chunk c - 1 (Rd free).
    const float* As = smem + ring.advance(c, load_chunk) * Sh::buf_floats;
    const float* Ks = As + C * LA;
    const float* Vs = Ks + C * LK;
    const int t0 = c * C, cc = min(C, T - t0);

    // S_c for the readout (float values, exact): to scratch, or with FR to shared memory.
    if constexpr (FR != 0) {
      float* sc = fold + (c & 1) * G * Sh::LSF;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < TNS; ++j)
          *reinterpret_cast<float2*>(sc + (8 * mt + g) * Sh::LSF + 8 * (warp * TNS + j) + 2 * q) = make_float2(sf[mt][j][0], sf[mt][j][1]);
    } else {
      float* sc = sc_out + (static_cast<std::size_t>(bh) * n_chunks + c) * D * D;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < TNS; ++j)
          *reinterpret_cast<float2*>(sc + (i0 + 8 * mt + g) * D + 8 * (warp * TNS + j) + 2 * q) = make_float2(sf[mt][j][0], sf[mt][j][1]);
    }

    // The B fragments of both products depend only on the staged chunk. r's (bk) are
    // converted to double here; the update's (ba) and r's vt values after r's DMMAs are
    // issued, and pinned there (pin_issued) before the barrier: left to the compiler, their
    // float-to-double conversions (a quarter-rate pipe) sank to their uses after the
    // barriers, onto the chain through S (SASS, 2026-12-06).
    double bk[KB][TNR], ba[C / 4][TNS];
#pragma unroll
    for (int kb = 0; kb < KB; ++kb)
#pragma unroll
      for (int j = 0; j < TNR; ++j) bk[kb][j] = static_cast<double>(Ks[(8 * (wt * TNR + j) + g) * LK + 4 * (ks * KB + kb) + q]);

    // r = Vt - S_c Kt^T for the warp's step tiles: rows x steps, k over the warp's
    // slice of S's columns, four DMMA chains (k-blocks by kb mod 4) per tile, summed
    // in double; then the slices' sums in slice order (slice 0's warps finish r).
    {
      double acc[MT][TNR][4][2] = {};
#pragma unroll
      for (int kb = 0; kb < KB; ++kb) {
        double af[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) af[mt] = Sd[(8 * mt + g) * LS + 4 * (ks * KB + kb) + q];
#pragma unroll
        for (int j = 0; j < TNR; ++j)
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) dmma_884(acc[mt][j][kb & 3], af[mt], bk[kb][j]);
      }
      // While the DMMAs run: the update's B fragments and the vt values that complete r (ks = 0).
      double vtd[MT][TNR][2];
#pragma unroll
      for (int kb = 0; kb < C / 4; ++kb)
#pragma unroll
        for (int j = 0; j < TNS; ++j) pin_issued(ba[kb][j] = static_cast<double>(As[(4 * kb + q) * LA + 8 * (warp * TNS + j) + g]));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < TNR; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (ks == 0) pin_issued(vtd[mt][j][e] = static_cast<double>(Vs[(8 * (wt * TNR + j) + 2 * q + e) * G + 8 * mt + g]));
      double dot[MT][TNR][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < TNR; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) dot[mt][j][e] = (acc[mt][j][0][e] + acc[mt][j][1][e]) + (acc[mt][j][2][e] + acc[mt][j][3][e]);
      if constexpr (KS > 1) {
        if (ks > 0)
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int j = 0; j < TNR; ++j)
              *reinterpret_cast<double2*>(Pd + ((ks - 1) * G + 8 * mt + g) * LR + 8 * (wt * TNR + j) + 2 * q) =
                  make_double2(dot[mt][j][0], dot[mt][j][1]);
        pass_sync();  // every slice's partial sums
      }
      if (ks == 0)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = 0; j < TNR; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int m = 8 * mt + g, n = 8 * (wt * TNR + j) + 2 * q + e;
              double d = dot[mt][j][e];
#pragma unroll
              for (int k = 1; k < KS; ++k) d += Pd[((k - 1) * G + m) * LR + n];
              const float r = __double2float_rn(vtd[mt][j][e] - d);  // zero steps past cc: r = 0
              Rd[m * LR + n] = static_cast<double>(r);
              if constexpr (FR != 0) {
                fold[2 * G * Sh::LSF + (c & 1) * G * Sh::LRF + m * Sh::LRF + n] = r;
              } else if (n < cc) {
                vt_r[(static_cast<std::size_t>(bh) * nc_steps + t0 + n) * D + i0 + m] = r;
              }
            }
    }
    pass_sync();  // r of every step tile before the update

    // S_c+1 = S_c + R Ah for the warp's column tiles: rows x columns, k over the
    // chunk's steps, four chains (S_c plus the k-blocks kb = 0 mod 4; the others by
    // kb mod 4 from zero), summed in double, then one rounding to float.
    {
      double part[MT][TNS][3][2] = {};
#pragma unroll
      for (int kb = 0; kb < C / 4; ++kb) {
        double af[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) af[mt] = Rd[(8 * mt + g) * LR + 4 * kb + q];
#pragma unroll
        for (int j = 0; j < TNS; ++j)
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) dmma_884((kb & 3) ? part[mt][j][(kb & 3) - 1] : s[mt][j], af[mt], ba[kb][j]);
      }
      each_entry([&](int mt, int j, int e, int) {
        sf[mt][j][e] = __double2float_rn((s[mt][j][e] + part[mt][j][0][e]) + (part[mt][j][1][e] + part[mt][j][2][e]));
        s[mt][j][e] = static_cast<double>(sf[mt][j][e]);
      });
    }
    state_to_shared();  // S_c+1 for the next chunk's r (read after the ring's barrier)
  }
  if constexpr (FR != 0) __syncthreads();  // the readout warps' last chunk
  each_entry([&](int mt, int j, int e, int at) { S_head[at] = sf[mt][j][e]; });
}
