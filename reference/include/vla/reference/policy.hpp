// The reference's precision policy for the generic step (core/recurrence.hpp):
// left-to-right accumulation with fused multiply-adds, no extra rounding, at any
// scalar. Same values as core::SequentialPolicy; the difference is that the
// accumulation is in place (fma_into), so an MPFR dot product allocates one
// result and nothing per term, and that storing returns a reference instead of
// a copy.
//
// Norms. At the IEEE scalars (double, binary128) a sum of squares overflows for
// a vector longer than sqrt(max) (2^512 in double) and loses bits in subnormals
// below sqrt(min) (2^-511): a key of size 1e200 got k^ = 0, one of size 1e-200 a
// wrong length. So norm and frobenius_norm rescale, by hand: LAPACK's dnrm2
// and its running rescaling round every term differently, and std::hypot takes
// at most three numbers. Where the plain sum is safely in range they return it
// (so results there are unchanged, bit for bit); otherwise they repeat the same
// sum, in the same order, on the entries times 2^-e (2^e just above the largest
// entry): scaling by a power of two is exact, so this is the sum the same
// arithmetic would give with an unbounded exponent, and the square root of
// 2^-2e s is exactly 2^-e sqrt(s). MPFR's exponent range has no such limits;
// at Mpfr neither is defined and the step uses sqrt(dot(x, x)).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
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

  // ||x||_2 and ||M||_F, rescaled out of range (see the file comment).
  static T norm(const T* x, int n)
    requires std::numeric_limits<T>::is_iec559
  {
    const T s = dot(x, x, n);
    if (safely_in_range(s)) return vla::core::vsqrt(s);
    return rescaled_frobenius(x, 1, n);
  }
  static T frobenius_norm(const T* M, T* rows_scratch, int rows, int n)
    requires std::numeric_limits<T>::is_iec559
  {
    row_sqnorms(M, rows_scratch, rows, n);
    T s = T(0);
    for (int i = 0; i < rows; ++i) s = T(s + rows_scratch[i]);  // core::policy_sum's order
    if (safely_in_range(s)) return vla::core::vsqrt(s);
    return rescaled_frobenius(M, rows, n);
  }

 private:
  // A sum of squares s is used as is when finite (no partial sum overflowed:
  // they only grow) and at least min 2^(digits + 1): a partial sum below min is
  // rounded with an absolute error of at most min 2^-digits, each below
  // 2^-(2 digits + 1) of s, far below the sum's own roundings.
  static bool safely_in_range(const T& s) {
    using std::isfinite;
    using std::ldexp;
    static const T floor = ldexp(std::numeric_limits<T>::min(), std::numeric_limits<T>::digits + 1);
    return isfinite(s) && s >= floor;
  }
  // The plain computation (rows' left-to-right FMA sums, then their left-to-right
  // sum, then the square root) on M 2^-e, times 2^e.
  static T rescaled_frobenius(const T* M, int rows, int n) {
    using std::abs;
    using std::frexp;
    using std::ldexp;
    const std::size_t size = std::size_t(rows) * std::size_t(n);
    T big = T(0);
    for (std::size_t idx = 0; idx < size; ++idx)
      if (abs(M[idx]) > big) big = abs(M[idx]);
    if (big == T(0)) return T(0);
    int e = 0;
    (void)frexp(big, &e);  // big < 2^e
    T s = T(0);
    for (int i = 0; i < rows; ++i) {
      T acc = T(0);
      for (int j = 0; j < n; ++j) {
        const T y = ldexp(M[std::size_t(i) * n + j], -e);
        fma_into(acc, y, y);
      }
      s = T(s + acc);
    }
    return ldexp(vla::core::vsqrt(s), e);
  }

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
