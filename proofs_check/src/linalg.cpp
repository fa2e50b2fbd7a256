// Dense decompositions of hp.hpp (Eigen's JacobiSVD and partial-pivoting LU), at
// double and at the reference's Mpfr: the one translation unit that
// instantiates them at MPFR.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "vla/claims/hp.hpp"

namespace vla::claims::hp {

namespace {
template <class T>
T largest_singular_value(const Mat<T>& m) {
  if (m.rows() == 0 || m.cols() == 0) return T(0);
  Eigen::JacobiSVD<Mat<T>> svd(m);
  return svd.singularValues()(0);
}
template <class T>
Mat<T> lu_solve(const Mat<T>& A, const Mat<T>& B) {
  if (A.rows() != A.cols() || A.rows() != B.rows())
    throw std::invalid_argument("hp::solve: A must be square with as many rows as B");
  return A.partialPivLu().solve(B);
}
template <class T>
Vec<T> all_singular_values(const Mat<T>& m) {
  if (m.rows() == 0 || m.cols() == 0) return Vec<T>();
  Eigen::JacobiSVD<Mat<T>> svd(m);
  return svd.singularValues();
}
}  // namespace

Vec<double> singular_values(const Mat<double>& m) { return all_singular_values(m); }
Vec<Mp> singular_values(const Mat<Mp>& m) { return all_singular_values(m); }
// At double the largest singular value is sqrt(lambda_max(M^T M)): the symmetric
// eigensolver is backward stable, so the largest eigenvalue is off by at most
// ~n u ||M||_2^2, i.e. sigma_max by ~n u / 2 relative, and it is several times
// faster than a one-sided Jacobi SVD on the 96 x 96 operators of the ledger.
double spectral_norm(const Mat<double>& m) {
  if (m.rows() == 0 || m.cols() == 0) return 0;
  Eigen::SelfAdjointEigenSolver<Mat<double>> es(m.transpose() * m, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(0.0, es.eigenvalues()(es.eigenvalues().size() - 1)));
}
Mp spectral_norm(const Mat<Mp>& m) { return largest_singular_value(m); }
Mat<double> solve(const Mat<double>& A, const Mat<double>& B) { return lu_solve(A, B); }
Mat<Mp> solve(const Mat<Mp>& A, const Mat<Mp>& B) { return lu_solve(A, B); }

}  // namespace vla::claims::hp
