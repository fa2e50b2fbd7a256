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
};

// The kernels' gate stage. Shipped since 2026-12-05: per step (8.16), faster than
// the Woodbury chunks at every measured shape once its shared rows were padded
// (reports/gpu/2026-12-05-h100-gate-per-step-padded.md). A build with
// -DVLA_SCAN_GATE_FORM=woodbury (gpu/standalone) runs the Woodbury kernels
// (8.10-8.15) and its twin follows, as the segment length does.
#if defined(VLA_SCAN_GATE_WOODBURY)
constexpr ScanGateForm kKernelScanGateForm = ScanGateForm::woodbury;
#else
constexpr ScanGateForm kKernelScanGateForm = ScanGateForm::per_step;
#endif

}  // namespace vla::ref
