// Exact conversions between the file's element types and double.
#pragma once

#include <cstdint>

namespace vla::io {

// Decoding: every F32, BF16 and F16 value is a double exactly.
double f16_bits_to_double(std::uint16_t bits);
double bf16_bits_to_double(std::uint16_t bits);

// The float nearest to x with round-to-odd: a float below x's precision keeps a
// sticky last bit, so that rounding it again to bf16 (16 fewer bits) with RNE
// gives the correctly rounded bf16 of x. Plain (float)x followed by bf16 RNE can
// round twice across a tie.
float round_to_odd_float(double x);

// The bf16 nearest to x (ties to even), via core::bf16_bits_rne.
std::uint16_t bf16_bits_from_double(double x);

}  // namespace vla::io
