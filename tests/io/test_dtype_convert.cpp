// Exactness of the conversions: bf16 writing is correctly rounded from double
// (not double-rounded through float), F16 decoding is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vla/core/bf16.hpp"
#include "vla/io/dtype_convert.hpp"

namespace vla::io {
namespace {

TEST(DtypeConvert, Bf16FromDoubleAvoidsDoubleRoundingAtTies) {
  // 1 + 2^-8 is the midpoint between bf16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81).
  // Just above it, (float)x is the midpoint itself and bf16 RNE then goes to
  // even 0x3F80: the wrong side. Correct rounding gives 0x3F81.
  const double mid = 1.0 + std::ldexp(1.0, -8);
  const double above = mid + std::ldexp(1.0, -40), below = mid - std::ldexp(1.0, -40);
  ASSERT_EQ(core::bf16_bits_rne(static_cast<float>(above)), 0x3F80);  // the double-rounding trap is real
  EXPECT_EQ(bf16_bits_from_double(above), 0x3F81);
  EXPECT_EQ(bf16_bits_from_double(below), 0x3F80);
  EXPECT_EQ(bf16_bits_from_double(mid), 0x3F80);  // exact tie: to even
  // Odd lower neighbour: the tie between 0x3F81 and 0x3F82 goes up to even.
  const double mid2 = 1.0 + std::ldexp(1.0, -7) + std::ldexp(1.0, -8);
  EXPECT_EQ(bf16_bits_from_double(mid2), 0x3F82);
  EXPECT_EQ(bf16_bits_from_double(mid2 - std::ldexp(1.0, -40)), 0x3F81);
  EXPECT_EQ(bf16_bits_from_double(-(mid2 - std::ldexp(1.0, -40))), 0xBF81);
}

TEST(DtypeConvert, Bf16FromDoubleSpecialValues) {
  EXPECT_EQ(bf16_bits_from_double(0.0), 0x0000);
  EXPECT_EQ(bf16_bits_from_double(-0.0), 0x8000);
  EXPECT_EQ(bf16_bits_from_double(INFINITY), 0x7F80);
  EXPECT_EQ(bf16_bits_from_double(-INFINITY), 0xFF80);
  EXPECT_TRUE(std::isnan(bf16_bits_to_double(bf16_bits_from_double(NAN))));
  EXPECT_EQ(bf16_bits_from_double(1e300), 0x7F80);    // overflow -> Inf
  EXPECT_EQ(bf16_bits_from_double(1e-300), 0x0000);   // far below the smallest subnormal -> 0
  EXPECT_EQ(bf16_bits_from_double(-1e-300), 0x8000);
  // bf16's largest finite value is 0x7F7F = (2 - 2^-7) 2^127; values up to the
  // midpoint with 2^128 round to it, from the midpoint on to Inf (tie to even).
  const double big = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  const double overflow_mid = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  EXPECT_EQ(bf16_bits_from_double(big), 0x7F7F);
  EXPECT_EQ(bf16_bits_from_double(std::nextafter(overflow_mid, 0.0)), 0x7F7F);
  EXPECT_EQ(bf16_bits_from_double(overflow_mid), 0x7F80);
  // The smallest bf16 subnormal is 2^-133; half of it ties to 0 (even), just above goes up.
  EXPECT_EQ(bf16_bits_from_double(std::ldexp(1.0, -134)), 0x0000);
  EXPECT_EQ(bf16_bits_from_double(std::ldexp(1.0, -134) * (1 + 1e-9)), 0x0001);
}

// Nearest with ties to even, checked against both neighbours.
TEST(DtypeConvert, Bf16FromDoubleIsNearestOnRandomValues) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(-140, 126);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(mant(rng), ex(rng)) * (i % 2 ? -1 : 1);
    const std::uint16_t b = bf16_bits_from_double(x);
    const double r = bf16_bits_to_double(b);
    ASSERT_TRUE(std::isfinite(r)) << x;
    const std::uint16_t mag = b & 0x7fff;
    const double up = bf16_bits_to_double(static_cast<std::uint16_t>(b + 1));
    const double down = mag == 0 ? -r : bf16_bits_to_double(static_cast<std::uint16_t>(b - 1));
    // Within a binade the differences are exact in double (Sterbenz); across
    // the subnormal boundary they are exact since every value is a multiple of 2^-1074.
    const double e = std::fabs(x - r);
    ASSERT_LE(e, std::fabs(x - up)) << x;
    if (!std::isinf(down)) ASSERT_LE(e, std::fabs(x - down)) << x;
    if (e == std::fabs(x - up) || e == std::fabs(x - down)) ASSERT_EQ(b & 1, 0) << "tie not to even at " << x;
  }
}

TEST(DtypeConvert, F16DecodingByHand) {
  EXPECT_EQ(f16_bits_to_double(0x3C00), 1.0);
  EXPECT_EQ(f16_bits_to_double(0xC000), -2.0);
  EXPECT_EQ(f16_bits_to_double(0x3555), 1365.0 / 4096.0);  // 0x3555: exp 13, man 0x155 -> (1024+341) 2^-12
  EXPECT_EQ(f16_bits_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(f16_bits_to_double(0x03FF), 1023 * std::ldexp(1.0, -24));
  EXPECT_EQ(f16_bits_to_double(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(f16_bits_to_double(0x7BFF), 65504.0);
  EXPECT_TRUE(std::signbit(f16_bits_to_double(0x8000)));
  EXPECT_TRUE(std::isinf(f16_bits_to_double(0x7C00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_double(0x7E00)));
}

}  // namespace
}  // namespace vla::io
