// Proposition 1 (paper, section 3.1): "under bounded inputs, ||S_t||_F is
// self-limiting: unlike linear attention, where ||S_T||_F = O(T), the VLA state
// converges to a finite plateau as the prediction residuals vanish."
//
// Hypothesis as tested: there is a bound B(V, Dk, lambda0) such that every
// stream with unit keys k^_t and ||v_t||_2 <= V has ||S_t||_F <= B for all t.
// Operationally on a finite stream (measures.hpp, PlateauTest): the running
// maximum M(t) of ||S_t||_F has growth exponent beta = log2(M(T)/M(T/2)) <= 1/4
// over the last doubling (beta -> 0 for a plateau, 1/2 for random-walk growth,
// 1 for linear attention).
//
// Finding (docs/FINDINGS.md, P1): false. A key orthogonal to the state with
// |v| = V and the sign of S.a^ adds at least V^2 to ||S||^2 every step, so
// ||S_T||_F >= V sqrt(T) (construction below, replayed at 512 bits), and a greedy
// adversary grows it faster still. What holds: the component along the key just
// written is a convex combination, ||S_t k^_t|| <= max(||S_{t-1} k^_t||, ||v_t||);
// the step bound ||S_t||_F <= sigma(c_t) ||S_{t-1}||_F + ||v_t|| with P2's exact
// sigma; and a plateau ||S_t||_F <= sqrt(min(t, Dk)) V when the keys come from
// one orthonormal set (then a^ = k^, the delta rule), or when Dk = 1.
//
// Error model of the comparisons at p bits (u = 2^-p): every inequality below
// is exact in real arithmetic; the computed sides carry relative errors of a
// few (Dk + Dv) u per step, and over T steps with growth at most prod sigma we
// allow tol = 8 T (Dk + Dv) u times the quantities' scale (1e-70 at 256 bits).
#include <gtest/gtest.h>

#include <cmath>

#include "prop_support.hpp"
#include "vla/properties/adversarial.hpp"
#include "vla/properties/counterexample.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/trace.hpp"

using namespace vla;
using namespace vla::props;
using vla::props::test::kBits;

namespace {

std::vector<double> state_norms(const Stream& s, const Options& opt, long bits) {
  const auto r = ref::run_mpfr(s, opt, bits);
  std::vector<double> out;
  for (const auto& x : r.state_norm) out.push_back(double(x));
  return out;
}

// max_t ||v_t||_2, computed at 256 bits (a double sum would carry its own rounding).
double max_value_norm(const Stream& s) {
  ref::MpfrPrecision p(kBits);
  Mpfr V = 0;
  for (int t = 0; t < s.dims.T * s.dims.B * s.dims.H; ++t) {
    Mpfr n2 = 0;
    for (int i = 0; i < s.dims.Dv; ++i) n2 += Mpfr(s.v[std::size_t(t) * s.dims.Dv + i]) * Mpfr(s.v[std::size_t(t) * s.dims.Dv + i]);
    V = std::max(V, sqrt(n2));
  }
  return double(V) * (1 + unit_roundoff_bits(53));  // rounded up: an upper bound
}

double tol(int T, int dk, int dv, long bits) { return 8.0 * T * (dk + dv) * unit_roundoff_bits(bits); }

std::filesystem::path cx_path(const char* name) { return counterexample_dir() / name; }

constexpr int kConstructionT = 1024;

}  // namespace

// The construction (measures.hpp): every step adds at least (V - |S_{t-1}.k^_t|)^2
// to ||S||^2 (an identity when sign(v_t) = sign(S_{t-1}.a^_t) and |S_{t-1}.k^_t| <= V),
// so ||S_T||_F >= V sqrt(T); recomputed at 512 bits from the committed file.
TEST(P1Claim, OrthogonalKeyConstructionGrowsLikeSqrtT) {
  const auto path = cx_path("prop1_bounded_state_sqrt_growth.safetensors");
  if (test::write_counterexamples()) {
    Counterexample cx;
    cx.claim = "prop1-bounded-state";
    cx.c = p1_sqrt_growth_construction(kConstructionT, 1.0, 1.0);
    cx.opt = cx.c.options();
    cx.found_by = "construction p1_sqrt_growth_construction(T=1024, V=1, lambda0=1)";
    cx.note = "unit keys orthogonal to the state, |v_t| = 1: ||S_t||_F >= sqrt(t), no plateau";
    save_counterexample(path, cx, true);
  }
  const Counterexample cx = load_counterexample(path);
  const Stream& s = cx.c.stream;
  ASSERT_EQ(s.dims.T, kConstructionT);
  const double V = max_value_norm(s);
  const long bits = 2 * kBits;
  ref::TraceOptions topt;
  topt.with_A = false;
  topt.with_S = true;
  const auto tr = ref::trace_head_mpfr(s, cx.opt, topt, bits);
  ref::MpfrPrecision p(bits);
  Mat<Mpfr> S_prev = Mat<Mpfr>::Zero(1, 2);
  double worst_leak = 0;  // max |S_{t-1}.k^_t| / V: what rounding the keys to double left
  // Its bound: each stored key is the exact orthogonal unit direction with each component rounded once to double,
  // ||dk|| <= u ||k|| (u = 2^-53), so its normalised direction moves by at most u (first order; 2u covers the
  // second), and |S_{t-1}.k^_t| <= ||S_{t-1}||_F 2u.
  double leak_bound = 0;
  for (const auto& st : tr) {
    const Mpfr sk = (S_prev * st.k_hat)(0), sa = (S_prev * st.a_hat)(0);
    const double v = s.v[st.t];
    worst_leak = std::max(worst_leak, double(abs(sk)) / V);
    ASSERT_TRUE((v > 0) == (sa >= 0) || sa == 0) << "t=" << st.t;
    const Mpfr gain = st.S.squaredNorm() - S_prev.squaredNorm();
    const Mpfr floor = (Mpfr(V) - abs(sk)) * (Mpfr(V) - abs(sk));
    ASSERT_GE(double(gain - floor), -tol(st.t + 1, 2, 1, bits) * double(st.S.squaredNorm())) << "t=" << st.t;
    leak_bound = std::max(leak_bound, 2 * std::ldexp(double(S_prev.norm()), -53) / V);
    S_prev = st.S;
  }
  const double final_norm = double(tr.back().state_norm);
  std::cout << "||S_T||_F = " << final_norm << " at T = " << s.dims.T << ", V sqrt(T) = " << V * std::sqrt(s.dims.T)
            << ", worst |S.k^|/V = " << worst_leak << " (bound " << leak_bound << ")\n";
  EXPECT_LE(worst_leak, leak_bound);
  EXPECT_GE(final_norm, V * std::sqrt(double(s.dims.T)) * (1 - worst_leak));
  const PlateauTest pt = state_norm_plateau_test(state_norms(s, cx.opt, kBits));
  EXPECT_FALSE(pt.plateau) << "beta = " << pt.beta;
  EXPECT_GE(pt.beta, 0.5 * (1 - 1e-9));  // sqrt growth at least, over the last doubling too
}

// RapidCheck with the adversarial generator (greedy search maximising ||S_t||_F
// under ||v_t|| <= 1 and unit keys) finds streams whose state has not reached a
// plateau, and shrinks to the shortest horizon allowed (T = 64).
TEST(P1Claim, AdversarialSearchFindsNoPlateau) {
  GenLimits lim;
  lim.min_T = 64;
  lim.max_T = 160;
  lim.min_Dk = 2;
  lim.max_Dk = 4;
  lim.max_Dv = 1;
  std::optional<Case> last_failing;
  const auto found = test::find_counterexample(
      [&] {
        const Case c = *gen_adversarial(objective_state_norm, lim, 1.0);
        const PlateauTest pt = state_norm_plateau_test(state_norms(c.stream, c.options(), kBits));
        if (!pt.plateau) {
          last_failing = c;
          RC_FAIL("beta = " + std::to_string(pt.beta));
        }
      },
      50);
  ASSERT_TRUE(found.has_value()) << "the adversary found no stream without a plateau";
  ASSERT_TRUE(last_failing.has_value());
  EXPECT_EQ(last_failing->stream.dims.T, 64);
  EXPECT_EQ(last_failing->stream.dims.Dk, 2);
  const auto path = cx_path("prop1_bounded_state_adversarial.safetensors");
  if (test::write_counterexamples()) {
    Counterexample cx;
    cx.claim = "prop1-bounded-state";
    cx.c = *last_failing;
    cx.opt = last_failing->options();
    cx.found_by = "rapidcheck shrink of gen_adversarial(objective_state_norm, V = 1), seed " +
                  std::to_string(rc::detail::configuration().testParams.seed) + " (test P1Claim.AdversarialSearchFindsNoPlateau)";
    cx.note = "greedy adversary, unit keys, ||v_t|| <= 1: the state norm keeps growing (no plateau by T)";
    save_counterexample(path, cx, true);
  }
  // The committed one replays at 512 bits: growth exponent above the plateau's 1/4.
  const Counterexample cx = load_counterexample(path);
  const PlateauTest pt = state_norm_plateau_test(state_norms(cx.c.stream, cx.opt, 2 * kBits));
  std::cout << "committed adversarial case: T = " << pt.T << ", M(T/2) = " << pt.max_half << ", M(T) = " << pt.max_full
            << ", beta = " << pt.beta << " (plateau needs <= " << PlateauTest::kBetaMax << ")\n";
  EXPECT_FALSE(pt.plateau);
  EXPECT_LE(max_value_norm(cx.c.stream), 1.0 + 1e-15);
}

// ---- What holds ------------------------------------------------------------------

// The key component just written is a convex combination (c_t in (0, 1]):
// ||S_t k^_t|| <= max(||S_{t-1} k^_t||, ||v_t||); and the whole state obeys the
// step bound ||S_t||_F <= sigma(c_t) ||S_{t-1}||_F + ||v_t|| with P2's exact
// sigma (Dk >= 2; for Dk = 1, S_t = v_t k^T exactly).
VLA_PROP(P1Exact, KeyComponentAndStepBound, 150, ()) {
  GenLimits lim;
  lim.max_T = 16;
  lim.max_Dk = 5;
  lim.max_Dv = 3;
  const Case c = *gen_any_case(lim);
  const Stream& s = c.stream;
  ref::TraceOptions topt;
  topt.with_A = false;
  topt.with_S = true;
  const auto tr = ref::trace_head_mpfr(s, c.options(), topt, kBits);
  ref::MpfrPrecision p(kBits);
  const int dk = s.dims.Dk, dv = s.dims.Dv;
  Mat<Mpfr> S_prev = Mat<Mpfr>::Zero(dv, dk);
  for (const auto& st : tr) {
    Vec<Mpfr> v(dv);
    for (int i = 0; i < dv; ++i) v(i) = Mpfr(s.v[s.dims.off(0, st.t, 0, dv) + i]);
    const double scale = double(S_prev.norm() + v.norm() + st.S.norm());
    const double tl = tol(st.t + 1, dk, dv, kBits) * scale;
    const double written = double((st.S * st.k_hat).norm());
    RC_ASSERT(written <= std::max(double((S_prev * st.k_hat).norm()), double(v.norm())) + tl);
    if (dk == 1) {
      RC_ASSERT(double(abs(st.S.norm() - v.norm())) <= tl);
    } else {
      RC_ASSERT(double(st.S.norm()) <= double(jacobian_norm_of_cos<Mpfr>(st.c) * S_prev.norm() + v.norm()) + tl);
    }
    S_prev = st.S;
  }
}

// Keys from one orthonormal set (coordinate axes in any order, identity map):
// a^_t = k^_t, the update is the delta rule, each direction keeps its last
// value, so ||S_t||_F <= sqrt(min(t, Dk)) max_s ||v_s||.
VLA_PROP(P1Holds, OrthonormalKeysPlateauAtSqrtDkV, 200, ()) {
  const int dk = *rc::gen::inRange(1, 6);
  const int dv = *rc::gen::inRange(1, 3);
  const int T = *rc::gen::inRange(1, 40);
  Stream s;
  s.dims = Dims{1, T, 1, dk, dv};
  for (int t = 0; t < T; ++t) {
    const int axis = *rc::gen::inRange(0, dk);
    for (int j = 0; j < dk; ++j) s.k.push_back(j == axis ? 1.0 : 0.0);
    for (int j = 0; j < dk; ++j) s.q.push_back(1.0);
    for (int i = 0; i < dv; ++i) s.v.push_back(*rc::gen::inRange(-100, 101) * 0.01);
  }
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.lambda0 = std::pow(10.0, *rc::gen::inRange(-3, 4));
  const double V = max_value_norm(s);
  const auto norms = state_norms(s, opt, kBits);
  for (int t = 0; t < T; ++t)
    RC_ASSERT(norms[t] <= std::sqrt(double(std::min(t + 1, dk))) * V * (1 + tol(t + 1, dk, dv, kBits)));
}
