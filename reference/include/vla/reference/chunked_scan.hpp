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
// gives every residual of the chunk from the state entering it, and the state
// entering the next chunk is S_c + R Ah^T; inside the chunk the steps replay the
// recurrence's own update S_t = S_{t-1} + r_t a^_t^T (entries fma(r_i, a_j, S_ij):
// core::state_entry) for the norm ||S_t||_F and readout S_t phi(q_t). A kernel
// runs the chunks' operands (T, K T^{-1}, V T^{-1}) in parallel and only the pass
// over chunks (R, S_c+1) in order, split over S's rows.
//
// GateScalar is the precision of the gate stage (the kernels: double); the
// inputs enter it exactly and the gates are rounded to Scalar once. The state's
// two chunk products (R, S_c+1) are summed in GateScalar too and rounded to
// Scalar once, as the kernels' pass on FP64 tensor cores does (ScanStatePolicy;
// per_step: the recurrence's per-step fmas, the kernels' pass at D = 16). The
// normaliser is summed per chunk, then over chunks (n_c), then step by step
// inside the chunk, as a kernel sums it.
//
// Segments (docs/CHUNKED.md 8.10): a factorisation per chunk is what the gate
// stage pays for, so the chunks are grouped into segments of `segment` chunks.
// A segment's first chunk takes its gates from the factor of M_c as above and,
// where the segment goes on, A_c = M_c^{-1} from the same factor; the later
// chunks of the segment take P = A_c U, AK = A_c K from the carried A_c and hand
// on A_{c+1} = A_c - Z D^{-1} Z^T (the carried form's Woodbury downdate,
// woodbury_downdate in chunked.hpp). Exact in exact arithmetic (the same A_c);
// segment = 1 is the form without carrying. The kernels use
// scan_segment_chunks(C, B H, T) chunks, a function of the launch's shape (not of the GPU).
//
// ScanGateForm::per_step (docs/CHUNKED.md 8.16): a segment's first chunk takes
// A_c = M_c^{-1} from the factor, and every step of the segment the recurrence's
// own Sherman-Morrison step in GateScalar (scan_step_gates): the same A_t, hence
// the same gates, in exact arithmetic. ScanGateForm::lookahead (8.19, the kernels'
// gate stage where u = k^): the same steps with A one update behind and each
// step's product corrected by that update (scan_lookahead_gates).
//
// Not supported: ridge steps (--ridge-every) and a pivot floor above 1, which
// can act in exact arithmetic; both make A_t differ from the inverse of the
// prefix sum, which this form cannot carry across chunks (scan_unsupported).
#pragma once

#include <Eigen/Cholesky>
#include <algorithm>
#include <string>

#include "vla/reference/chunked.hpp"
#include "vla/reference/scan_gate_form.hpp"         // ScanGateForm: Woodbury chunks or per-step steps inside a segment
#include "vla/reference/scan_segment.hpp"       // scan_segment_chunks: the kernels' segment
#include "vla/reference/scan_start_refusal.hpp"  // the refusal of a segment start beyond the precision
#include "vla/core/refused.hpp"
#include "vla/reference/scan_state_policy.hpp"  // ScanStatePolicy: how the state's chunk products are summed

namespace vla::ref {

// The kernels' segment (chunks of C steps) for a launch on a stream of these dims (scan_segment.hpp's rule).
inline int scan_segment_chunks(int C, const Dims& d) { return scan_segment_chunks(C, static_cast<long long>(d.B) * d.H, d.T); }

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

// The scan form's chunk-boundary structure: what each chunk takes from the
// chunks before it. Production: for the gates the prefix sum M_c (a segment's
// first chunk) or the carried A_c (the segment's later chunks), the state S_c
// entering the chunk for its residuals, the normaliser prefix n_c for its
// denominators. Each hook receives the current value and the one a chunk earlier
// (M_{c-1} or A_{c-1}, S_{c-1}, n_{c-1}; at chunk 0 both are the initial value): the gate's
// scan mutants (gate/src/mutants_chunked.cpp) are this policy with one hook
// returning the earlier one, so a planted defect is compiled, never switched on.
// The in-chunk pieces (the state's triangular solve, the causal masked products)
// are ChunkStructure's, shared with the carried form.
struct ScanStructure : ChunkStructure {
  template <class X>
  static const X& gate_prefix(const X& M_c, const X& /*M_prev*/) {
    return M_c;
  }
  template <class X>
  static const X& residual_state(const X& S_c, const X& /*S_prev*/) {
    return S_c;
  }
  template <class X>
  static const X& normaliser_prefix(const X& n_c, const X& /*n_prev*/) {
    return n_c;
  }
  // The residual the in-chunk replay applies at step t: column t of the chunk's R, the UT
  // form's residuals from the state entering the chunk, as the kernels' readout does. The
  // recurrence's own residual v_t - S_{t-1} k^_t from the replayed S_{t-1} would project the
  // replay's earlier roundings out; R does not, which is what fails on
  // chunked_scan_fp32_scale_extremes (docs/FINDINGS.md item 9; StepResidualReplay in
  // properties/tests/test_twins.cpp checks that the recurrence's residual passes there).
  template <class M>
  static Eigen::Matrix<typename M::Scalar, Eigen::Dynamic, 1> replay_residual(const M& R, int t, const M& /*V*/, const M& /*S*/,
                                                                                const M& /*K*/) {
    return R.col(t);
  }
};

// Stage 1 for one chunk from a Cholesky factor of its M_c alone, for the chunk's
// penalty directions U and keys K (in GateScalar): P = M_c^{-1} U, AK = M_c^{-1} K,
// then the in-chunk Woodbury form (woodbury_gate: W, and Z, D for a carry).
template <class GateScalar, class Structure = ScanStructure>
WoodburyGate<GateScalar> scan_woodbury(const Eigen::LLT<Mat<GateScalar>>& chol, const Mat<GateScalar>& U, const Mat<GateScalar>& K,
                                       const Options& opt) {
  const Mat<GateScalar> AK = chol.solve(K);
  const Mat<GateScalar> P = chol.solve(U);
  return woodbury_gate<GateScalar, ExactOperands, Structure>(P, AK, U, K, opt.delta_floor);
}
template <class GateScalar>
Eigen::LLT<Mat<GateScalar>> scan_factor(const Mat<GateScalar>& Mc) {
  Eigen::LLT<Mat<GateScalar>> chol(Mc);
  // M_c = lambda0 I + sum u u^T is positive definite in exact arithmetic; its factor carries no correct
  // digit where its condition is beyond GateScalar's (docs/FINDINGS.md item 9: e.g. a given u far larger
  // than sqrt(lambda0)). The kernels refuse by the same bound (core::start_factor_refused, 8.27): the
  // pivots of L D L^T are the squares of the Cholesky factor's diagonal.
  const GateScalar bound = core::factor_condition_bound<GateScalar>(
      Mc.diagonal().maxCoeff(), chol.info() == Eigen::Success ? GateScalar(chol.matrixLLT().diagonal().array().square().minCoeff()) : GateScalar(0));
  const GateScalar u_r = GateScalar(Eigen::NumTraits<GateScalar>::epsilon() / 2);
  if (core::start_factor_refused<GateScalar>(bound, int(Mc.rows()), u_r))
    throw core::StreamRefused(scan_start_refusal(double(bound), int(Mc.rows()), double(u_r), "the twin"));
  return chol;
}

// A chunk's gates a^ (columns, GateScalar) from the prefix sum M_c alone
// (scan_woodbury, then the normalisation of the gates). No earlier chunk's gates
// or A enter (proofs_check's chunked-scan-derivation checks this).
template <class GateScalar, class Structure = ScanStructure>
Mat<GateScalar> scan_gates(const Mat<GateScalar>& Mc, const Mat<GateScalar>& U, const Mat<GateScalar>& K, const Options& opt) {
  return normalised_gates(scan_woodbury<GateScalar, Structure>(scan_factor(Mc), U, K, opt).W, opt);
}

// The gates w_t = A_t k^_t (columns) of a chunk's steps by the per-step
// Sherman-Morrison step from the A entering the chunk, which leaves as the A after
// the chunk's last step: z = A u, delta = sm_delta(u . z), g = z (1 / delta),
// w = A k^ - g (z . k^) (core::sm_gate_entry), A_ij -= g_i z_j (core::sm_row_entry).
// U and K the same object (u = k^): A k^ = z and k^ . z = u . z, not formed twice.
template <class GateScalar>
Mat<GateScalar> scan_step_gates(Mat<GateScalar>& A, const Mat<GateScalar>& U, const Mat<GateScalar>& K, double floor) {
  using MG = Mat<GateScalar>;
  const int D = int(A.rows()), len = int(K.cols());
  const bool u_is_k = &U == &K;
  MG W(D, len);
  for (int t = 0; t < len; ++t) {
    const MG z = A * U.col(t), x = u_is_k ? z : MG(A * K.col(t));
    GateScalar uz = GateScalar(0), kz = GateScalar(0);
    for (int i = 0; i < D; ++i) uz = core::vfma(U(i, t), z(i, 0), uz);
    if (u_is_k) kz = uz;
    else
      for (int i = 0; i < D; ++i) kz = core::vfma(K(i, t), z(i, 0), kz);
    const GateScalar rd = GateScalar(GateScalar(1) / core::sm_delta(uz, floor));
    for (int i = 0; i < D; ++i) {
      const GateScalar g = GateScalar(z(i, 0) * rd);
      W(i, t) = core::sm_gate_entry(x(i, 0), g, kz);
      for (int j = 0; j < D; ++j) A(i, j) = core::sm_row_entry(A(i, j), g, z(j, 0));
    }
  }
  return W;
}

// scan_step_gates with a rank-1 look-ahead (ScanGateForm::lookahead, docs/CHUNKED.md
// 8.19): A is carried one update behind, so the product for step t, y = A_{t-2} u_t,
// needs nothing of step t - 1's scalars, and step t's vectors and dots follow from it
// by that update's rank-1 correction (core::sm_lookahead_entry, sm_lookahead_dot):
// z_t = y - g_{t-1} c with c = z_{t-1} . u_t, u_t . z_t = u_t . y - (c / delta_{t-1}) c,
// and likewise x_t = A_{t-1} k^_t and k^_t . z_t with f = z_{t-1} . k^_t. The first step
// of the chunk has no pending update (g = 0, c = f = 0: z = y exactly); the last one's is
// applied before A leaves. The same A_t as scan_step_gates in exact arithmetic.
// U and K the same object (u = k^): x, f and k^ . z are y's, c and u . z, not formed twice.
template <class GateScalar>
Mat<GateScalar> scan_lookahead_gates(Mat<GateScalar>& A, const Mat<GateScalar>& U, const Mat<GateScalar>& K, double floor) {
  using MG = Mat<GateScalar>;
  const int D = int(A.rows()), len = int(K.cols());
  const bool u_is_k = &U == &K;
  MG W(D, len), z_prev = MG::Zero(D, 1), g_prev = MG::Zero(D, 1);
  GateScalar rd_prev = GateScalar(0);
  auto dot = [&](const MG& a, int ca, const MG& b, int cb) {
    GateScalar acc = GateScalar(0);
    for (int i = 0; i < D; ++i) acc = core::vfma(a(i, ca), b(i, cb), acc);
    return acc;
  };
  auto apply_pending = [&] {
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) A(i, j) = core::sm_row_entry(A(i, j), g_prev(i, 0), z_prev(j, 0));
  };
  for (int t = 0; t < len; ++t) {
    const MG y = A * U.col(t), xp = u_is_k ? y : MG(A * K.col(t));  // A = A_{t-2}: step t - 1's update pending
    const GateScalar c = dot(z_prev, 0, U, t), f = u_is_k ? c : dot(z_prev, 0, K, t);
    const GateScalar uz = core::sm_lookahead_dot(dot(U, t, y, 0), c, c, rd_prev);
    apply_pending();  // A_{t-1}
    MG z(D, 1), x(D, 1);
    for (int i = 0; i < D; ++i) {
      z(i, 0) = core::sm_lookahead_entry(y(i, 0), g_prev(i, 0), c);
      x(i, 0) = core::sm_lookahead_entry(xp(i, 0), g_prev(i, 0), f);
    }
    const GateScalar kz = u_is_k ? uz : core::sm_lookahead_dot(dot(K, t, y, 0), c, f, rd_prev);
    const GateScalar rd = GateScalar(GateScalar(1) / core::sm_delta(uz, floor));
    for (int i = 0; i < D; ++i) {
      g_prev(i, 0) = GateScalar(z(i, 0) * rd);
      W(i, t) = core::sm_gate_entry(x(i, 0), g_prev(i, 0), kz);
    }
    z_prev = z;
    rd_prev = rd;
  }
  apply_pending();
  return W;
}

// StepScalar: the precision of the per-step forms' steps (per_step, lookahead). A
// segment's first A = M_c^{-1} is formed in GateScalar and rounded to StepScalar
// once, the steps and the gates' normalisation then run in StepScalar (the kernels
// of chunked-scan-bf16 where u = k^: float, ref::kernel_scan_steps_float); the
// Woodbury form ignores it.
template <class Scalar, class GateScalar = Scalar, class Structure = ScanStructure, class StepScalar = GateScalar>
Result<Scalar> run_chunked_scan(const Stream& s, const Options& opt, int C, int segment = 1,
                                ScanStatePolicy state_policy = ScanStatePolicy::chunk_products,
                                ScanGateForm gate_form = ScanGateForm::woodbury) {
  using M = Mat<Scalar>;
  using MG = Mat<GateScalar>;
  using MS = Mat<StepScalar>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  const Dims& d = s.dims;
  if (const std::string why = scan_unsupported(opt); !why.empty()) throw std::invalid_argument("run_chunked_scan: " + why);
  if (C < 1) throw std::invalid_argument("run_chunked_scan: chunk size must be >= 1 (got " + std::to_string(C) + ")");
  if (segment < 1) throw std::invalid_argument("run_chunked_scan: segment length must be >= 1 chunk (got " + std::to_string(segment) + ")");
  Result<Scalar> r = vla_result<Scalar>(d);

  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      MG Mc = MG::Identity(d.Dk, d.Dk) * GateScalar(opt.lambda0), M_prev = Mc;
      MG Ac, A_prev;  // the carried A_c inside a segment, and A_{c-1} (Woodbury)
      MS As, As_prev;  // likewise for the per-step forms, in StepScalar
      M S = M::Zero(d.Dv, d.Dk), S_prev = S, S_prev2 = S;  // S_c, S_c-1, S_c-2
      M R_prev, Ah_prev;                                   // chunk c - 1's residuals and gates (the look-ahead policy)
      Vec n_c = Vec::Zero(d.Dk), n_prev = n_c;
      for (int t0 = 0, c = 0; t0 < d.T; t0 += C, ++c) {
        const int len = std::min(C, d.T - t0);
        const ChunkInputs<Scalar> in = load_chunk<Scalar>(s, opt, b, h, t0, len);
        // Stage 1: the gates from a factor of M_c at a segment's first chunk (no earlier chunk's
        // gates), else from the A_c carried inside the segment.
        // u = k^ (load_chunk copies k^ into U): U is K itself, so the step gates form A k^ once.
        const bool u_is_k = !s.has_u() && !opt.u_unit_scaled;
        const MG K = in.K.template cast<GateScalar>(), U_given = u_is_k ? MG() : MG(in.U.template cast<GateScalar>());
        const MG& U = u_is_k ? K : U_given;
        const bool carry = segment > 1 && (c + 1) % segment != 0 && t0 + len < d.T;  // a later chunk of this segment follows
        WoodburyGate<GateScalar> g;
        M Ah;  // the chunk's gates a^, rounded to Scalar
        if (gate_form != ScanGateForm::woodbury) {
          // A entering the chunk: from the factor at a segment's first chunk (rounded to StepScalar
          // once), else the A the last chunk's steps left (a mutant's hook may hand back the one that
          // entered it instead).
          MS A_in = c % segment == 0
                        ? MS(scan_factor<GateScalar>(Structure::gate_prefix(Mc, M_prev)).solve(MG::Identity(d.Dk, d.Dk)).template cast<StepScalar>())
                        : MS(Structure::gate_prefix(As, As_prev));
          As_prev = A_in;
          // U and K are cast once; u = k^: one object, so the steps form A k^ once (as above).
          const MS Ks = K.template cast<StepScalar>(), Us_given = u_is_k ? MS() : MS(U.template cast<StepScalar>());
          const MS& Us = u_is_k ? Ks : Us_given;
          const MS W = gate_form == ScanGateForm::lookahead ? scan_lookahead_gates<StepScalar>(A_in, Us, Ks, opt.delta_floor)
                                                            : scan_step_gates<StepScalar>(A_in, Us, Ks, opt.delta_floor);
          Ah = normalised_gates(W, opt).template cast<Scalar>();
          As = std::move(A_in);
        } else if (c % segment == 0) {
          const Eigen::LLT<MG> chol = scan_factor<GateScalar>(Structure::gate_prefix(Mc, M_prev));
          g = scan_woodbury<GateScalar, Structure>(chol, U, K, opt);
          if (carry) Ac = chol.solve(MG::Identity(d.Dk, d.Dk));  // A_c = M_c^{-1}, from the same factor
        } else {
          const MG& Ag = Structure::gate_prefix(Ac, A_prev);
          g = woodbury_gate<GateScalar, ExactOperands, Structure>(MG(Ag * U), MG(Ag * K), U, K, opt.delta_floor);
        }
        if (carry && gate_form == ScanGateForm::woodbury) {
          A_prev = Ac;
          Ac -= woodbury_downdate<GateScalar, ExactOperands>(g);  // A_{c+1}
        }
        if (gate_form == ScanGateForm::woodbury) Ah = normalised_gates(g.W, opt).template cast<Scalar>();
        M_prev = Mc;
        Mc += U * U.transpose();  // M_{c+1} = M_c + Gamma_c
        // Stage 2: every residual of the chunk from S_c, then the chunk's steps. The chunk's two
        // state products are summed in GateScalar and rounded to Scalar once (the kernels' pass on
        // FP64 tensor cores, docs/CHUNKED.md 8.13): R = fl(Vt - S_c Kt), and the state handed to
        // the next chunk S_c+1 = fl(S_c + R Ah^T); the steps below replay the chunk from S_c in
        // Scalar for the per-step norm and readout, as the kernels' readout does.
        const M AKs = Ah.transpose() * in.K;  // AKs(i, t) = a^_i . k^_t
        const M Kt = Structure::state_solve(in.K, AKs), Vt = Structure::state_solve(in.V, AKs);
        const bool products = state_policy != ScanStatePolicy::per_step;
        M R;
        if (state_policy == ScanStatePolicy::lookahead && c > 0) {
          // S_c = S_c-1 + R_c-1 Ah_c-1^T, so R_c = Vt_c - S_c-1 Kt_c - R_c-1 (Ah_c-1^T Kt_c): exact algebra; X rounded
          // to Scalar once (a C x C operand the state prep would store), the three terms summed in GateScalar.
          const MG X = MG((Ah_prev.template cast<GateScalar>().transpose() * Kt.template cast<GateScalar>()).template cast<Scalar>()
                              .template cast<GateScalar>());
          R = M((Vt.template cast<GateScalar>() -
                 Structure::residual_state(S_prev, S_prev2).template cast<GateScalar>() * Kt.template cast<GateScalar>() -
                 R_prev.template cast<GateScalar>() * X)
                    .template cast<Scalar>());
        } else {
          R = products ? M((Vt.template cast<GateScalar>() -
                            Structure::residual_state(S, S_prev).template cast<GateScalar>() * Kt.template cast<GateScalar>())
                               .template cast<Scalar>())
                       : M(Vt - Structure::residual_state(S, S_prev) * Kt);
        }
        const M S_next =
            products ? M((S.template cast<GateScalar>() + R.template cast<GateScalar>() * Ah.template cast<GateScalar>().transpose())
                             .template cast<Scalar>())
                     : M();
        S_prev2 = S_prev;
        S_prev = S;
        R_prev = R;
        Ah_prev = Ah;
        // The den split (the kernels', docs/CHUNKED.md 8.34): n_c . phi(q_t) plus the chunk's own prefix L_t . phi(q_t).
        Vec n = Structure::normaliser_prefix(n_c, n_prev), Lx = Vec::Zero(d.Dk);
        for (int t = 0; t < len; ++t) {
          const Vec r_t = Structure::replay_residual(R, t, in.V, S, in.K);
          for (int i = 0; i < d.Dv; ++i)
            for (int j = 0; j < d.Dk; ++j) S(i, j) = core::state_entry(S(i, j), r_t(i), Ah(j, t));  // the recurrence's fma
          Lx += in.PhiK.col(t);
          Scalar n2 = Scalar(0);
          for (int i = 0; i < d.Dv; ++i) n2 += Scalar(S.row(i).squaredNorm());
          const Vec y = S * in.PhiQ.col(t);
          Scalar den = Scalar(1);
          if (opt.readout == Readout::ratio) den = core::readout_den(Scalar(n.dot(in.PhiQ.col(t))) + Scalar(Lx.dot(in.PhiQ.col(t))), opt.den_floor);
          const std::size_t on = (std::size_t(b) * d.T + t0 + t) * d.H + h;
          const std::size_t ov = d.off(b, t0 + t, h, d.Dv);
          for (int i = 0; i < d.Dv; ++i) r.o[ov + i] = opt.readout == Readout::ratio ? Scalar(y(i) / den) : Scalar(y(i));
          r.state_norm[on] = core::vsqrt(n2);
          r.gate_cos[on] = Ah.col(t).dot(in.K.col(t));
        }
        if (products) S = S_next;  // per_step: S is the steps' own result
        n_prev = n_c;
        n_c += in.PhiK.rowwise().sum();  // sigma_c: the chunk's sum, then added to the prefix
      }
      // The final A = M_N^{-1}: in the per-step forms the A the last segment's steps leave (in
      // StepScalar, rounded to Scalar once; the kernels' steps write it, no factorisation of M_N),
      // in the Woodbury form from a factor of M_N.
      const M A = gate_form != ScanGateForm::woodbury ? M(As.template cast<Scalar>())
                                                      : M(Eigen::LLT<MG>(Mc).solve(MG::Identity(d.Dk, d.Dk)).template cast<Scalar>());
      store_head(r, b, h, S, A);
    }
  }
  return r;
}

}  // namespace vla::ref
