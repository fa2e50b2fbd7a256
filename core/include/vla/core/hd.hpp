// Host/device portability for the shared maths.
//
// The recurrence is written once (core/) and used by the arbitrary-precision
// reference, the CPU twins and the CUDA kernels. Functions that the kernels call
// are marked VLA_HD; the scalar helpers below pick the CUDA intrinsic for float
// and double on the device and fall back to ADL (Boost.Multiprecision, Eigen
// scalars) on the host.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define VLA_HD __host__ __device__ __forceinline__
#else
#define VLA_HD inline
#endif

namespace vla::core {

VLA_HD float vsqrt(float x) { return ::sqrtf(x); }
VLA_HD double vsqrt(double x) { return ::sqrt(x); }
VLA_HD float vexp(float x) { return ::expf(x); }
VLA_HD double vexp(double x) { return ::exp(x); }
// Fused multiply-add with a single rounding: the kernels use it explicitly so
// that the CPU twin can reproduce their rounding points exactly.
VLA_HD float vfma(float a, float b, float c) { return ::fmaf(a, b, c); }
VLA_HD double vfma(double a, double b, double c) { return ::fma(a, b, c); }

// Multiprecision and other host-only scalars: found by argument-dependent lookup.
template <class T>
inline T vsqrt(const T& x) {
  using std::sqrt;
  return T(sqrt(x));
}
template <class T>
inline T vexp(const T& x) {
  using std::exp;
  return T(exp(x));
}
template <class T>
inline T vfma(const T& a, const T& b, const T& c) {
  // For exact-enough scalars the single-rounding distinction is immaterial.
  return T(a * b + c);
}

template <class T>
VLA_HD T vmax(const T& a, const T& b) {
  return a < b ? b : a;
}

}  // namespace vla::core
