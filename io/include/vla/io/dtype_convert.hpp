// Exact conversions between the file's element types and double.
#pragma once

#include <cstdint>

namespace vla::io {

// Decoding: every F32, BF16 and F16 value is a double exactly.
double f16_bits_to_double(std::uint16_t bits);
double bf16_bits_to_double(std::uint16_t bits);

// The bf16 nearest to x (ties to even), rounded once: core::bf16_bits_rne_from_double
// (rounding to float first, then to bf16, could round twice across a tie).
std::uint16_t bf16_bits_from_double(double x);

}  // namespace vla::io
