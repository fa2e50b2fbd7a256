// The scan form's segment length (docs/CHUNKED.md 8.10, 8.36): the chunks that one
// factorisation of M_c serves, A_c being carried through the rest of the segment.
// A function of the launch's shape alone (B H heads of T steps), never of the GPU,
// so that the CPU twin (ref::run_chunked_scan, gpu::run_scan_twin) follows the
// kernels (gpu/cuda/scan_gate.cu) exactly. No Eigen: the CUDA kernels use it.
#pragma once

#include "vla/core/hd.hpp"

namespace vla::ref {

// Segments of 256 steps where they number at most 1,024 (B H ceil(T / 256) <= 1,024), else 512. Why: the float
// steps kernel runs a segment per warp, eight an SM, so 1,024 segments are one wave on the 132 SMs of an H100 or
// H200, where two warps a scheduler halve the chain for 1.3 times the time a step (0.29 against 0.37 ms at B = 1,
// H = 16, T = 16,384); more segments than a wave make the steps slower than 512-step segments' (measured at
// T = 65,536 and at B = 8, H = 128, docs/CHUNKED.md 8.35).
constexpr int kScanShortSegmentSteps = 256, kScanLongSegmentSteps = 512;
constexpr long long kScanShortSegmentsMax = 1024;
VLA_HD constexpr int scan_segment_steps(long long BH, long long T) {
#ifdef VLA_SCAN_SEGMENT_STEPS  // an experiment's build (gpu/standalone: -DVLA_SCAN_SEGMENT_STEPS=L), never the shipped one
  (void)BH, (void)T;
  return VLA_SCAN_SEGMENT_STEPS;
#else
  return BH * ((T + kScanShortSegmentSteps - 1) / kScanShortSegmentSteps) <= kScanShortSegmentsMax ? kScanShortSegmentSteps
                                                                                                     : kScanLongSegmentSteps;
#endif
}
// Chunks of C steps a segment (at least one).
VLA_HD constexpr int scan_segment_chunks(int C, long long BH, long long T) {
  const int L = scan_segment_steps(BH, T);
  return C >= L ? 1 : L / (C < 1 ? 1 : C);
}

}  // namespace vla::ref
