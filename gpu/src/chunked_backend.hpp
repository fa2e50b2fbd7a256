// The CUDA backend of vla::impl::run_chunked (internal to gpu/).
#pragma once

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/inputs.hpp"

#include <vector>

namespace vla::gpu {
#if defined(VLA_HAVE_CUDA)
Outputs run_cuda_chunked(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C);
// The scan kinds (chunked-scan-fp32, chunked-scan-bf16: gpu/cuda/scan_run.cu), to
// which run_cuda_chunked hands them.
Outputs run_cuda_scan(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C);
// Stage 1 of the scan form alone: the gates a^ ([B, T, H, D] float), for the CUDA
// test's diagnosis of a failing run (gate or state stage).
std::vector<float> run_cuda_scan_gates(const HostInputs& in, const Options& opt, int C);
// Stage 1 alone, then its segment starts (scan_gate.cuh SegmentStarts, copied to the host): M of every segment's
// start (packed lower triangles, [B H][NS + 1] slots, the last unused) and scan_seg_inverse's A = M^{-1}
// ([B H][NS][D][D]), for the CUDA test of the inverse against ref::sweep_inverse.
struct ScanSegmentStarts {
  int segments = 0;
  std::vector<double> M, A;
};
ScanSegmentStarts run_cuda_scan_segment_starts(const HostInputs& in, const Options& opt, int C);
#endif
}  // namespace vla::gpu
