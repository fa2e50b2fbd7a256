// Precision policies for core::vla_step (recurrence.hpp) on the host:
//   TwinPolicy<Traits, Prec>  the kernel's CPU twin: float arithmetic, the
//                             kernel's reduction order, the kernel's rounding points;
//   PlainPolicy<Prec, Rev>    the plain same-precision implementation (left-to-right,
//                             or right-to-left, dots; same rounding points): the error
//                             model's baselines.
#pragma once

#include <cassert>

#include "vla/core/hd.hpp"
#include "vla/gpu/fused_traits.hpp"

namespace vla::gpu {

// Pairwise tree of the shuffle butterfly: partial p[x] absorbs p[x + m] for m =
// n/2, n/4, ..., 1 (what lanes x and x^m both hold after __shfl_xor with offset m;
// float addition is commutative, so every lane ends with p[0]).
inline float tree_sum(float* p, int n) {
  for (int m = n / 2; m >= 1; m /= 2)
    for (int x = 0; x < m; ++x) p[x] = p[x] + p[x + m];
  return p[0];
}

template <class Traits, class Prec>
struct TwinPolicy {
  using T = float;
  // a.b over D entries: lane c accumulates its CW-column segment with sequential
  // FMAs from zero, then the G lanes of a group combine by the shuffle tree.
  static T dot(const T* a, const T* b, int n) {
    assert(n == Traits::D);
    (void)n;
    float p[Traits::G];
    for (int c = 0; c < Traits::G; ++c) {
      float acc = 0.0f;
      for (int jj = 0; jj < Traits::CW; ++jj) {
        const int j = c * Traits::CW + jj;
        acc = core::vfma(a[j], b[j], acc);
      }
      p[c] = acc;
    }
    return tree_sum(p, Traits::G);
  }
  // Sum of D row terms (||S||_F^2): a warp holds RPW = 32 R / G consecutive rows,
  // one per span of G / R lanes after the reduce-scatter; the warp's rows combine
  // by the shuffle tree (lanes 16, 8, .., G / R apart), then the warps' partials
  // are added in warp order from zero.
  static T sum(const T* x, int n) {
    assert(n == Traits::D);
    (void)n;
    constexpr int RPW = 32 * Traits::R / Traits::G;
    float total = 0.0f;
    for (int w = 0; w < Traits::NW; ++w) {
      float p[RPW];
      for (int i = 0; i < RPW; ++i) p[i] = x[w * RPW + i];
      total = total + tree_sum(p, RPW);
    }
    return total;
  }
  // The kernel takes the gate from z where that is exact (core::gate_from_z_exact).
  static constexpr bool gate_from_z = true;
  // g = z / delta and the gate's a = w / ||w||: the kernel rounds one reciprocal
  // (IEEE division) and multiplies, instead of one division per column.
  static void divide_all(const T* x, const T& d, T* out, int n) {
    const float inv = 1.0f / d;
    for (int j = 0; j < n; ++j) out[j] = x[j] * inv;
  }
  static T store_state(const T& x) { return Prec::store_state(x); }
  static T store_out(const T& x) { return Prec::store_out(x); }
};

template <class Prec, bool Reversed = false>
struct PlainPolicy {
  using T = float;
  static T dot(const T* a, const T* b, int n) {
    float acc = 0.0f;
    if constexpr (Reversed) {
      for (int j = n - 1; j >= 0; --j) acc = core::vfma(a[j], b[j], acc);
    } else {
      for (int j = 0; j < n; ++j) acc = core::vfma(a[j], b[j], acc);
    }
    return acc;
  }
  static T store_state(const T& x) { return Prec::store_state(x); }
  static T store_out(const T& x) { return Prec::store_out(x); }
};

}  // namespace vla::gpu
