// How the scan form's state stage forms a chunk's residuals and the state it hands
// on (docs/CHUNKED.md 8.13), and which the kernels use at each D, so that the CPU
// twin (gpu::run_scan_twin) and the kernels' launcher (gpu/cuda/scan_state.cu
// state_config) make one choice. No Eigen: the CUDA launcher includes it.
#pragma once

namespace vla::ref {

enum class ScanStatePolicy {
  chunk_products,  // R = fl(Vt - S_c Kt) and S_c+1 = fl(S_c + R Ah^T), each summed in GateScalar
  per_step,        // R = Vt - S_c Kt in Scalar, S_c+1 from the chunk's per-step fmas in Scalar
  // As chunk_products, with R one chunk ahead (docs/CHUNKED.md 8.21): R_c = fl(Vt_c - S_c-1 Kt_c - R_c-1 X_c-1),
  // X_c-1 = fl(Ah_c-1^T Kt_c), so that a chunk's three products need only R_c-1 and S_c-1. No kernel yet.
  lookahead,
};

// The kernels' pass: v6 on FP64 tensor cores (chunk products) where it is built, D >= 32;
// v4 (per-step float fmas) at D = 16.
constexpr ScanStatePolicy scan_state_policy(int D) { return D >= 32 ? ScanStatePolicy::chunk_products : ScanStatePolicy::per_step; }

}  // namespace vla::ref
