// The measures at Mpfr (measures_impl.hpp), the Jacobian taken from the step
// itself and the Sherman-Morrison checks over a trace. The one translation unit
// of the library that instantiates MPFR templates.
#include <Eigen/Dense>
#include <cmath>

#include "measures_impl.hpp"
#include "vla/core/recurrence.hpp"
#include "vla/reference/policy.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/trace.hpp"

namespace vla::props {

VLA_PROPS_MEASURES_INSTANTIATE(Mpfr)

Mat<Mpfr> jacobian_operator_from_step(const Stream& s, const Options& opt_in, int b, int h, int t, const Mat<Mpfr>& A_prev) {
  const Dims& d = s.dims;
  const int dk = d.Dk, dv = d.Dv;
  Options opt = opt_in;
  opt.readout = Readout::raw;  // the readout is not part of the map; avoid a 0/0 with n = 0
  core::HeadState<Mpfr> st0;
  st0.reset(dk, dv, opt.lambda0);
  st0.t = t;
  for (int i = 0; i < dk; ++i)
    for (int j = 0; j < dk; ++j) st0.A[std::size_t(i) * dk + j] = A_prev(i, j);
  std::vector<Mpfr> q(dk), k(dk), u(dk), v0(dv, Mpfr(0)), o(dv);
  const std::size_t off = d.off(b, t, h, dk);
  for (int j = 0; j < dk; ++j) {
    q[j] = Mpfr(s.q[off + j]);
    k[j] = Mpfr(s.k[off + j]);
    if (s.has_u()) u[j] = Mpfr(s.u[off + j]);
  }
  core::Workspace<Mpfr> ws;
  ws.resize(dk, dv);
  core::StepInfo<Mpfr> info;
  Mat<Mpfr> J(dv * dk, dv * dk);
  for (int col = 0; col < dv * dk; ++col) {
    core::HeadState<Mpfr> st = st0;
    st.S[col] = Mpfr(1);
    core::vla_step<ref::RefPolicy<Mpfr>>(st, ws, q.data(), k.data(), v0.data(), s.has_u() ? u.data() : nullptr, opt, o.data(), info);
    for (int row = 0; row < dv * dk; ++row) J(row, col) = st.S[row];
  }
  return J;
}

Case p1_sqrt_growth_construction(int T, double V, double lambda0, long bits) {
  ref::MpfrPrecision prec(bits);
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.readout = Readout::raw;
  opt.lambda0 = lambda0;
  Case c;
  c.family = Family::gaussian;  // not a family draw: a construction
  c.lambda0 = lambda0;
  c.feature_map = FeatureMap::identity;
  Stream& s = c.stream;
  s.dims = Dims{1, T, 1, 2, 1};
  core::HeadState<Mpfr> st;
  st.reset(2, 1, lambda0);
  core::Workspace<Mpfr> ws;
  ws.resize(2, 1);
  core::StepInfo<Mpfr> info;
  std::vector<Mpfr> o(1);
  for (int t = 0; t < T; ++t) {
    // Unit key orthogonal to the state's one row (s1, s2): (-s2, s1) / |s|.
    const Mpfr s1 = st.S[0], s2 = st.S[1];
    const Mpfr n = sqrt(s1 * s1 + s2 * s2);
    const double k[2] = {n > 0 ? double(-s2 / n) : 1.0, n > 0 ? double(s1 / n) : 0.0};
    const Mpfr km[2] = {Mpfr(k[0]), Mpfr(k[1])};
    core::HeadState<Mpfr> trial = st;
    Mpfr v = Mpfr(V);
    core::vla_step<ref::RefPolicy<Mpfr>>(trial, ws, km, km, &v, nullptr, opt, o.data(), info);
    // A_t and a^_t do not depend on v: redo with -V when S_{t-1} . a^_t < 0.
    if (s1 * ws.a[0] + s2 * ws.a[1] < Mpfr(0)) {
      trial = st;
      v = Mpfr(-V);
      core::vla_step<ref::RefPolicy<Mpfr>>(trial, ws, km, km, &v, nullptr, opt, o.data(), info);
    }
    st = trial;
    s.q.insert(s.q.end(), {k[0], k[1]});
    s.k.insert(s.k.end(), {k[0], k[1]});
    s.v.push_back(double(v));
  }
  return c;
}

namespace {

// The checks of one head from its traced A_t and u_t (both converted exactly to
// Mpfr), measured at the calling thread's (high) precision; u_r is the unit
// roundoff of the run that produced them.
std::vector<SmCheck> sm_checks(const std::vector<Mat<Mpfr>>& A, const std::vector<Vec<Mpfr>>& us, const Options& opt,
                               double u_r) {
  const int T = static_cast<int>(A.size());
  const int dk = T ? static_cast<int>(A[0].rows()) : 0;
  const bool ridge = opt.ridge_every > 0 && opt.ridge != 0.0;
  std::vector<SmCheck> out(T);
  std::vector<double> w2(T), mnorm(T);
  Mat<Mpfr> M = Mat<Mpfr>::Identity(dk, dk) * Mpfr(opt.lambda0);
  Mat<Mpfr> A_prev = Mat<Mpfr>::Identity(dk, dk) / Mpfr(opt.lambda0);
  for (int t = 0; t < T; ++t) {
    M += us[t] * us[t].transpose();
    w2[t] = double(us[t].squaredNorm());
    Eigen::SelfAdjointEigenSolver<Mat<Mpfr>> es(M, Eigen::EigenvaluesOnly);
    const Mpfr lmin = es.eigenvalues()(0), lmax = es.eigenvalues()(dk - 1);
    mnorm[t] = double(lmax);
    SmCheck& c = out[t];
    const Mat<Mpfr>& At = A[t];
    c.kappa = double(lmax / lmin);
    c.residual = double((At * M - Mat<Mpfr>::Identity(dk, dk)).norm());
    // Once a ridge has been added, A_t is no longer meant to be M_t^{-1}: no bound.
    const bool ridged = ridge && t + 1 >= opt.ridge_every;
    c.bound = ridged ? INFINITY : sm_residual_bound(dk, opt.lambda0, std::vector<double>(w2.begin(), w2.begin() + t + 1),
                                              std::vector<double>(mnorm.begin(), mnorm.begin() + t + 1), c.kappa, u_r);
    c.symmetry = double((At - At.transpose()).norm() / At.norm());
    c.min_eig = double(min_eig_sym<Mpfr>(At));
    c.exact_min_eig = double(Mpfr(1) / lmax);
    c.loewner = double(min_eig_sym<Mpfr>(Mat<Mpfr>(A_prev - At)));
    c.loewner_bound = sm_local_error(dk, opt.lambda0, w2[t], u_r);
    // A_prev of step 0 is the exact I / lambda0, the run's A_0 its rounding
    // (diagonal, each entry within u_r / lambda0): A_0's own rounding enters the
    // first difference. Without it a rank-one step whose exact zero eigenvalue
    // lies at the rounding level failed by 12% (seed 12193802198144362688,
    // SM.ExactSpdAndMonotoneAt256Bits; the replay test below it).
    if (t == 0) c.loewner_bound += u_r / opt.lambda0;
    A_prev = At;
  }
  return out;
}

}  // namespace

std::vector<SmCheck> sherman_morrison_checks(const Stream& s, const Options& opt, int b, int h, long bits) {
  ref::TraceOptions topt;
  topt.b = b;
  topt.h = h;
  const auto tr = ref::trace_head_mpfr(s, opt, topt, bits);
  ref::MpfrPrecision hp(2 * bits + 64);
  std::vector<Mat<Mpfr>> A;
  std::vector<Vec<Mpfr>> us;
  for (const auto& st : tr) {
    A.push_back(st.A);
    us.push_back(st.u);
  }
  return sm_checks(A, us, opt, unit_roundoff_bits(bits));
}

std::vector<SmCheck> sherman_morrison_checks_double(const Stream& s, const Options& opt, int b, int h) {
  ref::TraceOptions topt;
  topt.b = b;
  topt.h = h;
  const auto tr = ref::trace_head<double>(s, opt, topt);
  ref::MpfrPrecision hp(256);
  std::vector<Mat<Mpfr>> A;
  std::vector<Vec<Mpfr>> us;
  for (const auto& st : tr) {
    A.push_back(st.A.cast<Mpfr>());
    us.push_back(st.u.cast<Mpfr>());
  }
  return sm_checks(A, us, opt, unit_roundoff_bits(53));
}

}  // namespace vla::props

namespace vla::props {

std::vector<PrecisionCheck> double_vs_mpfr(const Stream& s, const Options& opt, int b, int h, long bits) {
  if (opt.normalize != Normalize::both || opt.u_unit_scaled || opt.delta_floor > 0 || opt.ridge_every > 0 || opt.den_floor > 0 ||
      opt.model != Model::vla)
    throw std::invalid_argument("double_vs_mpfr: the error model covers the paper options only");
  ref::TraceOptions topt;
  topt.b = b;
  topt.h = h;
  topt.with_S = true;
  const auto lo = ref::trace_head<double>(s, opt, topt);
  const auto hi = ref::trace_head_mpfr(s, opt, topt, bits);
  const Stream one = ref::slice_head(s, b, h);
  const auto o_lo = ref::run_model<double>(one, opt);
  const auto o_hi = ref::run_mpfr(one, opt, bits);
  ref::MpfrPrecision prec(bits);
  const Dims& d = one.dims;
  const int n = d.Dk, m = d.Dv;
  const double u = unit_roundoff_bits(53);
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  const double dk_err0 = (n / 2.0 + 4) * u;
  // Underflow: an operation whose result is subnormal (or flushes to 0) errs by up
  // to 2^-1075 absolutely, not relatively; we use eta = 2^-1074, the smallest
  // double above it (2^-1075 itself rounds to 0). Each element takes at most
  // n + 4 operations per step.
  const double eta = std::ldexp(1.0, -1074), ops = n + 4.0;
  std::vector<PrecisionCheck> out;
  std::vector<double> w2, mnorm;
  Mat<Mpfr> M = Mat<Mpfr>::Identity(n, n) * Mpfr(opt.lambda0);
  Mat<Mpfr> S_prev = Mat<Mpfr>::Zero(m, n);
  Vec<Mpfr> nsum = Vec<Mpfr>::Zero(n);
  double eS = 0, du_sum = 0, dn = 0;
  for (int t = 0; t < d.T; ++t) {
    const auto& H = hi[t];
    const auto& L = lo[t];
    PrecisionCheck c;
    c.t = t;
    Vec<Mpfr> v(m), q(n), phik(n);
    for (int i = 0; i < m; ++i) v(i) = Mpfr(one.v[d.off(0, t, 0, m) + i]);
    for (int j = 0; j < n; ++j) {
      q(j) = core::phi(Mpfr(one.q[d.off(0, t, 0, n) + j]), elu1);
      phik(j) = core::phi(Mpfr(one.k[d.off(0, t, 0, n) + j]), elu1);
    }
    // k^: relative rounding, plus the underflow of the squares in ||phi(k)||^2
    // (absolute n eta on a sum that may itself be tiny).
    const double dk_err = dk_err0 + n * eta / double(phik.squaredNorm());
    // A_t: the Sherman-Morrison model plus the rounding of the penalty direction.
    M += H.u * H.u.transpose();
    const double unorm = double(H.u.norm());
    w2.push_back(unorm * unorm);
    const double Anorm2 = double(max_eig_sym<Mpfr>(H.A)), AnormF = double(H.A.norm());
    mnorm.push_back(double(max_eig_sym<Mpfr>(M)));
    const double kappa = mnorm.back() * double(max_eig_sym<Mpfr>(H.A));
    if (!s.has_u()) du_sum += 2 * unorm * dk_err;
    const double R = sm_residual_bound(n, opt.lambda0, w2, mnorm, kappa, u);
    const double eA = Anorm2 * (R + Anorm2 * du_sum) + (t + 1) * ops * n * eta;
    // Gate, residual, state.
    const Vec<Mpfr> w = H.A * H.k_hat;
    const double dw = eA + Anorm2 * dk_err + gamma_n(n, u) * AnormF;
    const double da = 2 * dw / double(w.norm()) + (n / 2.0 + 3) * u;
    const Vec<Mpfr> r = v - S_prev * H.k_hat;
    const double Sprev = double(S_prev.norm()), St = double(H.S.norm());
    const double rho = gamma_n(n + 1, u) * (double(v.norm()) + Sprev);
    const double sigma = n == 1 ? 0.0 : double(jacobian_norm_of_cos<Mpfr>(H.c));
    eS = sigma * eS + Sprev * dk_err + rho + double(r.norm()) * da + u * St + ops * std::sqrt(double(n * m)) * eta;
    c.bound_S = eS;
    c.bound_A = eA;
    // sqrt of a sum of squares: underflowing squares cost up to sqrt(n m eta) absolutely.
    c.bound_N = eS + (gamma_n(n * m, u) / 2 + u) * St + std::sqrt((n * m + 2) * eta);
    c.scale_S = St;
    c.scale_A = double(H.A.norm());
    c.err_S = double((L.S.cast<Mpfr>() - H.S).norm());
    c.err_A = double((L.A.cast<Mpfr>() - H.A).norm());
    c.err_N = double(abs(Mpfr(L.state_norm) - H.state_norm));
    // Readout (ratio or raw): y = S phi(q), den = n_t . phi(q).
    nsum += phik;
    // n_t = n_{t-1} + phi(k_t): each addition errs by u |n_t| (the partial sum, which
    // may be much larger than the final one when identity-map keys cancel), plus
    // the rounding of phi(k_t).
    dn += double(phik.norm()) * 2 * u + u * double(nsum.norm());
    const bool ratio = opt.readout == Readout::ratio;
    const double den = ratio ? double(abs(nsum.dot(q))) : 1.0;
    const double qn = double(q.norm()), nn = double(nsum.norm());
    double eO = 0, errO = 0;
    for (int i = 0; i < m; ++i) {
      const std::size_t oi = d.off(0, t, 0, m) + i;
      const double oex = double(o_hi.o[oi]);
      const double Si = double(H.S.row(i).norm());
      double e = (eS * qn + gamma_n(n, u) * Si * qn + Si * 2 * u * qn + ops * eta) / den + u * std::fabs(oex) + eta;
      if (ratio) e += std::fabs(oex) * (dn * qn + gamma_n(n, u) * nn * qn + ops * eta) / den;
      eO = std::max(eO, e);
      errO = std::max(errO, double(abs(Mpfr(o_lo.o[oi]) - o_hi.o[oi])));
      c.scale_O = std::max(c.scale_O, std::fabs(oex));
    }
    // A denominator whose error bound reaches half its value may round to 0 or flip
    // sign: no first-order bound on o then.
    if (ratio && !((dn * qn + gamma_n(n, u) * nn * qn + ops * eta) < den / 2)) eO = INFINITY;
    c.bound_O = eO;
    c.err_O = errO;
    out.push_back(c);
    S_prev = H.S;
  }
  return out;
}

}  // namespace vla::props

namespace vla::props {

struct ExactHead::Impl {
  long bits;
  Options opt;
  core::HeadState<Mpfr> kept, tried;
  core::Workspace<Mpfr> ws;
  core::StepInfo<Mpfr> info;
  std::vector<Mpfr> q, k, u, v, o;
};

ExactHead::ExactHead(int dk, int dv, const Options& opt, long bits) : p_(std::make_unique<Impl>()) {
  ref::MpfrPrecision prec(bits);
  p_->bits = bits;
  p_->opt = opt;
  p_->kept.reset(dk, dv, opt.lambda0);
  p_->ws.resize(dk, dv);
  p_->q.resize(dk), p_->k.resize(dk), p_->u.resize(dk), p_->v.resize(dv), p_->o.resize(dv);
}

ExactHead::~ExactHead() = default;

namespace {
// The group's err / scale (certify.hpp's relative error), as a double: computed
// in Mpfr so that tiny scales do not underflow the quotient; +inf where the
// double value is not finite or the exact group is 0 and the double one is not.
template <class Get>
double group_rel_error(std::size_t n, Get get) {
  Mpfr err(0), scale(0);
  for (std::size_t e = 0; e < n; ++e) {
    const auto [dbl, exact] = get(e);
    if (!std::isfinite(dbl)) return INFINITY;
    const Mpfr d = abs(Mpfr(dbl) - exact), m = abs(exact);
    if (d > err) err = d;
    if (m > scale) scale = m;
  }
  if (err == Mpfr(0)) return 0.0;
  if (scale == Mpfr(0)) return INFINITY;
  return double(err / scale);
}
}  // namespace

BitsLost ExactHead::compare(const double* q, const double* k, const double* v, const double* u,
                            const core::HeadState<double>& dbl, const double* o_dbl, double state_norm_dbl) {
  ref::MpfrPrecision prec(p_->bits);
  Impl& m = *p_;
  const int dk = m.kept.dk, dv = m.kept.dv;
  for (int j = 0; j < dk; ++j) {
    m.q[j] = Mpfr(q[j]), m.k[j] = Mpfr(k[j]);
    if (u) m.u[j] = Mpfr(u[j]);
  }
  for (int i = 0; i < dv; ++i) m.v[i] = Mpfr(v[i]);
  m.tried = m.kept;
  core::vla_step<ref::RefPolicy<Mpfr>>(m.tried, m.ws, m.q.data(), m.k.data(), m.v.data(), u ? m.u.data() : nullptr, m.opt,
                                       m.o.data(), m.info);
  using Pair = std::pair<double, const Mpfr&>;
  BitsLost b;
  b.o = bits_lost(group_rel_error(dv, [&](std::size_t e) { return Pair{o_dbl[e], m.o[e]}; }));
  b.S = bits_lost(group_rel_error(m.tried.S.size(), [&](std::size_t e) { return Pair{dbl.S[e], m.tried.S[e]}; }));
  b.A = bits_lost(group_rel_error(m.tried.A.size(), [&](std::size_t e) { return Pair{dbl.A[e], m.tried.A[e]}; }));
  b.state_norm = bits_lost(group_rel_error(1, [&](std::size_t) { return Pair{state_norm_dbl, m.info.state_norm}; }));
  return b;
}

void ExactHead::keep() { p_->kept = p_->tried; }

}  // namespace vla::props

namespace vla::props {

template <class Scalar>
double correct_bits(const ref::Result<Scalar>& x, const ref::Result<Mpfr>& exact, double cap) {
  const Dims& d = exact.dims;
  // At exact's precision, which holds x's values exactly (the more precise run).
  const mpfr_prec_t bits = exact.o.empty() ? Mpfr::default_bits() : mpfr_get_prec(exact.o[0].get());
  ref::MpfrPrecision prec(bits);
  double worst = cap;
  // One group: elements [first, first + n) of tensor pair (a, e).
  auto group = [&](const std::vector<Scalar>& a, const std::vector<Mpfr>& e, std::size_t first, std::size_t n) {
    Mpfr err(0), scale(0);
    for (std::size_t i = first; i < first + n; ++i) {
      const Mpfr xi = ref::to_mpfr(a[i], bits);
      if (!isfinite(xi)) {
        worst = std::min(worst, 0.0);
        return;
      }
      const Mpfr di = abs(xi - e[i]), mi = abs(e[i]);
      if (di > err) err = di;
      if (mi > scale) scale = mi;
    }
    if (err == Mpfr(0)) return;
    worst = std::min(worst, scale == Mpfr(0) ? 0.0 : std::max(0.0, -std::log2(double(err / scale))));
  };
  auto groups = [&](const std::vector<Scalar>& a, const std::vector<Mpfr>& e, std::size_t n) {
    if (a.size() != e.size()) throw std::invalid_argument("correct_bits: the runs' outputs differ in size");
    for (std::size_t first = 0; n > 0 && first < e.size(); first += n) group(a, e, first, n);
  };
  groups(x.o, exact.o, std::size_t(d.Dv));
  groups(x.S, exact.S, std::size_t(d.Dv) * d.Dk);
  groups(x.A, exact.A, std::size_t(d.Dk) * d.Dk);
  groups(x.state_norm, exact.state_norm, 1);
  return worst;
}

template double correct_bits<double>(const ref::Result<double>&, const ref::Result<Mpfr>&, double);
template double correct_bits<ref::Float128>(const ref::Result<ref::Float128>&, const ref::Result<Mpfr>&, double);
template double correct_bits<Mpfr>(const ref::Result<Mpfr>&, const ref::Result<Mpfr>&, double);

}  // namespace vla::props
