// How the scan form's state stage forms a chunk's residuals and the state it hands
// on (docs/CHUNKED.md 8.13), and which the kernels use at each D, so that the CPU
// twin (gpu::run_scan_twin) and the kernels' launcher (gpu/cuda/scan_state.cu
// state_config) make one choice. No Eigen: the CUDA launcher includes it.
#pragma once

namespace vla::ref {

enum class ScanStatePolicy {
  chunk_products,  // R = fl(Vt - S_c Kt) and S_c+1 = fl(S_c + R Ah^T), each summed in GateScalar
  per_step,        // R = Vt - S_c Kt in Scalar, S_c+1 from the chunk's per-step fmas in Scalar
  // As chunk_products, with R one chunk ahead (docs/CHUNKED.md 8.21, 8.24): R_c = fl(Vt_c - S_c-1 Kt_c - R_c-1 X_c-1),
  // X_c-1 = fl(Ah_c-1^T Kt_c), so that a chunk's three products need only R_c-1 and S_c-1 (the v7 pass).
  lookahead,
};

// The kernels' pass: v6 (chunk products on FP64 tensor cores) at D >= 32, v4 (per-step float
// fmas) at D = 16. A build with -DVLA_SCAN_PASS_V7 takes v7 (look-ahead) where it is built, D in
// {32, 64} with C <= D: correct on the device, measured slower than v6 with a ring of 3
// (reports/gpu/2026-12-05-h100-steps-float-pass-v7.md, docs/CHUNKED.md 8.24).
constexpr ScanStatePolicy scan_state_policy(int D, int C) {
  if (D < 32) return ScanStatePolicy::per_step;
#if defined(VLA_SCAN_PASS_V7)
  return D <= 64 && D % C == 0 ? ScanStatePolicy::lookahead : ScanStatePolicy::chunk_products;
#else
  (void)C;
  return ScanStatePolicy::chunk_products;
#endif
}

}  // namespace vla::ref
