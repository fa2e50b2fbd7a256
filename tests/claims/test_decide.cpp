// The decision rules of the ledger on planted inputs: each rule must give the
// right verdict for a case known to hold and one known to fail.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vla/claims/decide.hpp"
#include "vla/claims/fit.hpp"

namespace vla::claims {
namespace {

// y = c T^p with multiplicative noise of relative size `noise` (seeded).
PowerFit fit_of(double p, double noise, unsigned seed = 1) {
  std::mt19937 g(seed);
  std::normal_distribution<double> n(0, noise);
  std::vector<double> x, y;
  for (int e = 6; e <= 14; ++e) {
    const double T = std::ldexp(1.0, e);
    x.push_back(T);
    y.push_back(3.0 * std::pow(T, p) * std::exp(n(g)));
  }
  return fit_power(x, y);
}

TEST(Fit, RecoversExactPowerLaws) {
  for (double p : {0.0, 0.5, 1.0, 2.0}) {
    const PowerFit f = fit_of(p, 0.0);
    EXPECT_NEAR(f.exponent, p, 1e-12);
    EXPECT_NEAR(f.log_c, std::log(3.0), 1e-10);
    EXPECT_LT(f.stderr_p, 1e-12);
  }
  EXPECT_THROW(fit_power({1, 2}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(fit_power({1, 2, 3}, {1, -2, 3}), std::invalid_argument);
}

TEST(Fit, ClassifiesPlantedGrowthRates) {
  EXPECT_EQ(classify_growth(fit_of(0.0, 0.02)), Growth::bounded);
  EXPECT_EQ(classify_growth(fit_of(0.5, 0.02)), Growth::sqrt_like);
  EXPECT_EQ(classify_growth(fit_of(1.0, 0.02)), Growth::linear);
  EXPECT_EQ(classify_growth(fit_of(2.0, 0.02)), Growth::superlinear);
  // Noise too large to tell the rates apart: no class is claimed.
  EXPECT_EQ(classify_growth(fit_of(0.25, 0.01)), Growth::ambiguous);
  EXPECT_EQ(classify_growth(fit_of(0.5, 3.0)), Growth::ambiguous);
}

TEST(Decide, AboutAtTheClaimsDigits) {
  EXPECT_TRUE(rounds_to(5.03, 5, 1));
  EXPECT_TRUE(rounds_to(4.6, 5, 1));
  EXPECT_FALSE(rounds_to(5.5, 5, 1));
  EXPECT_FALSE(rounds_to(2.33, 5, 1));
  EXPECT_TRUE(rounds_to(1620, 1600, 2));
  EXPECT_FALSE(rounds_to(1660, 1600, 2));
  EXPECT_TRUE(same_order_of_magnitude(5e31, 32));
  EXPECT_FALSE(same_order_of_magnitude(3e31, 32));  // log10 = 31.48: more than half a decade away
  EXPECT_FALSE(same_order_of_magnitude(1.0, 32));
  EXPECT_FALSE(same_order_of_magnitude(-1.0, 0));
}

TEST(Decide, LinearAttentionGrowth) {
  EXPECT_EQ(decide_la_growth({Growth::linear, Growth::linear}), Verdict::holds);
  EXPECT_EQ(decide_la_growth({Growth::linear, Growth::sqrt_like}), Verdict::conditional);
  EXPECT_EQ(decide_la_growth({Growth::linear, Growth::bounded}), Verdict::conditional);
  EXPECT_EQ(decide_la_growth({Growth::sqrt_like}), Verdict::conditional);
  EXPECT_EQ(decide_la_growth({Growth::bounded, Growth::bounded}), Verdict::refuted);
  EXPECT_EQ(decide_la_growth({Growth::linear, Growth::superlinear}), Verdict::refuted);
  EXPECT_EQ(decide_la_growth({Growth::linear, Growth::ambiguous}), Verdict::inconclusive);
  EXPECT_EQ(decide_la_growth({}), Verdict::inconclusive);
}

TEST(Decide, BoundedState) {
  EXPECT_EQ(decide_bounded_state({Growth::bounded, Growth::bounded}), Verdict::holds);
  EXPECT_EQ(decide_bounded_state({Growth::bounded, Growth::sqrt_like}), Verdict::refuted);
  EXPECT_EQ(decide_bounded_state({Growth::bounded, Growth::linear}), Verdict::refuted);
  EXPECT_EQ(decide_bounded_state({Growth::bounded, Growth::ambiguous}), Verdict::inconclusive);
}

TEST(Decide, ExactnessByPrecisionScaling) {
  // Rounding: the difference shrinks with the unit roundoff.
  EXPECT_TRUE(exact_by_precision_scaling({1e-37, 1e-76, 128, 256}));
  EXPECT_TRUE(exact_by_precision_scaling({0.0, 0.0, 128, 256}));
  // A real difference stays.
  EXPECT_FALSE(exact_by_precision_scaling({1e-3, 1e-3, 128, 256}));
  EXPECT_FALSE(exact_by_precision_scaling({1e-20, 1e-30, 128, 256}));  // shrank, but by far less than 2^-64
  // Zero at 128 bits: rounding-sized at 256 bits is consistent with it, a real difference is not.
  EXPECT_TRUE(exact_by_precision_scaling({0.0, 1e-70, 128, 256}));
  EXPECT_FALSE(exact_by_precision_scaling({0.0, 1e-3, 128, 256}));
  EXPECT_FALSE(exact_by_precision_scaling({NAN, 0.0, 128, 256}));
  EXPECT_FALSE(exact_by_precision_scaling({1e-37, 1e-76, 256, 128}));
}

TEST(Decide, KeepsTheLeastExactPair) {
  PrecisionPair kept{0, 0, 128, 256};
  keep_least_exact(kept, {1e-37, 1e-76, 128, 256});  // rounding
  keep_least_exact(kept, {0.0, 5e-77, 128, 256});     // rounding, zero at 128 bits
  EXPECT_TRUE(exact_by_precision_scaling(kept));
  keep_least_exact(kept, {1e-9, 1e-9, 128, 256});     // a real difference, smaller than none of them in ratio
  EXPECT_FALSE(exact_by_precision_scaling(kept));
  EXPECT_DOUBLE_EQ(kept.diff_hi, 1e-9);
  keep_least_exact(kept, {2e-37, 1e-76, 128, 256});   // does not displace it
  EXPECT_DOUBLE_EQ(kept.diff_hi, 1e-9);
}

TEST(Decide, ShermanMorrison) {
  EXPECT_EQ(decide_sherman_morrison(true, 2, true), Verdict::holds);
  EXPECT_EQ(decide_sherman_morrison(true, 2, false), Verdict::conditional);
  EXPECT_EQ(decide_sherman_morrison(false, 2, true), Verdict::refuted);
  EXPECT_EQ(decide_sherman_morrison(true, 3, true), Verdict::refuted);
}

TEST(Decide, UnitNormArgminContractionCapacity) {
  EXPECT_EQ(decide_unit_norm({1e-38, 1e-77, 128, 256}), Verdict::holds);
  EXPECT_EQ(decide_unit_norm({0.2, 0.2, 128, 256}), Verdict::refuted);
  EXPECT_EQ(decide_argmin({1e-38, 1e-77, 128, 256}), Verdict::holds);
  EXPECT_EQ(decide_argmin({2.0, 2.0, 128, 256}), Verdict::refuted);
  EXPECT_EQ(decide_contraction(true, true, true), Verdict::holds);
  EXPECT_EQ(decide_contraction(true, true, false), Verdict::conditional);
  EXPECT_EQ(decide_contraction(false, true, true), Verdict::refuted);
  EXPECT_EQ(decide_contraction(true, false, true), Verdict::refuted);
  EXPECT_EQ(decide_capacity(true, true), Verdict::holds);
  EXPECT_EQ(decide_capacity(true, false), Verdict::conditional);
  EXPECT_EQ(decide_capacity(false, false), Verdict::refuted);
}

TEST(Decide, SweepConstantOverheadTiming) {
  EXPECT_EQ(decide_sweep(3, 3), Verdict::holds);
  EXPECT_EQ(decide_sweep(1, 3), Verdict::conditional);
  EXPECT_EQ(decide_sweep(0, 3), Verdict::refuted);
  EXPECT_EQ(decide_sweep(0, 0), Verdict::inconclusive);
  EXPECT_EQ(decide_constant({528, 528, 528}), Verdict::holds);
  EXPECT_EQ(decide_constant({32, 64, 96}), Verdict::refuted);
  EXPECT_EQ(decide_constant({528}), Verdict::inconclusive);
  EXPECT_EQ(decide_overhead(5.0, 5), Verdict::holds);
  EXPECT_EQ(decide_overhead(2.33, 5), Verdict::refuted);
  EXPECT_EQ(decide_timing({true, 14.2, 0.1}, 14, 2), Verdict::holds);
  EXPECT_EQ(decide_timing({true, 7.0, 0.1}, 14, 2), Verdict::refuted);
  EXPECT_EQ(decide_timing({true, 12.0, 0.5}, 14, 2), Verdict::inconclusive);
  EXPECT_EQ(decide_timing({false, 0, 0}, 14, 2), Verdict::inconclusive);
}

TEST(Decide, VerdictNames) {
  for (Verdict v : {Verdict::holds, Verdict::refuted, Verdict::conditional, Verdict::inconclusive})
    EXPECT_EQ(parse_verdict(to_string(v)), v);
  EXPECT_THROW(parse_verdict("maybe"), std::invalid_argument);
}

}  // namespace
}  // namespace vla::claims
