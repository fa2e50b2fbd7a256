// The block sweep inverse (ref::sweep_inverse, the algorithm of the kernels' scan_seg_inverse; docs/CHUNKED.md
// 8.35, 8.37) on the matrices the scan form inverts, M = lambda0 I + U U^T:
//  * at 256 bits it is M^{-1} to within the precision (the derivation: a slip in the sweep's cases, its
//    block order or the mirror is an O(1) error), and its pivots are M's L D L^T pivots;
//  * in double its error is within the forward error model of a backward-stable inversion of a symmetric
//    positive definite matrix (Higham, Accuracy and Stability of Numerical Algorithms, 14.4 for Gauss-Jordan
//    on SPD matrices): ||X - M^{-1}||_F <= 4 D u kappa_F(M) ||M^{-1}||_F with u = 2^-53 and
//    kappa_F(M) = ||M||_F ||M^{-1}||_F (the constant: D terms a product, two roundings an entry and block,
//    the pivots' reciprocals, doubled), and each pivot within 4 D u kappa_F(M) of its exact value,
//    relative. The exact inverse and pivots come from Eigen's L D L^T at 256 bits.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "hp_compare.hpp"
#include "vla/reference/sweep_inverse.hpp"

namespace {
using hpc::mp;
using MatD = Eigen::MatrixXd;
using MatM = Eigen::Matrix<mp, Eigen::Dynamic, Eigen::Dynamic>;

struct Shape {
  int D, steps, block;
  double lambda0, collinear;  // collinear: keys' spread around one direction (0: independent Gaussian keys)
};

MatD scan_matrix(const Shape& s, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n;
  MatD U(s.D, s.steps);
  Eigen::VectorXd dir(s.D);
  for (int i = 0; i < s.D; ++i) dir(i) = n(g);
  dir.normalize();
  for (int t = 0; t < s.steps; ++t) {
    Eigen::VectorXd k(s.D);
    for (int i = 0; i < s.D; ++i) k(i) = n(g);
    if (s.collinear > 0) k = dir + s.collinear * k;
    U.col(t) = k.normalized();  // the scan form's u = k^ (unit keys)
  }
  // Symmetric by construction (a product's two triangles may round apart); the sweep reads the lower one.
  const MatD M = s.lambda0 * MatD::Identity(s.D, s.D) + U * U.transpose();
  return M.selfadjointView<Eigen::Lower>();
}

std::string name(const Shape& s) {
  return "D=" + std::to_string(s.D) + " steps=" + std::to_string(s.steps) + " block=" + std::to_string(s.block) +
         " lambda0=" + std::to_string(s.lambda0) + " collinear=" + std::to_string(s.collinear);
}

const std::vector<Shape> kShapes = {
    {16, 32, 16, 1.0, 0}, {32, 512, 16, 1.0, 0}, {64, 512, 16, 1.0, 0},    {64, 8, 16, 1e-3, 0},
    {64, 256, 16, 1e-6, 0}, {64, 512, 16, 1e-6, 1e-2}, {64, 64, 16, 1.0, 1e-3}, {48, 100, 16, 1e-2, 0},
    {64, 512, 8, 1.0, 0},  {64, 512, 64, 1.0, 0},      {24, 40, 8, 1e-4, 1e-1},
};

TEST(SweepInverse, IsTheInverseAtHighPrecision) {
  hpc::Prec prec;
  for (const Shape& s : kShapes) {
    const MatM M = scan_matrix(s, 7).cast<mp>();
    const auto sw = vla::ref::sweep_inverse<mp>(M, s.block);
    const Eigen::LDLT<MatM> ldlt(M);
    const MatM exact = ldlt.solve(MatM::Identity(s.D, s.D));
    const mp rel = (sw.X - exact).norm() / exact.norm();
    // cond(M) <= 1 + steps / lambda0 <= 6e8: 256 - 32 bits leave room for c D cond 2^-256.
    EXPECT_LT(rel, pow(mp(2), -(hpc::kBits - 64))) << name(s);
    // The pivots: Eigen's L D L^T pivots symmetrically (its P), so compare with our own unpivoted one.
    MatM A = M;
    for (int j = 0; j < s.D; ++j) {
      EXPECT_LT(abs(sw.pivots(j) - A(j, j)) / A(j, j), pow(mp(2), -(hpc::kBits - 64))) << name(s) << " pivot " << j;
      for (int r = j + 1; r < s.D; ++r)
        for (int c = j + 1; c <= r; ++c) A(r, c) -= A(r, j) * A(c, j) / A(j, j);
    }
  }
}

TEST(SweepInverse, DoubleWithinTheForwardErrorModel) {
  hpc::Prec prec;
  double worst = 0;
  for (const Shape& s : kShapes) {
    for (unsigned seed : {1u, 2u, 3u}) {
      const MatD M = scan_matrix(s, seed);
      const auto sw = vla::ref::sweep_inverse<double>(M, s.block);
      const MatM Mm = M.cast<mp>();
      const MatM exact = Eigen::LDLT<MatM>(Mm).solve(MatM::Identity(s.D, s.D));
      const double kappa = double(Mm.norm() * exact.norm()), u = std::ldexp(1.0, -53);
      const double model = 4.0 * s.D * u * kappa;
      const double rel = double((sw.X.cast<mp>() - exact).norm() / exact.norm());
      EXPECT_LE(rel, model) << name(s) << " seed " << seed << ": relative error " << rel << ", kappa_F " << kappa;
      worst = std::max(worst, rel / model);
      ASSERT_TRUE(sw.X.allFinite()) << name(s);
      EXPECT_TRUE(sw.X == sw.X.transpose()) << name(s) << ": the result is the lower triangle mirrored";
      // Pivots against the unpivoted L D L^T at 256 bits (Schur complements' leading entries).
      MatM A = Mm;
      for (int j = 0; j < s.D; ++j) {
        EXPECT_LE(double(abs(mp(sw.pivots(j)) - A(j, j)) / A(j, j)), model) << name(s) << " pivot " << j;
        for (int r = j + 1; r < s.D; ++r)
          for (int c = j + 1; c <= r; ++c) A(r, c) -= A(r, j) * A(c, j) / A(j, j);
      }
    }
  }
  std::printf("sweep inverse, double: worst error / model = %.3g\n", worst);
}

TEST(SweepInverse, RefusesWhatItCannotSweep) {
  EXPECT_THROW(vla::ref::sweep_inverse<double>(MatD::Identity(3, 4)), std::invalid_argument);
  EXPECT_THROW(vla::ref::sweep_inverse<double>(MatD::Identity(24, 24), 16), std::invalid_argument);
  EXPECT_THROW(vla::ref::sweep_inverse<double>(MatD::Identity(16, 16), 0), std::invalid_argument);
}

}  // namespace
