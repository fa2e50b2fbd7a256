// Small cases of the recurrence whose values are derived by hand (derivations
// in the comments), run through the one generic step in double.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "vla/core/recurrence.hpp"

using namespace vla;
using P = core::SequentialPolicy<double>;

namespace {
struct Head {
  core::HeadState<double> st;
  core::Workspace<double> ws;
  core::StepInfo<double> info;
  std::vector<double> o;
  Options opt;
  Head(int dk, int dv, Options o_) : o(dv), opt(o_) {
    st.reset(dk, dv, opt.lambda0);
    ws.resize(dk, dv);
  }
  void step(std::vector<double> q, std::vector<double> k, std::vector<double> v) {
    core::vla_step<P>(st, ws, q.data(), k.data(), v.data(), nullptr, opt, o.data(), info);
  }
};
}  // namespace

namespace {
// The hand-derived values below are exact (the expressions in double add at most
// a rounding each); the step computes each in double through a few dozen
// correctly rounded operations per step (a D <= 2 dot, the Sherman-Morrison
// update, a normalisation, the readout), so by Higham's gamma_n bound each lies
// within n u |value|, u = 2^-53, n counted generously as kOpsPerStep per step
// taken: the cases are well conditioned (lambda0 >= 0.5, orthogonal or unit keys),
// so the state's error is carried from step to step, not amplified.
constexpr double kU = 0x1p-53;
constexpr int kOpsPerStep = 32;
::testing::AssertionResult Rounded(double x, double exact, int steps) {
  const double bound = kOpsPerStep * steps * kU * std::fabs(exact);
  if (std::fabs(x - exact) <= bound) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << x << " is " << std::fabs(x - exact) << " from " << exact << ", bound " << bound << " ("
                                       << steps << " steps)";
}
}  // namespace

// D = 1: k^ = 1, u = 1, so A_t = 1/(lambda0 + t), a^ = 1, c = 1 and the state is
// overwritten: S_t = v_t; the ratio readout is v_t / sum_{s<=t} phi(k_s).
TEST(RecurrenceByHand, ScalarHeadOverwrites) {
  Options opt;
  opt.lambda0 = 0.5;
  Head h(1, 1, opt);
  const double ks[] = {0.3, -1.2, 2.0}, vs[] = {1.5, -0.25, 4.0};
  double nsum = 0;
  for (int t = 0; t < 3; ++t) {
    h.step({0.7}, {ks[t]}, {vs[t]});
    nsum += ks[t] > 0 ? ks[t] + 1 : std::exp(ks[t]);
    EXPECT_TRUE(Rounded(h.st.A[0], 1.0 / (0.5 + t + 1), t + 1));
    EXPECT_TRUE(Rounded(h.st.S[0], vs[t], t + 1));
    EXPECT_TRUE(Rounded(h.o[0], vs[t] / nsum, t + 1));
    EXPECT_TRUE(Rounded(h.info.gate_cos, 1.0, t + 1));
    EXPECT_TRUE(Rounded(h.info.state_norm, std::fabs(vs[t]), t + 1));
  }
}

// D = 2, identity map, orthogonal keys e1 then e2: A_1 = diag(1/(l+1), 1/l),
// a^_1 = e1, S_1 = v1 e1^T; A_2 = I/(l+1), a^_2 = e2, S_2 = v1 e1^T + v2 e2^T.
TEST(RecurrenceByHand, OrthogonalKeysFillSeparateColumns) {
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.readout = Readout::raw;
  opt.lambda0 = 2.0;
  Head h(2, 2, opt);
  h.step({1, 1}, {1, 0}, {3, -1});
  EXPECT_TRUE(Rounded(h.st.A[0], 1.0 / 3, 2));
  EXPECT_TRUE(Rounded(h.st.A[3], 0.5, 2));
  EXPECT_EQ(h.st.A[1], 0.0);
  h.step({1, 1}, {0, 1}, {5, 7});
  const double S[] = {3, 5, -1, 7};  // rows are v components, columns key directions
  for (int e = 0; e < 4; ++e) EXPECT_TRUE(Rounded(h.st.S[e], S[e], 2)) << e;
  EXPECT_TRUE(Rounded(h.st.A[0], 1.0 / 3, 2));
  EXPECT_TRUE(Rounded(h.st.A[3], 1.0 / 3, 2));
  EXPECT_TRUE(Rounded(h.o[0], 8, 2));  // raw readout S phi(q), q = (1, 1)
  EXPECT_TRUE(Rounded(h.o[1], 6, 2));
}

// D = 2, identity map, lambda0 = 1, keys e1 then (1,1)/sqrt2, Dv = 1, v = 1, 2.
// A_2 = (I + e1 e1^T + u u^T)^{-1} = [[3/7, -1/7], [-1/7, 5/7]];
// w = A_2 k^ = (2/7, 4/7)/sqrt2, a^ = (1, 2)/sqrt5, c = 3/sqrt10;
// r = 2 - S_1 k^ = 2 - 1/sqrt2; S_2 = (1, 0) + r (1, 2)/sqrt5.
TEST(RecurrenceByHand, ObliqueKeyFollowsShermanMorrison) {
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.readout = Readout::raw;
  Head h(2, 1, opt);
  h.step({1, 0}, {1, 0}, {1});
  const double s = 1 / std::sqrt(2.0);
  h.step({0, 1}, {s, s}, {2});
  EXPECT_TRUE(Rounded(h.st.A[0], 3.0 / 7, 2));
  EXPECT_TRUE(Rounded(h.st.A[1], -1.0 / 7, 2));
  EXPECT_TRUE(Rounded(h.st.A[2], -1.0 / 7, 2));
  EXPECT_TRUE(Rounded(h.st.A[3], 5.0 / 7, 2));
  EXPECT_TRUE(Rounded(h.info.delta, 7.0 / 4, 2));
  EXPECT_TRUE(Rounded(h.info.gate_cos, 3 / std::sqrt(10.0), 2));
  const double r = 2 - s;
  EXPECT_TRUE(Rounded(h.st.S[0], 1 + r / std::sqrt(5.0), 2));
  EXPECT_TRUE(Rounded(h.st.S[1], 2 * r / std::sqrt(5.0), 2));
  EXPECT_TRUE(Rounded(h.o[0], h.st.S[1], 2));  // q = e2
}

// vla-v3 stabilisers: the ridge lands after the update of step 20 only, and the
// u scaling gives delta = 1 + u.z with u = k^/sqrt(Dk).
TEST(RecurrenceByHand, V3RidgeAppliesEveryTwentiethStep) {
  Options opt = preset_options(Preset::vla_v3);
  opt.feature_map = FeatureMap::identity;
  Head h(1, 1, opt);
  // D = 1: u = 1/sqrt(1) = 1, so without ridge A_t = 1/(10 + t).
  for (int t = 1; t <= 19; ++t) h.step({1}, {1}, {1});
  EXPECT_TRUE(Rounded(h.st.A[0], 1.0 / 29, 20));
  h.step({1}, {1}, {1});
  EXPECT_TRUE(Rounded(h.st.A[0], 1.0 / 30 + 1e-3, 20));
}
