#include "vla/gpu/error_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

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

struct Checker {
  const Precision& prec;
  const ModelConstants& k;
  double sqrt_d;
  Verdict v;

  // One group: elements idx(0..n-1) of the three arrays. A row or matrix is
  // checked with the group's largest baseline error and largest reference
  // magnitude. A series over steps (state_norm) has one value per step, so its
  // baseline error is taken relative: the largest relative baseline error over
  // the steps so far, times |ref| at this step (the norm may grow by orders of
  // magnitude along the series; its relative error does not).
  template <class Index, class Where>
  void group(const std::vector<double>& cand, const std::vector<double>& ref, const std::vector<double>& base, int n,
             Index idx, double u_out, bool bf16_elem, const char* name, bool series, Where where) {
    if (series) {
      double rel_max = 0;
      for (int e = 0; e < n; ++e) {
        const std::size_t i = idx(e);
        const double a = std::fabs(ref[i]), be = std::fabs(base[i] - ref[i]);
        if (a > 0 && std::isfinite(be) && std::isfinite(a)) rel_max = std::max(rel_max, be / a);
        check_one(cand[i], ref[i], u_out, bf16_elem, rel_max * a, a, name, where(e));
      }
      return;
    }
    double bmax = 0, smax = 0;
    for (int e = 0; e < n; ++e) {
      const std::size_t i = idx(e);
      const double be = std::fabs(base[i] - ref[i]);
      if (std::isfinite(be)) bmax = std::max(bmax, be);
      if (std::isfinite(ref[i])) smax = std::max(smax, std::fabs(ref[i]));
    }
    for (int e = 0; e < n; ++e) {
      const std::size_t i = idx(e);
      check_one(cand[i], ref[i], u_out, bf16_elem, bmax, smax, name, where(e));
    }
  }

  void check_one(double c, double r, double u_out, bool bf16_elem, double bg, double sg, const char* name, Worst w) {
    ++v.checked;
    const double scale = bg + sqrt_d * prec.u_state * sg;
    const double tol = u_out * std::fabs(r) + k.K * scale;
    const double err = std::fabs(c - r);
    const bool finite = std::isfinite(c) || !std::isfinite(r);
    const double ratio = !finite ? std::numeric_limits<double>::infinity() : tol > 0 ? err / tol : (err > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    const double excess = scale > 0 ? (err - u_out * std::fabs(r)) / scale : 0.0;
    v.max_group_ratio = std::max(v.max_group_ratio, finite ? excess : std::numeric_limits<double>::infinity());
    const bool fail = !finite || err > tol;
    if (fail) {
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

Verdict check(const Outputs& cand, const Outputs& ref, const Outputs& base, const Precision& prec, const ModelConstants& k) {
  const Dims& d = ref.dims;
  if (!(cand.dims == d) || !(base.dims == d)) throw std::invalid_argument("error model: candidate, reference and baseline shapes differ");
  if (cand.o.size() != ref.o.size() || base.o.size() != ref.o.size() || cand.state_norm.size() != ref.state_norm.size() ||
      base.state_norm.size() != ref.state_norm.size() || cand.S.size() != ref.S.size() || base.S.size() != ref.S.size())
    throw std::invalid_argument("error model: candidate, reference and baseline sizes differ");
  Checker ch{prec, k, std::sqrt(double(d.Dk)), {}};
  const double f32 = std::ldexp(1.0, -24);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      for (int t = 0; t < d.T; ++t) {
        const std::size_t off = d.off(b, t, h, d.Dv);
        ch.group(cand.o, ref.o, base.o, d.Dv, [&](int e) { return off + e; }, prec.u_out, prec.bf16_out, "o", false,
                 [&](int e) { return Worst{"", b, t, h, e}; });
      }
      ch.group(cand.state_norm, ref.state_norm, base.state_norm, d.T,
               [&](int t) { return (std::size_t(b) * d.T + t) * d.H + h; }, f32, false, "state_norm", true,
               [&](int t) { return Worst{"", b, t, h, 0}; });
      const std::size_t ns = std::size_t(d.Dv) * d.Dk, na = std::size_t(d.Dk) * d.Dk, bh = std::size_t(b) * d.H + h;
      ch.group(cand.S, ref.S, base.S, int(ns), [&](int e) { return bh * ns + e; }, f32, false, "S", false,
               [&](int e) { return Worst{"", b, -1, h, e}; });
      if (!cand.A.empty() && !ref.A.empty() && !base.A.empty())
        ch.group(cand.A, ref.A, base.A, int(na), [&](int e) { return bh * na + e; }, f32, false, "A", false,
                 [&](int e) { return Worst{"", b, -1, h, e}; });
    }
  return ch.v;
}

std::string Verdict::summary() const {
  std::ostringstream s;
  s << (pass ? "pass" : "FAIL") << ": " << failures << " of " << checked << " elements outside the model";
  if (first_fail_step >= 0) s << ", first failing step t=" << first_fail_step;
  s << "; worst " << worst.quantity << "[b=" << worst.b << ", t=" << worst.t << ", h=" << worst.h << ", i=" << worst.index
    << "]: cand " << worst.cand << " ref " << worst.ref << " err " << worst.err << " (" << worst.rel << " rel, " << worst.ulps
    << " ulp) tol " << worst.tol << " ratio " << worst.ratio << "; max group ratio " << max_group_ratio;
  return s.str();
}

}  // namespace vla::accuracy
