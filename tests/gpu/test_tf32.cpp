// tf32 rounding (vla/gpu/tf32.hpp) must be exactly what the tensor cores'
// conversion cvt.rna.tf32.f32 does: round to nearest at 11 significant bits,
// ties away from zero. The chunked-tf32 twin is only as good as this function.
// (The CUDA test compares it with the device instruction on the same values.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "vla/gpu/tf32.hpp"

using vla::gpu::round_tf32;

namespace {
float from_bits(std::uint32_t u) { return vla::core::bits_float(u); }
}  // namespace

TEST(Tf32, ExactValuesAreKept) {
  for (float x : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 1.0f + 0x1p-10f, 65504.0f}) EXPECT_EQ(round_tf32(x), x);
  EXPECT_TRUE(std::signbit(round_tf32(-0.0f)));
}

TEST(Tf32, TiesGoAwayFromZero) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (tf32 has 11 significant bits):
  // away from zero is up, although 1 is the even neighbour (RNE would keep 1).
  EXPECT_EQ(round_tf32(from_bits(0x3f801000u)), from_bits(0x3f802000u));
  // 1 + 3*2^-11, halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up as well.
  EXPECT_EQ(round_tf32(from_bits(0x3f803000u)), from_bits(0x3f804000u));
  // Negative ties go down (away from zero), not towards +Inf.
  EXPECT_EQ(round_tf32(from_bits(0xbf801000u)), from_bits(0xbf802000u));
  // Just below a tie rounds down, just above rounds up.
  EXPECT_EQ(round_tf32(from_bits(0x3f800fffu)), 1.0f);
  EXPECT_EQ(round_tf32(from_bits(0x3f801001u)), from_bits(0x3f802000u));
  // A tie at the top of a binade carries into the exponent: 2 - 2^-11 -> 2.
  EXPECT_EQ(round_tf32(from_bits(0x3ffff000u)), 2.0f);
}

TEST(Tf32, SubnormalsRoundLikeNormals) {
  // tf32 keeps float's exponent: its subnormal spacing is 2^-136 (2^13 float subnormal units).
  EXPECT_EQ(round_tf32(from_bits(0x00000001u)), 0.0f);              // far below half a unit
  EXPECT_EQ(round_tf32(from_bits(0x00001000u)), from_bits(0x00002000u));  // exactly half: away from zero
  EXPECT_EQ(round_tf32(from_bits(0x80001000u)), from_bits(0x80002000u));
  EXPECT_EQ(round_tf32(from_bits(0x00000fffu)), 0.0f);
  EXPECT_EQ(round_tf32(from_bits(0x007ff000u)), from_bits(0x00800000u));  // largest subnormal tie -> smallest normal
}

TEST(Tf32, InfinityNaNAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(round_tf32(inf), inf);
  EXPECT_EQ(round_tf32(-inf), -inf);
  EXPECT_TRUE(std::isnan(round_tf32(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits only in the low 13 bits stays NaN (masking would make it Inf).
  EXPECT_TRUE(std::isnan(round_tf32(from_bits(0x7f800001u))));
  EXPECT_TRUE(std::isnan(round_tf32(from_bits(0xff800001u))));
  // FLT_MAX is above the largest tf32 plus half an ulp: overflows to Inf (no .satfinite).
  EXPECT_EQ(round_tf32(std::numeric_limits<float>::max()), inf);
  EXPECT_EQ(round_tf32(-std::numeric_limits<float>::max()), -inf);
  // The largest finite tf32 stays finite, and so does a value just below its rounding boundary.
  EXPECT_EQ(round_tf32(from_bits(0x7f7fe000u)), from_bits(0x7f7fe000u));
  EXPECT_EQ(round_tf32(from_bits(0x7f7fefffu)), from_bits(0x7f7fe000u));
}

TEST(Tf32, MatchesReferenceRoundingOnAllSignificands) {
  // Against an independent definition: the nearer of the two tf32 neighbours by
  // exact double arithmetic, ties to the one of larger magnitude.
  for (std::uint32_t hi : {0x3f800u, 0x40490u, 0x00010u, 0xc2f70u, 0x00000u}) {
    for (std::uint32_t lo = 0; lo < 0x2000u; ++lo) {
      const std::uint32_t bits = (hi << 12) | lo;
      const float x = from_bits(bits);
      const float down = from_bits(bits & 0xffffe000u);  // towards zero
      const float up = from_bits((bits & 0xffffe000u) + 0x2000u);
      const double dd = std::fabs(double(x) - double(down)), du = std::fabs(double(up) - double(x));
      const float expect = dd < du ? down : up;  // ties: up = away from zero
      ASSERT_EQ(round_tf32(x), expect) << std::hex << bits;
    }
  }
  // The unit roundoff is 2^-11: the largest relative error over a binade.
  double worst = 0;
  for (std::uint32_t lo = 0; lo < 0x800000u; lo += 3) {
    const float x = from_bits(0x3f800000u | lo);
    worst = std::max(worst, std::fabs(double(round_tf32(x)) - double(x)) / double(x));
  }
  EXPECT_LE(worst, std::ldexp(1.0, -11));
  EXPECT_GT(worst, std::ldexp(1.0, -11) * 0.999);
}
