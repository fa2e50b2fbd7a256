// Rounding a double once to bf16 (the inputs of the bf16 kernels): exact
// round-to-nearest-even, including the cases where rounding to float first
// would round twice and go the wrong way.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vla/core/bf16.hpp"

using vla::core::round_bf16;
using vla::core::round_bf16_from_double;

TEST(Bf16FromDouble, ExactAndTies) {
  for (double x : {0.0, 1.0, -2.5, 0.15625, 65280.0}) EXPECT_EQ(round_bf16_from_double(x), x);
  EXPECT_EQ(std::signbit(round_bf16_from_double(-0.0)), true);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1).
  EXPECT_EQ(round_bf16_from_double(1.0 + std::ldexp(1.0, -8)), 1.0);
  // 1 + 3 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(round_bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(round_bf16_from_double(-(1.0 + std::ldexp(1.0, -8))), -1.0);
}

// Just above a tie by less than half a float ulp: to float it rounds onto the
// tie (1 + 2^-8), and the tie then goes to even (1), but the double is above the
// midpoint, so the nearest bf16 is 1 + 2^-7. Symmetric below the tie.
TEST(Bf16FromDouble, NoDoubleRounding) {
  const double above = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  ASSERT_EQ(static_cast<float>(above), 1.0f + std::ldexp(1.0f, -8));  // the float step lands on the tie
  EXPECT_EQ(round_bf16(static_cast<float>(above)), 1.0f);            // what rounding twice gives
  EXPECT_EQ(round_bf16_from_double(above), 1.0 + std::ldexp(1.0, -7));
  const double below = 1.0 + 3 * std::ldexp(1.0, -8) - std::ldexp(1.0, -30);
  EXPECT_EQ(round_bf16(static_cast<float>(below)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(round_bf16_from_double(below), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(round_bf16_from_double(-above), -(1.0 + std::ldexp(1.0, -7)));
}

TEST(Bf16FromDouble, SubnormalsAndUnderflow) {
  const double min_sub = std::ldexp(1.0, -133);  // the smallest bf16 subnormal
  EXPECT_EQ(round_bf16_from_double(min_sub), min_sub);
  EXPECT_EQ(round_bf16_from_double(0.5 * min_sub), 0.0);                       // tie with zero: even
  EXPECT_EQ(round_bf16_from_double(0.5 * min_sub * (1 + 1e-9)), min_sub);       // just above the tie
  EXPECT_EQ(round_bf16_from_double(1.5 * min_sub), 2 * min_sub);                // tie: even
  EXPECT_EQ(round_bf16_from_double(1e-300), 0.0);                                // far below float's range
  EXPECT_EQ(round_bf16_from_double(-1e-300), 0.0);
  EXPECT_TRUE(std::signbit(round_bf16_from_double(-1e-300)));
}

TEST(Bf16FromDouble, OverflowInfNaN) {
  const double max_bf16 = std::ldexp(255.0, 120);  // 0x7f7f
  EXPECT_EQ(round_bf16_from_double(max_bf16), max_bf16);
  const double half_ulp = std::ldexp(1.0, 119);
  EXPECT_EQ(round_bf16_from_double(max_bf16 + half_ulp * (1 - 1e-9)), max_bf16);
  EXPECT_TRUE(std::isinf(round_bf16_from_double(max_bf16 + half_ulp)));  // tie: even is the next binade, Inf
  EXPECT_TRUE(std::isinf(round_bf16_from_double(1e300)));
  EXPECT_TRUE(std::isinf(round_bf16_from_double(-1e300)));
  EXPECT_TRUE(std::isinf(round_bf16_from_double(std::numeric_limits<double>::infinity())));
  EXPECT_TRUE(std::isnan(round_bf16_from_double(std::numeric_limits<double>::quiet_NaN())));
}

// Against an exhaustive search over neighbouring bf16 values for many doubles.
TEST(Bf16FromDouble, NearestBf16BySearch) {
  std::uint64_t state = 12345;
  for (int n = 0; n < 200000; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(static_cast<double>(state >> 11) / 9007199254740992.0 + 0.5, int((state >> 3) % 200) - 100) *
                     ((state & 1) ? -1 : 1);
    const float r = round_bf16_from_double(x);
    // Neighbours of r in bf16: r - ulp, r + ulp. r must be nearest, ties to even.
    const std::uint16_t rb = vla::core::bf16_bits_rne(r);
    const float lo = vla::core::bf16_bits_to_float(static_cast<std::uint16_t>(rb - 1));
    const float hi = vla::core::bf16_bits_to_float(static_cast<std::uint16_t>(rb + 1));
    const double dr = std::fabs(x - r), dlo = std::fabs(x - lo), dhi = std::fabs(x - hi);
    ASSERT_LE(dr, dlo) << x;
    ASSERT_LE(dr, dhi) << x;
    if (dr == dlo || dr == dhi) ASSERT_EQ(rb & 1, 0) << "tie not to even at " << x;
  }
}
