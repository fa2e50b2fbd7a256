// A_t against a direct inverse, and the presets: vla-v3 differs from the paper's
// recurrence exactly where its stabilisers act.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <cmath>

#include "streams.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/trace.hpp"

using namespace vla;
using namespace vla::ref;

namespace {
constexpr long kBits = 256;
using MatMp = Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>;
using VecMp = Eigen::Matrix<Mpfr, Eigen::Dynamic, 1>;

// u_t as the spec defines it, computed here independently of core/: k^ from
// elu1(k) / ||elu1(k)|| (or the given u), then optionally u / ||u|| / sqrt(Dk).
VecMp penalty_direction(const Stream& s, const Options& opt, int t) {
  const int dk = s.dims.Dk;
  VecMp u(dk);
  for (int j = 0; j < dk; ++j) {
    const double x = s.has_u() ? s.u[s.dims.off(0, t, 0, dk) + j] : s.k[s.dims.off(0, t, 0, dk) + j];
    u(j) = s.has_u() ? Mpfr(x) : (x > 0 ? Mpfr(x) + 1 : exp(Mpfr(x)));
  }
  if (!s.has_u() || opt.u_unit_scaled) u /= u.norm();
  if (opt.u_unit_scaled) u /= sqrt(Mpfr(dk));
  return u;
}

// max |A - B| / max |B|
double rel_max(const MatMp& a, const MatMp& b) {
  Mpfr num = 0, den = 0;
  for (int i = 0; i < a.rows(); ++i)
    for (int j = 0; j < a.cols(); ++j) {
      if (abs(a(i, j) - b(i, j)) > num) num = abs(a(i, j) - b(i, j));
      if (abs(b(i, j)) > den) den = abs(b(i, j));
    }
  return double(num / den);
}

// A_t == (lambda0 I + sum_{s<=t} u_s u_s^T)^{-1}. Error model: the recurrence's
// t rank-one updates and Eigen's LU inverse each lose at most a factor
// Dk * kappa of the unit roundoff (kappa <= 1 + sum ||u||^2 / lambda0, the
// condition number of the penalty), so 4 (t + Dk) Dk kappa 2^-256 bounds the
// difference.
void check_inverse(const Stream& s, const Options& opt) {
  MpfrPrecision scope(kBits);
  const auto tr = trace_head<Mpfr>(s, opt, TraceOptions{});
  const int dk = s.dims.Dk;
  MatMp M = MatMp::Identity(dk, dk) * Mpfr(opt.lambda0);
  double usum = 0;
  for (int t = 0; t < s.dims.T; ++t) {
    const VecMp u = penalty_direction(s, opt, t);
    M += u * u.transpose();
    usum += double(u.squaredNorm());
    const double kappa = 1 + usum / opt.lambda0;
    const MatMp inv = M.partialPivLu().inverse();
    EXPECT_LE(rel_max(tr[t].A, inv), 4.0 * (t + 1 + dk) * dk * kappa * std::ldexp(1.0, -int(kBits))) << "t = " << t;
    EXPECT_GE(double(tr[t].delta), 1.0);  // delta = 1 + u^T A u >= 1 as A is positive definite
  }
}
}  // namespace

TEST(DirectInverse, KeysAsPenalty) { check_inverse(test::random_stream(1, 16, 1, 6, 3, 21), Options{}); }

TEST(DirectInverse, GivenPenaltySmallLambda) {
  Options opt;
  opt.lambda0 = 0.01;
  check_inverse(test::random_stream(1, 12, 1, 5, 2, 22, true), opt);
}

// vla-v3 without its ridge is still an exact inverse (of 10 I + sum of the
// rescaled u's); with the ridge it is not (next test).
TEST(DirectInverse, VlaV3WithoutRidge) {
  Options opt = preset_options(Preset::vla_v3);
  opt.ridge_every = 0;
  check_inverse(test::random_stream(1, 24, 1, 4, 2, 23), opt);
}

// D = 1, vla-v3: u = 1 after normalising and scaling by 1/sqrt(1), so
// A_t = 1 / (10 + t) until the ridge: A_20 = 1/30 + 1e-3, then
// A_21 = 1 / (1/A_20 + 1) (Sherman-Morrison with u = 1 on a scalar).
TEST(Presets, RidgeActsAtEveryTwentiethStep) {
  const int T = 21;
  Stream s;
  s.dims = {1, T, 1, 1, 1};
  s.q.assign(T, 0.3);
  s.k.assign(T, -0.7);
  s.v.assign(T, 1.0);
  MpfrPrecision scope(kBits);
  const auto tr = trace_head<Mpfr>(s, preset_options(Preset::vla_v3), TraceOptions{});
  const Mpfr tol = ldexp(Mpfr(1), -240);
  for (int t = 0; t < 19; ++t) EXPECT_LE(abs(tr[t].A(0, 0) - Mpfr(1) / (10 + t + 1)), tol) << t;
  const Mpfr a20 = Mpfr(1) / 30 + Mpfr(1e-3);
  EXPECT_LE(abs(tr[19].A(0, 0) - a20), tol);
  EXPECT_LE(abs(tr[20].A(0, 0) - Mpfr(1) / (Mpfr(1) / a20 + 1)), tol);
}

// Switching the ridge off changes nothing before the 20th step (bit for bit)
// and changes the output from the 20th step on (its gate uses the ridged A_20).
TEST(Presets, RidgeChangesNothingBeforeStep20) {
  const Stream s = test::random_stream(1, 22, 1, 4, 3, 31);
  const Options v3 = preset_options(Preset::vla_v3);
  Options no_ridge = v3;
  no_ridge.ridge_every = 0;
  const auto a = run_mpfr(s, v3, 128), b = run_mpfr(s, no_ridge, 128);
  for (int t = 0; t < 22; ++t) {
    bool same = true;
    for (int i = 0; i < 3; ++i) same = same && a.o[std::size_t(t) * 3 + i] == b.o[std::size_t(t) * 3 + i];
    EXPECT_EQ(same, t < 19) << "t = " << t;
  }
}

// delta_t = 1 + u^T A u >= 1 because A is positive definite, so the floor
// max(delta, 1e-4) never acts: with and without it the runs agree bit for bit.
TEST(Presets, DeltaFloorNeverActs) {
  const Stream s = test::random_stream(2, 30, 2, 4, 3, 32);
  const Options v3 = preset_options(Preset::vla_v3);
  Options no_floor = v3;
  no_floor.delta_floor = 0;
  const auto a = run_model<double>(s, v3), b = run_model<double>(s, no_floor);
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.A, b.A);
}

// The denominator floor acts only where n_t . phi(q_t) < 1e-6: a query of -20 in
// every entry gives phi(q) = e^-20 (2e-9) per entry, so at t = 1 the denominator
// is about Dk * 2 * 2e-9 < 1e-6 and the output is y / 1e-6 instead of y / den;
// every other step is unchanged.
TEST(Presets, DenominatorFloorActsOnlyOnTinyDenominators) {
  Stream s = test::random_stream(1, 6, 1, 4, 2, 33);
  for (int j = 0; j < 4; ++j) s.q[s.dims.off(0, 1, 0, 4) + j] = -20;
  Options with = preset_options(Preset::vla_v3), without = with;
  without.den_floor = 0;
  const auto a = run_mpfr(s, with, 128), b = run_mpfr(s, without, 128);
  for (int t = 0; t < 6; ++t) {
    const bool same = a.o[std::size_t(t) * 2] == b.o[std::size_t(t) * 2];
    EXPECT_EQ(same, t != 1) << "t = " << t;
  }
  // At t = 1: o_floor / o_plain = den / 1e-6.
  MpfrPrecision scope(128);
  Mpfr den = 0;
  for (int j = 0; j < 4; ++j) {
    Mpfr n = 0;
    for (int t = 0; t <= 1; ++t) {
      const double x = s.k[s.dims.off(0, t, 0, 4) + j];
      n += x > 0 ? Mpfr(x) + 1 : exp(Mpfr(x));
    }
    den += n * exp(Mpfr(-20));
  }
  ASSERT_LT(double(den), 1e-6);
  EXPECT_NEAR(double(a.o[2] / b.o[2]), double(den / Mpfr(1e-6)), 1e-12);
}

// The paper preset is the default options (lambda0 = 1, no stabiliser).
TEST(Presets, PaperIsTheUnstabilisedRecurrence) {
  const Stream s = test::random_stream(1, 25, 1, 4, 3, 34);
  const auto a = run_model<double>(s, preset_options(Preset::paper)), b = run_model<double>(s, Options{});
  EXPECT_EQ(a.o, b.o);
  const auto c = run_model<double>(s, preset_options(Preset::vla_v3));
  EXPECT_NE(a.o, c.o);
}
