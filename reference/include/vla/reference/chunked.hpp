// The chunked form of the VLA recurrence (docs/CHUNKED.md), at any scalar type.
//
// Within a chunk of C steps everything is a product of matrices plus C x C
// triangular solves, and only the chunk-to-chunk step is sequential: this is the
// form a tensor-core kernel computes. It is written independently of the
// recurrent step (that is the point: where it agrees with run_recurrent at high
// precision the derivation is right) but reuses the per-element formulas of
// core/ (feature map, Sherman-Morrison pivot floor, readout denominator).
//
//   Gate (Woodbury, prefix form). With A_c the inverse penalty entering the
//   chunk, U = [u_1..u_C], K = [k^_1..k^_C], P = A_c U, G = U^T P:
//     I + G = L D L^T (unit lower L), the pivots D_t being exactly the
//     Sherman-Morrison denominators delta_t (the vla-v3 floor clamps a pivot);
//     Z = P L^{-T} holds the Sherman-Morrison vectors z_t = A_{t-1} u_t, so
//     A_t = A_c - Z_{<=t} D_{<=t}^{-1} Z_{<=t}^T for every prefix t, and
//     w_t = A_t k^_t = (A_c K)_t - sum_{i<=t} z_i (z_i . k^_t) / D_i.
//   State (generalised delta rule, UT form). With a^ the gates and
//   T = I + strict_upper(a^_i . k^_t), the residuals R = [r_1..r_C] solve
//     R T = V - S_c K,   and then S_t = S_c + R_{<=t} a^_{<=t}^T,
//   so a chunk is the affine map S -> S (I - K T^{-1} Ah^T) + V T^{-1} Ah^T.
//   Readout and norms as products too: Y = S_c Phi_q + R triu(Ah^T Phi_q) (the
//   masked products Z Y and R triu(.) causal: ChunkStructure::masked_product), and
//   ||S_t||_F^2 = ||S_c||^2 + sum_{i<=t} (2 r_i.(S_c a^_i) + sum_{j<=t} (r_i.r_j)(a^_i.a^_j)).
//
// Structure policy `Structure` (ChunkStructure below): the triangular solve of
// the state, the causal masked products and the chunk-to-chunk hand-over,
// replaceable at build time.
//
// Operands policy `Ops`: every matrix product takes its operands through
// Ops::op (identity for the reference; bf16 rounding for the twin of a
// tensor-core kernel, gpu/include/vla/gpu/chunked.hpp). Products are the only
// place where the kernel changes precision, so the maths stays written once.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "vla/core/formulas.hpp"
#include "vla/reference/run.hpp"

namespace vla::ref {

template <class Scalar>
using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

// Length of the chunk starting after step t0 (0-based count of steps done):
// at most C, and ending at a ridge step so that the ridge lands between chunks.
inline int chunk_length(int t0, int T, int C, int ridge_every) {
  int len = std::min(C, T - t0);
  if (ridge_every > 0) {
    const int next_ridge = (t0 / ridge_every + 1) * ridge_every;
    len = std::min(len, next_ridge - t0);
  }
  return len;
}

// ||x||_2 as the kernel computes it, sqrt(x . x), and where x . x overflows the
// scalar type (|x| above about 1.8e19 in float) sqrt of the same sum of x 2^-64
// (exact scaling) times 2^64: a key, u or gate that large keeps its unit
// direction, as it has in the recurrence (docs/CHUNKED.md, section 6). Finite
// sums are untouched.
template <class V>
typename V::Scalar col_norm(const V& x) {
  using S = typename V::Scalar;
  if (S(x.squaredNorm()) <= std::numeric_limits<S>::max()) return S(x.norm());
  return S(S((x * S(std::ldexp(1.0, -64))).norm()) * S(std::ldexp(1.0, 64)));
}

// L D L^T of I + G with each pivot through core::sm_delta (so the vla-v3 floor
// acts exactly where the sequential Sherman-Morrison update applies it).
template <class Scalar>
void ldl_with_floor(const Mat<Scalar>& G, double floor, Mat<Scalar>& L, std::vector<Scalar>& D) {
  const int n = int(G.rows());
  L = Mat<Scalar>::Identity(n, n);
  D.assign(n, Scalar(0));
  for (int j = 0; j < n; ++j) {
    Scalar g = G(j, j);
    for (int m = 0; m < j; ++m) g -= L(j, m) * L(j, m) * D[m];
    D[j] = core::sm_delta(g, floor);
    for (int r = j + 1; r < n; ++r) {
      Scalar x = G(r, j);
      for (int m = 0; m < j; ++m) x -= L(r, m) * L(j, m) * D[m];
      L(r, j) = x / D[j];
    }
  }
}

// The chunk-boundary structure of the form: how the state's triangular system is
// solved and how a chunk hands A and S to the next. This is the production form;
// the gate's chunk-boundary mutants (gate/src/mutants_chunked.cpp) are this
// policy with one piece replaced, so that a planted defect is compiled, never
// switched on in the code under test.
struct ChunkStructure {
  // R T = Rhs with T = I + strict_upper(AK), AK(i, t) = a^_i . k^_t.
  template <class M>
  static M state_solve(const M& Rhs, const M& AK) {
    const int len = int(AK.rows());
    M Tm = M::Identity(len, len);
    for (int i = 0; i < len; ++i)
      for (int t = i + 1; t < len; ++t) Tm(i, t) = AK(i, t);
    // R T = Rhs  <=>  T^T R^T = Rhs^T with T^T unit lower.
    return Tm.transpose().template triangularView<Eigen::UnitLower>().solve(Rhs.transpose()).transpose();
  }
  // A_{c+1} = A_c - Z D^{-1} Z^T (`update`); A0 is the head's initial A.
  template <class M>
  static void next_A(M& A, const M& update, const M& /*A0*/) {
    A -= update;
  }
  // S_{c+1} = S_c + R Ah^T (`update`), i.e. the chunk's affine map S -> S P + Q
  // with P = I - K T^{-1} Ah^T applied on the right (K, AK as in state_solve).
  template <class M>
  static void next_S(M& S, const M& update, const M& /*K*/, const M& /*Ah*/, const M& /*AK*/) {
    S += update;
  }
  // X triu(Y), the masked products Z Y and R triu(Ah^T Phi_q), taken causally:
  // column t is sum_{i<=t} x_i Y(i, t), so that no term of a later step i > t
  // enters it. For finite values this is the full product X Y with Y's strict
  // lower triangle 0; where a later step's column x_i is Inf or NaN, the full
  // product would multiply it by that 0 (0 * Inf = NaN) and poison the earlier
  // steps of the chunk, which the recurrence never sees (docs/CHUNKED.md,
  // section 6). The kernel skips the k-tiles past the output tile and sums the
  // diagonal tile over i <= t only.
  template <class M>
  static M masked_product(const M& X, const M& Y) {
    M out(X.rows(), Y.cols());
    for (int t = 0; t < int(Y.cols()); ++t) out.col(t) = X.leftCols(t + 1) * Y.col(t).head(t + 1);
    return out;
  }
};

// Operands of the products used as they are.
struct ExactOperands {
  template <class M>
  static const M& op(const M& m) {
    return m;
  }
};

// A VLA run's outputs, zero, for streams of dims d.
template <class Scalar>
Result<Scalar> vla_result(const Dims& d) {
  Result<Scalar> r;
  r.dims = d;
  r.o.assign(d.v_size(), Scalar(0));
  r.S.assign(std::size_t(d.B) * d.H * d.Dv * d.Dk, Scalar(0));
  r.A.assign(std::size_t(d.B) * d.H * d.Dk * d.Dk, Scalar(0));
  r.state_norm.assign(std::size_t(d.B) * d.T * d.H, Scalar(0));
  r.gate_cos.assign(std::size_t(d.B) * d.T * d.H, Scalar(0));
  return r;
}
// Head (b, h)'s final S and A into r.
template <class Scalar>
void store_head(Result<Scalar>& r, int b, int h, const Mat<Scalar>& S, const Mat<Scalar>& A) {
  const Dims& d = r.dims;
  const std::size_t bh = std::size_t(b) * d.H + h;
  for (int i = 0; i < d.Dv; ++i)
    for (int j = 0; j < d.Dk; ++j) r.S[(bh * d.Dv + i) * d.Dk + j] = S(i, j);
  for (int i = 0; i < d.Dk; ++i)
    for (int j = 0; j < d.Dk; ++j) r.A[(bh * d.Dk + i) * d.Dk + j] = A(i, j);
}

// One chunk's inputs as columns (steps t0 .. t0 + len - 1 of head (b, h)): the
// features phi(k), the keys k^ (unit unless --normalize none|gate), the penalty
// directions u (given or k^, unit-scaled under --u-unit-scaled), v and phi(q).
template <class Scalar>
struct ChunkInputs {
  Mat<Scalar> K, PhiK, U, V, PhiQ;
};
template <class Scalar>
ChunkInputs<Scalar> load_chunk(const Stream& s, const Options& opt, int b, int h, int t0, int len) {
  const Dims& d = s.dims;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  ChunkInputs<Scalar> in{Mat<Scalar>(d.Dk, len), Mat<Scalar>(d.Dk, len), Mat<Scalar>(d.Dk, len), Mat<Scalar>(d.Dv, len),
                         Mat<Scalar>(d.Dk, len)};
  for (int c = 0; c < len; ++c) {
    const std::size_t ok = d.off(b, t0 + c, h, d.Dk), ov = d.off(b, t0 + c, h, d.Dv);
    for (int j = 0; j < d.Dk; ++j) {
      in.PhiK(j, c) = core::phi(Scalar(s.k[ok + j]), elu1);
      in.PhiQ(j, c) = core::phi(Scalar(s.q[ok + j]), elu1);
    }
    const Scalar nk = opt.normalize_key() ? col_norm(in.PhiK.col(c)) : Scalar(1);
    in.K.col(c) = in.PhiK.col(c) / nk;
    if (s.has_u()) {
      for (int j = 0; j < d.Dk; ++j) in.U(j, c) = Scalar(s.u[ok + j]);
    } else {
      in.U.col(c) = in.K.col(c);
    }
    if (opt.u_unit_scaled) in.U.col(c) = (in.U.col(c) / col_norm(in.U.col(c))) / core::vsqrt(Scalar(d.Dk));
    for (int i = 0; i < d.Dv; ++i) in.V(i, c) = Scalar(s.v[ov + i]);
  }
  return in;
}

// The in-chunk gate (Woodbury, section 1 of docs/CHUNKED.md) from P = A_c U and
// AK = A_c K, however A_c is applied (carried explicitly, or solved with a
// factor of M_c = A_c^{-1}): W = AK - Z triu(D^{-1} Z^T K), with Z and the
// pivots D (the Sherman-Morrison vectors and denominators of the chunk's steps).
template <class Scalar>
struct WoodburyGate {
  Mat<Scalar> W, Z;
  std::vector<Scalar> D;
};
template <class Scalar, class Ops, class Structure>
WoodburyGate<Scalar> woodbury_gate(const Mat<Scalar>& P, const Mat<Scalar>& AK, const Mat<Scalar>& U, const Mat<Scalar>& K,
                                   double floor) {
  using M = Mat<Scalar>;
  const auto op = [](const M& m) -> decltype(auto) { return Ops::op(m); };
  const int len = int(K.cols());
  const M G = op(U).transpose() * op(P);
  M L;
  WoodburyGate<Scalar> g;
  ldl_with_floor(G, floor, L, g.D);
  // Z L^T = P  <=>  L Z^T = P^T.
  g.Z = L.template triangularView<Eigen::UnitLower>().solve(P.transpose()).transpose();
  M Y = op(g.Z).transpose() * op(K);  // Y(i, t) = z_i . k^_t
  for (int i = 0; i < len; ++i)
    for (int t = 0; t < len; ++t) Y(i, t) = i <= t ? Scalar(Y(i, t) / g.D[i]) : Scalar(0);
  g.W = AK;
  g.W -= Structure::masked_product(M(op(g.Z)), M(op(Y)));
  return g;
}

// The chunk's rank-len downdate of the carried inverse, A_{c+1} = A_c - (Z D^{-1}) Z^T
// (Woodbury: A_c - P (I + U^T P)^{-1} P^T with I + G = L D L^T and Z = P L^{-T}).
template <class Scalar, class Ops>
Mat<Scalar> woodbury_downdate(const WoodburyGate<Scalar>& g) {
  Mat<Scalar> ZD = g.Z;
  for (int i = 0; i < int(ZD.cols()); ++i) ZD.col(i) /= g.D[i];
  return Ops::op(ZD) * Ops::op(g.Z).transpose();
}

// The gates a^_t = w_t / ||w_t|| (or w_t under --normalize none|key), by column.
template <class Scalar>
Mat<Scalar> normalised_gates(const Mat<Scalar>& W, const Options& opt) {
  Mat<Scalar> Ah(W.rows(), W.cols());
  for (int c = 0; c < int(W.cols()); ++c) Ah.col(c) = opt.normalize_gate() ? Mat<Scalar>(W.col(c) / col_norm(W.col(c))) : Mat<Scalar>(W.col(c));
  return Ah;
}

template <class Scalar, class Ops = ExactOperands, class Structure = ChunkStructure>
Result<Scalar> run_chunked(const Stream& s, const Options& opt, int C) {
  using M = Mat<Scalar>;
  const auto op = [](const M& m) -> decltype(auto) { return Ops::op(m); };
  const Dims& d = s.dims;
  if (opt.model != Model::vla) throw std::invalid_argument("run_chunked: only the VLA recurrence has a chunked form here");
  if (C < 1) throw std::invalid_argument("run_chunked: chunk size must be >= 1 (got " + std::to_string(C) + ")");
  Result<Scalar> r = vla_result<Scalar>(d);

  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      const M A0 = M::Identity(d.Dk, d.Dk) * Scalar(Scalar(1) / Scalar(opt.lambda0));
      M A = A0;
      M S = M::Zero(d.Dv, d.Dk);
      Eigen::Matrix<Scalar, Eigen::Dynamic, 1> n = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>::Zero(d.Dk);
      for (int t0 = 0; t0 < d.T;) {
        const int len = chunk_length(t0, d.T, C, opt.ridge_every);
        const ChunkInputs<Scalar> in = load_chunk<Scalar>(s, opt, b, h, t0, len);
        const M &K = in.K, &PhiK = in.PhiK, &U = in.U, &V = in.V, &PhiQ = in.PhiQ;
        // Gate.
        WoodburyGate<Scalar> g = woodbury_gate<Scalar, Ops, Structure>(M(op(A) * op(U)), M(op(A) * op(K)), U, K, opt.delta_floor);
        const bool ridge = core::ridge_due(t0 + len, opt.ridge_every);
        if (ridge) g.W.col(len - 1) += Scalar(opt.ridge) * K.col(len - 1);  // the last step's gate sees the ridge
        const M Ah = normalised_gates(g.W, opt);
        // State: R T = V - S K with T = I + strict_upper(Ah^T K).
        const M AK = op(Ah).transpose() * op(K);
        const M Rhs = V - op(S) * op(K);
        const M R = Structure::state_solve(Rhs, AK);
        // Outputs of every step of the chunk: Y = S Phi_q + R triu(Ah^T Phi_q).
        M AQ = op(Ah).transpose() * op(PhiQ);  // AQ(i, t) = a^_i . phi(q_t)
        for (int i = 0; i < len; ++i)
          for (int t = 0; t < i; ++t) AQ(i, t) = Scalar(0);
        M Yo = op(S) * op(PhiQ);
        Yo += Structure::masked_product(M(op(R)), M(op(AQ)));
        // ||S_t||_F^2 from Gram matrices (no D x D matrix per step).
        const M SA = op(S) * op(Ah);
        const M RR = op(R).transpose() * op(R), AA = op(Ah).transpose() * op(Ah);
        Scalar n2 = S.squaredNorm();
        for (int t = 0; t < len; ++t) {
          n += PhiK.col(t);
          const std::size_t on = (std::size_t(b) * d.T + t0 + t) * d.H + h;
          const std::size_t ov = d.off(b, t0 + t, h, d.Dv);
          Scalar inc = Scalar(2) * Scalar(R.col(t).dot(SA.col(t))) + RR(t, t) * AA(t, t);
          for (int i = 0; i < t; ++i) inc += Scalar(2) * RR(i, t) * AA(i, t);
          n2 += inc;
          Scalar den = Scalar(1);
          if (opt.readout == Readout::ratio) den = core::readout_den(Scalar(n.dot(PhiQ.col(t))), opt.den_floor);
          for (int i = 0; i < d.Dv; ++i) r.o[ov + i] = opt.readout == Readout::ratio ? Scalar(Yo(i, t) / den) : Scalar(Yo(i, t));
          r.state_norm[on] = core::vsqrt(n2 > Scalar(0) ? n2 : Scalar(0));
          r.gate_cos[on] = Ah.col(t).dot(K.col(t));
        }
        // Chunk-to-chunk step.
        Structure::next_A(A, woodbury_downdate<Scalar, Ops>(g), A0);
        if (ridge) A += Scalar(opt.ridge) * M::Identity(d.Dk, d.Dk);
        Structure::next_S(S, M(op(R) * op(Ah).transpose()), K, Ah, AK);
        t0 += len;
      }
      store_head(r, b, h, S, A);
    }
  }
  return r;
}

}  // namespace vla::ref
