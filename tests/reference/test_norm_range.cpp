// The double reference's norms at the ends of the exponent range
// (RefPolicy::norm, frobenius_norm): keys of size 1e200 (squares overflow) and
// 1e-200 (squares underflow) give the same unit keys as keys of size 1.
// (binary128 has the same norms, but no double input takes its squares out of
// its range, 2^+-16382.)
//
// The check is exact, no tolerance: with the identity feature map, scaling every
// key (and u) by 2^m scales phi(k), ||phi(k)|| and u by 2^m exactly, leaves k^,
// u / ||u||, A, S and the gate unchanged, and scales the normaliser by 2^m and
// the ratio readout by 2^-m, exactly, at any precision: so the scaled run must
// reproduce the unscaled run bit for bit, and certify the same number of bits.
#include <gtest/gtest.h>

#include <cmath>

#include "streams.hpp"
#include "vla/reference/certify.hpp"

using namespace vla;
using namespace vla::ref;

namespace {

constexpr int kUp = 664;  // 2^664 ~ 1.2e200

Stream scaled_keys(const Stream& s, int m) {
  Stream t = s;
  for (auto& x : t.k) x = std::ldexp(x, m);
  for (auto& x : t.u) x = std::ldexp(x, m);
  return t;
}

template <class T>
bool bits_equal(const T& a, const T& b) {
  return a == b && std::signbit(double(a)) == std::signbit(double(b));
}

// Every output of `scaled` equals the unscaled run's, o times 2^-m.
template <class Scalar>
void expect_exactly_scaled(const Result<Scalar>& plain, const Result<Scalar>& scaled, int m) {
  using std::ldexp;
  ASSERT_EQ(plain.o.size(), scaled.o.size());
  for (std::size_t i = 0; i < plain.o.size(); ++i)
    EXPECT_TRUE(bits_equal(Scalar(ldexp(plain.o[i], -m)), scaled.o[i])) << "o[" << i << "] " << double(scaled.o[i]);
  for (std::size_t i = 0; i < plain.S.size(); ++i) EXPECT_TRUE(bits_equal(plain.S[i], scaled.S[i])) << "S[" << i << "]";
  for (std::size_t i = 0; i < plain.A.size(); ++i) EXPECT_TRUE(bits_equal(plain.A[i], scaled.A[i])) << "A[" << i << "]";
  for (std::size_t i = 0; i < plain.state_norm.size(); ++i)
    EXPECT_TRUE(bits_equal(plain.state_norm[i], scaled.state_norm[i])) << "state_norm[" << i << "]";
  for (std::size_t i = 0; i < plain.gate_cos.size(); ++i)
    EXPECT_TRUE(bits_equal(plain.gate_cos[i], scaled.gate_cos[i])) << "gate_cos[" << i << "]";
}

Options identity_options(bool unit_scaled_u) {
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.u_unit_scaled = unit_scaled_u;
  return opt;
}

}  // namespace

TEST(NormRange, DoubleKeysOf1e200And1eMinus200AreScaledExactly) {
  for (const bool with_u : {false, true}) {
    const Stream s = test::random_stream(1, 12, 2, 8, 6, 77, with_u);
    const Options opt = identity_options(with_u);
    const auto plain = run_model<double>(s, opt);
    for (const int m : {kUp, -kUp}) {
      SCOPED_TRACE("keys times 2^" + std::to_string(m) + (with_u ? ", unit-scaled u times the same" : ""));
      expect_exactly_scaled(plain, run_model<double>(scaled_keys(s, m), opt), m);
    }
  }
}

// The state norm ||S_t||_F rescales too: values of size 2^600 give a state
// whose squares overflow; S and its norm are exactly 2^600 times the plain ones.
TEST(NormRange, DoubleStateNormOfAHugeStateIsScaledExactly) {
  const Stream s = test::random_stream(1, 10, 1, 6, 6, 79);
  Stream big = s;
  for (auto& x : big.v) x = std::ldexp(x, 600);
  const auto plain = run_model<double>(s, Options{});
  const auto scaled = run_model<double>(big, Options{});
  for (std::size_t i = 0; i < plain.state_norm.size(); ++i) {
    EXPECT_TRUE(std::isfinite(scaled.state_norm[i])) << i;
    EXPECT_EQ(std::ldexp(plain.state_norm[i], 600), scaled.state_norm[i]) << i;
  }
}

// The certified double reference agrees with MPFR at extreme keys as well as at
// keys of size 1: the same certified bits, and an error (against a 512-bit run)
// within them.
TEST(NormRange, DoubleReferenceCertifiesTheSameBitsAtExtremeKeys) {
  const Stream s = test::random_stream(1, 10, 1, 6, 6, 80);
  const Options opt = identity_options(false);
  CertifyRequest rq;
  rq.scalar = ScalarKind::f64;
  const Certified base = run_certified(s, opt, rq);
  ASSERT_GT(base.certified_bits, 0.0) << base.method;
  for (const int m : {kUp, -kUp}) {
    SCOPED_TRACE("keys times 2^" + std::to_string(m));
    const Stream t = scaled_keys(s, m);
    const Certified c = run_certified(t, opt, rq);
    EXPECT_EQ(c.certified_bits, base.certified_bits) << c.method << " / " << base.method;
    const double err = test::normwise_error(run_model<double>(t, opt), run_mpfr(t, opt, 512));
    EXPECT_LE(err, std::ldexp(1.0, -int(std::floor(c.certified_bits)))) << c.method;
  }
}
