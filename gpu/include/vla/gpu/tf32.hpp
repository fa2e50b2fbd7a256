// TF32 operand rounding, as the tensor cores' conversion does it (PTX
// cvt.rna.tf32.f32: round to nearest, ties away from zero, to 10 fraction bits
// of float's format; sm_80 compiles it to "add 0x1000 to the bit pattern unless
// |x| is Inf or NaN, then clear the low 13 bits"). TF32 keeps float's 8-bit
// exponent, so subnormals need no special case (the same truncation point), a
// carry out of the fraction moves to the next binade, and a carry past the
// largest binade gives Inf (no .satfinite). NaN stays NaN (quiet, sign kept):
// the hardware only masks a NaN's low payload bits, which can make a NaN whose
// payload lies there read as Inf; the suite treats every non-finite value alike.
// Unit roundoff of round-to-nearest at 11 significant bits: 2^-11.
#pragma once

#include <cstdint>

#include "vla/core/bf16.hpp"
#include "vla/core/hd.hpp"

namespace vla::gpu {

VLA_HD float round_tf32(float x) {
  std::uint32_t u = core::float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return (u & 0x007fffffu) != 0u ? core::bits_float(u | 0x00400000u) : x;
  u = (u + 0x1000u) & 0xffffe000u;  // ties (low bits exactly 0x1000) carry: away from zero in magnitude
  return core::bits_float(u);
}

}  // namespace vla::gpu
