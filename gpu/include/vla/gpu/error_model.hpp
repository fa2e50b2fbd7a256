// The error model: is a candidate's output (a kernel, its twin, any
// implementation of the spec) as accurate as its precision policy allows?
// Derivation and the measurements behind the constants: docs/ERROR_MODEL.md.
//
// Per output element e of a group g (o: one output row (b, t, h); state_norm:
// the series of one head (b, h) over t; S, A: the final matrix of one head):
//
//   |cand_e - ref_e| <= u_out |ref_e| + K (b_g + sqrt(D) u_state s_g)
//
// ref  the reference (the recurrence at double or higher precision) fed exactly
//      the inputs the candidate consumed (rounded once to its input type);
// b_g  the largest error of the plain same-precision implementation
//      (vla::impl::run_plain: left-to-right dots, the policy's rounding points)
//      over the group: how much rounding at this precision costs on this stream
//      at this step, i.e. the stream's conditioning as the reference measures
//      it, with its growth in t and D. For a series (one value per step), the
//      largest relative baseline error over the steps so far times |ref_t|;
// s_g  the reference's largest magnitude over the group (series: |ref_t|);
// u_out unit roundoff of the element's storage type (float 2^-24, bf16 2^-8);
// u_state unit roundoff of the state's storage type: a floor for the rare
//      groups where the baseline happens to be exact;
// K    how far an honest reordering's worst error may exceed the baseline's.
// A non-finite candidate element where the reference is finite always fails.
#pragma once

#include <cstddef>
#include <string>

#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::accuracy {

struct Precision {
  std::string name;
  double u_out = 0;    // unit roundoff of o's storage type
  double u_state = 0;  // unit roundoff of S and A's storage type
  bool bf16_out = false;
};
Precision precision_of(impl::Kind kind);

struct ModelConstants {
  // docs/ERROR_MODEL.md: measured max ratio of an honest order's error to the
  // baseline's, times a safety factor of 2 (the calibration test re-measures it).
  double K = 8.0;
};

struct Worst {
  std::string quantity;  // "o", "state_norm", "S", "A"
  int b = -1, t = -1, h = -1;  // t = -1 for the final S and A
  int index = -1;              // element within the row / matrix
  double cand = 0, ref = 0, err = 0, tol = 0;
  double ratio = 0;  // err / tol (inf for a non-finite candidate)
  double rel = 0;    // err / |ref|
  double ulps = 0;   // err in units of the last place of ref in the element's storage type
};

struct Verdict {
  bool pass = true;
  std::size_t checked = 0, failures = 0;
  int first_fail_step = -1;  // the earliest t of a failing o or state_norm element (-1: none)
  Worst worst;               // the element with the largest err / tol
  // Largest observed ratio of an element's error to its group's scale,
  // (|cand-ref| - u_out|ref|) / (b_g + sqrt(D) u_state s_g): the calibration
  // statistic (K must bound it).
  double max_group_ratio = 0;
  std::string summary() const;
};

// Checks every element of cand against ref with the baseline's error as the
// conditioning. All three must have the same dims; A is checked when all have it.
Verdict check(const Outputs& cand, const Outputs& ref, const Outputs& base, const Precision& prec,
              const ModelConstants& k = {});

// |x - ref| in units of the last place of ref in float (bf16 = false) or bf16.
double ulps(double x, double ref, bool bf16);

}  // namespace vla::accuracy
