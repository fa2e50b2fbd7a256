// Dense decompositions of hp.hpp (Eigen's JacobiSVD and partial-pivoting LU), at
// double and at the reference's Mpfr: the one translation unit that
// instantiates them at MPFR.
#include <Eigen/Dense>
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
double spectral_norm(const Mat<double>& m) { return largest_singular_value(m); }
Mp spectral_norm(const Mat<Mp>& m) { return largest_singular_value(m); }
Mat<double> solve(const Mat<double>& A, const Mat<double>& B) { return lu_solve(A, B); }
Mat<Mp> solve(const Mat<Mp>& A, const Mat<Mp>& B) { return lu_solve(A, B); }

}  // namespace vla::claims::hp
