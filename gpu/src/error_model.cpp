#include "vla/gpu/error_model.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "vla/core/formulas.hpp"

namespace vla::accuracy {

Precision precision_of(impl::Kind kind) {
  const double f32 = std::ldexp(1.0, -24), bf = std::ldexp(1.0, -8);
  switch (kind) {
    case impl::Kind::fp32: return {"fp32", f32, f32, false};
    case impl::Kind::bf16: return {"bf16", bf, f32, true};
    case impl::Kind::bf16_state: return {"bf16-state", bf, bf, true};
  }
  throw std::logic_error("precision_of: unknown kind");
}

double ulps(double x, double ref, bool bf16) {
  const int mant = bf16 ? 8 : 24;  // significant bits
  const double a = std::fabs(ref);
  int e = 0;
  std::frexp(a, &e);                        // a = f 2^e, f in [0.5, 1)
  e = std::max(e, -125);                    // float/bf16 subnormal spacing below the normal range
  const double ulp = std::ldexp(1.0, e - mant);
  return std::fabs(x - ref) / ulp;
}

namespace {

// |base - ref| per element, the largest over the baselines (non-finite: not in
// err, but flagged where the reference is finite: the baseline overflowed).
struct BaseErr {
  std::vector<double> err;
  std::vector<char> nonfinite;
};
BaseErr baseline_error(const std::vector<double>& ref, const std::vector<const Outputs*>& bases, std::vector<double> Outputs::*field) {
  BaseErr e{std::vector<double>(ref.size(), 0.0), std::vector<char>(ref.size(), 0)};
  for (const Outputs* b : bases) {
    const auto& x = b->*field;
    if (x.size() != ref.size()) throw std::invalid_argument("error model: a baseline's size differs from the reference's");
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(x[i] - ref[i]);
      if (std::isfinite(d)) e.err[i] = std::max(e.err[i], d);
      else if (std::isfinite(ref[i])) e.nonfinite[i] = 1;
    }
  }
  return e;
}

// Storing a value rounds it by at most u_out |x| + eta_out: eta_out is half the
// spacing of the storage type's subnormals (float 2^-149, bf16 2^-133), where
// the relative bound alone does not hold.
double storage_eta(bool bf16) { return bf16 ? 0x1p-134 : 0x1p-150; }

// The tolerance of one element: u_out |ref| + eta_out + F + K (b_g + gamma u_state s_g),
// F the floor at the scale of the terms summed (terms_floor).
double tolerance(double r, double u_out, double eta, double floor, double bg, double sg, double gamma, const Precision& prec,
                 const ModelConstants& k) {
  return u_out * std::fabs(r) + eta + floor + k.K * (bg + gamma * prec.u_state * sg);
}

// The floor at the scale of the terms summed (docs/ERROR_MODEL.md, "The floor at
// the scale of the terms"): an entry of S_t is a sum of about D terms of the
// size of the state the step started from (S_{t-1} k^ a^ and S_{t-1} itself)
// or ended with, so its rounding error scales with
// sigma_t = max(||S_{t-1}||_F, ||S_t||_F), not with S_t, which may cancel to
// exactly 0. sqrt(D): the model's gamma, the growth of rounding in a sum of D
// terms. u: float's, the arithmetic every policy does between its rounding
// points (those, bf16 or tf32 storage, the baselines make exactly as the policy
// does, so their part is in b_g). No K: it is not a ratio to a random draw;
// where the reference is 0 the baselines' absolute error (b_g) carries the
// measured part.
constexpr double kArithmeticU = 0x1p-24;
double terms_floor(double sigma, double d) { return std::sqrt(d) * kArithmeticU * sigma; }

// sigma_t = max(||S_{t-1}||_F, ||S_t||_F) along head (b, h), from the reference.
std::vector<double> state_scale(const Outputs& ref, int b, int h) {
  const Dims& d = ref.dims;
  std::vector<double> sigma(d.T, 0.0);
  double prev = 0;
  for (int t = 0; t < d.T; ++t) {
    double a = std::fabs(ref.state_norm[(std::size_t(b) * d.T + t) * d.H + h]);
    if (!std::isfinite(a)) a = 0;
    sigma[t] = std::max(prev, a);
    prev = a;
  }
  return sigma;
}

// o along head (b, h): row t's scale m_t = max_i |ref|; the scale of the terms the
// row sums, tau_t = sigma_t ||phi(q_t)|| / |den_t| (>= m_t: |o_ti| <= ||S_t||_F
// ||phi(q_t)|| / |den_t|; 0 where the caller passed no readout gain); and the
// running maximum over s <= t of the baseline's relative row error
// max_i |base - ref| / max(m_s, tau_s). Relative to the terms, not to the row:
// a row that cancels (m_s far below tau_s) carries the rounding of its terms,
// which is no loss of the policy's bits, and must neither declare a breakdown
// nor inflate every later row's b_g (found 2026-12-05: bf16-state rows cancelling
// at t = 0 left whole heads unjudged on ordinary streams). Such a row, whose
// baselines miss half of it, has no correct bit to judge: it alone is beyond the
// policy (`skip`: a cancelling numerator, a cancelling denominator n . phi(q)
// under the identity map, an intermediate that overflowed, o = x / inf = 0),
// and the steps after it are judged: their own baselines say whether the state
// kept its bits (the running maximum above, o's non-finite rows, ||S_t||_F).
struct RowScale {
  double m = 0, rel_max = 0;
  double scale = 0;     // max(m, tau): what rel_max is relative to
  double err = 0;       // max_i |base - ref| of the row (b_g where the scale is 0)
  bool broken = false;  // from this step on the policy has no accuracy left (see breakdown below)
  bool skip = false;    // this row alone has no correct bit: its baselines miss half of it
};
std::vector<RowScale> o_row_scales(const Outputs& ref, const BaseErr& be_o, int b, int h, const std::vector<double>& sigma,
                                   const std::vector<double>& gain) {
  const Dims& d = ref.dims;
  std::vector<RowScale> rs(d.T);
  double rel_max = 0;
  bool broken = false;
  for (int t = 0; t < d.T; ++t) {
    const std::size_t off = d.off(b, t, h, d.Dv);
    double m = 0, e = 0;
    for (int i = 0; i < d.Dv; ++i) {
      if (std::isfinite(ref.o[off + i])) m = std::max(m, std::fabs(ref.o[off + i]));
      e = std::max(e, be_o.err[off + i]);
      broken = broken || be_o.nonfinite[off + i];
    }
    const double tau = gain.empty() ? 0.0 : sigma[t] * gain[(std::size_t(b) * d.T + t) * d.H + h];
    const double scale = std::isfinite(tau) ? std::max(m, tau) : m;
    if (scale > 0) rel_max = std::max(rel_max, e / scale);
    const bool no_bit = m > 0 && e >= kBreakdown * m;
    broken = broken || rel_max >= kBreakdown;
    rs[t] = {m, rel_max, scale, e, broken, no_bit};
  }
  return rs;
}

// The first step of head (b, h) from which the precision policy has no correct
// bit left: a baseline's relative error (running maximum) of an o row or of
// ||S_t||_F reaches kBreakdown, or a baseline is non-finite where the reference is
// finite. d.T when it never happens. `for_norm`: the breakdown of state_norm
// itself. For o, S and A the norm counts only while its float sum of squares is
// in float's range, ||S_t||_F in [2^-60, 2^60]: beyond sqrt(FLT_MAX) ~ 2^64 the
// squares overflow and below ~2^-63 they underflow (to subnormals, then 0) while
// every entry of S, and o, is finite and accurate; a loss in S itself shows in
// o's own baselines (its rows' errors, non-finite rows).
int breakdown_step(const Outputs& ref, const std::vector<RowScale>& rs, const BaseErr& be_n, int b, int h, bool for_norm) {
  const Dims& d = ref.dims;
  double rel_max = 0;
  for (int t = 0; t < d.T; ++t) {
    const std::size_t i = (std::size_t(b) * d.T + t) * d.H + h;
    const double a = std::fabs(ref.state_norm[i]);
    const bool counts = for_norm || (a >= 0x1p-60 && a <= 0x1p60);
    if (counts && a > 0 && std::isfinite(a) && !be_n.nonfinite[i]) rel_max = std::max(rel_max, be_n.err[i] / a);
    if (rs[t].broken || (counts && be_n.nonfinite[i]) || rel_max >= kBreakdown) return t;
  }
  return d.T;
}

struct Checker {
  const Precision& prec;
  const ModelConstants& k;
  double d;  // head dimension
  Verdict v;

  // A series over steps, elements idx(0..n-1): scale from the largest relative
  // baseline error over the steps so far (one value per step is a single random
  // draw; the running maximum over the history is stable, and relative, since
  // the values may grow by orders of magnitude along the series). Steps from
  // `broken` on are beyond the policy.
  // floor(e): the element's floor at the scale of the terms summed.
  template <class Index, class Floor, class Where>
  void series(const std::vector<double>& cand, const std::vector<double>& ref, const BaseErr& be, int n, int broken, Index idx,
              Floor floor, double u_out, bool bf16_elem, const char* name, Where where) {
    double rel_max = 0;
    for (int e = 0; e < n; ++e) {
      const std::size_t i = idx(e);
      const double a = std::fabs(ref[i]);
      if (a > 0 && std::isfinite(a)) rel_max = std::max(rel_max, be.err[i] / a);
      // Where the reference is 0 its relative error is undefined: the baselines' absolute error.
      const double bg = a > 0 ? rel_max * a : be.err[i];
      if (e >= broken) beyond(cand[i], ref[i], where(e).t);
      else check_one(cand[i], ref[i], u_out, bf16_elem, floor(e), bg, a, d, name, where(e));
    }
  }

  // A matrix (final S or A of one head): scale from its largest baseline error
  // (absolute: it covers a matrix that is exactly 0); beyond the policy when its
  // head broke down, its baselines overflowed, or their error reaches kBreakdown
  // times the matrix's largest entry and exceeds K times the floor at the terms'
  // scale (below that it is the rounding of a state that cancelled, not a loss
  // of every bit). floor: that floor (0 for A); not added to the tolerance (an
  // entry's share of ||E||_F is far smaller: docs/ERROR_MODEL.md).
  template <class Index, class Where>
  void matrix(const std::vector<double>& cand, const std::vector<double>& ref, const BaseErr& be, int n, bool head_broken,
              double floor, Index idx, const char* name, Where where) {
    double bmax = 0, smax = 0;
    bool broken = head_broken;
    for (int e = 0; e < n; ++e) {
      const std::size_t i = idx(e);
      bmax = std::max(bmax, be.err[i]);
      broken = broken || be.nonfinite[i];
      if (std::isfinite(ref[i])) smax = std::max(smax, std::fabs(ref[i]));
    }
    broken = broken || (bmax > k.K * floor && bmax >= kBreakdown * smax);
    for (int e = 0; e < n; ++e) {
      const std::size_t i = idx(e);
      if (broken) beyond(cand[i], ref[i], -1);
      else check_one(cand[i], ref[i], std::ldexp(1.0, -24), false, 0.0, bmax, smax, std::sqrt(d), name, where(e));
    }
  }

  // An element where the policy has no accuracy left: not judged, counted.
  void beyond(double c, double r, int t) {
    ++v.beyond;
    if (!std::isfinite(c) && std::isfinite(r)) ++v.beyond_nonfinite;
    if (t >= 0 && (v.first_beyond_step < 0 || t < v.first_beyond_step)) v.first_beyond_step = t;
  }

  // gamma: sqrt of the number of terms in the longest reduction behind the
  // element (D for a dot product, D^2 for ||S||_F), the typical growth of
  // rounding in a sum; it scales the floor.
  void check_one(double c, double r, double u_out, bool bf16_elem, double floor, double bg, double sg, double gamma, const char* name,
                 Worst w) {
    ++v.checked;
    const double scale = bg + gamma * prec.u_state * sg;
    const double eta = storage_eta(bf16_elem);
    const double tol = tolerance(r, u_out, eta, floor, bg, sg, gamma, prec, k);
    const double err = std::fabs(c - r);
    const bool finite = std::isfinite(c) || !std::isfinite(r);
    const double inf = std::numeric_limits<double>::infinity();
    const double ratio = !finite ? inf : tol > 0 ? err / tol : (err > 0 ? inf : 0.0);
    const double excess = scale > 0 ? (err - u_out * std::fabs(r) - eta - floor) / scale : 0.0;
    v.max_group_ratio = std::max(v.max_group_ratio, finite ? excess : inf);
    if (!finite || err > tol) {
      ++v.failures;
      v.pass = false;
      if (w.t >= 0 && (v.first_fail_step < 0 || w.t < v.first_fail_step)) v.first_fail_step = w.t;
    }
    if (ratio > v.worst.ratio || v.worst.quantity.empty()) {
      w.quantity = name;
      w.cand = c;
      w.ref = r;
      w.err = err;
      w.tol = tol;
      w.ratio = ratio;
      w.rel = r != 0 ? err / std::fabs(r) : err;
      w.ulps = ulps(c, r, bf16_elem);
      v.worst = w;
    }
  }
};

}  // namespace

Verdict check(const Outputs& cand, const Outputs& ref, const std::vector<const Outputs*>& bases, const Precision& prec,
              const ModelConstants& k, const std::vector<double>& readout_gain, const ReadoutTerms& readout_terms) {
  const Dims& d = ref.dims;
  if (bases.empty()) throw std::invalid_argument("error model: at least one baseline is needed");
  if (!readout_gain.empty() && readout_gain.size() != ref.state_norm.size())
    throw std::invalid_argument("error model: readout_gain needs one value per o row [B, T, H]");
  if (!readout_terms.empty() && (readout_terms.q_norm.size() != ref.state_norm.size() ||
                                 readout_terms.den_terms.size() != ref.state_norm.size()))
    throw std::invalid_argument("error model: readout_terms needs one value per o row [B, T, H] in q_norm and den_terms");
  for (const Outputs* b : bases)
    if (!(b->dims == d)) throw std::invalid_argument("error model: a baseline's shape differs from the reference's");
  // o is required; S, A and state_norm are checked when the candidate has them.
  const bool with_n = !cand.state_norm.empty(), with_s = !cand.S.empty(), with_a = !cand.A.empty() && !ref.A.empty();
  if (!(cand.dims == d) || cand.o.size() != ref.o.size() || (with_n && cand.state_norm.size() != ref.state_norm.size()) ||
      (with_s && cand.S.size() != ref.S.size()) || (with_a && cand.A.size() != ref.A.size()))
    throw std::invalid_argument("error model: candidate and reference shapes differ");
  const auto be_o = baseline_error(ref.o, bases, &Outputs::o), be_n = baseline_error(ref.state_norm, bases, &Outputs::state_norm);
  const auto be_s = with_s ? baseline_error(ref.S, bases, &Outputs::S) : BaseErr{};
  const auto be_a = with_a ? baseline_error(ref.A, bases, &Outputs::A) : BaseErr{};
  Checker ch{prec, k, double(d.Dk), {}};
  const double f32 = std::ldexp(1.0, -24);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      // o: the baseline's relative row error against the row's terms, and its running maximum (o_row_scales).
      const auto sigma = state_scale(ref, b, h);
      const auto rs = o_row_scales(ref, be_o, b, h, sigma, readout_gain);
      const int broken = breakdown_step(ref, rs, be_n, b, h, false), broken_n = breakdown_step(ref, rs, be_n, b, h, true);
      auto row = [&](int t) { return (std::size_t(b) * d.T + t) * d.H + h; };
      // The range test (error_model.hpp): a float partial sum of the numerator may reach FLT_MAX
      // where sigma_t ||phi(q_t)||, the bound on every partial sum, is within float's rounding of
      // it (a sum of Dk terms errs by at most Dk 2^-24 relative to the sum of their magnitudes).
      const double edge = double(FLT_MAX) / (1.0 + d.Dk * f32);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t off = d.off(b, t, h, d.Dv);
        const double m = rs[t].m, rel_max = rs[t].rel_max;
        const bool range_edge = !readout_terms.empty() && !(sigma[t] * readout_terms.q_norm[row(t)] < edge);
        // The denominator's edge: its Dk products of n_j (each a float sum of t + 1 terms) summed in float.
        const bool den_edge = !readout_terms.empty() && !(readout_terms.den_terms[row(t)] < double(FLT_MAX) / (1.0 + (d.Dk + t + 1) * f32));
        const double floor = readout_gain.empty() ? 0.0 : terms_floor(sigma[t] * readout_gain[row(t)], d.Dk);
        const double bg = rs[t].scale > 0 ? rel_max * rs[t].scale : rs[t].err;  // scale 0: the baselines' absolute error
        for (int i = 0; i < d.Dv; ++i) {
          const double c = cand.o[off + i];
          if (t >= broken || rs[t].skip || (range_edge && !std::isfinite(c)) || (den_edge && (c == 0 || !std::isfinite(c))))
            ch.beyond(c, ref.o[off + i], t);
          else ch.check_one(cand.o[off + i], ref.o[off + i], prec.u_out, prec.bf16_out, floor, bg, m, std::sqrt(double(d.Dk)),
                            "o", Worst{"", b, t, h, i});
        }
      }
      if (with_n)
        ch.series(cand.state_norm, ref.state_norm, be_n, d.T, broken_n, row, [&](int t) { return terms_floor(sigma[t], d.Dk); },
                  f32, false, "state_norm", [&](int t) { return Worst{"", b, t, h, 0}; });
      const std::size_t ns = std::size_t(d.Dv) * d.Dk, na = std::size_t(d.Dk) * d.Dk, bh = std::size_t(b) * d.H + h;
      // The final S: its baselines' error is rounding, not a breakdown, within K times its floor.
      if (with_s)
        ch.matrix(cand.S, ref.S, be_s, int(ns), broken < d.T, d.T > 0 ? terms_floor(sigma[d.T - 1], d.Dk) : 0.0,
                  [&](int e) { return bh * ns + e; },
                  "S", [&](int e) { return Worst{"", b, -1, h, e}; });
      if (with_a)
        ch.matrix(cand.A, ref.A, be_a, int(na), broken < d.T, 0.0, [&](int e) { return bh * na + e; }, "A",
                  [&](int e) { return Worst{"", b, -1, h, e}; });
    }
  return ch.v;
}

std::vector<double> o_envelope(const Outputs& ref, const std::vector<const Outputs*>& bases, const Precision& prec, int b,
                               int h, const ModelConstants& k) {
  if (bases.empty()) throw std::invalid_argument("error model: at least one baseline is needed");
  const auto rs = o_row_scales(ref, baseline_error(ref.o, bases, &Outputs::o), b, h, {}, {});  // no gain: relative to the rows
  std::vector<double> env(rs.size());
  for (std::size_t t = 0; t < rs.size(); ++t) {
    const double m = rs[t].m;
    env[t] = m > 0 ? tolerance(m, prec.u_out, storage_eta(prec.bf16_out), 0.0, rs[t].rel_max * m, m, std::sqrt(double(ref.dims.Dk)), prec, k) / m
                   : std::numeric_limits<double>::quiet_NaN();
  }
  return env;
}

Verdict check(const Outputs& cand, const Outputs& ref, const Outputs& base, const Precision& prec, const ModelConstants& k) {
  return check(cand, ref, std::vector<const Outputs*>{&base}, prec, k);
}

std::vector<double> readout_gain(const Stream& rounded, const Options& opt) {
  const Dims& d = rounded.dims;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  std::vector<double> gain(std::size_t(d.B) * d.T * d.H, 0.0);
  std::vector<double> n(d.Dk), p(d.Dk);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      std::fill(n.begin(), n.end(), 0.0);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk);
        double q2 = 0, den = 0;
        for (int j = 0; j < d.Dk; ++j) {
          n[j] += core::phi(rounded.k[ok + j], elu1);
          p[j] = core::phi(rounded.q[ok + j], elu1);
          q2 += p[j] * p[j];
          den += n[j] * p[j];
        }
        den = opt.readout == Readout::ratio ? core::readout_den(den, opt.den_floor) : 1.0;
        const double g = std::sqrt(q2) / std::fabs(den);
        gain[(std::size_t(b) * d.T + t) * d.H + h] = std::isfinite(g) ? g : 0.0;
      }
    }
  return gain;
}

ReadoutTerms readout_terms(const Stream& rounded, const Options& opt) {
  const Dims& d = rounded.dims;
  const bool elu1 = opt.feature_map == FeatureMap::elu1, ratio = opt.readout == Readout::ratio;
  ReadoutTerms r;
  r.q_norm.assign(std::size_t(d.B) * d.T * d.H, 0.0);
  r.den_terms.assign(r.q_norm.size(), 0.0);
  std::vector<double> n_abs(d.Dk);  // sum_{s<=t} |phi(k_s)_j|: the bound on n_j's partial sums
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      std::fill(n_abs.begin(), n_abs.end(), 0.0);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t oq = d.off(b, t, h, d.Dk), row = (std::size_t(b) * d.T + t) * d.H + h;
        double q2 = 0, den = 0;
        for (int j = 0; j < d.Dk; ++j) {
          const double p = core::phi(rounded.q[oq + j], elu1);
          n_abs[j] += std::fabs(core::phi(rounded.k[oq + j], elu1));
          q2 += p * p;
          den += n_abs[j] * std::fabs(p);
        }
        r.q_norm[row] = std::sqrt(q2);
        r.den_terms[row] = ratio ? den : 0.0;
      }
    }
  return r;
}

std::string Verdict::summary() const {
  std::ostringstream s;
  s << (pass ? "pass" : "FAIL") << ": " << failures << " of " << checked << " elements outside the model";
  if (first_fail_step >= 0) s << ", first failing step t=" << first_fail_step;
  s << "; worst " << worst.quantity << "[b=" << worst.b << ", t=" << worst.t << ", h=" << worst.h << ", i=" << worst.index
    << "]: cand " << worst.cand << " ref " << worst.ref << " err " << worst.err << " (" << worst.rel << " rel, " << worst.ulps
    << " ulp) tol " << worst.tol << " ratio " << worst.ratio << "; max group ratio " << max_group_ratio;
  if (beyond > 0)
    s << "; " << beyond << " elements beyond the policy's accuracy (not judged), the first at t=" << first_beyond_step << ", "
      << beyond_nonfinite << " of them non-finite";
  return s.str();
}

}  // namespace vla::accuracy
