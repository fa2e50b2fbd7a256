// Honest reduction orders for the generic step's precision policy
// (core/recurrence.hpp): other ways a correct kernel may sum a dot product or
// the rows of ||S||_F^2. They change only rounding, never the maths, so the
// gate must pass them (docs/GATE.md measures that it does).
//
// Each policy takes the scalar S (float, or gate::Flt for a variant below the
// policy) and a precision policy Prec of gpu/precision.hpp (where S, A and o
// are rounded), so an order composes with any of the three kernels' policies.
#pragma once

#include <cmath>

#include <vector>

#include "flt.hpp"
#include "vla/core/hd.hpp"

namespace vla::gate {

inline float raw(float x) { return x; }
template <class O>
float raw(const Flt<O>& x) {
  return x.v;
}

// The rounding points of precision policy Prec, for any scalar S.
template <class S, class Prec>
struct Stores {
  static S store_state(const S& x) { return S(Prec::store_state(raw(x))); }
  static S store_out(const S& x) { return S(Prec::store_out(raw(x))); }
};

// Left to right with fused multiply-adds: the plain order (with S = Flt<NoFmaOps>,
// every FMA of the step, these included, is a product then a sum).
template <class S, class Prec>
struct SequentialOrder : Stores<S, Prec> {
  using T = S;
  static T dot(const T* a, const T* b, int n) {
    using core::vfma;
    T acc(0);
    for (int j = 0; j < n; ++j) acc = vfma(a[j], b[j], acc);
    return acc;
  }
};

// Right to left.
template <class S, class Prec>
struct ReversedOrder : Stores<S, Prec> {
  using T = S;
  static T dot(const T* a, const T* b, int n) {
    using core::vfma;
    T acc(0);
    for (int j = n - 1; j >= 0; --j) acc = vfma(a[j], b[j], acc);
    return acc;
  }
  static T sum(const T* x, int n) {
    T acc(0);
    for (int i = n - 1; i >= 0; --i) acc = T(acc + x[i]);
    return acc;
  }
};

// Rounded products summed by recursive halving (a tree of depth log2 n).
template <class S>
S pairwise_sum(const S* x, int n) {
  if (n == 1) return x[0];
  if (n == 2) return S(x[0] + x[1]);
  const int h = n / 2;
  return S(pairwise_sum(x, h) + pairwise_sum(x + h, n - h));
}

template <class S, class Prec>
struct PairwiseOrder : Stores<S, Prec> {
  using T = S;
  static T dot(const T* a, const T* b, int n) {
    if (n <= 0) return T(0);
    T p[128];
    std::vector<T> big;
    T* x = p;
    if (n > 128) {
      big.resize(n);
      x = big.data();
    }
    for (int j = 0; j < n; ++j) x[j] = T(a[j] * b[j]);
    return pairwise_sum(x, n);
  }
  static T sum(const T* x, int n) { return n <= 0 ? T(0) : pairwise_sum(x, n); }
};

// Kahan's compensated summation of the rounded products. Once the sum is not
// finite (a product overflowed) the compensation stops: unguarded, (inf - sum) -
// inf makes it NaN, and a plain sum's inf, which the recurrence can still
// neutralise (1 / inf = 0 in a normalisation), becomes a NaN output. Found when the
// error model began judging such steps (docs/FINDINGS.md, item 6): the unguarded
// variant gave NaN where the plain orders and the baselines are finite and
// accurate (vla fuzz --case-seed 0x5f75d6fea73ebfc4, 0xae8f9120d13f4f47).
template <class S>
S kahan_add(S& sum, S& comp, const S& x) {
  const S y = S(x - comp);
  const S t = S(sum + y);
  comp = std::isfinite(double(t)) ? S(S(t - sum) - y) : S(0);
  sum = t;
  return sum;
}

template <class S, class Prec>
struct KahanOrder : Stores<S, Prec> {
  using T = S;
  static T dot(const T* a, const T* b, int n) {
    T s(0), c(0);
    for (int j = 0; j < n; ++j) kahan_add(s, c, T(a[j] * b[j]));
    return s;
  }
  static T sum(const T* x, int n) {
    T s(0), c(0);
    for (int i = 0; i < n; ++i) kahan_add(s, c, x[i]);
    return s;
  }
};

// A wider accumulator: the dot accumulated in double, rounded to float once.
template <class Prec>
struct WideAccumulator : Stores<float, Prec> {
  using T = float;
  static T dot(const T* a, const T* b, int n) {
    double acc = 0;
    for (int j = 0; j < n; ++j) acc = core::vfma(double(a[j]), double(b[j]), acc);
    return static_cast<float>(acc);
  }
  static T sum(const T* x, int n) {
    double acc = 0;
    for (int i = 0; i < n; ++i) acc += x[i];
    return static_cast<float>(acc);
  }
};

}  // namespace vla::gate
