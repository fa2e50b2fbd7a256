// The block sweep inverse of a symmetric positive definite matrix (docs/CHUNKED.md 8.35), in any scalar
// type: the algorithm of the kernels' scan_seg_inverse (gpu/cuda/scan_sweep_inverse.cuh), step for step, so
// that its error is measured at high precision on the CPU (tests/chunked/test_sweep_inverse.cpp), where the
// kernel itself runs only on a device. The products are fma chains over k ascending from zero, the order of
// the kernel's DMMA chains, each added to its entry once; the pivots' reciprocals are divisions here (the
// kernel's pivot_recip is one rounding more). Sweeping block K (width `block`) of A (A = M at the start):
//   P = A_KK^{-1} (the unblocked sweep of A_KK, entry by entry),
//   W = P A_Kj (j outside K),  A_ij += -(A_iK W_Kj) (i, j outside K),  A_Kj = W,  A_iK = W^T,  A_KK = -P;
// after every block A = -M^{-1}. The unblocked sweep's pivots are M's L D L^T pivots (the Schur complements'
// leading entries).
#pragma once

#include <Eigen/Dense>
#include <stdexcept>
#include <string>

#include "vla/core/formulas.hpp"

namespace vla::ref {

template <class Scalar>
struct SweepInverse {
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> X;  // M^{-1}
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> pivots;          // the L D L^T pivots of M, in order
};

// The unblocked sweep of A's diagonal block [k0, k0 + w) in place (the kernel's sweep_diagonal_block): A_KK
// becomes -A_KK^{-1}; the pivots go to piv[k0 + p].
template <class Scalar, class Mat, class Vec>
void sweep_block_unblocked(Mat& A, int k0, int w, Vec& piv) {
  for (int p = k0; p < k0 + w; ++p) {
    const Scalar d = A(p, p), inv = Scalar(1) / d;
    piv(p) = d;
    for (int r = k0; r < k0 + w; ++r) {
      if (r == p) continue;
      const Scalar f = A(r, p) * inv;
      for (int c = k0; c < k0 + w; ++c)
        if (c != p) A(r, c) = core::sweep_entry(A(r, c), f, A(p, c));
      A(r, p) = f;
    }
    for (int c = k0; c < k0 + w; ++c)
      if (c != p) A(p, c) = A(p, c) * inv;
    A(p, p) = -inv;
  }
}

template <class Scalar>
SweepInverse<Scalar> sweep_inverse(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& M, int block = 16) {
  const int n = static_cast<int>(M.rows());
  if (M.cols() != n) throw std::invalid_argument("sweep_inverse: M is " + std::to_string(M.rows()) + " x " + std::to_string(M.cols()) + ", not square");
  if (block < 1 || n % block != 0)
    throw std::invalid_argument("sweep_inverse: the block width " + std::to_string(block) + " does not divide the order " + std::to_string(n));
  // M's lower triangle only, as the kernel's packed M (scan_prep writes it).
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> A = M.template selfadjointView<Eigen::Lower>(), W(block, n);
  SweepInverse<Scalar> out;
  out.pivots.resize(n);
  auto outside = [&](int i, int k0) { return i < k0 || i >= k0 + block; };
  for (int k0 = 0; k0 < n; k0 += block) {
    sweep_block_unblocked<Scalar>(A, k0, block, out.pivots);
    // W = P A_Kj, P = -A_KK (swept), each entry one chain over k ascending from zero.
    for (int m = 0; m < block; ++m)
      for (int j = 0; j < n; ++j) {
        if (!outside(j, k0)) continue;
        Scalar acc(0);
        for (int k = 0; k < block; ++k) acc = core::vfma(Scalar(-A(k0 + m, k0 + k)), A(k0 + k, j), acc);
        W(m, j) = acc;
      }
    // A_ij += -(A_iK W_Kj) outside K, from A_iK as it stands (before the mirror).
    for (int i = 0; i < n; ++i) {
      if (!outside(i, k0)) continue;
      for (int j = 0; j < n; ++j) {
        if (!outside(j, k0)) continue;
        Scalar acc(0);
        for (int k = 0; k < block; ++k) acc = core::vfma(Scalar(-A(i, k0 + k)), W(k, j), acc);
        A(i, j) = A(i, j) + acc;
      }
    }
    for (int j = 0; j < n; ++j)
      if (outside(j, k0))
        for (int m = 0; m < block; ++m) A(k0 + m, j) = A(j, k0 + m) = W(m, j);  // row W, column its transpose
  }
  out.X = -A;
  return out;
}

}  // namespace vla::ref
