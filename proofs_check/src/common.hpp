// Small helpers shared by the claim files (private to the ledger).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vla/claims/claim.hpp"
#include "vla/claims/decide.hpp"
#include "vla/claims/fit.hpp"
#include "vla/claims/hp.hpp"
#include "vla/core/stream.hpp"

namespace vla::claims {

// The ledger's two MPFR precisions: exactness is judged by how a difference
// scales between them (decide.hpp, exact_by_precision_scaling).
inline constexpr int kBitsLo = 128;
inline constexpr int kBitsHi = 256;

// Runs f() at the lower, then at the higher precision: {f @ kBitsLo, f @ kBitsHi},
// for checks whose f returns several differences at once.
template <class F>
auto at_both_precisions(F&& f) -> std::pair<decltype(f()), decltype(f())> {
  std::pair<decltype(f()), decltype(f())> r;
  {
    ref::MpfrPrecision scope(kBitsLo);
    r.first = f();
  }
  {
    ref::MpfrPrecision scope(kBitsHi);
    r.second = f();
  }
  return r;
}

// Runs f() (returning a non-negative difference as a double) at both precisions.
template <class F>
PrecisionPair at_two_precisions(F&& f) {
  const auto [lo, hi] = at_both_precisions(f);
  return {static_cast<double>(lo), static_cast<double>(hi), kBitsLo, kBitsHi};
}

// The largest entry of |a - b| over the largest entry of |b| (the difference itself
// where b is 0), for two containers of the same scalar with size() and data()
// (std::vector, Eigen matrices).
template <class X>
double rel_max_diff(const X& a, const X& b) {
  using S = std::decay_t<decltype(*a.data())>;
  using std::abs;  // and the multiprecision types' abs by argument-dependent lookup
  S d = 0, scale = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.size()); ++i) {
    d = std::max(d, S(abs(a.data()[i] - b.data()[i])));
    scale = std::max(scale, S(abs(b.data()[i])));
  }
  return double(scale > 0 ? S(d / scale) : d);
}

inline Json pair_json(const PrecisionPair& p) {
  Json j;
  j["at_" + std::to_string(p.bits_lo) + "_bits"] = p.diff_lo;
  j["at_" + std::to_string(p.bits_hi) + "_bits"] = p.diff_hi;
  j["exact (scales with unit roundoff)"] = exact_by_precision_scaling(p);
  return j;
}

inline std::string sci(double x, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// The verdict of a check that a form equals the recurrence up to rounding, with a
// control that must fail: holds where the difference scales with the unit roundoff
// (exact) and the control was seen; refuted where it does not scale, with a
// counterexample (claimed 0 up to rounding, computed the worst difference at
// kBitsHi); inconclusive where the control did not show (the check cannot tell).
inline void exactness_verdict(ClaimResult& r, bool exact, bool control_seen, std::string description, Json input,
                              std::string quantity, double worst_hi) {
  if (exact && control_seen) {
    r.verdict = Verdict::holds;
  } else if (!exact) {
    r.verdict = Verdict::refuted;
    Counterexample ce;
    ce.description = std::move(description);
    ce.input = std::move(input);
    ce.quantity = std::move(quantity);
    ce.claimed = "0 up to rounding";
    ce.computed = sci(worst_hi, 17);
    ce.margin = worst_hi;
    ce.precision_bits = kBitsHi;
    r.counterexample = ce;
  } else {
    r.verdict = Verdict::inconclusive;
  }
}

inline std::string mp_str(const hp::Mp& x, int digits = 30) { return x.str(digits); }

inline Json fit_json(const PowerFit& f) {
  Json j;
  j["exponent"] = f.exponent;
  j["stderr"] = f.stderr_p;
  j["points"] = f.points;
  j["class"] = to_string(classify_growth(f));
  return j;
}

// A stream inline in the JSON (counterexamples are small): dims and tensors.
inline Json stream_json(const Stream& s, const Options& opt) {
  Json j;
  j["dims"] = {{"B", s.dims.B}, {"T", s.dims.T}, {"H", s.dims.H}, {"Dk", s.dims.Dk}, {"Dv", s.dims.Dv}};
  j["options"] = describe(opt);
  j["q"] = s.q;
  j["k"] = s.k;
  j["v"] = s.v;
  if (s.has_u()) j["u"] = s.u;
  return j;
}

// A B = H = 1 stream from rows of keys and values (q = k).
inline Stream stream_of(const std::vector<std::vector<double>>& k, const std::vector<std::vector<double>>& v) {
  Stream s;
  const int T = int(k.size()), dk = int(k.at(0).size()), dv = int(v.at(0).size());
  s.dims = Dims{1, T, 1, dk, dv};
  for (int t = 0; t < T; ++t) {
    s.k.insert(s.k.end(), k[t].begin(), k[t].end());
    s.v.insert(s.v.end(), v[t].begin(), v[t].end());
  }
  s.q = s.k;
  return s;
}

}  // namespace vla::claims
