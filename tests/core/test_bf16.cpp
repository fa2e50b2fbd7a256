// bf16 rounding must be exact round-to-nearest-even: the twins' bf16 numerics
// are only as good as this function.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "vla/core/bf16.hpp"

using namespace vla::core;

namespace {
float from_bits(std::uint32_t u) { return bits_float(u); }
}  // namespace

TEST(Bf16, ExactValuesAreKept) {
  for (float x : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65280.0f}) EXPECT_EQ(round_bf16(x), x);
}

TEST(Bf16, TiesGoToEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (bf16 has 8 significant bits): even is 1.
  EXPECT_EQ(round_bf16(from_bits(0x3f808000u)), 1.0f);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up.
  EXPECT_EQ(round_bf16(from_bits(0x3f818000u)), from_bits(0x3f820000u));
  // Just above a tie rounds up, just below rounds down.
  EXPECT_EQ(round_bf16(from_bits(0x3f808001u)), from_bits(0x3f810000u));
  EXPECT_EQ(round_bf16(from_bits(0x3f807fffu)), 1.0f);
  // Negative ties are symmetric.
  EXPECT_EQ(round_bf16(from_bits(0xbf808000u)), -1.0f);
}

TEST(Bf16, SubnormalsRoundLikeNormals) {
  // Smallest float subnormal (2^-149) is below half the smallest bf16 subnormal (2^-133): rounds to 0.
  EXPECT_EQ(round_bf16(from_bits(0x00000001u)), 0.0f);
  // 2^-133 (bf16's smallest subnormal) is exact.
  EXPECT_EQ(round_bf16(from_bits(0x00010000u)), from_bits(0x00010000u));
  // Half of it is a tie with 0 (even): 0. Three halves is a tie between 1 and 2 units: 2 (even).
  EXPECT_EQ(round_bf16(from_bits(0x00008000u)), 0.0f);
  EXPECT_EQ(round_bf16(from_bits(0x00018000u)), from_bits(0x00020000u));
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(round_bf16(from_bits(0x007fffffu)), from_bits(0x00800000u));
}

TEST(Bf16, InfinityNaNAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(round_bf16(inf), inf);
  EXPECT_EQ(round_bf16(-inf), -inf);
  EXPECT_TRUE(std::isnan(round_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A signalling NaN whose payload sits only in the low 16 bits must stay NaN, not become Inf.
  EXPECT_TRUE(std::isnan(round_bf16(from_bits(0x7f800001u))));
  EXPECT_TRUE(std::isnan(round_bf16(from_bits(0xff800001u))));
  // FLT_MAX is above the largest bf16 plus half an ulp: overflows to Inf.
  EXPECT_EQ(round_bf16(std::numeric_limits<float>::max()), inf);
  // The largest finite bf16 stays finite.
  EXPECT_EQ(round_bf16(from_bits(0x7f7f0000u)), from_bits(0x7f7f0000u));
}

TEST(Bf16, MatchesReferenceRoundingOnAllSignificands) {
  // Compare against an independent definition: pick the nearer of the two bf16
  // neighbours by exact double arithmetic, ties to the even one.
  for (std::uint32_t hi : {0x3f80u, 0x4049u, 0x0001u, 0xc2f7u}) {
    for (std::uint32_t lo = 0; lo < 0x10000u; ++lo) {  // every pattern, the exact tie 0x8000 among them
      const std::uint32_t bits = (hi << 16) | lo;
      const float x = from_bits(bits);
      const float down = from_bits(bits & 0xffff0000u);
      const float up = from_bits((bits & 0xffff0000u) + 0x10000u);
      const double dd = std::fabs(double(x) - double(down)), du = std::fabs(double(up) - double(x));
      float expect = dd < du ? down : (du < dd ? up : (((bits >> 16) & 1u) ? up : down));
      ASSERT_EQ(round_bf16(x), expect) << std::hex << bits;
    }
  }
}
