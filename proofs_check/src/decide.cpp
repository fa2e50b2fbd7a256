#include "vla/claims/decide.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vla::claims {

bool rounds_to(double measured, double claimed, int digits) {
  if (!(claimed > 0) || !std::isfinite(measured) || digits < 1) return false;
  // The unit of the last significant digit of the claimed number.
  const double unit = std::pow(10.0, std::floor(std::log10(claimed)) - (digits - 1));
  return std::fabs(measured - claimed) < unit / 2;
}

bool same_order_of_magnitude(double measured, double e) {
  return measured > 0 && std::isfinite(measured) && std::fabs(std::log10(measured) - e) < 0.5;
}

Verdict decide_la_growth(const std::vector<Growth>& g) {
  if (g.empty()) return Verdict::inconclusive;
  const auto has = [&](Growth x) { return std::find(g.begin(), g.end(), x) != g.end(); };
  if (has(Growth::superlinear)) return Verdict::refuted;
  if (std::all_of(g.begin(), g.end(), [](Growth x) { return x == Growth::bounded; })) return Verdict::refuted;
  if (has(Growth::ambiguous)) return Verdict::inconclusive;
  // "Grows as O(T)" read as the paper's measurement shows it (1,600 at T = 1,000): linearly. Linear on every family
  // holds; linear on some and like sqrt(T) (or bounded) on others is conditional on the inputs (a mean in the values).
  if (std::all_of(g.begin(), g.end(), [](Growth x) { return x == Growth::linear; })) return Verdict::holds;
  return Verdict::conditional;
}

Verdict decide_bounded_state(const std::vector<Growth>& g) {
  if (g.empty()) return Verdict::inconclusive;
  for (Growth x : g)
    if (x == Growth::sqrt_like || x == Growth::linear || x == Growth::superlinear) return Verdict::refuted;
  for (Growth x : g)
    if (x == Growth::ambiguous) return Verdict::inconclusive;
  return Verdict::holds;
}

bool exact_by_precision_scaling(const PrecisionPair& p) {
  if (!(p.bits_hi > p.bits_lo)) return false;
  if (!std::isfinite(p.diff_lo) || !std::isfinite(p.diff_hi)) return false;
  if (p.diff_hi == 0) return true;
  // Exactly zero at the lower precision: a real difference that small (below
  // 2^-p_lo) cannot be told from rounding at these precisions; anything larger
  // at the higher precision contradicts the zero.
  if (p.diff_lo == 0) return p.diff_hi < std::ldexp(1.0, -p.bits_lo);
  return p.diff_hi / p.diff_lo < std::ldexp(1.0, -(p.bits_hi - p.bits_lo) / 2);
}

double scaling_ratio(const PrecisionPair& p) {
  if (p.diff_hi == 0) return 0;
  if (!std::isfinite(p.diff_lo) || !std::isfinite(p.diff_hi)) return std::numeric_limits<double>::infinity();
  return p.diff_lo == 0 ? p.diff_hi / std::ldexp(1.0, -p.bits_lo) : p.diff_hi / p.diff_lo;
}

void keep_least_exact(PrecisionPair& kept, const PrecisionPair& c) {
  const double a = scaling_ratio(kept), b = scaling_ratio(c);
  if (b > a || (b == a && c.diff_hi > kept.diff_hi)) kept = c;
}

Verdict decide_sherman_morrison(bool exact, double cost_exponent, bool exact_with_stabilisers) {
  if (!exact) return Verdict::refuted;
  if (std::fabs(cost_exponent - 2.0) > 0.5) return Verdict::refuted;  // nearest integer exponent is not 2
  return exact_with_stabilisers ? Verdict::holds : Verdict::conditional;
}

Verdict decide_unit_norm(const PrecisionPair& max_abs_dev) {
  return exact_by_precision_scaling(max_abs_dev) ? Verdict::holds : Verdict::refuted;
}

Verdict decide_argmin(const PrecisionPair& rel_difference) {
  return exact_by_precision_scaling(rel_difference) ? Verdict::holds : Verdict::refuted;
}

Verdict decide_contraction(bool written_contract, bool untouched_preserved, bool recency_weighted) {
  if (!written_contract || !untouched_preserved) return Verdict::refuted;
  return recency_weighted ? Verdict::holds : Verdict::conditional;
}

Verdict decide_capacity(bool exact_orthogonal, bool exact_generic) {
  if (exact_generic) return Verdict::holds;
  return exact_orthogonal ? Verdict::conditional : Verdict::refuted;
}

Verdict decide_sweep(std::size_t agreeing, std::size_t total) {
  if (total == 0) return Verdict::inconclusive;
  if (agreeing == total) return Verdict::holds;
  if (agreeing == 0) return Verdict::refuted;
  return Verdict::conditional;
}

Verdict decide_constant(const std::vector<double>& sizes) {
  if (sizes.size() < 2) return Verdict::inconclusive;
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  return *lo == *hi ? Verdict::holds : Verdict::refuted;
}

Verdict decide_overhead(double ratio, double claimed) {
  return rounds_to(ratio, claimed, 1) ? Verdict::holds : Verdict::refuted;
}

Verdict decide_timing(const Timing& t, double claimed, int digits) {
  if (!t.measured || !(t.value > 0)) return Verdict::inconclusive;
  if (rounds_to(t.value, claimed, digits)) return Verdict::holds;
  const double rel_gap = std::fabs(t.value - claimed) / claimed;
  return rel_gap > t.rel_spread ? Verdict::refuted : Verdict::inconclusive;
}

}  // namespace vla::claims
