// Gradient flow through a window of steps: the paper's consequence of
// Proposition 2, "stable gradient flow (no explosion, no vanishing) at arbitrary
// depth" (docs/FINDINGS.md, "Gradient flow through many steps").
//
// S_t is affine in S_{t-1} with linear part X -> X P_t, P_t = I - k^_t a^_t^T, and
// k^_t, a^_t do not depend on S. So dS_t/dS_{s-1} = J_t ... J_s is the map
// X -> X P_s P_{s+1} ... P_t, whose norm (Frobenius to Frobenius: the rows of X
// are independent) is ||P_s ... P_t||_2: by how much a gradient at step t can grow
// on its way back to S_{s-1}. Indices here are the trace's, 0-based, inclusive.
//
// Upper bound (derivation in gradient_flow.cpp; valid when every k^_r is unit and
// a^_r = A_r k^_r / ||A_r k^_r||, i.e. --normalize both, with any u and the ridge):
//   ||P_s ... P_t||_2 <= sqrt( lambda_max(A_t) / lambda_min(A_s) * prod_{r=s+1..t} delta_r ),
// which without the ridge (A = M^{-1}, det M_r = det M_{r-1} delta_r) reads
//   sqrt( lambda_max(M_s) / lambda_min(M_t) * det M_t / det M_s ).
//
// Lower bound (the refutation): gradient_window_construction below reaches
// (1 + kappa0) / (2 sqrt kappa0) ~ sqrt(kappa0) / 2 with kappa0 = 1 + W / lambda0.
//
// Templates instantiated for double and ref::Mpfr (current precision).
#pragma once

#include <vector>

#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/reference/trace.hpp"

namespace vla::props {

// P_r = I - k^_r a^_r^T of one traced step (measures.hpp's step_map).
template <class T>
Mat<T> step_map(const ref::TraceStep<T>& st) {
  return step_map<T>(st.k_hat, st.a_hat);
}

// ||P_s ... P_t||_2 (largest singular value, JacobiSVD at T's precision).
template <class T>
T window_norm(const std::vector<ref::TraceStep<T>>& tr, int s, int t);

// The upper bound above for the window s..t; the trace must hold A (with_A).
template <class T>
T window_bound(const std::vector<ref::TraceStep<T>>& tr, int s, int t);

// Every window of the trace (O(T^2) products of Dk x Dk matrices): the largest
// norm and the largest norm / bound, with where they occur.
template <class T>
struct WindowScan {
  T max_norm{};
  int norm_s = 0, norm_t = 0;
  T max_ratio{};  // largest ||P_s ... P_t|| / bound
  int ratio_s = 0, ratio_t = 0;
  int windows = 0;
};
template <class T>
WindowScan<T> scan_windows(const std::vector<ref::TraceStep<T>>& tr);

// The construction (Dk = 2, Dv = 1, u = k^, normalize both): W steps of one key
// e, then w steps of one key f at angle alpha to e with tan(alpha) = tau =
// kappa0^{-1/2}, kappa0 = 1 + W / lambda0. identity map: e = (1, 0), f = (1, tau);
// elu1 (so that the paper preset runs it): the same rotated by 45 degrees, raw keys
// (1, 1) and (1, 2 (1 + tau) / (1 - tau) - 1) with features (2, 2) and
// (2, 2 (1 + tau)/(1 - tau)), the latter rounded (the replay measures the actual
// angle: gradient_window_tau). q_t = k_t, v_t = 1. T = W + w.
//
// Why every window gate is the same (rotate so that e = e_1, f = (cos a, sin a)):
// after W + j steps M = lambda0 I + W e e^T + j f f^T, and its adjugate applied to f
// is (lambda0 cos a, (lambda0 + W) sin a) for every j (the j terms cancel), so
// a^ is proportional to (cos a, kappa0 sin a) throughout the window, c = a^.f is
// gradient_window_gate_cos(kappa0, tau) and the window's map is P^w with P = I - f a^T.
// tau = kappa0^{-1/2} puts c at 2 sqrt(kappa0) / (1 + kappa0): Kantorovich's
// smallest possible cosine for cond(M) = kappa0. Then P^w = I - f g^T with
// g = (1 - (1 - c)^w) / c a^ (induction: (I - f g^T)(I - f a^T) = I - f (g + (1 - g.f) a)^T),
// so ||P^w||_2 = repeated_step_power_norm(c, w), which increases to 1/c =
// (1 + kappa0) / (2 sqrt kappa0) as w grows (for c w >> 1).
Case gradient_window_construction(int W, int w, double lambda0, FeatureMap fm);

// The construction's numbers, for callers that build it: kappa0 = 1 + W / lambda0
// (cond(M) after the first key's W steps); a window length w = ceil(8 sqrt(kappa0)),
// after which (1 - c)^w <= e^{-16 kappa0 / (1 + kappa0)} since c = 2 sqrt(kappa0) / (1 + kappa0);
// and the amplification's limit 1/c = (1 + kappa0) / (2 sqrt kappa0).
double gradient_window_kappa0(int W, double lambda0);
int gradient_window_steps(double kappa0);
double gradient_window_limit(double kappa0);

// c(kappa0, tau) = (1 + kappa0 tau^2) / sqrt((1 + tau^2)(1 + kappa0^2 tau^2)).
template <class T>
T gradient_window_gate_cos(const T& kappa0, const T& tau);

// ||(I - f a^T)^w||_2 for unit f, a in R^2 with a.f = c (rank_one_update_norm of f, g).
template <class T>
T repeated_step_power_norm(const T& c, int w);

// tan of the angle between the construction's two keys, from its trace (steps 0 and W).
template <class T>
T gradient_window_tau(const std::vector<ref::TraceStep<T>>& tr, int W);

// Rounding allowances at p bits (u = 2^-p), for comparisons made at MPFR:
// * a computed window norm of n steps, relative to max(norm, 1): a product of n
//   Dk x Dk matrices has entries within n Dk u of the product's entry magnitudes
//   times the product of the factors' norms (each < golden ratio phi), and JacobiSVD
//   adds 16 Dk^2 u: (n Dk phi^n + 16 Dk^2) u;
// * the construction's gate cosine after t steps, absolute: A_t from t
//   Sherman-Morrison steps carries a relative error of order t cond(M_t) u, and c
//   inherits it: 64 t kappa0 u (||P^w|| then moves by at most w / c^2 per unit of c).
double window_norm_allowance(int n, int dk, long bits);
double construction_cos_allowance(int t, double kappa0, long bits);

#define VLA_PROPS_GRADIENT_FLOW_EXTERN(T)                                                        \
  extern template T window_norm<T>(const std::vector<ref::TraceStep<T>>&, int, int);           \
  extern template T window_bound<T>(const std::vector<ref::TraceStep<T>>&, int, int);          \
  extern template WindowScan<T> scan_windows<T>(const std::vector<ref::TraceStep<T>>&);        \
  extern template T gradient_window_gate_cos<T>(const T&, const T&);                           \
  extern template T repeated_step_power_norm<T>(const T&, int);                                \
  extern template T gradient_window_tau<T>(const std::vector<ref::TraceStep<T>>&, int);
VLA_PROPS_GRADIENT_FLOW_EXTERN(double)
VLA_PROPS_GRADIENT_FLOW_EXTERN(Mpfr)
#undef VLA_PROPS_GRADIENT_FLOW_EXTERN

}  // namespace vla::props
