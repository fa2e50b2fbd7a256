// An MPFR real whose precision is an exact number of bits chosen at run time.
//
// Why not boost::multiprecision::mpfr_float: Boost 1.74 (Debian 12) sets the
// precision of new numbers in decimal digits, so 256 bits is unreachable (76
// digits give 254 bits, 77 give 257) and 257 bits costs a fifth limb: mpfr_fma
// measured 57 ns at 256 bits against 71 ns at 257 on this machine. This class is
// a thin RAII wrapper over mpfr_t with exactly the operations the recurrence, the
// certifier and Eigen need.
//
// Precision rule: a new number (constructor, arithmetic result) gets the calling
// thread's working precision, set with MpfrPrecision; a copy keeps its source's
// precision. Every operation rounds to nearest once.
//
// Speed. Every fused multiply-add is fma_rndn (mpfr_fma.hpp: mpfr_fma's bits,
// faster up to 256 bits). The in-place forms at the bottom (fma_into,
// sm_update, state_update) let the generic step (core/recurrence.hpp) update an
// element with one call: it calls them unqualified and argument-dependent
// lookup finds these.
// Up to kInlineBits the significand lives inside the object (MPFR's "custom"
// interface), so a number is one 64-byte cache line, a temporary costs no
// malloc and an operand costs no pointer chase; above it, MPFR allocates as usual.
#pragma once

#include <mpfr.h>

#include "vla/reference/mpfr_fma.hpp"

#include <concepts>
#include <ostream>
#include <string>

namespace vla::ref {

class alignas(64) Mpfr {
 public:
  // The calling thread's working precision in bits (default 256).
  static mpfr_prec_t default_bits() { return bits_(); }
  static void set_default_bits(mpfr_prec_t bits) { bits_() = bits; }

  Mpfr() : Mpfr(Uninit{}) { mpfr_set_zero(v_, +1); }
  Mpfr(double d) : Mpfr(Uninit{}) { mpfr_set_d(v_, d, MPFR_RNDN); }  // NOLINT: implicit like a built-in float
  Mpfr(float f) : Mpfr(double(f)) {}                                 // NOLINT
  template <std::signed_integral I>
  Mpfr(I i) : Mpfr(Uninit{}) { mpfr_set_si(v_, long(i), MPFR_RNDN); }  // NOLINT
  template <std::unsigned_integral I>
  Mpfr(I i) : Mpfr(Uninit{}) { mpfr_set_ui(v_, static_cast<unsigned long>(i), MPFR_RNDN); }  // NOLINT
  // Rounds x to the working precision.
  static Mpfr from(mpfr_srcptr x) {
    Mpfr r{Uninit{}};
    mpfr_set(r.v_, x, MPFR_RNDN);
    return r;
  }
  // Keeps x's precision (an exact copy).
  static Mpfr exact(mpfr_srcptr x) {
    Mpfr r{Uninit{}, mpfr_get_prec(x)};
    mpfr_set(r.v_, x, MPFR_RNDN);
    return r;
  }

  static constexpr int kInlineBits = 256;

  Mpfr(const Mpfr& o) : Mpfr(Uninit{}, mpfr_get_prec(o.v_)) { mpfr_set(v_, o.v_, MPFR_RNDN); }
  // A moved-from number may only be destroyed or assigned to.
  Mpfr(Mpfr&& o) noexcept {
    if (o.on_heap()) {
      v_[0] = o.v_[0];
      o.v_[0]._mpfr_d = nullptr;
    } else {
      init(mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
  }
  Mpfr& operator=(const Mpfr& o) {
    if (this == &o) return *this;
    if (!live() || mpfr_get_prec(v_) != mpfr_get_prec(o.v_)) {
      release();
      init(mpfr_get_prec(o.v_));
    }
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  Mpfr& operator=(Mpfr&& o) noexcept {
    if (this == &o) return *this;
    if (o.on_heap() && (on_heap() || !live())) {
      if (live()) {
        mpfr_swap(v_, o.v_);
      } else {
        v_[0] = o.v_[0];
        o.v_[0]._mpfr_d = nullptr;
      }
      return *this;
    }
    return *this = static_cast<const Mpfr&>(o);
  }
  ~Mpfr() { release(); }

  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  mpfr_prec_t bits() const { return mpfr_get_prec(v_); }

  explicit operator double() const { return mpfr_get_d(v_, MPFR_RNDN); }
  explicit operator float() const { return mpfr_get_flt(v_, MPFR_RNDN); }
  explicit operator long() const { return mpfr_get_si(v_, MPFR_RNDN); }
  explicit operator int() const { return int(mpfr_get_si(v_, MPFR_RNDN)); }
  std::string str(int digits = 20) const;

  Mpfr& operator+=(const Mpfr& b) { mpfr_add(v_, v_, b.v_, MPFR_RNDN); return *this; }
  Mpfr& operator-=(const Mpfr& b) { mpfr_sub(v_, v_, b.v_, MPFR_RNDN); return *this; }
  Mpfr& operator*=(const Mpfr& b) { mpfr_mul(v_, v_, b.v_, MPFR_RNDN); return *this; }
  Mpfr& operator/=(const Mpfr& b) { mpfr_div(v_, v_, b.v_, MPFR_RNDN); return *this; }

  friend Mpfr operator+(const Mpfr& a, const Mpfr& b) { return op(mpfr_add, a, b); }
  friend Mpfr operator-(const Mpfr& a, const Mpfr& b) { return op(mpfr_sub, a, b); }
  friend Mpfr operator*(const Mpfr& a, const Mpfr& b) { return op(mpfr_mul, a, b); }
  friend Mpfr operator/(const Mpfr& a, const Mpfr& b) { return op(mpfr_div, a, b); }
  friend Mpfr operator-(const Mpfr& a) { return op1(mpfr_neg, a); }
  friend Mpfr operator+(const Mpfr& a) { return a; }

  friend bool operator<(const Mpfr& a, const Mpfr& b) { return mpfr_less_p(a.v_, b.v_); }
  friend bool operator>(const Mpfr& a, const Mpfr& b) { return mpfr_greater_p(a.v_, b.v_); }
  friend bool operator<=(const Mpfr& a, const Mpfr& b) { return mpfr_lessequal_p(a.v_, b.v_); }
  friend bool operator>=(const Mpfr& a, const Mpfr& b) { return mpfr_greaterequal_p(a.v_, b.v_); }
  friend bool operator==(const Mpfr& a, const Mpfr& b) { return mpfr_equal_p(a.v_, b.v_); }
  friend bool operator!=(const Mpfr& a, const Mpfr& b) { return !mpfr_equal_p(a.v_, b.v_); }

  // Elementary functions, found by argument-dependent lookup (std-style names
  // for Eigen and generic code).
  friend Mpfr sqrt(const Mpfr& a) { return op1(mpfr_sqrt, a); }
  friend Mpfr exp(const Mpfr& a) { return op1(mpfr_exp, a); }
  friend Mpfr log(const Mpfr& a) { return op1(mpfr_log, a); }
  friend Mpfr log2(const Mpfr& a) { return op1(mpfr_log2, a); }
  friend Mpfr abs(const Mpfr& a) { return op1(mpfr_abs, a); }
  friend Mpfr fabs(const Mpfr& a) { return op1(mpfr_abs, a); }
  friend Mpfr floor(const Mpfr& a) { Mpfr r{Uninit{}}; mpfr_floor(r.v_, a.v_); return r; }
  friend Mpfr ceil(const Mpfr& a) { Mpfr r{Uninit{}}; mpfr_ceil(r.v_, a.v_); return r; }
  friend Mpfr pow(const Mpfr& a, const Mpfr& b) { return op(mpfr_pow, a, b); }
  friend Mpfr atan2(const Mpfr& a, const Mpfr& b) { return op(mpfr_atan2, a, b); }
  friend Mpfr fma(const Mpfr& a, const Mpfr& b, const Mpfr& c) {
    Mpfr r{Uninit{}};
    fma_rndn(r.v_, a.v_, b.v_, c.v_);
    return r;
  }
  friend Mpfr ldexp(const Mpfr& a, long e) { Mpfr r{Uninit{}}; mpfr_mul_2si(r.v_, a.v_, e, MPFR_RNDN); return r; }
  friend bool isnan(const Mpfr& a) { return mpfr_nan_p(a.v_); }
  friend bool isinf(const Mpfr& a) { return mpfr_inf_p(a.v_); }
  friend bool isfinite(const Mpfr& a) { return mpfr_number_p(a.v_); }
  friend bool signbit(const Mpfr& a) { return mpfr_signbit(a.v_); }
  friend std::ostream& operator<<(std::ostream& os, const Mpfr& a) { return os << a.str(); }

  // The step's scalar helpers (core/hd.hpp names): one rounding each.
  friend Mpfr vfma(const Mpfr& a, const Mpfr& b, const Mpfr& c) { return fma(a, b, c); }
  friend Mpfr vsqrt(const Mpfr& a) { return op1(mpfr_sqrt, a); }
  friend Mpfr vexp(const Mpfr& a) { return op1(mpfr_exp, a); }

  // In-place forms (see the file comment); each equals the generic form's value.
  // The fused multiply-adds are fma_rndn (mpfr_fma.hpp): mpfr_fma's bits, faster.
  // acc = fma(a, b, acc)
  friend void fma_into(Mpfr& acc, const Mpfr& a, const Mpfr& b) { fma_rndn(acc.v_, a.v_, b.v_, acc.v_); }
  // a_ij = fma(-z_i, g_j, a_ij), the sign of a zero included.
  friend void sm_update(Mpfr& a_ij, const Mpfr& z_i, const Mpfr& g_j) { fma_rndn(a_ij.v_, z_i.v_, g_j.v_, a_ij.v_, true); }
  // s_ij = fma(r_i, a_j, s_ij)
  friend void state_update(Mpfr& s_ij, const Mpfr& r_i, const Mpfr& a_j) { fma_rndn(s_ij.v_, r_i.v_, a_j.v_, s_ij.v_); }

 private:
  struct Uninit {};
  explicit Mpfr(Uninit, mpfr_prec_t bits = bits_()) { init(bits); }
  bool live() const { return v_[0]._mpfr_d != nullptr; }
  bool on_heap() const { return live() && static_cast<const void*>(v_[0]._mpfr_d) != static_cast<const void*>(limbs_); }
  // A NaN of `bits` precision, its significand inline when it fits.
  void init(mpfr_prec_t bits) {
    if (mpfr_custom_get_size(bits) <= sizeof limbs_) {
      mpfr_custom_init(limbs_, bits);
      mpfr_custom_init_set(v_, MPFR_NAN_KIND, 0, bits, limbs_);
    } else {
      mpfr_init2(v_, bits);
    }
  }
  void release() {
    if (on_heap()) mpfr_clear(v_);
    v_[0]._mpfr_d = nullptr;
  }
  static mpfr_prec_t& bits_() {
    thread_local mpfr_prec_t b = 256;
    return b;
  }
  template <class F>
  static Mpfr op(F f, const Mpfr& a, const Mpfr& b) {
    Mpfr r{Uninit{}};
    f(r.v_, a.v_, b.v_, MPFR_RNDN);
    return r;
  }
  template <class F>
  static Mpfr op1(F f, const Mpfr& a) {
    Mpfr r{Uninit{}};
    f(r.v_, a.v_, MPFR_RNDN);
    return r;
  }

  mpfr_t v_;
  mp_limb_t limbs_[kInlineBits / GMP_NUMB_BITS];
};

// Sets the calling thread's working precision for the scope's lifetime.
class MpfrPrecision {
 public:
  explicit MpfrPrecision(mpfr_prec_t bits) : saved_(Mpfr::default_bits()) { Mpfr::set_default_bits(bits); }
  ~MpfrPrecision() { Mpfr::set_default_bits(saved_); }
  MpfrPrecision(const MpfrPrecision&) = delete;
  MpfrPrecision& operator=(const MpfrPrecision&) = delete;

 private:
  mpfr_prec_t saved_;
};

inline std::string Mpfr::str(int digits) const {
  char* s = nullptr;
  mpfr_asprintf(&s, "%.*Rg", digits, v_);
  std::string out(s ? s : "?");
  mpfr_free_str(s);
  return out;
}

}  // namespace vla::ref
