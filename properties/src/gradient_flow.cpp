// Gradient flow through a window of steps (gradient_flow.hpp).
//
// Derivation of the upper bound (column vectors; ||P_s ... P_t||_2 is also the
// norm of the product acting on columns, P_t first):
//
// 1. One step is non-expansive in A_r's norm ||z||_A = sqrt(z^T A z). With k = k^_r
//    unit and a = A k / ||A k||, Pi = k k^T A / (k^T A k) is the A-orthogonal
//    projector onto span{k} (Pi^2 = Pi, A Pi = Pi^T A), and k a^T = c Pi with
//    c = k^T A k / ||A k|| in (0, 1] (Cauchy-Schwarz). So P_r = I - c Pi and, by
//    Pythagoras in the A inner product,
//      ||P_r z||_A^2 = (1 - c)^2 ||Pi z||_A^2 + ||(I - Pi) z||_A^2 <= ||z||_A^2.
//    (Any c in (0, 2] would do; an unnormalised gate can have c > 2.)
// 2. Changing norms between steps costs rho_r = lambda_max(A_r^{-1/2} A_{r-1} A_r^{-1/2}):
//    ||z||_{A_{r-1}}^2 <= rho_r ||z||_{A_r}^2. Sherman-Morrison gives
//    A_r^{-1} = A_{r-1}^{-1} + u u^T, so rho_r = 1 + u^T A_{r-1} u = delta_r; a ridge
//    step adds to A_r, which can only lower rho_r, so rho_r <= delta_r always.
// 3. Chain z_t = z, z_{r-1} = P_r z_r (r = t .. s):
//      ||z_{s-1}||_{A_s} <= ||z_s||_{A_s} <= sqrt(delta_{s+1}) ||z_s||_{A_{s+1}} <= ...
//                        <= sqrt(prod_{r=s+1..t} delta_r) ||z||_{A_t},
//    and ||y||_2 <= sqrt(lambda_max(A_s^{-1})) ||y||_{A_s}, ||z||_{A_t} <= sqrt(lambda_max(A_t)) ||z||_2.
//
// The bound is not 1: as M grows anisotropic (cond(M_t) up to 1 + t / lambda0 for
// unit u) the first factor grows like sqrt(cond), and the construction shows a
// window that gets within a factor of about two of it.
#include "vla/properties/gradient_flow.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace vla::props {

namespace {

template <class T>
T spectral_norm_of(const Mat<T>& Q) {
  Eigen::JacobiSVD<Mat<T>> svd(Q);
  return svd.singularValues()(0);
}

template <class T>
void check_window(const std::vector<ref::TraceStep<T>>& tr, int s, int t) {
  if (s < 0 || t < s || t >= static_cast<int>(tr.size()))
    throw std::invalid_argument("window " + std::to_string(s) + ".." + std::to_string(t) + " outside a trace of " +
                                std::to_string(tr.size()) + " steps");
}

}  // namespace

template <class T>
T window_norm(const std::vector<ref::TraceStep<T>>& tr, int s, int t) {
  check_window(tr, s, t);
  Mat<T> Q = step_map(tr[std::size_t(s)]);
  for (int r = s + 1; r <= t; ++r) Q = Q * step_map(tr[std::size_t(r)]);
  return spectral_norm_of(Q);
}

template <class T>
T window_bound(const std::vector<ref::TraceStep<T>>& tr, int s, int t) {
  using std::sqrt;
  check_window(tr, s, t);
  if (tr[std::size_t(s)].A.size() == 0 || tr[std::size_t(t)].A.size() == 0)
    throw std::invalid_argument("window_bound: the trace holds no A (TraceOptions::with_A)");
  T deltas(1);
  for (int r = s + 1; r <= t; ++r) deltas = deltas * tr[std::size_t(r)].delta;
  return sqrt(max_eig_sym<T>(tr[std::size_t(t)].A) / min_eig_sym<T>(tr[std::size_t(s)].A) * deltas);
}

template <class T>
WindowScan<T> scan_windows(const std::vector<ref::TraceStep<T>>& tr) {
  using std::sqrt;
  WindowScan<T> out;
  const int n = static_cast<int>(tr.size());
  if (n == 0) return out;
  for (const auto& st : tr)
    if (st.A.size() == 0) throw std::invalid_argument("scan_windows: the trace holds no A (TraceOptions::with_A)");
  // Per step: lambda_max(A_r), 1 / lambda_min(A_r), and prefix products of delta.
  const std::size_t len = static_cast<std::size_t>(n);
  std::vector<T> amax(len), inv_amin(len), pre(len + 1);
  pre[0] = T(1);
  for (int r = 0; r < n; ++r) {
    amax[std::size_t(r)] = max_eig_sym<T>(tr[std::size_t(r)].A);
    inv_amin[std::size_t(r)] = T(1) / min_eig_sym<T>(tr[std::size_t(r)].A);
    pre[std::size_t(r) + 1] = pre[std::size_t(r)] * tr[std::size_t(r)].delta;
  }
  // Products of the windows ending at t, Q[s] = P_s ... P_t, extended by one step per t.
  std::vector<Mat<T>> Q;
  for (int t = 0; t < n; ++t) {
    const Mat<T> P = step_map(tr[std::size_t(t)]);
    for (auto& q : Q) q = q * P;
    Q.push_back(P);
    for (int s = 0; s <= t; ++s) {
      const T norm = spectral_norm_of(Q[std::size_t(s)]);
      // prod_{r=s+1..t} delta_r = pre[t + 1] / pre[s + 1]
      const T bound = sqrt(amax[std::size_t(t)] * inv_amin[std::size_t(s)] * pre[std::size_t(t) + 1] / pre[std::size_t(s) + 1]);
      const T ratio = norm / bound;
      if (out.windows == 0 || norm > out.max_norm) {
        out.max_norm = norm;
        out.norm_s = s;
        out.norm_t = t;
      }
      if (out.windows == 0 || ratio > out.max_ratio) {
        out.max_ratio = ratio;
        out.ratio_s = s;
        out.ratio_t = t;
      }
      ++out.windows;
    }
  }
  return out;
}

Case gradient_window_construction(int W, int w, double lambda0, FeatureMap fm) {
  if (W < 1 || w < 1) throw std::invalid_argument("gradient_window_construction: W and w must be >= 1");
  if (!(lambda0 > 0)) throw std::invalid_argument("gradient_window_construction: lambda0 must be > 0");
  const double tau = 1 / std::sqrt(gradient_window_kappa0(W, lambda0));
  Case c;
  c.lambda0 = lambda0;
  c.feature_map = fm;
  Stream& s = c.stream;
  s.dims = Dims{1, W + w, 1, 2, 1};
  const bool elu = fm == FeatureMap::elu1;
  // elu1(x) = x + 1 for x > 0: features (2, 2) and (2, 2 (1 + tau) / (1 - tau)).
  const double e[2] = {1.0, elu ? 1.0 : 0.0};
  const double f[2] = {1.0, elu ? 2 * (1 + tau) / (1 - tau) - 1 : tau};
  for (int t = 0; t < W + w; ++t) {
    const double* k = t < W ? e : f;
    for (int j = 0; j < 2; ++j) {
      s.k.push_back(k[j]);
      s.q.push_back(k[j]);
    }
    s.v.push_back(1.0);
  }
  return c;
}

double gradient_window_kappa0(int W, double lambda0) { return 1 + W / lambda0; }

int gradient_window_steps(double kappa0) { return static_cast<int>(std::ceil(8 * std::sqrt(kappa0))); }

double gradient_window_limit(double kappa0) { return (1 + kappa0) / (2 * std::sqrt(kappa0)); }

template <class T>
T gradient_window_gate_cos(const T& kappa0, const T& tau) {
  using std::sqrt;
  const T t2 = tau * tau;
  return (T(1) + kappa0 * t2) / sqrt((T(1) + t2) * (T(1) + kappa0 * kappa0 * t2));
}

template <class T>
T repeated_step_power_norm(const T& c, int w) {
  using std::pow;
  // g = (1 - (1 - c)^w) / c a^: g.f = 1 - (1 - c)^w, |f|^2 |g|^2 = ((1 - (1 - c)^w) / c)^2.
  const T gf = T(1) - T(pow(T(1) - c, w));
  const T g = gf / c;
  return rank_one_update_norm<T>(gf, g * g, 2);
}

template <class T>
T gradient_window_tau(const std::vector<ref::TraceStep<T>>& tr, int W) {
  using std::abs;
  if (W < 1 || W >= static_cast<int>(tr.size())) throw std::invalid_argument("gradient_window_tau: W outside the trace");
  const auto& e = tr[0].k_hat;
  const auto& f = tr[std::size_t(W)].k_hat;
  if (e.size() != 2) throw std::invalid_argument("gradient_window_tau: the construction has Dk = 2");
  // sin / cos as cross / dot: no cancellation when the angle is small.
  return abs(e(0) * f(1) - e(1) * f(0)) / e.dot(f);
}

double window_norm_allowance(int n, int dk, long bits) {
  return (double(n) * dk * std::pow(std::numbers::phi, n) + 16.0 * dk * dk) * std::ldexp(1.0, -int(bits));
}

double construction_cos_allowance(int t, double kappa0, long bits) {
  return 64.0 * t * kappa0 * std::ldexp(1.0, -int(bits));
}

#define VLA_PROPS_GRADIENT_FLOW_INSTANTIATE(T)                                            \
  template T window_norm<T>(const std::vector<ref::TraceStep<T>>&, int, int);           \
  template T window_bound<T>(const std::vector<ref::TraceStep<T>>&, int, int);          \
  template WindowScan<T> scan_windows<T>(const std::vector<ref::TraceStep<T>>&);        \
  template T gradient_window_gate_cos<T>(const T&, const T&);                           \
  template T repeated_step_power_norm<T>(const T&, int);                                \
  template T gradient_window_tau<T>(const std::vector<ref::TraceStep<T>>&, int);
VLA_PROPS_GRADIENT_FLOW_INSTANTIATE(double)
VLA_PROPS_GRADIENT_FLOW_INSTANTIATE(Mpfr)

}  // namespace vla::props
