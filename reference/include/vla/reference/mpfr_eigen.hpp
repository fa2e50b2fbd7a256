// Eigen support for Mpfr: matrices, products, decompositions (LU, SVD) at the
// calling thread's MPFR precision.
#pragma once

#include <Eigen/Core>

#include "vla/reference/mpfr_scalar.hpp"

namespace Eigen {

template <>
struct NumTraits<vla::ref::Mpfr> : GenericNumTraits<vla::ref::Mpfr> {
  using Real = vla::ref::Mpfr;
  using NonInteger = Real;
  using Literal = Real;
  using Nested = Real;
  enum {
    IsInteger = 0,
    IsSigned = 1,
    IsComplex = 0,
    RequireInitialization = 1,
    // Each operation is a library call: no unrolling or vectorisation pays.
    ReadCost = HugeCost,
    AddCost = HugeCost,
    MulCost = HugeCost
  };
  static int digits() { return int(Real::default_bits()); }
  static int digits10() { return int(double(Real::default_bits() - 1) * 0.30102999566398120); }
  static int max_digits10() { return digits10() + 2; }
  static Real epsilon() { return ldexp(Real(1), 1 - long(Real::default_bits())); }
  // Eigen's "approximately equal" tolerance: 90% of the precision's bits.
  static Real dummy_precision() { return ldexp(Real(1), -long(Real::default_bits()) * 9 / 10); }
  static Real highest() {
    Real r;
    mpfr_set_inf(r.get(), +1);
    mpfr_nextbelow(r.get());
    return r;
  }
  static Real lowest() { return -highest(); }
  static Real infinity() {
    Real r;
    mpfr_set_inf(r.get(), +1);
    return r;
  }
  static Real quiet_NaN() {
    Real r;
    mpfr_set_nan(r.get());
    return r;
  }
};

}  // namespace Eigen
