// Stage 2 of the chunk-parallel ("scan") form, the state (scan_state.cu), beyond
// the interface of scan_stages.cuh: the sequential pass's block shape and the
// stage's three kernels one at a time, exposed so that the benchmark
// (bench/gpu/scan_state_check.cu) can time each choice and each kernel.
#pragma once

#include "scan_stages.cuh"

namespace vla::gpu::scan {

// The sequential pass's block shape: a thread holds `rows` rows x `elems`
// consecutive columns of S, blocks of `group` rows (the D / elems threads of a
// row group are lanes of one warp), a ring of `stages` chunk buffers (2 to 4;
// fewer where shared memory is short). Built: {4, E0, 8} and {1, E0, 8} for every
// D (E0 = max(D/32, 1)); for D = 64 also {2, 2, 8}, {1, 4, 8}, {1, 2, 4} and
// {2, 2, 4}. Same arithmetic in the same order per entry of S; the sums of r's
// partial dot products (D / elems slices, a binary tree of lanes) differ between
// tiles, so outputs agree to rounding, not bit for bit. The readout's tile is
// fixed (4 rows x D/8 columns per thread).
// `segments`: the pass runs as that many launches over consecutive chunk ranges
// (0 or 1: one launch), and launch_state_config overlaps the readout of a segment
// and the prep of later ones with the pass of the next (streams and events). The
// values do not depend on `stages` or `segments`.
struct StateConfig {
  int rows = 2;
  int elems = 2;
  int group = 8;
  int stages = 2;
  int segments = 1;
  int probe = 0;  // timing only (wrong values): 1, 2, 3 leave r's dot products, the steps, both out of the pass
  // The v5 pass (scan_state.cu state_pass_lanedot_kernel, D >= 32): r's dot products
  // whole in a lane, `rows` 2 or 4 rows x D/32 columns per thread in blocks of
  // 4 `rows` rows (`elems` and `group` unused); false: the v4 pass of the tile above.
  // The S_ij FMAs are the same in the same order; r's sums differ in order from
  // v4's, so outputs agree to rounding, not bit for bit.
  bool lanedot = false;
  // The v6 pass (scan_pass_dmma.cuh, D >= 32): r and each chunk's update as FP64
  // tensor-core products, `dmma` (1 or 2) tiles of 8 rows per block; 0: v4 or v5 as
  // above. The state between chunks is the same float quantity; inside a chunk the
  // sums are in double, rounded once (outputs agree with v4/v5 to rounding).
  int dmma = 0;
  int dmma_warps = 4;  // warps of a v6 block: 4, or 8 at D >= 64 (r's product then split over S's columns at C = 32)
  // v6 only: the readout folded into the pass (scan_pass_dmma.cuh folded_readout: G/2 more
  // warps a block replay each chunk one chunk behind the pass from S_c and r in shared
  // memory; no S_c or r through DRAM, no readout kernel, a small kernel for the norms'
  // cross-block sums). Refused where its ring does not fit (D = 128 with C = 64).
  // The same S_t bit for bit; y's and the norm's sums in another order than the
  // readout kernel's (outputs agree to rounding). Not launch_state's choice: measured
  // slower (docs/CHUNKED.md 8.17). Its ring: stages >= 3 (chunk c - 1 kept), 4 at C = 32.
  bool fused_readout = false;
  // The v7 pass (scan_pass_look.cuh, D in {32, 64}, C <= D): R one chunk ahead
  // (ref::ScanStatePolicy::lookahead), both of a chunk's products side by side, one
  // barrier a chunk; its X_c from a small kernel after the prep. launch_state's
  // pass wherever ref::scan_state_policy(D, C) says lookahead (the scratch holds X
  // only there). One segment; other fields unused.
  bool lookahead = false;
};
// The block shape for this shape with the v5 pass (lanedot; where built, D >= 32)
// or with the v4 pass, as launch_state would choose it for that pass.
StateConfig state_config_pass(int B, int H, int D, int C, bool lanedot);
// What launch_state uses for this shape: v6 (DMMA) at D >= 32, v4 at D = 16.
StateConfig state_config(int B, int H, int D, int C);
// The number of pass segments launch_state_config uses for T steps in chunks of C.
int state_segments(int T, int C, StateConfig cfg);

// The stage's kernels: prep (T, Kt = K T^-1, Vt = V T^-1 to scratch), pass (the
// sequential pass over chunks: R over Vt, the state entering each chunk, the
// final S), readout (parallel over chunks: o and ||S_t||_F).
inline constexpr unsigned kPrep = 1, kPass = 2, kReadout = 4;
// launch_state with an explicit block shape, running the kernels named in
// `parts` (all three: launch_state's work, overlapped when cfg has several
// segments; fewer: those kernels in sequence on `s`). The pass needs the scratch of an
// earlier prep of the same inputs and overwrites its Vt (with R), so a second
// pass without a prep computes garbage (timing only); the readout needs that of
// an earlier pass.
void launch_state_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts = kPrep | kPass | kReadout);

}  // namespace vla::gpu::scan
