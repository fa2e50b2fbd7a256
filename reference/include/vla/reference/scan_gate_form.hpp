// How the scan form's gate stage forms the gates of a segment (docs/CHUNKED.md
// 8.16), and which one the kernels use, so that the CPU twin (gpu::run_scan_twin)
// and the kernels (gpu/cuda/scan_gate.cu) make one choice. No Eigen: the CUDA
// side includes it.
#pragma once

namespace vla::ref {

enum class ScanGateForm {
  // A segment's first chunk from a factor of M_c, the later ones by the in-chunk
  // Woodbury form with A_c carried by Woodbury downdates (8.2, 8.10): the form the
  // issue derives, checked at high precision (proofs_check chunked-scan-derivation).
  woodbury,
  // A_c0 = M_c0^{-1} from the factor at the segment's first step, then the
  // recurrence's own Sherman-Morrison step per step (z = A u, delta, w = A_t k^,
  // A -= h z^T with h = z / delta) in GateScalar through the segment: the same A_t
  // in exact arithmetic, a chain of steps per segment instead of one of chunks.
  per_step,
  // per_step with a rank-1 look-ahead (8.19, scan_lookahead_gates): A carried one
  // update behind, y = A_{t-2} u_t formed beside that update, then z_t = y - g_{t-1}
  // (z_{t-1} . u_t) and u_t . z_t from dots of known vectors, so a step's product is
  // off the chain of its dependent reductions. The same A_t in exact arithmetic.
  lookahead,
};

// The kernels' gate stage. Shipped since 2026-12-05: per step (8.16), faster than
// the Woodbury chunks at every measured shape once its shared rows were padded
// (reports/gpu/2026-12-05-h100-gate-per-step-padded.md). A build with
// -DVLA_SCAN_GATE_FORM=woodbury (gpu/standalone) runs the Woodbury kernels
// (8.10-8.15) and its twin follows, as the segment length does.
// Since 2026-12-05 (evening, 8.19) the steps kernel looks ahead where u = k^ (a
// build with -DVLA_SCAN_GATE_FORM=per_step keeps the plain steps); where u is given
// or unit-scaled it runs the plain steps (kernel_scan_gate_form).
#if defined(VLA_SCAN_GATE_WOODBURY)
constexpr ScanGateForm kKernelScanGateForm = ScanGateForm::woodbury;
#elif defined(VLA_SCAN_GATE_PER_STEP)
constexpr ScanGateForm kKernelScanGateForm = ScanGateForm::per_step;
#else
constexpr ScanGateForm kKernelScanGateForm = ScanGateForm::lookahead;
#endif

// The form the kernels' gate stage takes for a run: the build's, except that the
// look-ahead is built for u = k^ only (u_separate: u given or unit-scaled).
constexpr ScanGateForm kernel_scan_gate_form(bool u_separate, ScanGateForm build = kKernelScanGateForm) {
  return build == ScanGateForm::lookahead && u_separate ? ScanGateForm::per_step : build;
}

// The scalar of the kernels' steps (the per-step forms): float for chunked-scan-bf16
// where the steps look ahead (u = k^), double otherwise (docs/CHUNKED.md 8.23). The
// bf16 kind's arithmetic is bf16 storage with float accumulation, as the fused bf16
// kernel's, whose A is float through every step; here A is float for at most a
// segment (512 steps) from a double M_c^{-1}. Float lets one warp hold a segment's A
// (D^2 / 32 registers a lane), so a step needs no block barrier. The twin
// (gpu::run_scan_twin) and the launchers (scan_gate.cu) both take this choice; a
// build with -DVLA_SCAN_STEPS_DOUBLE keeps double steps for every kind.
constexpr bool kernel_scan_steps_float(bool bf16_kind, bool u_separate, ScanGateForm build = kKernelScanGateForm) {
#if defined(VLA_SCAN_STEPS_DOUBLE)
  (void)bf16_kind, (void)u_separate, (void)build;
  return false;
#else
  return bf16_kind && kernel_scan_gate_form(u_separate, build) == ScanGateForm::lookahead;
#endif
}

}  // namespace vla::ref
