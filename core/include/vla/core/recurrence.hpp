// One step of the VLA recurrence (and of the recurrent baselines) for one
// (batch, head), generic over the scalar and over a precision policy.
//
// The reference instantiates it with a multiprecision scalar and the
// sequential policy; the CPU twins instantiate it with float and a policy that
// reproduces the kernel's reduction order and rounding points. The CUDA kernels
// distribute the same per-element formulas (formulas.hpp) over threads in the
// order their twin policy describes.
//
// A policy P provides:
//   using T = ...;                                   arithmetic type
//   static T dot(const T* a, const T* b, int n);     a reduction of a.b in a fixed order
//   static T store_state(const T& x);                rounding when S or A is stored between steps
//   static T store_out(const T& x);                  rounding of an output element o
//   static void matvec(const T* M, const T* x, T* y, int rows, int n);
//                                                    optional: y_i = dot(M_i, x), same values
//   static void row_sqnorms(const T* M, T* y, int rows, int n);  optional: y_i = dot(M_i, M_i)
//   static T sum(const T* x, int n);                 optional: a sum in a fixed order (used for
//                                                    ||S_t||_F^2 over the rows); left to right if absent
//   static T norm(const T* x, int n);                optional: ||x||_2 (the reference's double and
//                                                    binary128 rescale out of range); else sqrt(dot(x, x))
//   static T frobenius_norm(const T* M, T* rows_scratch, int rows, int n);
//                                                    optional: ||M||_F; else sqrt(sum(row_sqnorms))
//   static constexpr bool gate_from_z = true;        optional: take the gate from z where that is exact
//                                                    (gate_from_z_exact below); absent or false: w = A_t k^
//   static void divide_all(const T* x, const T& d, T* out, int n);
//                                                    optional: out_j = x_j / d for one denominator
//                                                    (g and the gate); one division per entry if absent
#pragma once

#include <cstddef>
#include <vector>

#include "vla/core/formulas.hpp"
#include "vla/core/spec.hpp"

namespace vla::core {

// Plain left-to-right accumulation with fused multiply-adds, no extra rounding.
template <class Scalar>
struct SequentialPolicy {
  using T = Scalar;
  static T dot(const T* a, const T* b, int n) {
    T acc = T(0);
    for (int j = 0; j < n; ++j) acc = vfma(a[j], b[j], acc);
    return acc;
  }
  static T store_state(const T& x) { return x; }
  static T store_out(const T& x) { return x; }
};

// In-place element updates, x <- formula(x, ...), with the formula's value. A
// scalar whose temporaries allocate (the reference's MPFR type) overloads them,
// found by argument-dependent lookup, to write into x without a temporary.
template <class T>
inline void sm_update(T& a_ij, const T& z_i, const T& g_j) { a_ij = sm_entry(a_ij, z_i, g_j); }
template <class T>
inline void state_update(T& s_ij, const T& r_i, const T& a_j) { s_ij = state_entry(s_ij, r_i, a_j); }

// y_i = P::dot(M_i, x) for the rows of a row-major rows x n matrix. A policy may
// provide matvec with exactly these values (the reference interleaves several
// rows' left-to-right chains, which a CPU overlaps); otherwise row by row.
template <class P>
void matvec(const typename P::T* M, const typename P::T* x, typename P::T* y, int rows, int n) {
  if constexpr (requires { P::matvec(M, x, y, rows, n); }) {
    P::matvec(M, x, y, rows, n);
  } else {
    for (int i = 0; i < rows; ++i) y[i] = P::dot(M + static_cast<std::size_t>(i) * n, x, n);
  }
}

// y_i = P::dot(M_i, M_i), the squared norms of the rows; optional policy hook
// P::row_sqnorms with exactly these values, as for matvec.
template <class P>
void row_sqnorms(const typename P::T* M, typename P::T* y, int rows, int n) {
  if constexpr (requires { P::row_sqnorms(M, y, rows, n); }) {
    P::row_sqnorms(M, y, rows, n);
  } else {
    for (int i = 0; i < rows; ++i) {
      const typename P::T* m = M + static_cast<std::size_t>(i) * n;
      y[i] = P::dot(m, m, n);
    }
  }
}

template <class T>
struct HeadState {
  int dk = 0, dv = 0;
  long t = 0;           // steps taken
  std::vector<T> A;     // dk x dk, row-major: inverse penalty
  std::vector<T> S;     // dv x dk, row-major: state
  std::vector<T> n;     // dk: normaliser sum of phi(k)

  void reset(int dk_, int dv_, double lambda0) {
    dk = dk_;
    dv = dv_;
    t = 0;
    A.assign(static_cast<std::size_t>(dk) * dk, T(0));
    S.assign(static_cast<std::size_t>(dv) * dk, T(0));
    n.assign(dk, T(0));
    const T inv = T(T(1) / T(lambda0));
    for (int i = 0; i < dk; ++i) A[static_cast<std::size_t>(i) * dk + i] = inv;
  }
};

// Per-step scratch, allocated once per head so that the step allocates nothing.
template <class T>
struct Workspace {
  std::vector<T> phik, kh, u, z, g, w, a, r, phiq, y, rn;
  void resize(int dk, int dv) {
    for (auto* v : {&phik, &kh, &u, &z, &g, &w, &a, &phiq}) v->assign(dk, T(0));
    r.assign(dv, T(0));
    y.assign(dv, T(0));
    rn.assign(dv, T(0));
  }
};

// What a step reports besides the output row.
template <class T>
struct StepInfo {
  T state_norm = T(0);  // ||S_t||_F
  T gate_cos = T(0);    // c_t = a^_t . k^_t (VLA only)
  T delta = T(0);       // Sherman-Morrison denominator (VLA only)
};

// Sum of n terms in the policy's order: P::sum when the policy fixes one (the
// kernels' twins), else left to right from zero.
template <class P>
typename P::T policy_sum(const typename P::T* x, int n) {
  using T = typename P::T;
  if constexpr (requires { P::sum(x, n); }) {
    return P::sum(x, n);
  } else {
    T acc = T(0);
    for (int i = 0; i < n; ++i) acc = T(acc + x[i]);
    return acc;
  }
}

// ||x||_2: the policy's norm when it has one, else sqrt(dot(x, x)) (what the
// kernels compute; their twins define no norm, so their arithmetic is this).
template <class P>
typename P::T policy_norm(const typename P::T* x, int n) {
  if constexpr (requires { P::norm(x, n); }) {
    return P::norm(x, n);
  } else {
    return vsqrt(P::dot(x, x, n));
  }
}

// ||M||_F of a row-major rows x n matrix, rows_scratch holding rows entries: the
// policy's when it has one, else the square root of the policy's sum of the
// rows' squared norms.
template <class P>
typename P::T frobenius_norm(const typename P::T* M, typename P::T* rows_scratch, int rows, int n) {
  if constexpr (requires { P::frobenius_norm(M, rows_scratch, rows, n); }) {
    return P::frobenius_norm(M, rows_scratch, rows, n);
  } else {
    row_sqnorms<P>(M, rows_scratch, rows, n);
    return vsqrt(policy_sum<P>(rows_scratch, rows));
  }
}

// phi(k), its norm and k^ (normalised or not); shared by VLA and DeltaNet.
template <class P>
void key_features(const typename P::T* k, int dk, bool elu1, bool normalize,
                  Workspace<typename P::T>& w) {
  using T = typename P::T;
  for (int j = 0; j < dk; ++j) w.phik[j] = phi(k[j], elu1);
  if (normalize) {
    const T nk = policy_norm<P>(w.phik.data(), dk);
    for (int j = 0; j < dk; ++j) w.kh[j] = T(w.phik[j] / nk);
  } else {
    for (int j = 0; j < dk; ++j) w.kh[j] = w.phik[j];
  }
}

// Readout o = S phi(q) / (n . phi(q)) (or raw), ||S||_F; n must already hold n_t.
template <class P>
void readout(HeadState<typename P::T>& st, Workspace<typename P::T>& w, const typename P::T* q,
             const Options& opt, typename P::T* o, StepInfo<typename P::T>& info) {
  using T = typename P::T;
  const int dk = st.dk, dv = st.dv;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  for (int j = 0; j < dk; ++j) w.phiq[j] = phi(q[j], elu1);
  T den = T(1);
  if (opt.readout == Readout::ratio) den = readout_den(P::dot(st.n.data(), w.phiq.data(), dk), opt.den_floor);
  matvec<P>(st.S.data(), w.phiq.data(), w.y.data(), dv, dk);
  for (int i = 0; i < dv; ++i) o[i] = P::store_out(opt.readout == Readout::ratio ? T(w.y[i] / den) : w.y[i]);
  info.state_norm = frobenius_norm<P>(st.S.data(), w.rn.data(), dv, dk);
}

// out_j = x_j / d over n entries: the policy's way when it fixes one (a kernel
// may multiply by one rounded reciprocal instead of n divisions), else x_j / d.
template <class P>
void divide_all(const typename P::T* x, const typename P::T& d, typename P::T* out, int n) {
  using T = typename P::T;
  if constexpr (requires { P::divide_all(x, d, out, n); }) {
    P::divide_all(x, d, out, n);
  } else {
    for (int j = 0; j < n; ++j) out[j] = T(x[j] / d);
  }
}

// With u = k^ (no u input, no unit scaling), delta = 1 + k^.z unfloored and
// positive, and no ridge this step, A_t k^ = z - z (k^.z) / delta = z / delta in
// exact arithmetic (for the stored A_{t-1}, whatever its rounding; a rounding
// of A_t on store is then not seen by the gate), so w = A_t k^ is g = z / delta
// and its direction z / ||z||: a kernel skips one matrix-vector product and its
// exchange. Policies opt in (gate_from_z); the reference always takes the product.
template <class P, class T>
bool gate_from_z_exact(bool u_is_kh, bool ridge, const T& delta, const T& u_dot_z) {
  if constexpr (requires { P::gate_from_z; }) {
    if constexpr (P::gate_from_z) return u_is_kh && !ridge && delta == T(T(1) + u_dot_z) && delta > T(0);
  }
  return false;
}

// One VLA step. q, k, u have dk entries, v has dv; u may be null (then u = k^).
// Inputs are already in the policy's arithmetic type (rounded by the caller to
// whatever the implementation consumes). Writes o (dv entries).
template <class P>
void vla_step(HeadState<typename P::T>& st, Workspace<typename P::T>& w, const typename P::T* q,
              const typename P::T* k, const typename P::T* v, const typename P::T* u_in,
              const Options& opt, typename P::T* o, StepInfo<typename P::T>& info) {
  using T = typename P::T;
  const int dk = st.dk, dv = st.dv;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  st.t += 1;

  key_features<P>(k, dk, elu1, opt.normalize_key(), w);

  // Penalty direction.
  for (int j = 0; j < dk; ++j) w.u[j] = u_in ? u_in[j] : w.kh[j];
  if (opt.u_unit_scaled) {
    const T nu = policy_norm<P>(w.u.data(), dk);
    const T inv_sqrt_dk = T(T(1) / vsqrt(T(dk)));
    for (int j = 0; j < dk; ++j) w.u[j] = T(T(w.u[j] / nu) * inv_sqrt_dk);
  }

  // Sherman-Morrison: z = A u, delta = 1 + u.z, A -= z z^T / delta.
  matvec<P>(st.A.data(), w.u.data(), w.z.data(), dk, dk);
  const T u_dot_z = P::dot(w.u.data(), w.z.data(), dk);
  const T delta = sm_delta(u_dot_z, opt.delta_floor);
  divide_all<P>(w.z.data(), delta, w.g.data(), dk);
  const bool ridge = ridge_due(st.t, opt.ridge_every);
  for (int i = 0; i < dk; ++i) {
    T* arow = st.A.data() + static_cast<std::size_t>(i) * dk;
    for (int j = 0; j < dk; ++j) sm_update(arow[j], w.z[i], w.g[j]);
    if (ridge) arow[i] = T(arow[i] + T(opt.ridge));
    for (int j = 0; j < dk; ++j) arow[j] = P::store_state(arow[j]);
  }

  // Gate: w = A_t k^, a^ = w / ||w|| (or, where exact, w = g and a^ = z / ||z||).
  if (gate_from_z_exact<P>(!u_in && !opt.u_unit_scaled, ridge, delta, u_dot_z)) {
    if (opt.normalize_gate()) {
      const T nz = vsqrt(P::dot(w.z.data(), w.z.data(), dk));
      divide_all<P>(w.z.data(), nz, w.a.data(), dk);
    } else {
      for (int j = 0; j < dk; ++j) w.a[j] = w.g[j];
    }
  } else {
    matvec<P>(st.A.data(), w.kh.data(), w.w.data(), dk, dk);
    if (opt.normalize_gate()) {
      const T nw = policy_norm<P>(w.w.data(), dk);
      divide_all<P>(w.w.data(), nw, w.a.data(), dk);
    } else {
      for (int j = 0; j < dk; ++j) w.a[j] = w.w[j];
    }
  }

  // State: r = v - S k^, S += r a^T.
  matvec<P>(st.S.data(), w.kh.data(), w.r.data(), dv, dk);
  for (int i = 0; i < dv; ++i) w.r[i] = T(v[i] - w.r[i]);
  for (int i = 0; i < dv; ++i) {
    T* srow = st.S.data() + static_cast<std::size_t>(i) * dk;
    for (int j = 0; j < dk; ++j) {
      state_update(srow[j], w.r[i], w.a[j]);
      srow[j] = P::store_state(srow[j]);
    }
  }

  for (int j = 0; j < dk; ++j) st.n[j] = T(st.n[j] + w.phik[j]);
  info.delta = delta;
  info.gate_cos = P::dot(w.a.data(), w.kh.data(), dk);
  readout<P>(st, w, q, opt, o, info);
}

// Additive linear attention: S += v phi(k)^T (A is unused).
template <class P>
void linear_step(HeadState<typename P::T>& st, Workspace<typename P::T>& w, const typename P::T* q,
                 const typename P::T* k, const typename P::T* v, const Options& opt,
                 typename P::T* o, StepInfo<typename P::T>& info) {
  const int dk = st.dk, dv = st.dv;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  st.t += 1;
  for (int j = 0; j < dk; ++j) w.phik[j] = phi(k[j], elu1);
  for (int i = 0; i < dv; ++i) {
    auto* srow = st.S.data() + static_cast<std::size_t>(i) * dk;
    for (int j = 0; j < dk; ++j) srow[j] = P::store_state(linear_entry(srow[j], v[i], w.phik[j]));
  }
  for (int j = 0; j < dk; ++j) st.n[j] = st.n[j] + w.phik[j];
  readout<P>(st, w, q, opt, o, info);
}

// DeltaNet: S = g S + beta (v - g S k^) k^^T with unit k^ (per the key normalisation option).
template <class P>
void deltanet_step(HeadState<typename P::T>& st, Workspace<typename P::T>& w, const typename P::T* q,
                   const typename P::T* k, const typename P::T* v, const Options& opt,
                   typename P::T* o, StepInfo<typename P::T>& info) {
  const int dk = st.dk, dv = st.dv;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  st.t += 1;
  key_features<P>(k, dk, elu1, opt.normalize_key(), w);
  matvec<P>(st.S.data(), w.kh.data(), w.r.data(), dv, dk);
  for (int i = 0; i < dv; ++i) {
    auto* srow = st.S.data() + static_cast<std::size_t>(i) * dk;
    for (int j = 0; j < dk; ++j) {
      srow[j] = P::store_state(deltanet_entry(srow[j], v[i], w.r[i], w.kh[j], opt.deltanet_beta, opt.deltanet_decay));
    }
  }
  for (int j = 0; j < dk; ++j) st.n[j] = st.n[j] + w.phik[j];
  readout<P>(st, w, q, opt, o, info);
}

}  // namespace vla::core
