// Stage 2 of the chunk-parallel ("scan") form, the state (scan_state.cu), beyond
// the interface of scan_stages.cuh: the choice of how many rows of S one block
// of the sequential pass holds, exposed so that the benchmark
// (bench/gpu/scan_state_check.cu) can time each choice.
#pragma once

#include "scan_stages.cuh"

namespace vla::gpu::scan {

// Rows of S per block of the sequential pass that launch_state uses for this
// shape (8, or 16 for D = 64 when the 8-row blocks would fill the GPU many
// times over: half the blocks read the chunk's gates, features and keys).
int state_rows_per_block(int B, int H, int D);
// launch_state with an explicit rows-per-block choice: 8 (every D), or 16 (D = 64).
// Same arithmetic in the same order per element except the sum of a row's
// partial dot products (16 slices of 4 columns vs 8 of 8): outputs agree to
// rounding, not bit for bit.
void launch_state_rows(const StateParams& p, cudaStream_t s, int rows_per_block);

}  // namespace vla::gpu::scan
