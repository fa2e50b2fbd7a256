// High-precision tools of the checks: one step of the spec's recurrence from a
// given state, the product of the Jacobians of several steps built by running
// the spec's own step from S = I (not an assumed formula), and dense linear
// algebra at double and at the reference's MPFR scalar (Eigen, through
// mpfr_eigen.hpp). The one-step Jacobian operator is the properties'
// (vla/properties/measures.hpp, jacobian_operator_from_step).
//
// The templates are instantiated once, for double and Mpfr (src/hp_*.cpp).
#pragma once

#include <Eigen/Core>
#include <vector>

#include "vla/core/recurrence.hpp"
#include "vla/core/stream.hpp"
#include "vla/reference/mpfr_eigen.hpp"
#include "vla/reference/scalars.hpp"
#include "vla/reference/trace.hpp"

namespace vla::claims::hp {

using Mp = ref::Mpfr;
template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// One token (q, k, v and optional u) of head (b, h) at step t, in scalar T.
template <class T>
struct Token {
  std::vector<T> q, k, v, u;
  bool has_u = false;
};
template <class T>
Token<T> token_at(const Stream& s, int t, int b = 0, int h = 0);

// One step of opt.model from `st` by the spec's step (VLA, linear, DeltaNet).
// A token's v shorter than the state's rows is padded with zeros.
template <class T>
void step(core::HeadState<T>& st, const Token<T>& tok, const Options& opt, core::StepInfo<T>& info);

// Every step acts on S row by row, S_t = S_{t-1} P_t + (terms without S), so the
// product P_1 ... P_n of the steps from `first` is the state reached from S = I
// (Dk rows) with v = 0: the Jacobian of S_{first + n} with respect to S_first,
// acting on each row. Returns that Dk x Dk matrix; `each`, when given, receives
// every single-step factor P_t too.
template <class T>
Mat<T> right_factor_product(const core::HeadState<T>& first, const std::vector<Token<T>>& toks, const Options& opt,
                            std::vector<Mat<T>>* each = nullptr);

// Largest singular value: at double from the symmetric eigensolver on M^T M
// (relative error ~ n u), at MPFR by Eigen's JacobiSVD at the calling thread's
// working precision.
double spectral_norm(const Mat<double>& m);
Mp spectral_norm(const Mat<Mp>& m);
// All singular values, largest first.
Vec<double> singular_values(const Mat<double>& m);
Vec<Mp> singular_values(const Mat<Mp>& m);
// X with A X = B (LU with partial pivoting at the working precision).
Mat<double> solve(const Mat<double>& A, const Mat<double>& B);
Mat<Mp> solve(const Mat<Mp>& A, const Mat<Mp>& B);

inline double as_double(double x) { return x; }
inline double as_double(const Mp& x) { return static_cast<double>(x); }
template <class T>
Mat<double> as_double(const Mat<T>& m) {
  Mat<double> d(m.rows(), m.cols());
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) d(i, j) = as_double(m(i, j));
  return d;
}

#define VLA_CLAIMS_HP_TEMPLATES(PREFIX, T)                                                                             \
  PREFIX template Token<T> token_at<T>(const Stream&, int, int, int);                                                  \
  PREFIX template void step<T>(core::HeadState<T>&, const Token<T>&, const Options&, core::StepInfo<T>&);              \
  PREFIX template Mat<T> right_factor_product<T>(const core::HeadState<T>&, const std::vector<Token<T>>&,              \
                                                 const Options&, std::vector<Mat<T>>*);
VLA_CLAIMS_HP_TEMPLATES(extern, double)
VLA_CLAIMS_HP_TEMPLATES(extern, ref::Mpfr)

}  // namespace vla::claims::hp
