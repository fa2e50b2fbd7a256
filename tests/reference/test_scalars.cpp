// The scalar types: exact precision control, one rounding per operation, the
// in-place forms used by the fast MPFR path, exact conversions, Eigen support.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <Eigen/SVD>
#include <random>

#include "vla/core/recurrence.hpp"
#include "vla/reference/mpfr_eigen.hpp"
#include "vla/reference/policy.hpp"
#include "vla/reference/scalars.hpp"

using namespace vla::ref;

TEST(Mpfr, PrecisionIsExactBitsAndScoped) {
  const mpfr_prec_t before = Mpfr::default_bits();
  {
    MpfrPrecision scope(256);
    const Mpfr a(1), b = Mpfr(1) / 3;
    EXPECT_EQ(a.bits(), 256);
    EXPECT_EQ(b.bits(), 256);
    MpfrPrecision inner(77);
    const Mpfr c = b;  // a copy keeps its source's precision
    EXPECT_EQ(c.bits(), 256);
    EXPECT_EQ((b + b).bits(), 77);  // a new result takes the thread's precision
  }
  EXPECT_EQ(Mpfr::default_bits(), before);
}

// 1/3 = 0.0101...b rounded to p = 64 bits keeps 2^-2..2^-65 (2^-65 is a 0 bit);
// the rest, 2^-66 * 4/3, exceeds half an ulp (2^-66), so it rounds up by 2^-65:
// x = 1/3 + 2^-65/3 and 3x = 1 + 2^-65 exactly (evaluated at 200 bits).
TEST(Mpfr, OneRoundingPerOperation) {
  MpfrPrecision scope(64);
  const Mpfr x = Mpfr(1) / 3;
  MpfrPrecision wide(200);
  EXPECT_TRUE(Mpfr(3) * x == Mpfr(1) + ldexp(Mpfr(1), -65));
}

// The in-place forms give bit for bit the values of the generic forms.
TEST(Mpfr, InPlaceFormsEqualGenericForms) {
  MpfrPrecision scope(61);  // an odd precision: any double rounding would show
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> U(-2, 2);
  for (int rep = 0; rep < 200; ++rep) {
    const Mpfr a = Mpfr(U(gen)) / 7, z = Mpfr(U(gen)) / 3, g = Mpfr(U(gen)) / 11;
    Mpfr x = a;
    sm_update(x, z, g);
    EXPECT_TRUE(x == vla::core::sm_entry(a, z, g)) << rep;
    EXPECT_TRUE(x == fma(-z, g, a)) << rep;
    Mpfr y = a;
    state_update(y, z, g);
    EXPECT_TRUE(y == fma(z, g, a)) << rep;
    Mpfr acc = a;
    fma_into(acc, z, g);
    EXPECT_TRUE(acc == y) << rep;
  }
  // The reference policy's dot is the left-to-right FMA chain.
  std::vector<Mpfr> u{Mpfr(1) / 3, Mpfr(-2) / 7, Mpfr(5) / 9}, v{Mpfr(1) / 5, Mpfr(3) / 11, Mpfr(-1) / 13};
  Mpfr chain = 0;
  for (int j = 0; j < 3; ++j) chain = fma(u[j], v[j], chain);
  EXPECT_TRUE(RefPolicy<Mpfr>::dot(u.data(), v.data(), 3) == chain);
}

// The reference's binary128 arithmetic keeps 113 bits: with a = 1 + 2^-50,
// a*a = 1 + 2^-49 + 2^-100 is exact in 113 bits (it spans 101), so
// a*a - (1 + 2^-49) = 2^-100 exactly, which double (53 bits) would round to 0.
TEST(Float128, DotKeeps113Bits) {
  const Float128 a = 1 + ldexp(Float128(1), -50), c = -(1 + ldexp(Float128(1), -49));
  Float128 acc = c;
  fma_into(acc, a, a);
  EXPECT_TRUE(acc == ldexp(Float128(1), -100));
  const Float128 x[] = {a, Float128(1)}, y[] = {a, c};
  EXPECT_TRUE(RefPolicy<Float128>::dot(x, y, 2) == ldexp(Float128(1), -100));
}

// to_mpfr(Float128) keeps all 113 bits: 1 + 2^-112 and a scaled negative value
// are not doubles; 1/3 at 113 bits is 1/3 - 2^-114/3 (the expansion argument above).
TEST(Float128, ConvertsExactlyToMpfr) {
  MpfrPrecision scope(300);
  const Float128 one_ulp = 1 + ldexp(Float128(1), -112);
  EXPECT_TRUE(to_mpfr(one_ulp, 300) == Mpfr(1) + ldexp(Mpfr(1), -112));
  const Float128 neg = -ldexp(one_ulp, -70);
  EXPECT_TRUE(to_mpfr(neg, 300) == -ldexp(Mpfr(1) + ldexp(Mpfr(1), -112), -70));
  const Float128 third = Float128(1) / 3;
  EXPECT_TRUE(Mpfr(3) * to_mpfr(third, 300) == Mpfr(1) - ldexp(Mpfr(1), -114));
  EXPECT_TRUE(mpfr_zero_p(to_mpfr(Float128(0), 300).get()));
}

// Eigen runs at the thread's precision: the inverse of the Hilbert matrix
// (integer entries, known in closed form) and the singular values of a diagonal.
TEST(Mpfr, EigenDecompositions) {
  MpfrPrecision scope(200);
  using M = Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>;
  const int n = 4;
  M h(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) h(i, j) = Mpfr(1) / Mpfr(i + j + 1);
  const M inv = h.partialPivLu().inverse();
  // (H_4)^{-1} row 0 = [16, -120, 240, -140]; its entries are integers.
  const double row0[] = {16, -120, 240, -140};
  for (int j = 0; j < n; ++j) EXPECT_LT(double(abs(inv(0, j) - Mpfr(row0[j]))), 1e-45) << j;
  M d = M::Zero(3, 3);
  d(0, 0) = -3;
  d(1, 1) = Mpfr(1) / 7;
  d(2, 2) = 2;
  Eigen::JacobiSVD<M> svd(d);
  EXPECT_LT(double(abs(svd.singularValues()(0) - 3)), 1e-55);
  EXPECT_LT(double(abs(svd.singularValues()(2) - Mpfr(1) / 7)), 1e-55);
}
