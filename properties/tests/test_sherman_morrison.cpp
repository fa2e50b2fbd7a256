// Sherman-Morrison (paper, section 2.2): "A_t = M_t^{-1} is maintained exactly by
// the rank-1 update"; A_t contracts in the directions that received penalty.
//
// Hypotheses as tested, for every stream and every t (paper options, u_t = k^_t
// or given; the u_t compared are those the run actually used):
//   * exactness: ||A_t M_t - I||_F <= the error model's bound (measures.hpp,
//     sm_residual_bound: first order, proportional to the unit roundoff, to
//     sqrt(kappa(M_t)) and to the accumulated penalty), with
//     M_t = lambda0 I + sum_{s<=t} u_s u_s^T; at 256 bits and at double;
//   * A_t is symmetric positive definite: its smallest eigenvalue is the exact
//     1 / lambda_max(M_t) up to ||A_t - M_t^{-1}||_2 <= ||R_t|| / lambda0, and its
//     asymmetry is at most twice that;
//   * A_t <= A_{t-1} in the Loewner order: lambda_min(A_{t-1} - A_t) >= - the
//     step's local rounding error (sm_local_error).
// vla-v3: the delta floor never acts (delta_t = 1 + u^T A u >= 1 > 1e-4) and
// u_unit_scaled keeps exactness; the ridge A += 1e-3 I at t = 20, 40, ... moves
// A_t off the exact inverse: at its first application exactly by ridge * M_t,
// reported further on below.
#include <gtest/gtest.h>

#include <cmath>

#include "prop_support.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/reference/trace.hpp"

using namespace vla;
using namespace vla::props;
using vla::props::test::kBits;

namespace {

// The assertions shared by the Mpfr and the double runs. Returns false (with a
// tag) where the first-order model does not apply (bound >= 1/2).
void check_sm(const std::vector<SmCheck>& checks, double lambda0) {
  for (std::size_t t = 0; t < checks.size(); ++t) {
    const SmCheck& c = checks[t];
    if (!(c.bound < 0.5)) {
      RC_TAG("first-order model out of range (bound >= 1/2)");
      return;
    }
    RC_ASSERT(c.residual <= c.bound);
    const double dA = c.bound / lambda0;  // >= ||A_t - M_t^{-1}||_2
    RC_ASSERT(c.min_eig > 0.0);
    RC_ASSERT(std::fabs(c.min_eig - c.exact_min_eig) <= dA);
    RC_ASSERT(c.loewner >= -c.loewner_bound);
  }
}

}  // namespace

VLA_PROP(SM, ExactSpdAndMonotoneAt256Bits, 150, ()) {
  GenLimits lim;
  lim.max_T = 16;
  lim.max_Dk = 6;
  const Case c = *gen_any_case(lim);
  const auto checks = sherman_morrison_checks(c.stream, c.options(), 0, 0, kBits);
  check_sm(checks, c.lambda0);
  RC_CLASSIFY(c.stream.has_u(), "explicit u");
}

// RapidCheck's counterexample (seed 12193802198144362688): one step of a tiny
// u makes A_0 - A_1 = z z^T / delta rank one, its exact zero eigenvalue at the
// rounding level of the 256-bit run, where the rounding of A_0 = I / lambda0
// itself counts (measures_mpfr.cpp): within the bound, and the positive
// eigenvalue is there.
TEST(SM, RankOneStepAtTheRoundingLevel) {
  Stream s;
  s.dims = Dims{1, 1, 1, 2, 2};
  s.q = {0, 0};
  s.k = {0, 0};
  s.v = {0, 0};
  s.u = {-1.3809416639729923e-17, -1.183664283405422e-17};
  Options opt;
  opt.lambda0 = 0.12427870834307338;
  const auto checks = sherman_morrison_checks(s, opt, 0, 0, kBits);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_GE(checks[0].loewner, -checks[0].loewner_bound);
  EXPECT_LT(checks[0].loewner, 0.0);  // the case is the one at the rounding level
  EXPECT_LE(checks[0].loewner_bound, 3 * std::ldexp(1.0, -int(kBits)) * std::sqrt(2.0) / opt.lambda0);
}

VLA_PROP(SM, ExactSpdAndMonotoneAtDouble, 300, ()) {
  GenLimits lim;
  lim.max_T = 24;
  lim.max_Dk = 8;
  const Case c = *gen_any_case(lim);
  check_sm(sherman_morrison_checks_double(c.stream, c.options(), 0, 0), c.lambda0);
  RC_TAG(to_string(c.family));
}

// u_unit_scaled and the delta floor of vla-v3 keep A_t the exact inverse of the
// penalty actually accumulated (checked while no ridge has been added: t < 20).
VLA_PROP(SM, V3FloorAndUnitPenaltyKeepExactness, 100, ()) {
  GenLimits lim;
  lim.max_T = 19;
  lim.max_Dk = 6;
  lim.draw_u = false;
  const Case c = *gen_any_case(lim);
  Options opt = c.options(preset_options(Preset::vla_v3));
  opt.lambda0 = c.lambda0;
  ref::TraceOptions topt;
  topt.with_A = false;
  for (const auto& st : ref::trace_head_mpfr(c.stream, opt, topt, kBits)) RC_ASSERT(double(st.delta) >= 1.0);
  check_sm(sherman_morrison_checks(c.stream, opt, 0, 0, kBits), opt.lambda0);
}

// The ridge: right after its first application (t = 20) A_20 = M_20^{-1} + rho I,
// so A_20 M_20 - I = rho M_20 up to rounding; later ridges accumulate. The
// relative distance to the exact inverse is printed for the report.
TEST(SM, V3RidgeMovesAOffTheInverseByRhoM) {
  for (int dk : {4, 8}) {
    const Case c = make_case(Family::gaussian, Dims{1, 200, 1, dk, 2}, 17);
    const Options opt = preset_options(Preset::vla_v3);
    const auto checks = sherman_morrison_checks(c.stream, opt, 0, 0, kBits);
    // Step 20 (index 19): predicted residual rho ||M_20||_F, with M_20 from the used u's.
    ref::TraceOptions topt;
    topt.with_A = false;
    const auto tr = ref::trace_head_mpfr(c.stream, opt, topt, kBits);
    ref::MpfrPrecision p(kBits);
    std::vector<Vec<Mpfr>> us;
    for (const auto& st : tr) us.push_back(st.u);
    const double predicted = opt.ridge * double(penalty_matrix<Mpfr>(us, opt.lambda0, dk, 19).norm());
    ASSERT_TRUE(std::isfinite(checks[18].bound));  // no ridge added yet
    EXPECT_LE(checks[18].residual, checks[18].bound);  // before the first ridge: exact up to the model's rounding bound
    EXPECT_NEAR(checks[19].residual, predicted, 4 * unit_roundoff_bits(53) * predicted) << "dk=" << dk;  // both rounded to double
    std::cout << "vla-v3, Dk = " << dk << ": ||A_t M_t - I||_F at t = 19, 20, 100, 200: " << checks[18].residual << ", "
              << checks[19].residual << ", " << checks[99].residual << ", " << checks[199].residual << "\n";
    // The ridge only adds: A_t stays SPD.
    for (const auto& ck : checks) EXPECT_GT(ck.min_eig, 0.0);
  }
}
