// The high-precision measures the report takes from properties/ (see deps.hpp).
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "vla/reference/trace.hpp"

namespace vla::report::deps {

using F128 = ref::Float128;
using VecF128 = Eigen::Matrix<F128, Eigen::Dynamic, 1>;

// ||I - a k^T||_2: the spectral norm of one step's Jacobian, from vectors the
// binary128 reference trace recorded.
double jacobian_step_norm(const VecF128& a, const VecF128& k);
std::string jacobian_source();

// ||A M - I||_F with M = lambda0 I + sum_{s <= upto} u_s u_s^T (0-based steps;
// A is Dk x Dk, row-major). `high` evaluates it in MPFR (for A as accurate as the double
// reference); otherwise in double, whose own error (about Dk 2^-53 cond(M_t))
// is far below any float32 or bf16 implementation's residual.
double sm_residual(const std::vector<double>& A, const std::vector<std::vector<double>>& us, double lambda0, int upto,
                   bool high);
std::string sm_residual_source();

// Gradient amplification through a window, with the paper's normalisation, on the
// construction of properties/ (gradient_flow.hpp; docs/FINDINGS.md, "Gradient flow
// through many steps"): elu1, u = k^, W steps of one key, then w = ceil(8 sqrt(kappa0))
// steps of a second at tan(angle) = kappa0^{-1/2}, kappa0 = 1 + W / lambda0.
// At 256 bits: the window's ||P_{W+1} ... P_{W+w}||_2, its limit
// (1 + kappa0) / (2 sqrt kappa0), and the proven upper bound on that window.
struct GradientWindow {
  int W = 0, w = 0;
  double amplification = 0, limit = 0, bound = 0;
};
GradientWindow gradient_window(int W, double lambda0);
std::string gradient_window_source();

// Largest eigenvalue of a symmetric matrix (double).
double max_eig_sym(const Eigen::MatrixXd& M);

}  // namespace vla::report::deps
