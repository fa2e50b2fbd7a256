// The block sweep inverse of a symmetric positive definite matrix (docs/CHUNKED.md 8.35, 8.37), in any scalar
// type: the algorithm of the kernels' scan_seg_inverse (gpu/cuda/scan_sweep_inverse.cuh), step for step, so
// that its error is measured at high precision on the CPU (tests/chunked/test_sweep_inverse.cpp), where the
// kernel itself runs only on a device. Only the lower blocks (i >= j, blocks of width `block`) are kept; the
// upper ones are their transposes. The products are fma chains over k ascending from zero, the order of the
// kernel's DMMA chains, each added to its entry once; the pivots' reciprocals are divisions here (the kernel's
// pivot_recip is one rounding more). Sweeping block K of A (A = M at the start), with A_iK read from the lower
// block that holds it (A_iK, or A_Ki transposed):
//   P = A_KK^{-1} (the unblocked sweep of A_KK, entry by entry),
//   N_o = P A_Ko (o outside K),  A_ij += -(A_iK N_j) (i >= j, both outside K, diagonal blocks whole),
//   A_Ko = N_o (o before K) or A_oK = N_o^T (o after K),  A_KK = -P;
// after every block A = -M^{-1}, whose lower triangle is the result (mirrored: exactly symmetric). The
// unblocked sweep's pivots are M's L D L^T pivots (the Schur complements' leading entries).
#pragma once

#include <Eigen/Dense>
#include <stdexcept>
#include <string>
#include <vector>

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
  using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  const int n = static_cast<int>(M.rows());
  if (M.cols() != n) throw std::invalid_argument("sweep_inverse: M is " + std::to_string(M.rows()) + " x " + std::to_string(M.cols()) + ", not square");
  if (block < 1 || n % block != 0)
    throw std::invalid_argument("sweep_inverse: the block width " + std::to_string(block) + " does not divide the order " + std::to_string(n));
  // M's lower triangle only, as the kernel's packed M (scan_prep writes it); the diagonal blocks whole.
  Mat A = M.template selfadjointView<Eigen::Lower>();
  const int nb = n / block;
  // (A_iK)(m, k) from the lower block that holds it.
  auto a_iK = [&](int i, int kb, int m, int k) -> Scalar { return i > kb ? A(i * block + m, kb * block + k) : A(kb * block + k, i * block + m); };
  SweepInverse<Scalar> out;
  out.pivots.resize(n);
  std::vector<Mat> N(nb, Mat(block, block));
  for (int kb = 0; kb < nb; ++kb) {
    const int k0 = kb * block;
    sweep_block_unblocked<Scalar>(A, k0, block, out.pivots);
    // N_o = P A_Ko with P = -A_KK (swept) and A_Ko = (A_oK)^T, each entry one chain over k ascending from zero.
    for (int o = 0; o < nb; ++o) {
      if (o == kb) continue;
      for (int m = 0; m < block; ++m)
        for (int c = 0; c < block; ++c) {
          Scalar acc(0);
          for (int k = 0; k < block; ++k) acc = core::vfma(Scalar(-A(k0 + m, k0 + k)), a_iK(o, kb, c, k), acc);
          N[o](m, c) = acc;
        }
    }
    // A_ij += -(A_iK N_j) for the lower blocks outside K, from A_iK as it stands.
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j <= i; ++j) {
        if (i == kb || j == kb) continue;
        for (int m = 0; m < block; ++m)
          for (int c = 0; c < block; ++c) {
            Scalar acc(0);
            for (int k = 0; k < block; ++k) acc = core::vfma(Scalar(-a_iK(i, kb, m, k)), N[j](k, c), acc);
            A(i * block + m, j * block + c) = A(i * block + m, j * block + c) + acc;
          }
      }
    // Block K's row before it (A_Ko = N_o) and its column after it (A_oK = N_o^T).
    for (int o = 0; o < nb; ++o) {
      if (o == kb) continue;
      for (int m = 0; m < block; ++m)
        for (int c = 0; c < block; ++c) (o < kb ? A(k0 + m, o * block + c) : A(o * block + c, k0 + m)) = N[o](m, c);
    }
  }
  out.X.resize(n, n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c <= r; ++c) out.X(r, c) = out.X(c, r) = -A(r, c);
  return out;
}

}  // namespace vla::ref
