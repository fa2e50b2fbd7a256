// Internal: definitions of the measures.hpp templates, included by the two
// instantiation files (double, Mpfr) only.
#pragma once

#include <Eigen/Dense>
#include <stdexcept>

#include "vla/properties/measures.hpp"

namespace vla::props {

template <class T>
Mat<T> step_map(const Vec<T>& kh, const Vec<T>& a) {
  const int dk = static_cast<int>(kh.size());
  if (a.size() != dk) throw std::invalid_argument("step_map: k^ and a^ differ in size");
  Mat<T> P = Mat<T>::Identity(dk, dk);
  for (int l = 0; l < dk; ++l)
    for (int j = 0; j < dk; ++j) P(l, j) = P(l, j) - kh(l) * a(j);
  return P;
}

template <class T>
Mat<T> jacobian_operator(const Vec<T>& kh, const Vec<T>& a, int dv) {
  const int dk = static_cast<int>(kh.size());
  if (a.size() != dk || dv < 1) throw std::invalid_argument("jacobian_operator: sizes");
  // (X P)_{ij} = sum_l X_{il} P_{lj}, P = I - kh a^T; vec index i * dk + j.
  const Mat<T> P = step_map<T>(kh, a);
  Mat<T> J = Mat<T>::Zero(dv * dk, dv * dk);
  for (int i = 0; i < dv; ++i)
    for (int j = 0; j < dk; ++j)
      for (int l = 0; l < dk; ++l) J(i * dk + j, i * dk + l) = P(l, j);
  return J;
}

template <class T>
T jacobian_spectral_norm(const Vec<T>& kh, const Vec<T>& a, int dv) {
  const Mat<T> J = jacobian_operator<T>(kh, a, dv);
  Eigen::JacobiSVD<Mat<T>> svd(J);
  return svd.singularValues()(0);
}

template <class T>
T rank_one_update_norm(const T& ydotx, const T& x2y2, int n) {
  using std::abs;
  using std::sqrt;
  const T d = T(1) - ydotx;
  if (n == 1) return abs(d);
  const T s = T(2) - T(2) * ydotx + x2y2;
  T disc = s * s - T(4) * d * d;
  if (disc < T(0)) disc = T(0);  // only by rounding: s^2 - 4 d^2 = (|x||y|)^2 ((|x||y|)^2 - ...) >= 0
  const T top = (s + sqrt(disc)) / T(2);
  // The other singular values are 1 when n >= 3; for n = 2 there are just the two.
  return top > T(1) || n == 2 ? sqrt(top) : T(1);
}

template <class T>
T jacobian_norm_of_cos(const T& c) {
  using std::sqrt;
  return sqrt((T(3) - T(2) * c + sqrt(T(5) - T(4) * c)) / T(2));
}

template <class T>
T jacobian_norm_bound_of_kappa(const T& kappa) {
  using std::sqrt;
  return jacobian_norm_of_cos<T>(T(2) * sqrt(kappa) / (T(1) + kappa));
}

template <class T>
Mat<T> penalty_matrix(const std::vector<Vec<T>>& us, double lambda0, int dk, int upto) {
  Mat<T> M = Mat<T>::Identity(dk, dk) * T(lambda0);
  for (int s = 0; s <= upto; ++s) M += us[s] * us[s].transpose();
  return M;
}

template <class T>
T sherman_morrison_residual(const Mat<T>& A, const std::vector<Vec<T>>& us, double lambda0, int upto) {
  const int dk = static_cast<int>(A.rows());
  const Mat<T> R = A * penalty_matrix<T>(us, lambda0, dk, upto) - Mat<T>::Identity(dk, dk);
  return R.norm();
}

template <class T>
T max_eig_sym(const Mat<T>& M) {
  const Mat<T> S = (M + M.transpose()) / T(2);
  Eigen::SelfAdjointEigenSolver<Mat<T>> es(S, Eigen::EigenvaluesOnly);
  return es.eigenvalues()(S.rows() - 1);
}

template <class T>
T min_eig_sym(const Mat<T>& M) {
  const Mat<T> S = (M + M.transpose()) / T(2);
  Eigen::SelfAdjointEigenSolver<Mat<T>> es(S, Eigen::EigenvaluesOnly);
  return es.eigenvalues()(0);
}

#define VLA_PROPS_MEASURES_INSTANTIATE(T)                                                  \
  template Mat<T> jacobian_operator<T>(const Vec<T>&, const Vec<T>&, int);                \
  template Mat<T> step_map<T>(const Vec<T>&, const Vec<T>&);                              \
  template T jacobian_spectral_norm<T>(const Vec<T>&, const Vec<T>&, int);                \
  template T rank_one_update_norm<T>(const T&, const T&, int);                            \
  template T jacobian_norm_of_cos<T>(const T&);                                           \
  template T jacobian_norm_bound_of_kappa<T>(const T&);                                   \
  template Mat<T> penalty_matrix<T>(const std::vector<Vec<T>>&, double, int, int);        \
  template T sherman_morrison_residual<T>(const Mat<T>&, const std::vector<Vec<T>>&, double, int); \
  template T max_eig_sym<T>(const Mat<T>&);                                               \
  template T min_eig_sym<T>(const Mat<T>&);

}  // namespace vla::props
