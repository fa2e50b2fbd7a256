// The reference's precision policy for the generic step (core/recurrence.hpp):
// left-to-right accumulation with fused multiply-adds, no extra rounding, at any
// scalar. Same values as core::SequentialPolicy; the difference is that the
// accumulation is in place (fma_into), so an MPFR dot product allocates one
// result and nothing per term, and that storing returns a reference instead of
// a copy.
#pragma once

#include <cstddef>
#include <type_traits>

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
  // y_i = dot(M_i, x), bit for bit. For hardware floats four rows' chains run
  // interleaved: each stays left to right, but the CPU overlaps their FMA
  // latencies (measured 2.2x on a 64 x 64 double matrix-vector product).
  static void matvec(const T* M, const T* x, T* y, int rows, int n) { rows4(M, x, 0, y, rows, n); }
  // y_i = dot(M_i, M_i), interleaved in the same way.
  static void row_sqnorms(const T* M, T* y, int rows, int n) { rows4(M, M, std::size_t(n), y, rows, n); }
  static const T& store_state(const T& x) { return x; }
  static const T& store_out(const T& x) { return x; }

 private:
  // y_i = dot(M_i, X + i * x_stride): x_stride = 0 is a matrix-vector product,
  // x_stride = n with X = M the rows' squared norms.
  static void rows4(const T* M, const T* X, std::size_t x_stride, T* y, int rows, int n) {
    int i = 0;
    if constexpr (std::is_floating_point_v<T>) {
      for (; i + 4 <= rows; i += 4) {
        const T* m0 = M + std::size_t(i) * n;
        const T *m1 = m0 + n, *m2 = m1 + n, *m3 = m2 + n;
        const T* x0 = X + std::size_t(i) * x_stride;
        const T *x1 = x0 + x_stride, *x2 = x1 + x_stride, *x3 = x2 + x_stride;
        T a0 = T(0), a1 = T(0), a2 = T(0), a3 = T(0);
        for (int j = 0; j < n; ++j) {
          fma_into(a0, m0[j], x0[j]);
          fma_into(a1, m1[j], x1[j]);
          fma_into(a2, m2[j], x2[j]);
          fma_into(a3, m3[j], x3[j]);
        }
        y[i] = a0;
        y[i + 1] = a1;
        y[i + 2] = a2;
        y[i + 3] = a3;
      }
    }
    for (; i < rows; ++i) y[i] = dot(M + std::size_t(i) * n, X + std::size_t(i) * x_stride, n);
  }
};

}  // namespace vla::ref
