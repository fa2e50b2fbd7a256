// Stage 1 of the chunk-parallel ("scan") form, the gate (scan_gate.cu;
// docs/CHUNKED.md section 8; maths: reference/include/vla/reference/chunked_scan.hpp),
// and the device workspace of a whole scan launch (stage 1 + stage 2,
// scan_stages.cuh), which the launcher (scan_run.cu) and the benchmark share.
//
// Kernels, in order (one stream-ordered unit on the launch's stream; no host
// synchronisation; scan_final_A on a side stream beside scan_gate
// where GateParams names one). The chunks are grouped into segments of
// ref::scan_segment_chunks(C, B H, T) chunks (256 or 512 steps by the shape; docs/CHUNKED.md 8.10, 8.36), one
// factorisation of M each:
//   scan_prep   grid (segment, head), the segment's chunks in order, the next
//               chunk's inputs fetched by cp.async meanwhile: the features of every
//               step in float (k^, u, phi(q)), written out; each chunk's normaliser
//               sum sigma_c (float, steps in order); the segment's Gram matrix sum
//               U U^T in double (FP64 tensor cores, each entry's sum over the steps
//               in order) into slot s + 1 of the M buffer (lower triangle, packed);
//               segment 0 writes slot 0 = lambda0 I.
//   scan_prefix grid over (head, packed entry): slot s += slot s - 1, segments in
//               order (slot s is then M at segment s's first chunk, slot NS is
//               M_N); and over (head, d): n_c = sum_{j<c} sigma_j (float, j in
//               order) in place of sigma.
//   scan_gate   grid (segment, head), the segments in parallel, a segment's chunks
//               in order: at the first, L D L^T of M_c (square-root-free
//               Cholesky, double), P = M_c^{-1} U and AK = M_c^{-1} K (one solve
//               when u = k^) and A_c = M_c^{-1}; at the later ones P = A_c U,
//               AK = A_c K with the carried A_c; then the in-chunk Woodbury (G =
//               U^T P, L D L^T of I + G with the sm_delta floor, Z, Y, the causal
//               W = AK - Z Y) in double, a^ = W / ||W|| rounded to float once; the
//               carry A_{c+1} = A_c - (Z D^{-1}) Z^T.
//   (scan_den, removed by the den split, docs/CHUNKED.md 8.34: scan_prep writes
//               den's in-chunk part L_t . phi(q_t), the readout adds n_c . phi(q_t)
//               and applies readout_den; the n scan runs in scan_seg_inverse's grid.)
//   scan_final_A grid (head): A = M_N^{-1} from the L D L^T of M_N, rounded to float.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "scan_stages.cuh"
#include "vla/core/spec.hpp"
#include "vla/reference/scan_gate_form.hpp"
#include "vla/gpu/chunked_launch.hpp"
#include "vla/gpu/fused.hpp"

namespace vla::gpu::scan {

struct GateParams {
  int B = 0, T = 0, H = 0, D = 0, C = 0;
  bool bf16_io = false;                               // q, k, u are bf16 bit patterns, else float
  const void* q = nullptr;                            // [B, T, H, D] input type
  const void* k = nullptr;
  const void* u = nullptr;                            // null: u_t = k^_t (then scaled under u_unit_scaled)
  bool elu1 = true, normalize_key = true, normalize_gate = true, ratio = true, u_unit_scaled = false;
  double lambda0 = 1.0, delta_floor = 0.0, den_floor = 0.0;
  float* A = nullptr;                                 // [B, H, D, D] final A = M_N^{-1}
  GateOut out;                                        // khat, phiq, gate (and den under the ratio readout)
  void* scratch = nullptr;                            // gate_scratch_bytes(...) bytes
  // Where scan_final_A runs beside scan_gate (the Woodbury form): a non-blocking stream and
  // two events (fork after scan_prefix, join before the launch's end), e.g. the Workspace's; null:
  // on the launch's stream after the gates (gate_params' choice beside the float steps, 8.27).
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  // Probes of the benchmark's breakdown (the launchers leave them): the kernels
  // launch_gate runs (bit 0 scan_prep, 1 scan_prefix, 2 scan_gate, 3 scan_final_A,
  // 4 unused since the den split removed scan_den) and the phase after which scan_gate goes on to a segment's next
  // chunk (0: none; 1 loads with, at a segment's first chunk, L D L^T of M_c and
  // the solves, at the later ones the product with A_c; 2 G, 3 L D L^T of I + G,
  // 4 Z, 5 Y, 6 W, 7 the gates, i.e. all but the carry of A). With either set the
  // outputs are incomplete.
  unsigned kernels = 0x3fu;  // bit 5: scan_seg_inverse (the per-step form's A at each segment's start)
  int stop_after = 0;        // the Woodbury kernel's phases only
  // The gate stage's form: the Woodbury chunks (scan_gate, 8.10-8.15) or per step
  // (scan_seg_inverse + scan_steps, 8.16); the launchers take the build's
  // ref::kKernelScanGateForm, the benchmark times both.
  ref::ScanGateForm form = ref::kKernelScanGateForm;
  // The look-ahead's steps in float, one warp a segment (docs/CHUNKED.md 8.23): gate_params sets it
  // as ref::kernel_scan_steps_float (chunked-scan-bf16, u = k^); acts only with the look-ahead form.
  bool steps_float = false;
  // Where the float steps keep a chunk's w rows (steps_warp_kernel's WOVER; the same bits either way):
  // automatic is the launcher's choice by the device's occupancy (scan_gate.cu steps_w_over_u).
  ScanStepsLayout steps_layout = ScanStepsLayout::automatic;
  // The state stage's prep done by the steps kernel in each chunk's epilogue (8.18; where
  // gate_folds_state_prep): v ([B, T, H, D], bf16 bit patterns under bf16_io, else float)
  // and the state scratch's Kt and Vt ([B H, ceil(T / C) C, D] floats, scan_state.cuh
  // state_prep_targets). Null kt_out: not folded (the state stage's prep kernel runs).
  const void* v = nullptr;
  float* kt_out = nullptr;
  float* vt_out = nullptr;
};

// Whether the steps kernel can do the state stage's prep for this shape and form:
// the per-step form, u = k^ (no u given, not unit-scaled), C = 32 (the steps
// kernel's chunk), D >= 32 (shared memory for the epilogue).
bool gate_folds_state_prep(int D, int C, bool u_separate, ref::ScanGateForm form);
// Whether launch_scan folds it: not by default (measured slower, docs/CHUNKED.md 8.18);
// a build with -DVLA_SCAN_FOLD_STATE_PREP=1 folds wherever gate_folds_state_prep holds.
bool gate_folds_state_prep_by_default(int D, int C, bool u_separate, ref::ScanGateForm form);
// Stage 1 then stage 2 with the state prep in the steps kernel (8.18; requires
// gate_folds_state_prep): g and st as gate_params and state_params give them.
void launch_folded(GateParams g, StateParams st, const void* v, cudaStream_t s);

// The gate's scratch: the M buffer (B H (NS + 1) D (D + 1) / 2 doubles, NS segments), the
// normaliser sums (B H N D floats) and, where u is not k^ (u given or unit-scaled),
// u ([B, T, H, D] floats).
std::size_t gate_scratch_bytes(int B, int T, int H, int D, int C, bool u_separate);
// The unit roundoff the segment starts' M is factorised in (double), for core::start_factor_refused
// in the kernels and for the refusal's message on the host.
__host__ __device__ constexpr double start_factor_unit_roundoff() { return 0x1p-53; }
// The gate's refusal word in a scratch of this shape: 0 after a launch whose segment starts were
// all factorised within double's reach, else the float bits of the largest condition bound that
// was not (docs/CHUNKED.md 8.27). scan_prefix resets it; read it after the launch completes.
const unsigned* gate_start_status(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate);
// n_c in the gate scratch ([B H][N][D] floats after scan_prefix; GateOut::nsum).
const float* gate_nsum(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate);
// The per-step forms' segment starts in the gate scratch after a launch: M at segment s's start in slot s of
// [B H][NS + 1][D (D + 1) / 2] doubles (packed lower triangle, row by row), and A = M^{-1} from scan_seg_inverse in
// [B H][NS][D][D] doubles; NS segments.
struct SegmentStarts {
  const double* M = nullptr;
  const double* A = nullptr;
  int segments = 0;
};
SegmentStarts gate_segment_starts(const void* gate_scratch, int B, int T, int H, int D, int C, bool u_separate);
// Throws core::StreamRefused (ref::scan_start_refusal) where a completed launch's status word is set.
void check_gate_start_status(const unsigned* status, int D, const std::string& who);
// D in {16, 32, 64}, C in {32, 64}.
bool gate_supported(int D, int C);
// Launches stage 1 on `s` (five kernels; g.side: see GateParams); checks every launch
// and CUDA call. q, k and u must be 16-byte aligned (scan_prep copies their rows by
// cp.async; cudaMalloc's pointers are).
void launch_gate(const GateParams& g, cudaStream_t s);

// The device buffers between and inside the stages for one shape, allocated
// once (the benchmark reuses one across repeats), and the gate's side stream
// with its fork and join events (created once).
class Workspace {
 public:
  Workspace(int B, int T, int H, int D, int C, bool u_separate, bool ratio);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  GateOut out;
  void* gate_scratch = nullptr;
  void* state_scratch = nullptr;
  cudaStream_t side = nullptr;  // non-blocking: no implicit order with the legacy default stream
  cudaEvent_t fork = nullptr, join = nullptr;
  const unsigned* start_status = nullptr;  // gate_start_status of gate_scratch
};

// The stages' parameters for the I/O of a fused-style parameter block (device
// pointers q, k, v, u in; o, S, A, state_norm out; options from make_params)
// with the workspace's buffers; bf16_io: q, k, v, u and o are bf16 bit patterns.
GateParams gate_params(const FusedParams& p, bool bf16_io, int C, const Workspace& w);
StateParams state_params(const FusedParams& p, bool bf16_io, int C, const Workspace& w);
// Stage 1 then stage 2 on `s` (no host synchronisation). Throws
// std::invalid_argument for what the scan form does not run (ridge steps, a
// pivot floor above 1, an unsupported (D, C)).
void launch_scan(const FusedParams& p, bool bf16_io, int C, const Workspace& w, cudaStream_t s);

}  // namespace vla::gpu::scan
