// The reference's precision policy for the generic step (core/recurrence.hpp):
// left-to-right accumulation with fused multiply-adds, no extra rounding, at any
// scalar. Same values as core::SequentialPolicy; the difference is that the
// accumulation is in place (fma_into), so an MPFR dot product allocates one
// result and nothing per term, and that storing returns a reference instead of
// a copy.
#pragma once

#include "vla/core/hd.hpp"

namespace vla::ref {

// acc = fma(a, b, acc). Mpfr has its own in-place overload (mpfr_scalar.hpp).
template <class T>
inline void fma_into(T& acc, const T& a, const T& b) {
  using vla::core::vfma;  // plus any vfma found by argument-dependent lookup (float128)
  acc = vfma(a, b, acc);
}

template <class Scalar>
struct RefPolicy {
  using T = Scalar;
  static T dot(const T* a, const T* b, int n) {
    T acc = T(0);
    for (int j = 0; j < n; ++j) fma_into(acc, a[j], b[j]);
    return acc;
  }
  static const T& store_state(const T& x) { return x; }
  static const T& store_out(const T& x) { return x; }
};

}  // namespace vla::ref
