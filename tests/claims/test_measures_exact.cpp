// The exactness checks of the ledger on planted cases: for each, an identity
// that holds by construction must be judged exact (its difference scales with
// the unit roundoff between 128 and 256 bits) and one that fails by
// construction must not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "vla/claims/decide.hpp"
#include "vla/claims/flops.hpp"
#include "vla/claims/measures.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"

namespace vla::claims {
namespace {

using hp::Mp;

template <class F>
PrecisionPair two(F&& f) {
  PrecisionPair p;
  {
    ref::MpfrPrecision s(128);
    p.diff_lo = f();
  }
  {
    ref::MpfrPrecision s(256);
    p.diff_hi = f();
  }
  return p;
}

props::Case gaussian(int T, int dk, int dv, std::uint64_t seed = 1) {
  return props::make_case(props::Family::gaussian, Dims{1, T, 1, dk, dv}, seed);
}

// The largest ||A_t M_t - I||_F along a stream (the properties' checks, as the ledger uses them).
double max_residual(const Stream& s, const Options& o, long bits) {
  double m = 0;
  for (const auto& c : props::sherman_morrison_checks(s, o, 0, 0, bits)) m = std::max(m, c.residual);
  return m;
}

TEST(ShermanMorrison, ExactWithoutStabilisersNotWithTheRidge) {
  const auto cs = gaussian(24, 4, 2);
  EXPECT_TRUE(exact_by_precision_scaling({max_residual(cs.stream, cs.options(), 128), max_residual(cs.stream, cs.options(), 256)}));
  // Planted false: the vla-v3 ridge adds 1e-3 I every 20 steps, so A_t != M_t^{-1}.
  Options v3 = preset_options(Preset::vla_v3);
  const PrecisionPair p{max_residual(cs.stream, v3, 128), max_residual(cs.stream, v3, 256)};
  EXPECT_FALSE(exact_by_precision_scaling(p));
  // At t = 20 the ridge lands after the update: A_20 = M_20^{-1} + r I, so A_20 M_20 - I = r M_20, and since
  // M_20 - lambda0 I is positive semidefinite ||r M_20||_F >= r ||lambda0 I||_F = r lambda0 sqrt(Dk) (Dk = 4 here).
  EXPECT_GE(p.diff_hi, v3.ridge * v3.lambda0 * 2.0);
}

TEST(ShermanMorrison, CostPolynomialsAreExact) {
  Options vla;
  const CostPolynomial p = cost_polynomial([&](int D) { return count_step(vla, D, D).flops(); });
  EXPECT_TRUE(p.verified);
  EXPECT_EQ(p.degree, 2);
  // Planted: a count known in closed form, and one that is not a polynomial.
  const CostPolynomial cubic = cost_polynomial([](int D) { return 3L * D * D * D + 2L * D + 7; });
  EXPECT_TRUE(cubic.verified);
  EXPECT_EQ(cubic.degree, 3);
  EXPECT_DOUBLE_EQ(cubic.coeff[3], 3);
  EXPECT_DOUBLE_EQ(cubic.coeff[1], 2);
  EXPECT_DOUBLE_EQ(cubic.coeff[0], 7);
  EXPECT_EQ(cubic.str(), "3 D^3 + 2 D + 7");
  EXPECT_FALSE(cost_polynomial([](int D) { return 1L << D; }).verified);
  EXPECT_EQ(decide_sherman_morrison(true, cubic.degree, true), Verdict::refuted);
}

TEST(Overhead, CountsFromTheSpecsStep) {
  // Linear attention's update: Dv*Dk FMAs (2 flops each), Dk feature-map
  // operations and Dk additions to the normaliser: 2 D^2 + 2 D, by hand.
  Options lin;
  lin.model = Model::linear;
  const CostPolynomial la = cost_polynomial([&](int D) { return count_step(lin, D, D).flops() - count_readout(lin, D, D).flops(); });
  EXPECT_EQ(la.str(), "2 D^2 + 2 D");
  Options vla;
  const CostPolynomial v = cost_polynomial([&](int D) { return count_step(vla, D, D).flops() - count_readout(vla, D, D).flops(); });
  EXPECT_EQ(decide_overhead(v.leading() / la.leading(), 5), Verdict::holds);
  // Planted false: linear attention against itself is 1x, not 5x.
  EXPECT_EQ(decide_overhead(la.leading() / la.leading(), 5), Verdict::refuted);
}

TEST(Penalty, VlaContractsWithoutRecency) {
  const auto f = measure::vla_final_A(1.0);
  measure::PenaltyProbe lo, hi;
  {
    ref::MpfrPrecision s(128);
    lo = measure::penalty_probe(f, 1.0);
  }
  {
    ref::MpfrPrecision s(256);
    hi = measure::penalty_probe(f, 1.0);
  }
  EXPECT_DOUBLE_EQ(hi.rq_old, 0.2);  // 1 / (lambda0 + 4) at 256 bits, rounded once to double
  EXPECT_DOUBLE_EQ(hi.rq_recent, 0.2);
  EXPECT_TRUE(exact_by_precision_scaling({lo.old_vs_recent, hi.old_vs_recent}));
  EXPECT_TRUE(exact_by_precision_scaling({lo.untouched, hi.untouched}));
  EXPECT_TRUE(exact_by_precision_scaling({lo.reorder, hi.reorder}));
  EXPECT_FALSE(exact_by_precision_scaling({lo.old_vs_free, hi.old_vs_free}));
}

// A planted model with forgetting: A_T = (lambda0 I + sum_t gamma^(T-t) u_t u_t^T)^{-1}.
measure::FinalA forgetting(double lambda0, double gamma) {
  return [=](const std::vector<std::vector<double>>& u) {
    const int T = int(u.size()), dk = int(u[0].size());
    hp::Mat<Mp> M = hp::Mat<Mp>::Identity(dk, dk) * Mp(lambda0);
    for (int t = 0; t < T; ++t) {
      hp::Vec<Mp> x(dk);
      for (int j = 0; j < dk; ++j) x(j) = Mp(u[std::size_t(t)][std::size_t(j)]);
      M += x * x.transpose() * Mp(std::pow(gamma, T - 1 - t));
    }
    return hp::Mat<Mp>(hp::solve(M, hp::Mat<Mp>::Identity(dk, dk)));
  };
}

TEST(Penalty, PlantedModels) {
  // Forgetting: old writes recover, so recency holds and order matters.
  measure::PenaltyProbe lo, hi;
  {
    ref::MpfrPrecision s(128);
    lo = measure::penalty_probe(forgetting(1.0, 0.7), 1.0);
  }
  {
    ref::MpfrPrecision s(256);
    hi = measure::penalty_probe(forgetting(1.0, 0.7), 1.0);
  }
  const bool recency = !exact_by_precision_scaling({lo.old_vs_recent, hi.old_vs_recent}) && hi.rq_old > hi.rq_recent;
  EXPECT_TRUE(recency);
  EXPECT_FALSE(exact_by_precision_scaling({lo.reorder, hi.reorder}));
  EXPECT_EQ(decide_contraction(true, exact_by_precision_scaling({lo.untouched, hi.untouched}), recency), Verdict::holds);
  // No penalty at all: nothing contracts.
  const measure::FinalA flat = [](const std::vector<std::vector<double>>& u) {
    const int dk = int(u[0].size());
    return hp::Mat<Mp>(hp::Mat<Mp>::Identity(dk, dk));
  };
  {
    ref::MpfrPrecision s(128);
    lo = measure::penalty_probe(flat, 1.0);
  }
  {
    ref::MpfrPrecision s(256);
    hi = measure::penalty_probe(flat, 1.0);
  }
  EXPECT_TRUE(exact_by_precision_scaling({lo.old_vs_free, hi.old_vs_free}));  // e_0 not contracted
}

TEST(Argmin, RidgeHoldsForTheUnnormalisedGateAndNotTheObjectiveOf21) {
  const auto cs = gaussian(6, 4, 2);
  Options unit = cs.options(), free_gate = cs.options();
  free_gate.normalize = Normalize::key;
  measure::ArgminDiffs ul, uh, fl, fh;
  {
    ref::MpfrPrecision s(128);
    ul = measure::argmin_diffs(cs.stream, unit);
    fl = measure::argmin_diffs(cs.stream, free_gate);
  }
  {
    ref::MpfrPrecision s(256);
    uh = measure::argmin_diffs(cs.stream, unit);
    fh = measure::argmin_diffs(cs.stream, free_gate);
  }
  // Planted true: recursive least squares is the ridge minimiser.
  EXPECT_TRUE(exact_by_precision_scaling({fl.ridge, fh.ridge}));
  // Planted false: neither recursion minimises (2.1) with M_t.
  EXPECT_FALSE(exact_by_precision_scaling({ul.paper, uh.paper}));
  EXPECT_FALSE(exact_by_precision_scaling({fl.paper, fh.paper}));
  EXPECT_FALSE(exact_by_precision_scaling({ul.ridge, uh.ridge}));
  // The derived proximal form is exact for the unit gate.
  EXPECT_TRUE(exact_by_precision_scaling({ul.proximal, uh.proximal}));
  // The cycle test: 1 for least squares, not for the unit gate.
  EXPECT_TRUE(exact_by_precision_scaling(two([&] { return measure::cycle_deviation(cs.stream, free_gate); })));
  EXPECT_FALSE(exact_by_precision_scaling(two([&] { return measure::cycle_deviation(cs.stream, unit); })));
}

TEST(UnitJacobian, OrthogonalKeysGiveOneGenericKeysDoNot) {
  Options id;
  id.feature_map = FeatureMap::identity;
  const Stream ortho = measure::basis_key_stream(6, 4, 2, 3);
  measure::JacobianStats lo, hi;
  {
    ref::MpfrPrecision s(128);
    lo = measure::jacobian_stats(ortho, id);
  }
  {
    ref::MpfrPrecision s(256);
    hi = measure::jacobian_stats(ortho, id);
  }
  EXPECT_EQ(decide_unit_norm({lo.max_dev_from_1, hi.max_dev_from_1}), Verdict::holds);
  const auto cs = gaussian(6, 4, 2);
  {
    ref::MpfrPrecision s(128);
    lo = measure::jacobian_stats(cs.stream, cs.options());
  }
  {
    ref::MpfrPrecision s(256);
    hi = measure::jacobian_stats(cs.stream, cs.options());
  }
  EXPECT_EQ(decide_unit_norm({lo.max_dev_from_1, hi.max_dev_from_1}), Verdict::refuted);
  EXPECT_TRUE(exact_by_precision_scaling({lo.max_dev_formula, hi.max_dev_formula}));
  EXPECT_EQ(hi.kantorovich_violations, 0);
}

// The double spectral norm (hp::spectral_norm: the largest eigenvalue of M^T M) of an n x n matrix has a relative
// error of at most about (n + p(n)) u / 2 (forming M^T M, then a backward-stable symmetric eigensolver, the square
// root halving it); 4 n u covers it with p(n) <= 7n. u = 2^-53.
double svd_rel(int n) { return 4 * n * std::ldexp(1.0, -53); }

TEST(UnitJacobian, FormulaAgainstADirectSvd) {
  const double u = std::ldexp(1.0, -53), phi = (1 + std::sqrt(5.0)) / 2;
  EXPECT_DOUBLE_EQ(measure::unit_rank1_norm(1.0), 1.0);
  EXPECT_NEAR(measure::unit_rank1_norm(0.0), phi, 8 * u * phi);  // a few roundings on each side
  std::mt19937 g(5);
  std::normal_distribution<double> n(0, 1);
  constexpr int kN = 5;
  for (int trial = 0; trial < 20; ++trial) {
    hp::Vec<double> k(kN), a(kN);
    for (int j = 0; j < kN; ++j) k(j) = n(g), a(j) = n(g);
    k.normalize();
    a.normalize();
    const hp::Mat<double> J = hp::Mat<double>::Identity(kN, kN) - k * a.transpose();
    // sigma(c)^2 = (3 - 2c + sqrt(5 - 4c)) / 2 for unit k, a, so |d sigma / dc| <= 1: the dot's n u (and the
    // normalisations' u each) move the formula by at most 2 n u; the direct norm is off by svd_rel(n) sigma.
    const double sigma = measure::unit_rank1_norm(a.dot(k));
    EXPECT_NEAR(hp::spectral_norm(J), sigma, svd_rel(kN) * sigma + 2 * kN * u);
  }
}

TEST(Unnormalised, ProductTelescopesToLambda0A) {
  EXPECT_TRUE(exact_by_precision_scaling(two([] { return measure::telescoping_residual(6, 0.5, 1.0, 4, 2); })));
  constexpr int kDh = 8;
  const auto m = measure::unnormalized_stats(kDh, 0.1, 1.0, 6, 1);
  // Exactly: the first factor is lambda0 A_1 (largest eigenvalue 1) and the product is lambda0 A_T (<= 1); the
  // factors are formed at 256 bits, so what is left is the double norms' error.
  EXPECT_NEAR(m.first_step, 1.0, svd_rel(kDh));
  EXPECT_LE(m.product, 1.0 + svd_rel(kDh));
  EXPECT_NEAR(m.product, m.lambda0_A, 2 * svd_rel(kDh) * m.product);
  EXPECT_EQ(m.bound_violations, 0);
  EXPECT_FALSE(same_order_of_magnitude(m.product, 32));
}

TEST(Capacity, ExactForBasisKeysNotForGenericKeys) {
  Options id;
  id.feature_map = FeatureMap::identity;
  const Stream ortho = measure::basis_key_stream(8, 8, 3, 1);
  const bool exact_o = exact_by_precision_scaling(two([&] { return measure::recall_error(ortho, id); }));
  const auto cs = gaussian(8, 8, 3);
  const bool exact_g = exact_by_precision_scaling(two([&] { return measure::recall_error(cs.stream, cs.options()); }));
  EXPECT_TRUE(exact_o);
  EXPECT_FALSE(exact_g);
  EXPECT_EQ(decide_capacity(exact_o, exact_g), Verdict::conditional);
  // The derived write identity holds for both.
  EXPECT_TRUE(exact_by_precision_scaling(two([&] { return measure::write_identity(cs.stream, cs.options()); })));
  EXPECT_TRUE(exact_by_precision_scaling(two([&] { return measure::write_identity(ortho, id); })));
}

}  // namespace
}  // namespace vla::claims
