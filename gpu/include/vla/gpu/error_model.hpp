// The error model: is a candidate's output (a kernel, its twin, any
// implementation of the spec) as accurate as its precision policy allows?
// Derivation and the measurements behind the constants: docs/ERROR_MODEL.md.
//
// Per output element e of a group g:
//
//   |cand_e - ref_e| <= u_out |ref_e| + eta_out + K (b_g + gamma u_state s_g)
//
// ref  the reference (the recurrence at double or higher precision) fed exactly
//      the inputs the candidate consumed (rounded once to its input type);
// base the baselines (error_baselines.hpp): the recurrence run in Monte Carlo
//      arithmetic at the policy's precision, three times; their error measures
//      what rounding at this precision costs on this stream, i.e. the stream's
//      conditioning as the reference sees it, with its growth in t and D;
// groups and their scales:
//   o, row (b, t, h): s_g = m_t = max_i |ref_t,i|; b_g = rho_t m_t with rho_t the
//      largest relative row error of the baselines over steps s <= t,
//      max_i |base_s,i - ref_s,i| / m_s (a running maximum: one step's baseline
//      error is a single random draw, the maximum over the history is stable);
//   state_norm, series of one head: the same with one element per step;
//   S, A, final matrix of one head: b_g = max_e |base_e - ref_e|, s_g = max_e |ref_e|;
// u_out unit roundoff of the element's storage type (float 2^-24, bf16 2^-8),
//      eta_out half its smallest subnormal (float 2^-150, bf16 2^-134);
// u_state unit roundoff of the state's storage type, gamma the square root of
//      the number of terms of the reduction behind the element (sqrt(D) for o,
//      S, A; D for ||S||_F): a floor for the rare groups where the baselines
//      happen to be exact;
// K    how far an honest implementation's worst error may exceed the baselines'.
// Plus a floor at the scale of the terms summed rather than of the result
// (Higham: a computed sum's error is bounded by u times the sum of the terms'
// magnitudes), so that a reference value that cancels to exactly 0 (a cancelled
// state, sparse supports) still has a tolerance (u: float's 2^-24, the
// arithmetic between the policy's rounding points):
//   state_norm at t: F = sqrt(D) u sigma_t, sigma_t = max(||S_{t-1}||_F, ||S_t||_F)
//      (the state the step started from and the one it made);
//   o row t: F = sqrt(D) u sigma_t ||phi(q_t)|| / |den_t| (readout_gain; only
//      when the caller passes it: it needs the inputs);
//   final S: no floor in the tolerance, but its baselines' error is not a
//      breakdown within K sqrt(D) u sigma_{T-1};
// and where the reference's scale is exactly 0 (an o row, a state norm), b_g is
// the baselines' absolute error there (their relative error is undefined).
// docs/ERROR_MODEL.md, "The floor at the scale of the terms", derives both.
// A non-finite candidate element where the reference is finite fails, wherever
// the policy has accuracy. Breakdown: from the first step where the baselines
// carry no correct bit (relative error >= kBreakdown) or overflow, a head's
// elements (and its final S, A) are beyond what any implementation of the
// policy computes: they are counted (Verdict::beyond), not judged. An o row's
// relative error is taken against the scale of the terms it sums (sigma_t
// ||phi(q_t)|| / |den_t|, with readout_gain), so a row that cancels is judged;
// ||S_t||_F's error decides o's, S's and A's breakdown only while its float sum
// of squares is in range (||S_t||_F in [2^-60, 2^60]).
// Range: the policies compute o's numerator S_t phi(q_t) in float, in an order
// the policy leaves free, so a partial sum may overflow although the sum does
// not. Every partial sum of row i is at most sum_j |S_ij phi(q_t)_j| <=
// sigma_t ||phi(q_t)||; where that bound (readout_terms) comes within float's
// rounding of FLT_MAX, a non-finite candidate element of o is beyond the
// policy's range: counted, not judged (a finite one is judged as everywhere).
// Likewise the ratio readout's denominator n_t . phi(q_t), n_t a float sum over
// t + 1 steps: every partial sum is at most sum_j (sum_{s<=t} |phi(k_s)_j|)
// |phi(q_t)_j| (to first order in float's rounding), and where that bound comes
// within the rounding of Dk + t + 1 float additions of FLT_MAX the denominator
// may be infinite, so o = y / den is +-0 or non-finite: such candidate elements
// are beyond the range (a non-zero finite one is judged).
// docs/ERROR_MODEL.md, "Overflow of a partial sum".

#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"
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

// A baseline error of half the values: not one correct bit left (the unit
// roundoff of a one-bit significand).
inline constexpr double kBreakdown = 0.5;

struct ModelConstants {
  // docs/ERROR_MODEL.md, "Calibration": over 3 x 1200 honest candidates (the
  // twins and a pairwise, FMA-free order) the ratio's p99 was 5.1 and its
  // maximum 7.7; a power-law fit of that tail puts a ratio of 16 at about one
  // stream in 10^4. Re-measured by ErrorModel.Calibration (VLA_CALIBRATION_REPS).
  double K = 16.0;
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
  // (|cand-ref| - u_out|ref| - eta_out - F) / (b_g + gamma u_state s_g): the calibration
  // statistic (K must bound it).
  double max_group_ratio = 0;
  // Elements not judged because the policy itself has no accuracy there (from
  // the first step where the baselines break down, per head; final matrices of
  // such heads), how many of them the candidate left non-finite, and the
  // earliest such step (-1: none).
  std::size_t beyond = 0, beyond_nonfinite = 0;
  int first_beyond_step = -1;
  std::string summary() const;
};

// Checks every element of cand against ref with the baselines' error as the
// conditioning (per element, the largest over the baselines; make them with
// accuracy::baselines, error_baselines.hpp). All must have the same dims; o is
// required, S, A and state_norm are checked when the candidate has them
// (an empty vector: not provided).
// readout_gain (from readout_gain() below, on the inputs the reference
// consumed) gives o rows their floor at the readout terms' scale; empty: o gets
// no such floor (callers without the inputs).
// readout_terms (from readout_terms() below) gives o rows the range tests above;
// empty: no such test (every non-finite element of o where the reference is
// finite fails wherever the policy has accuracy).
// Per o row (b, t, h), layout [B, T, H], the range tests' bounds (see check):
struct ReadoutTerms {
  std::vector<double> q_norm;     // ||phi(q_t)||_2: times sigma_t, the bound on the numerator's partial sums
  std::vector<double> den_terms;  // sum_j (sum_{s<=t} |phi(k_s)_j|) |phi(q_t)_j| (ratio readout; 0 for raw)
  bool empty() const { return q_norm.empty(); }
};
Verdict check(const Outputs& cand, const Outputs& ref, const std::vector<const Outputs*>& bases, const Precision& prec,
              const ModelConstants& k = {}, const std::vector<double>& readout_gain = {},
              const ReadoutTerms& readout_terms = {});
Verdict check(const Outputs& cand, const Outputs& ref, const Outputs& base, const Precision& prec,
              const ModelConstants& k = {});

// Per o row (b, t, h), layout [B, T, H]: ||phi(q_t)||_2 / |den_t|, the factor
// from the state's scale to the scale of the terms the readout sums (den_t =
// n_t . phi(q_t) after den_floor; 1 for the raw readout; 0 where den_t is 0,
// the readout is then undefined). `rounded`: the inputs the reference consumed.
std::vector<double> readout_gain(const Stream& rounded, const Options& opt);
// The range tests' bounds per o row (ReadoutTerms, above check).
ReadoutTerms readout_terms(const Stream& rounded, const Options& opt);

// The model's envelope of o along head (b, h), for plots against t (vla report):
// per step, the largest row error max_i |cand_i - ref_i| / max_i |ref_i| that
// check() accepts, i.e. the tolerance of the row's largest element relative to
// it. NaN for a row whose reference is all zero.
std::vector<double> o_envelope(const Outputs& ref, const std::vector<const Outputs*>& bases, const Precision& prec, int b,
                               int h, const ModelConstants& k = {});

// |x - ref| in units of the last place of ref in float (bf16 = false) or bf16.
double ulps(double x, double ref, bool bf16);

}  // namespace vla::accuracy
