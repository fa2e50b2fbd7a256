// Stage 2 of the chunk-parallel ("scan") form, the state (scan_state.cu), beyond
// the interface of scan_stages.cuh: the pass's block shape and the stage's three
// kernels one at a time, exposed so that the benchmark
// (bench/gpu/scan_state_check.cu) can time each choice and each kernel.
#pragma once

#include "scan_stages.cuh"

namespace vla::gpu::scan {

// A block of the sequential pass holds `rows` rows of S, a thread `elems`
// consecutive entries of one row. Built: {8, D/16} for every D; for D = 64 also
// {8, 2} (256 threads) and {16, 8}. Same arithmetic in the same order per entry
// of S; the sums of a row's partial dot products (D/elems slices, in order)
// differ between shapes, so outputs agree to rounding, not bit for bit.
struct StateConfig {
  int rows = 8;
  int elems = 4;
};
// What launch_state uses for this shape.
StateConfig state_config(int B, int H, int D, int C);

// The stage's kernels: prep (T, Kt = K T^-1, Vt = V T^-1 to scratch), pass (the
// sequential pass over chunks: o, S, norm partials), norm (||S_t||_F).
inline constexpr unsigned kPrep = 1, kPass = 2, kNorm = 4;
// launch_state with an explicit block shape, running the kernels named in
// `parts` (all three: launch_state's work; pass alone needs the scratch of an
// earlier prep of the same inputs, norm alone that of an earlier pass).
void launch_state_config(const StateParams& p, cudaStream_t s, StateConfig cfg, unsigned parts = kPrep | kPass | kNorm);

}  // namespace vla::gpu::scan
