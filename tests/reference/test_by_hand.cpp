// Small cases derived by hand (derivations in the comments), run through the
// reference at 256 bits. The hand values are evaluated in Mpfr at 256 bits too,
// so both sides carry at most a few dozen roundings of 2^-256: the tolerance is
// 2^-240 relative (16 bits of slack for those roundings).
#include <gtest/gtest.h>

#include <cmath>

#include "streams.hpp"
#include "vla/reference/models.hpp"

using namespace vla;
using namespace vla::ref;

namespace {
constexpr long kBits = 256;

::testing::AssertionResult Close(const Mpfr& got, const Mpfr& want, double scale = 0.0) {
  MpfrPrecision scope(kBits);
  const Mpfr s = scale > 0 ? Mpfr(scale) : (abs(want) > Mpfr(0) ? abs(want) : Mpfr(1));
  const Mpfr tol = ldexp(s, -240);
  if (abs(got - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got.str(40) << " want " << want.str(40);
}

Stream make(int T, int Dk, int Dv, std::vector<double> q, std::vector<double> k, std::vector<double> v, std::vector<double> u = {}) {
  Stream s;
  s.dims = {1, T, 1, Dk, Dv};
  s.q = std::move(q);
  s.k = std::move(k);
  s.v = std::move(v);
  s.u = std::move(u);
  return s;
}
}  // namespace

// Given u != k^. D = 2, identity map, raw readout, lambda0 = 1.
// t=1: k = e1 (k^ = e1), u = (0, 2): z = (0, 2), delta = 5, A_1 = diag(1, 1/5);
//      w = e1 so a^ = e1, c = 1; S_1 = 3 e1^T; y = S_1 (1, 1) = 3.
// t=2: k = (1, 1) (k^ = (1, 1)/sqrt2), u = e1: z = e1, delta = 2, A_2 = diag(1/2, 1/5);
//      w = (1/2, 1/5)/sqrt2, a^ = (5, 2)/sqrt29, c = 7/sqrt58;
//      r = 1 - S_1 k^ = 1 - 3/sqrt2; S_2 = (3, 0) + r (5, 2)/sqrt29; y = S_2 (2, -1).
TEST(ReferenceByHand, GivenPenaltyDirection) {
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.readout = Readout::raw;
  const Stream s = make(2, 2, 1, {1, 1, 2, -1}, {1, 0, 1, 1}, {3, 1}, {0, 2, 1, 0});
  const Result<Mpfr> r = run_mpfr(s, opt, kBits);
  MpfrPrecision scope(kBits);
  const Mpfr sq2 = sqrt(Mpfr(2)), sq29 = sqrt(Mpfr(29));
  EXPECT_TRUE(Close(r.A[0], Mpfr(1) / 2));
  EXPECT_TRUE(Close(r.A[1], 0, 1.0));
  EXPECT_TRUE(Close(r.A[2], 0, 1.0));
  EXPECT_TRUE(Close(r.A[3], Mpfr(1) / 5));
  EXPECT_TRUE(Close(r.o[0], 3));
  EXPECT_TRUE(Close(r.gate_cos[0], 1));
  EXPECT_TRUE(Close(r.gate_cos[1], Mpfr(7) / sqrt(Mpfr(58))));
  const Mpfr rr = Mpfr(1) - Mpfr(3) / sq2;
  const Mpfr s0 = Mpfr(3) + rr * 5 / sq29, s1 = rr * 2 / sq29;
  EXPECT_TRUE(Close(r.S[0], s0));
  EXPECT_TRUE(Close(r.S[1], s1));
  EXPECT_TRUE(Close(r.o[1], s0 * 2 - s1));
  EXPECT_TRUE(Close(r.state_norm[1], sqrt(s0 * s0 + s1 * s1)));
}

// Linear attention: S_t = sum v_s phi(k_s)^T, n_t = sum phi(k_s), so the ratio
// readout is the phi-kernel weighted mean sum_s v_s w_s / sum_s w_s with
// w_s = phi(k_s) . phi(q_t). Dk = 2, Dv = 1, elu1: phi(x) = x + 1 (x > 0), e^x.
TEST(ReferenceByHand, LinearAttentionIsKernelWeightedMean) {
  Options opt;
  opt.model = Model::linear;
  const Stream s = make(2, 2, 1, {0.5, -1, 2, 0}, {1, -2, -0.5, 3}, {4, -6});
  const Result<Mpfr> r = run_mpfr(s, opt, kBits);
  MpfrPrecision scope(kBits);
  const Mpfr k1a = 2, k1b = exp(Mpfr(-2)), k2a = exp(Mpfr(-0.5)), k2b = 4;
  const Mpfr q1a = 1.5, q1b = exp(Mpfr(-1)), q2a = 3, q2b = 1;
  const Mpfr w11 = k1a * q1a + k1b * q1b;
  EXPECT_TRUE(Close(r.o[0], Mpfr(4)));  // one term: the mean is v_1
  const Mpfr w21 = k1a * q2a + k1b * q2b, w22 = k2a * q2a + k2b * q2b;
  EXPECT_TRUE(Close(r.o[1], (4 * w21 - 6 * w22) / (w21 + w22)));
  EXPECT_TRUE(Close(r.S[0], 4 * k1a - 6 * k2a));
  EXPECT_TRUE(Close(r.S[1], 4 * k1b - 6 * k2b));
  (void)w11;
}

// DeltaNet, D = 1 (k^ = 1): S_t = g S + beta (v - g S) = g (1 - beta) S + beta v.
// beta = g = 1/2: S_t = S/4 + v/2; with v = 8, 4, -2: S = 4, 3, -1/4.
// Ratio readout: o_t = S_t / n_t, n_t = sum phi(k_s).
TEST(ReferenceByHand, DeltaNetWithDecay) {
  Options opt;
  opt.model = Model::deltanet;
  opt.deltanet_beta = 0.5;
  opt.deltanet_decay = 0.5;
  const Stream s = make(3, 1, 1, {1, 1, 1}, {1, 0, -1}, {8, 4, -2});
  const Result<Mpfr> r = run_mpfr(s, opt, kBits);
  MpfrPrecision scope(kBits);
  const Mpfr n1 = 2, n2 = 3, n3 = Mpfr(3) + exp(Mpfr(-1));
  EXPECT_TRUE(Close(r.o[0], Mpfr(4) / n1));
  EXPECT_TRUE(Close(r.o[1], Mpfr(3) / n2));
  EXPECT_TRUE(Close(r.o[2], Mpfr(-0.25) / n3));
  EXPECT_TRUE(Close(r.S[0], -0.25));
  EXPECT_TRUE(Close(r.state_norm[1], 3));
  EXPECT_TRUE(r.A.empty());
}

// Softmax, Dk = Dv = 1: q_1 = 0 gives uniform weights; at t = 2 with q = 1,
// k_1 = 0, k_2 = ln 3 the weights are e^0 : e^(ln 3) = 1 : 3, so
// o_2 = (v_1 + 3 v_2) / 4. state_norm_t = sqrt(sum_s k_s^2 + v_s^2).
TEST(ReferenceByHand, SoftmaxWeights) {
  Options opt;
  opt.model = Model::softmax;
  const double ln3 = std::log(3.0);  // the stream holds the double nearest ln 3
  const Stream s = make(2, 1, 1, {0, 1}, {0, ln3}, {2, 10});
  const Result<Mpfr> r = run_mpfr(s, opt, kBits);
  MpfrPrecision scope(kBits);
  EXPECT_TRUE(Close(r.o[0], 2));
  const Mpfr e = exp(Mpfr(ln3));  // 3 up to the rounding of ln 3 to double
  EXPECT_TRUE(Close(r.o[1], (Mpfr(2) + e * 10) / (Mpfr(1) + e)));
  EXPECT_TRUE(Close(r.state_norm[0], 2));
  EXPECT_TRUE(Close(r.state_norm[1], sqrt(Mpfr(4) + Mpfr(ln3) * Mpfr(ln3) + 100)));
  for (const auto& x : r.S) EXPECT_TRUE(mpfr_zero_p(x.get()));
  ASSERT_EQ(r.A.size(), 1u);
  EXPECT_TRUE(mpfr_zero_p(r.A[0].get()));
}

// Softmax against the direct formula o_t = sum_s e^{q_t.k_s/sqrt Dk} v_s / sum_s e^{...}
// (no max subtraction) on a small random stream with several heads.
TEST(ReferenceByHand, SoftmaxMatchesDirectFormula) {
  Options opt;
  opt.model = Model::softmax;
  const Stream s = test::random_stream(2, 5, 2, 3, 2, 7);
  const Result<Mpfr> r = run_mpfr(s, opt, kBits);
  MpfrPrecision scope(kBits);
  const Dims& d = s.dims;
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h)
      for (int t = 0; t < d.T; ++t) {
        Mpfr z = 0;
        std::vector<Mpfr> num(d.Dv, Mpfr(0));
        for (int u = 0; u <= t; ++u) {
          Mpfr sc = 0;
          for (int j = 0; j < d.Dk; ++j) sc += Mpfr(s.q[d.off(b, t, h, d.Dk) + j]) * Mpfr(s.k[d.off(b, u, h, d.Dk) + j]);
          const Mpfr e = exp(sc / sqrt(Mpfr(d.Dk)));
          z += e;
          for (int i = 0; i < d.Dv; ++i) num[i] += e * Mpfr(s.v[d.off(b, u, h, d.Dv) + i]);
        }
        for (int i = 0; i < d.Dv; ++i) EXPECT_TRUE(Close(r.o[d.off(b, t, h, d.Dv) + i], num[i] / z, 1.0)) << b << h << t << i;
      }
}
