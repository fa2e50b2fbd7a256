// The message of the scan form's refusal where a segment's M = lambda0 I + sum u u^T is beyond the
// precision it is factorised in (core::start_factor_refused; docs/CHUNKED.md 8.27): one text for the
// twin (ref::scan_factor) and the kernels' launcher (gpu/cuda/scan_run.cu). No Eigen here, so that
// the CUDA host code includes it.
#pragma once

#include <cstdio>
#include <string>

namespace vla::ref {

// The refusal's message where a segment's M cannot start the scan form (the twin's and the kernels').
// n: M's order (D); unit_roundoff: the precision M is factorised in (double's 2^-53 in the kernels and the twins).
inline std::string scan_start_refusal(double condition_bound, int n, double unit_roundoff, const std::string& who) {
  char b[128];
  std::snprintf(b, sizeof b, "%.3g", condition_bound);
  std::string msg = "scan form (" + who + "): a segment starts from M = lambda0 I + sum u u^T whose condition number is at least " + b;
  std::snprintf(b, sizeof b, "%.3g", 1.0 / ((n + 1) * unit_roundoff));
  return msg + " (the largest diagonal entry of M over the smallest pivot of its L D L^T; inf: a pivot not positive), " +
         "not below 1 / ((D + 1) u) = " + b + " (u: the unit roundoff it is factorised in): its smallest pivot is inside the factorisation's rounding, " +
         "so the segment's A has no correct digit. " +
         "Typical cause: a given u much larger than sqrt(lambda0), or lambda0 tiny with keys that span few directions. " +
         "The recurrent (fused) kinds run this stream.";
}

}  // namespace vla::ref
