// A float whose primitive operations can be swapped at build time: the scalar
// of the variants whose difference from the kernel twin lies below the policy
// (no fused multiply-add anywhere; a planted defect in exp, sqrt or subnormal
// handling). Ops::fma, Ops::exp, Ops::sqrt and Ops::fix (applied to every
// result) define the variant; the generic step (core/recurrence.hpp) finds
// vfma, vsqrt and vexp by argument-dependent lookup.
#pragma once

#include <cmath>

namespace vla::gate {

template <class Ops>
struct Flt {
  float v = 0.0f;
  Flt() = default;
  explicit Flt(double x) : v(Ops::fix(static_cast<float>(x))) {}
  explicit Flt(float x) : v(Ops::fix(x)) {}
  explicit Flt(int x) : v(static_cast<float>(x)) {}
  explicit Flt(long x) : v(static_cast<float>(x)) {}

  friend Flt operator+(Flt a, Flt b) { return Flt(a.v + b.v); }
  friend Flt operator-(Flt a, Flt b) { return Flt(a.v - b.v); }
  friend Flt operator*(Flt a, Flt b) { return Flt(a.v * b.v); }
  friend Flt operator/(Flt a, Flt b) { return Flt(a.v / b.v); }
  friend Flt operator-(Flt a) { return Flt(-a.v); }
  friend bool operator<(Flt a, Flt b) { return a.v < b.v; }
  friend bool operator>(Flt a, Flt b) { return a.v > b.v; }
  friend bool operator<=(Flt a, Flt b) { return a.v <= b.v; }
  friend bool operator>=(Flt a, Flt b) { return a.v >= b.v; }
  friend bool operator==(Flt a, Flt b) { return a.v == b.v; }
  friend bool operator!=(Flt a, Flt b) { return a.v != b.v; }

  friend Flt vfma(const Flt& a, const Flt& b, const Flt& c) { return Flt(Ops::fma(a.v, b.v, c.v)); }
  friend Flt vsqrt(const Flt& a) { return Flt(Ops::sqrt(a.v)); }
  friend Flt vexp(const Flt& a) { return Flt(Ops::exp(a.v)); }
};

template <class Ops>
double to_double(const Flt<Ops>& x) {
  return x.v;
}
inline double to_double(float x) { return x; }

// IEEE float with the fused multiply-add the spec asks for.
struct IeeeOps {
  static float fma(float a, float b, float c) { return std::fma(a, b, c); }
  static float sqrt(float x) { return std::sqrt(x); }
  static float exp(float x) { return std::exp(x); }
  static float fix(float x) { return x; }
};

// Every fused multiply-add split into a rounded product and a rounded sum
// (a kernel compiled without FMA contraction and without explicit fmaf).
struct NoFmaOps : IeeeOps {
  static float fma(float a, float b, float c) {
    const float p = a * b;
    return p + c;
  }
};

}  // namespace vla::gate
