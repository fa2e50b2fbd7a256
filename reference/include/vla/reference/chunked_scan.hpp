// The chunk-parallel ("scan") form of the VLA recurrence (docs/CHUNKED.md,
// section 8), at any scalar type: the form whose gates need no sequential chain.
//
// By Sherman-Morrison A_t = (lambda0 I + sum_{s<=t} u_s u_s^T)^{-1} exactly, so
// the gate needs the carried A_c only through the prefix sum
//   M_c = lambda0 I + sum_{j<c} U_j U_j^T        (a scan over chunks),
// and every chunk's gates follow from a Cholesky factorisation of its own M_c:
// P = M_c^{-1} U, AK = M_c^{-1} K, then the in-chunk Woodbury form of the carried
// chunked form (woodbury_gate, chunked.hpp). No chunk waits for another's gates.
//
// Given the gates, S's rows are independent: with T = I + strict_upper(Ah^T K),
//   R = V T^{-1} - S_c K T^{-1}     (UT form: r_t = v_t - S_{t-1} k^_t exactly)
// gives every residual of the chunk from the state entering it, and the chunk's
// steps are the recurrence's own update S_t = S_{t-1} + r_t a^_t^T (entries
// S_ij + r_i a_j), norm ||S_t||_F and readout S_t phi(q_t). A kernel runs the
// chunks' operands (T, K T^{-1}, V T^{-1}) in parallel and only this pass over
// chunks in order, split over S's rows.
//
// GateScalar is the precision of the gate stage (the kernels: double); the
// inputs enter it exactly and the gates are rounded to Scalar once. The
// normaliser is summed per chunk, then over chunks (n_c), then step by step
// inside the chunk, as a kernel sums it.
//
// Not supported: ridge steps (--ridge-every) and a pivot floor above 1, which
// can act in exact arithmetic; both make A_t differ from the inverse of the
// prefix sum, which this form cannot carry across chunks (scan_unsupported).
#pragma once

#include <Eigen/Cholesky>
#include <string>

#include "vla/reference/chunked.hpp"

namespace vla::ref {

// Why the scan form does not run options `opt` (empty: it does).
inline std::string scan_unsupported(const Options& opt) {
  if (opt.model != Model::vla) return "the scan form runs the VLA recurrence only";
  if (opt.ridge_every > 0)
    return "the scan form does not support --ridge-every (" + std::to_string(opt.ridge_every) +
           "): with ridge steps A_t is not the inverse of lambda0 I + sum u u^T, the prefix sum the form scans";
  // delta_t = 1 + u^T A_{t-1} u >= 1 in exact arithmetic, so a floor <= 1 only acts on rounding.
  if (opt.delta_floor > 1.0)
    return "the scan form does not support --delta-floor above 1 (got " + std::to_string(opt.delta_floor) +
           "): the floor then acts, and A_t is no longer the inverse of the prefix sum the form scans";
  return "";
}

template <class Scalar, class GateScalar = Scalar>
Result<Scalar> run_chunked_scan(const Stream& s, const Options& opt, int C) {
  using M = Mat<Scalar>;
  using MG = Mat<GateScalar>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  const Dims& d = s.dims;
  if (const std::string why = scan_unsupported(opt); !why.empty()) throw std::invalid_argument("run_chunked_scan: " + why);
  if (C < 1) throw std::invalid_argument("run_chunked_scan: chunk size must be >= 1 (got " + std::to_string(C) + ")");
  Result<Scalar> r = vla_result<Scalar>(d);

  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      MG Mc = MG::Identity(d.Dk, d.Dk) * GateScalar(opt.lambda0);
      M S = M::Zero(d.Dv, d.Dk);
      Vec n_c = Vec::Zero(d.Dk);
      for (int t0 = 0; t0 < d.T; t0 += C) {
        const int len = std::min(C, d.T - t0);
        const ChunkInputs<Scalar> in = load_chunk<Scalar>(s, opt, b, h, t0, len);
        // Stage 1: the gates from a factor of M_c (no earlier chunk's gates).
        const MG U = in.U.template cast<GateScalar>(), K = in.K.template cast<GateScalar>();
        const Eigen::LLT<MG> chol(Mc);
        if (chol.info() != Eigen::Success) throw std::runtime_error("run_chunked_scan: Cholesky of M_c failed (not positive definite)");
        const MG AK = chol.solve(K);
        const MG P = chol.solve(U);
        const WoodburyGate<GateScalar> g = woodbury_gate<GateScalar, ExactOperands, ChunkStructure>(P, AK, U, K, opt.delta_floor);
        const M Ah = normalised_gates(g.W, opt).template cast<Scalar>();
        Mc += U * U.transpose();  // M_{c+1} = M_c + Gamma_c
        // Stage 2: every residual of the chunk from S_c, then the chunk's steps.
        const M AKs = Ah.transpose() * in.K;  // AKs(i, t) = a^_i . k^_t
        const M Kt = ChunkStructure::state_solve(in.K, AKs), Vt = ChunkStructure::state_solve(in.V, AKs);
        const M R = Vt - S * Kt;
        Vec n = n_c;
        for (int t = 0; t < len; ++t) {
          for (int i = 0; i < d.Dv; ++i)
            for (int j = 0; j < d.Dk; ++j) S(i, j) = S(i, j) + R(i, t) * Ah(j, t);
          n += in.PhiK.col(t);
          Scalar n2 = Scalar(0);
          for (int i = 0; i < d.Dv; ++i) n2 += Scalar(S.row(i).squaredNorm());
          const Vec y = S * in.PhiQ.col(t);
          Scalar den = Scalar(1);
          if (opt.readout == Readout::ratio) den = core::readout_den(Scalar(n.dot(in.PhiQ.col(t))), opt.den_floor);
          const std::size_t on = (std::size_t(b) * d.T + t0 + t) * d.H + h;
          const std::size_t ov = d.off(b, t0 + t, h, d.Dv);
          for (int i = 0; i < d.Dv; ++i) r.o[ov + i] = opt.readout == Readout::ratio ? Scalar(y(i) / den) : Scalar(y(i));
          r.state_norm[on] = core::vsqrt(n2);
          r.gate_cos[on] = Ah.col(t).dot(in.K.col(t));
        }
        n_c += in.PhiK.rowwise().sum();  // sigma_c: the chunk's sum, then added to the prefix
      }
      const M A = Eigen::LLT<MG>(Mc).solve(MG::Identity(d.Dk, d.Dk)).template cast<Scalar>();
      store_head(r, b, h, S, A);
    }
  }
  return r;
}

}  // namespace vla::ref
