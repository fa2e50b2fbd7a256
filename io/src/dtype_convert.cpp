#include "vla/io/dtype_convert.hpp"

#include <cmath>
#include <limits>

#include "vla/core/bf16.hpp"

namespace vla::io {

double f16_bits_to_double(std::uint16_t bits) {
  const bool neg = bits & 0x8000u;
  const int exp = (bits >> 10) & 0x1f;
  const int man = bits & 0x3ff;
  double mag;
  if (exp == 0) {
    mag = std::ldexp(static_cast<double>(man), -24);  // subnormal: man * 2^-24
  } else if (exp == 31) {
    mag = man == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else {
    mag = std::ldexp(static_cast<double>(1024 + man), exp - 25);
  }
  return neg ? -mag : mag;
}

double bf16_bits_to_double(std::uint16_t bits) { return static_cast<double>(core::bf16_bits_to_float(bits)); }

std::uint16_t bf16_bits_from_double(double x) { return core::bf16_bits_rne_from_double(x); }

}  // namespace vla::io
