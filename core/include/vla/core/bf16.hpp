// bfloat16 rounding shared by the CPU twins and the CUDA kernels.
//
// Written by hand (rather than using cuda_bf16.h on the host) so that host and
// device round with literally the same code: round-to-nearest-even on the top
// 16 bits of the binary32 pattern, NaN kept NaN (quiet), Inf kept Inf, and
// overflow to Inf as IEEE rounding requires. Subnormals need no special case:
// bf16 shares float's exponent range, so truncating the significand of a float
// subnormal with RNE is exactly the bf16 rounding of that value.
#pragma once

#include <cstdint>
#include <cmath>
#include <cstring>

#include "vla/core/hd.hpp"

namespace vla::core {

VLA_HD std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

VLA_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// The 16-bit pattern of the bf16 nearest to x (ties to even).
VLA_HD std::uint16_t bf16_bits_rne(float x) {
  std::uint32_t u = float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0u) {
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN, sign kept
  }
  const std::uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;  // carries into the exponent give Inf on overflow, as RNE must
  return static_cast<std::uint16_t>(u >> 16);
}

VLA_HD float bf16_bits_to_float(std::uint16_t b) {
  return bits_float(static_cast<std::uint32_t>(b) << 16);
}

// x rounded to the nearest bf16, returned as a float holding that value exactly.
VLA_HD float round_bf16(float x) { return bf16_bits_to_float(bf16_bits_rne(x)); }

// The bf16 nearest to a double (ties to even), rounded once. Rounding the
// double to float first would round twice and can miss a tie's direction; the
// float here is rounded to odd instead (truncate, then set the last bit when
// inexact), which keeps enough information for the final RNE step to be exact
// (float has 16 more significant bits than bf16, and >= 2 suffice).
inline std::uint16_t bf16_bits_rne_from_double(double x) {
  float f = static_cast<float>(x);  // RNE; fixed below when inexact
  if (!(f == f) || static_cast<double>(f) == x) return bf16_bits_rne(f);
  if (f > 0.0f ? static_cast<double>(f) > x : static_cast<double>(f) < x) f = std::nextafter(f, 0.0f);
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) != 0x7f800000u) u |= 1u;  // odd; an Inf (|x| beyond float) stays Inf
  return bf16_bits_rne(bits_float(u));
}

inline float round_bf16_from_double(double x) { return bf16_bits_to_float(bf16_bits_rne_from_double(x)); }

}  // namespace vla::core
