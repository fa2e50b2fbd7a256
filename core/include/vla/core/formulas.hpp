// The per-element formulas of the VLA recurrence (docs/SPEC.md), written once.
//
// Every implementation (reference at any precision, CPU twins, CUDA kernels)
// calls these; only the loops around them and the order of their reductions
// differ between implementations, and that order is a policy (recurrence.hpp).
#pragma once

#include "vla/core/hd.hpp"

namespace vla::core {

// Feature map. elu1(x) = ELU(x) + 1 = x + 1 for x > 0, exp(x) otherwise.
template <class T>
VLA_HD T phi_elu1(const T& x) {
  if (x > T(0)) return T(x + T(1));
  return vexp(x);
}

template <class T>
VLA_HD T phi(const T& x, bool elu1) {
  return elu1 ? phi_elu1(x) : x;
}

// Sherman-Morrison denominator delta = 1 + u^T z, with the optional floor of vla-v3.
template <class T>
VLA_HD T sm_delta(const T& u_dot_z, double floor) {
  T d = T(T(1) + u_dot_z);
  if (floor > 0.0) d = vmax(d, T(floor));
  return d;
}

// The scan form's segment start (docs/CHUNKED.md 8.27): A = M^{-1} from the L D L^T of the n x n
// M = lambda0 I + sum u u^T, factorised in a precision of unit roundoff u_r. Every pivot D_j and
// every diagonal entry M_ii lies in [lambda_min(M), lambda_max(M)], so max_i M_ii / min_j D_j is a
// lower bound on cond(M) (factor_condition_bound; +inf where a pivot is not positive or is NaN:
// the factorisation failed outright). The computed factor is exact for M + dM with
// |dM| <= gamma_{n+1} |L| D |L|^T (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// Thm 10.3), whose entries are at most about (n + 1) u_r max_i M_ii. A pivot no larger than that
// is inside the rounding: the factor, hence A, has no correct digit, and the form refuses the run
// (start_factor_refused) rather than write gates from it.
template <class T>
VLA_HD T factor_condition_bound(const T& max_diag, const T& min_pivot) {
  return min_pivot > T(0) ? T(max_diag / min_pivot) : T(__builtin_huge_val());
}
template <class T>
VLA_HD bool start_factor_refused(const T& condition_bound, int n, const T& unit_roundoff) {
  return !(condition_bound * T(n + 1) * unit_roundoff < T(1));
}

// A_ij - z_i z_j / delta, evaluated as A_ij - z_i * g_j with g_j = z_j / delta
// computed once per column (one division per column, not per element).
template <class T>
VLA_HD T sm_entry(const T& a_ij, const T& z_i, const T& g_j) {
  return vfma(T(-z_i), g_j, a_ij);
}

// The scan form's per-step gate in double (docs/CHUNKED.md 8.16): the same
// Sherman-Morrison step with the factor on the row side, A_ij - g_i z_j with
// g_i = z_i / delta formed once per row (the row's owner holds it; z_j comes
// from the exchange), and the gate w_i = (A_t k^)_i = x_i - g_i (z . k^) with
// x = A_{t-1} k^ (= z where u = k^), without a second product with A_t.
template <class T>
VLA_HD T sm_row_entry(const T& a_ij, const T& g_i, const T& z_j) {
  return vfma(T(-g_i), z_j, a_ij);
}
// The symmetric sweep's entry update at pivot p (docs/CHUNKED.md 8.35; scan_seg_inverse and
// ref::sweep_inverse): a_rc - f_r a_pc with f_r = a_rp / a_pp formed once per row.
template <class T>
VLA_HD T sweep_entry(const T& a_rc, const T& f_r, const T& a_pc) {
  return vfma(T(-f_r), a_pc, a_rc);
}
template <class T>
VLA_HD T sm_gate_entry(const T& x_i, const T& g_i, const T& z_dot_k) {
  return vfma(T(-g_i), z_dot_k, x_i);
}

// The scan form's per-step gate with a rank-1 look-ahead (docs/CHUNKED.md 8.19):
// y = A_{t-2} u_t is formed beside the update of step t - 1, then corrected by
// that update, z_t = A_{t-1} u_t = y - g_{t-1} c with c = z_{t-1} . u_t, and
// u_t . z_t = e - (d / delta_{t-1}) c with e = u_t . y and d = z_{t-1} . u_t = c
// (k^_t . z_t likewise with e = k^_t . y, d = z_{t-1} . k^_t): the step's
// matrix-vector product leaves the chain of dependent reductions. Exact
// Sherman-Morrison algebra, another rounding.
template <class T>
VLA_HD T sm_lookahead_entry(const T& y_i, const T& g_prev_i, const T& c) {
  return vfma(T(-g_prev_i), c, y_i);
}
template <class T>
VLA_HD T sm_lookahead_dot(const T& e, const T& c, const T& d, const T& rd_prev) {
  return vfma(T(-T(rd_prev * d)), c, e);
}

// Does the vla-v3 ridge A += ridge I apply after the update of step t (1-based)?
VLA_HD bool ridge_due(long t, int every) { return every > 0 && t % every == 0; }

// S_ij + r_i a_j with r = v - S k^ (the residual write of the state).
template <class T>
VLA_HD T state_entry(const T& s_ij, const T& r_i, const T& a_j) {
  return vfma(r_i, a_j, s_ij);
}

// Ratio readout denominator with the optional floor of vla-v3.
template <class T>
VLA_HD T readout_den(const T& den, double floor) {
  if (floor > 0.0) return vmax(den, T(floor));
  return den;
}

// Additive linear attention: S_ij + v_i phi(k)_j.
template <class T>
VLA_HD T linear_entry(const T& s_ij, const T& v_i, const T& phik_j) {
  return vfma(v_i, phik_j, s_ij);
}

// DeltaNet: g S_ij + beta (v_i - g (S k^)_i) k^_j, with Sk_i the product of the
// previous state with k^.
template <class T>
VLA_HD T deltanet_entry(const T& s_ij, const T& v_i, const T& sk_i, const T& kh_j, double beta,
                        double decay) {
  const T resid = T(v_i - T(decay) * sk_i);
  return vfma(T(T(beta) * resid), kh_j, T(T(decay) * s_ij));
}

}  // namespace vla::core
