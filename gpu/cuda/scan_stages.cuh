// The chunk-parallel ("scan") form of the chunked VLA forward (docs/CHUNKED.md,
// section 8; reference: reference/include/vla/reference/chunked_scan.hpp) as two
// stages, and what passes between them.
//
// Stage 1, the gate (scan_gate.cu): the gate depends on the carried A only
// through M_c = A_c^{-1} = lambda0 I + sum_{j<c} U_j U_j^T, a prefix sum over
// chunks. Every M_c comes from a scan of the chunks' Gram matrices (double), and
// each chunk's gates from a Cholesky factorisation of its own M_c plus the
// in-chunk Woodbury form (double), in parallel over chunks: no sequential chain
// of gates. It also writes the features every later stage needs and the ratio
// denominators (n_t from a prefix sum of phi(k) over chunks).
//
// Stage 2, the state (scan_state.cu): given the gates, S's rows evolve
// independently (S_t = S_{t-1} + r_t a^_t^T, and r of a whole chunk comes from
// the state entering it: R = V T^{-1} - S_c K T^{-1}); S carried sequentially
// over chunks, parallel over (b, h, group of rows); the readout and norms of
// every step then in parallel over chunks, from the S_c the pass stores. Float
// arithmetic.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace vla::gpu::scan {

// Written by stage 1, read by stage 2; [B, T, H, D] float unless said.
struct GateOut {
  float* khat = nullptr;  // k^_t (phi(k_t), unit-normalised unless --normalize none|gate)
  float* phiq = nullptr;  // phi(q_t)
  float* gate = nullptr;  // a^_t: w_t = A_t k^_t, unit-normalised unless --normalize none|key
  float* den = nullptr;   // [B, T, H] ratio denominators core::readout_den(n_t . phi(q_t), den_floor); null for the raw readout
  // The den split (docs/CHUNKED.md 8.34): scan_prep writes into den the in-chunk part
  // L_t . phi(q_t), L_t the chunk's phi(k) summed from zero through step t, and the readout adds
  // n_c . phi(q_t) from nsum ([B H][N][D], the gate scratch's exclusive prefix) before readout_den.
  const float* nsum = nullptr;
};

struct StateParams {
  int B = 0, T = 0, H = 0, D = 0, C = 0;  // Dk = Dv = D; chunks of C steps (the last may be shorter)
  bool bf16_io = false;                  // v and o are bf16 bit patterns, else float
  const void* v = nullptr;               // [B, T, H, D] input type
  GateOut in;                            // stage 1's outputs (read only here)
  void* o = nullptr;                     // [B, T, H, D] output type
  float* S = nullptr;                    // [B, H, D, D] final state
  float* state_norm = nullptr;           // [B, T, H] ||S_t||_F; null: not formed (o and S only; the readout skips the norm's fma)
  void* scratch = nullptr;               // device memory of state_scratch_bytes(...) bytes
  // Kt and Vt already in the scratch (the gate stage's steps kernel did the prep,
  // GateParams::kt_out): the stage runs the pass and the readout only.
  bool prep_done = false;
  double den_floor = 0.0;  // --den-floor (the den split's readout applies readout_den)
};

// Where the stage's prep writes Kt and Vt in p.scratch (for a stage-1 kernel that does the prep).
void state_prep_targets(const StateParams& p, float** kt, float** vt);

// Device scratch stage 2 needs for this shape (its per-chunk operands, norm
// partials, ...), so that the launcher allocates it once.
std::size_t state_scratch_bytes(int B, int T, int H, int D, int C);
// Launches stage 2 on `s`; checks every launch (VLA_CUDA_CHECK).
void launch_state(const StateParams& p, cudaStream_t s);

}  // namespace vla::gpu::scan
