// Eigen support for Mpfr: matrices, products, decompositions (LU, SVD) at the
// calling thread's MPFR precision.
#pragma once

#include <Eigen/Core>
#include <limits>

#include "vla/reference/mpfr_scalar.hpp"

// Eigen's decompositions also read std::numeric_limits<Scalar>::min() (as the
// threshold below which a value counts as zero, e.g. in JacobiSVD's 2x2 step);
// unspecialised it would be Mpfr() = 0, and an exactly symmetric 2x2 block then
// divides by zero (NaN singular values). Values at the calling thread's precision.
namespace std {
template <>
class numeric_limits<vla::ref::Mpfr> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr bool has_denorm_loss = false;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr int radix = 2;
  static constexpr float_round_style round_style = round_to_nearest;
  // MPFR has no subnormals: the smallest positive number is 2^(emin - 1).
  static vla::ref::Mpfr min() {
    vla::ref::Mpfr r;
    mpfr_set_ui_2exp(r.get(), 1, mpfr_get_emin() - 1, MPFR_RNDN);
    return r;
  }
  static vla::ref::Mpfr denorm_min() { return min(); }
  static vla::ref::Mpfr max() { return highest_(); }
  static vla::ref::Mpfr lowest() { return -highest_(); }
  static vla::ref::Mpfr epsilon() { return ldexp(vla::ref::Mpfr(1), 1 - long(vla::ref::Mpfr::default_bits())); }
  static vla::ref::Mpfr round_error() { return vla::ref::Mpfr(0.5); }
  static vla::ref::Mpfr infinity() { return inf_(); }
  static vla::ref::Mpfr quiet_NaN() { return nan_(); }

 private:
  static vla::ref::Mpfr inf_() {
    vla::ref::Mpfr r;
    mpfr_set_inf(r.get(), +1);
    return r;
  }
  static vla::ref::Mpfr highest_() {
    vla::ref::Mpfr r = inf_();
    mpfr_nextbelow(r.get());
    return r;
  }
  static vla::ref::Mpfr nan_() {
    vla::ref::Mpfr r;
    mpfr_set_nan(r.get());
    return r;
  }
};
}  // namespace std

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

