// The scalar types the reference runs at, and exact conversions between them.
//
//  * double: IEEE binary64 (53 bits), the fast screening type.
//  * Float128: IEEE binary128 (113 bits) through libquadmath (software, exact
//    rounding), Boost.Multiprecision's float128.
//  * Mpfr: MPFR at a precision chosen at run time (mpfr_scalar.hpp says why it
//    is not Boost's mpfr_float).
//
// The FMAs of the spec are fused (one rounding) at double (core::vfma) and MPFR
// (mpfr_fma). At Float128 they are a*b + c, two correctly rounded operations
// (core::vfma's generic form): libquadmath's fmaq measured 3 us per call here
// against 0.11 us for a multiply and an add, which made binary128 slower than
// MPFR. The extra rounding is one more unit roundoff per term, covered by the
// agreement tests' error model and measured by the certification like any other.
#pragma once

#include <boost/multiprecision/float128.hpp>
#include <concepts>

#include "vla/reference/mpfr_scalar.hpp"

namespace vla::ref {

using Float128 = boost::multiprecision::float128;

// Significand bits (the precision p of the unit roundoff 2^-p) and a name.
template <class T>
struct ScalarInfo;
template <>
struct ScalarInfo<double> {
  static int bits() { return 53; }
  static const char* name() { return "double"; }
};
template <>
struct ScalarInfo<Float128> {
  static int bits() { return 113; }
  static const char* name() { return "float128"; }
};
template <>
struct ScalarInfo<Mpfr> {
  static int bits() { return int(Mpfr::default_bits()); }  // of the calling thread
  static const char* name() { return "mpfr"; }
};

// Exact conversion to an Mpfr of `bits` >= the source's precision.
inline Mpfr to_mpfr(double x, mpfr_prec_t bits) {
  MpfrPrecision scope(bits);
  return Mpfr(x);
}
inline Mpfr to_mpfr(const Mpfr& x, mpfr_prec_t bits) {
  MpfrPrecision scope(bits);
  return Mpfr::from(x.get());
}
// x = f 2^e with f in [1/2, 1): f 2^113 is an integer of at most 113 bits, moved
// over in two 64-bit halves, so nothing is rounded when bits >= 113.
// (A template taking exactly Float128, so that an Mpfr argument never tries
// Boost's converting constructor, whose traits do not know Mpfr.)
template <std::same_as<Float128> F>
inline Mpfr to_mpfr(const F& x, mpfr_prec_t bits) {
  MpfrPrecision scope(bits);
  const __float128 v = x.backend().value();
  if (v == 0) return Mpfr(0);
  int e = 0;
  const __float128 f = frexpq(fabsq(v), &e);
  const unsigned __int128 m = static_cast<unsigned __int128>(ldexpq(f, 113));
  Mpfr r(static_cast<unsigned long>(m >> 64));
  mpfr_mul_2ui(r.get(), r.get(), 64, MPFR_RNDN);
  mpfr_add_ui(r.get(), r.get(), static_cast<unsigned long>(m), MPFR_RNDN);
  mpfr_mul_2si(r.get(), r.get(), e - 113, MPFR_RNDN);
  if (v < 0) mpfr_neg(r.get(), r.get(), MPFR_RNDN);
  return r;
}

// Rounded to the nearest double.
inline double to_double(double x) { return x; }
template <std::same_as<Float128> F>
inline double to_double(const F& x) {
  return static_cast<double>(x);
}
inline double to_double(const Mpfr& x) { return static_cast<double>(x); }

}  // namespace vla::ref
