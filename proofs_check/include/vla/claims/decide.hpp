// The decision rules of the checks, as pure functions of what the checks
// measured, so that each rule is tested on planted cases where the truth is
// known (tests/claims/test_decide.cpp): a rule that always says `holds` fails.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vla/claims/fit.hpp"
#include "vla/claims/result.hpp"

namespace vla::claims {

// "about X" as the paper writes numbers: the measured value rounds to the
// claimed one at the number of significant digits the claim gives (5x: one
// digit, so [4.5, 5.5); 1600: two digits, [1550, 1650)).
bool rounds_to(double measured, double claimed, int significant_digits);
// "about 10^e" for a claim given as a power of ten: |log10(measured) - e| < 1/2.
bool same_order_of_magnitude(double measured, double claimed_power_of_ten);

// la-norm-growth: "grows as O(T)", read as the paper measures it (1,600 at
// T = 1,000): linearly. Linear on every family holds; linear on some and only
// like sqrt(T) (or bounded) on others is conditional on the inputs; any family
// faster than T refutes it, as does no growth at all.
Verdict decide_la_growth(const std::vector<Growth>& per_family);

// prop1-bounded-state: "self-limiting under bounded inputs": every bounded-input
// family must be bounded. One family that grows refutes it.
Verdict decide_bounded_state(const std::vector<Growth>& per_family);

// Exactness by precision scaling. An identity that holds in exact arithmetic
// leaves, at p bits, a difference proportional to the unit roundoff 2^-p; one
// that does not hold leaves the same difference at every precision. Measured at
// two precisions p_lo < p_hi, the identity is exact when the difference shrank
// by more than the geometric midpoint of those two outcomes, 2^-(p_hi - p_lo)/2
// (or is zero at both; zero at p_lo alone: exact when the p_hi difference is
// below 2^-p_lo). No tolerance constant enters.
struct PrecisionPair {
  double diff_lo = 0, diff_hi = 0;  // |difference| at p_lo and p_hi bits
  int bits_lo = 128, bits_hi = 256;
};
bool exact_by_precision_scaling(const PrecisionPair& p);
// How far a pair is from scaling with the unit roundoff: diff_hi / diff_lo (about
// 1 for a real difference, 2^-(p_hi - p_lo) for rounding); with diff_lo = 0,
// diff_hi / 2^-p_lo. Used to keep the least exact of several pairs.
double scaling_ratio(const PrecisionPair& p);
void keep_least_exact(PrecisionPair& kept, const PrecisionPair& candidate);

// sherman-morrison-exact: exact (every case within rounding) and O(d^2) per step
// (the fitted cost exponent is 2). When the published stabilisers break
// exactness the claim holds only without them: conditional.
Verdict decide_sherman_morrison(bool exact, double cost_exponent_in_d, bool exact_with_stabilisers);

// prop2-unit-jacobian: ||J_t||_2 = 1 at every step: the largest |sigma - 1| over
// every step must be rounding (scale with the unit roundoff).
Verdict decide_unit_norm(const PrecisionPair& max_abs_dev_from_1);

// recursion-is-argmin: the recursion's S_t equals the argmin to within rounding
// (the difference scales with the unit roundoff).
Verdict decide_argmin(const PrecisionPair& rel_difference);

// penalty-contracts-written: contraction along written directions, untouched
// directions left at 1/lambda0, and recency (recent writes contract more than
// equally heavy old ones). Recency failing alone leaves the rest: conditional.
Verdict decide_contraction(bool written_contract, bool untouched_preserved, bool recency_weighted);

// capacity-exact-recall: exact recall (within rounding) of up to d_h pairs for
// generic keys (holds), only for orthogonal keys (conditional), or not even then.
Verdict decide_capacity(bool exact_orthogonal, bool exact_generic);

// A claim checked over a sweep of parameters the paper leaves out: holds when
// every setting agrees, refuted when none does, conditional otherwise.
Verdict decide_sweep(std::size_t agreeing, std::size_t total);

// constant-memory: the state's size (number of stored scalars) is the same at every T.
Verdict decide_constant(const std::vector<double>& sizes);

// overhead-5x: the ratio of operation counts rounds to the claimed factor.
Verdict decide_overhead(double ratio, double claimed);

// A timing claim (speed-up, crossover length) measured on a GPU: agreement at the
// claim's significant digits holds; a measurement on the other side of the claim
// by more than the measurement's relative spread refutes it; anything else,
// including no measurement, is inconclusive.
struct Timing {
  bool measured = false;
  double value = 0;          // measured speed-up or crossover
  double rel_spread = 0;     // relative spread of the measurement (e.g. max/min - 1 over repeats)
};
Verdict decide_timing(const Timing& t, double claimed, int significant_digits);

}  // namespace vla::claims
