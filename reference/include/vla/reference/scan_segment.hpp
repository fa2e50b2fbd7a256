// The scan form's segment length (docs/CHUNKED.md 8.10): the chunks that one
// factorisation of M_c serves, A_c being carried through the rest of the segment
// by Woodbury downdates. A constant of the form, 512 steps whatever the GPU, so
// that the CPU twin (ref::run_chunked_scan, gpu::run_scan_twin) follows the
// kernels (gpu/cuda/scan_gate.cu) exactly. No Eigen: the CUDA kernels use it.
#pragma once

#include "vla/core/hd.hpp"

namespace vla::ref {

#ifdef VLA_SCAN_SEGMENT_STEPS  // an experiment's build (gpu/standalone: -DVLA_SCAN_SEGMENT_STEPS=L), never the shipped one
constexpr int kScanSegmentSteps = VLA_SCAN_SEGMENT_STEPS;
#else
constexpr int kScanSegmentSteps = 512;
#endif
static_assert(kScanSegmentSteps >= 1, "a segment holds at least one step");
VLA_HD constexpr int scan_segment_chunks(int C) { return C >= kScanSegmentSteps ? 1 : kScanSegmentSteps / (C < 1 ? 1 : C); }

}  // namespace vla::ref
