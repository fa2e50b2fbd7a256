#include "vla/claims/flops.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "vla/core/recurrence.hpp"

namespace vla::claims {

namespace {

thread_local OpCount g_count;

// A double that counts the operations done on it.
struct Counted {
  double v = 0;
  Counted() = default;
  Counted(double x) : v(x) {}  // NOLINT: used like a built-in floating type
  friend Counted operator+(Counted a, Counted b) { ++g_count.add; return a.v + b.v; }
  friend Counted operator-(Counted a, Counted b) { ++g_count.add; return a.v - b.v; }
  friend Counted operator*(Counted a, Counted b) { ++g_count.mul; return a.v * b.v; }
  friend Counted operator/(Counted a, Counted b) { ++g_count.div; return a.v / b.v; }
  friend Counted operator-(Counted a) { return -a.v; }  // a sign flip, not arithmetic
  friend bool operator<(Counted a, Counted b) { return a.v < b.v; }
  friend bool operator>(Counted a, Counted b) { return a.v > b.v; }
  // core/hd.hpp's helpers, found by argument-dependent lookup.
  friend Counted vsqrt(const Counted& a) { ++g_count.sqrt; return std::sqrt(a.v); }
  friend Counted vexp(const Counted& a) { ++g_count.exp; return std::exp(a.v); }
  friend Counted vfma(const Counted& a, const Counted& b, const Counted& c) { ++g_count.fma; return std::fma(a.v, b.v, c.v); }
};

using P = core::SequentialPolicy<Counted>;

struct Bench {
  core::HeadState<Counted> st;
  core::Workspace<Counted> ws;
  std::vector<Counted> q, k, v, o;
  core::StepInfo<Counted> info;
  Bench(const Options& opt, int dk, int dv) {
    if (dk < 1 || dv < 1) throw std::invalid_argument("count_step: dimensions must be >= 1");
    st.reset(dk, dv, opt.lambda0);
    ws.resize(dk, dv);
    q.resize(dk);
    k.resize(dk);
    v.resize(dv);
    o.resize(dv);
    // Generic values: no zero that a branch could skip (none does today, but
    // the count must not depend on it).
    for (int j = 0; j < dk; ++j) {
      q[j] = 0.3 + 0.01 * j;
      k[j] = 0.5 - 0.02 * j;
    }
    for (int i = 0; i < dv; ++i) v[i] = 1.0 + 0.1 * i;
  }
  void step(const Options& opt) {
    switch (opt.model) {
      case Model::vla: core::vla_step<P>(st, ws, q.data(), k.data(), v.data(), nullptr, opt, o.data(), info); break;
      case Model::linear: core::linear_step<P>(st, ws, q.data(), k.data(), v.data(), opt, o.data(), info); break;
      case Model::deltanet: core::deltanet_step<P>(st, ws, q.data(), k.data(), v.data(), opt, o.data(), info); break;
      case Model::softmax: throw std::invalid_argument("count_step: softmax attention has no fixed-size step");
    }
  }
};

}  // namespace

OpCount count_step(const Options& opt, int dk, int dv) {
  Bench b(opt, dk, dv);
  b.step(opt);  // leave the initial state, so the counted step is a generic one
  g_count = {};
  b.step(opt);
  return g_count;
}

OpCount count_readout(const Options& opt, int dk, int dv) {
  Bench b(opt, dk, dv);
  b.step(opt);
  g_count = {};
  core::readout<P>(b.st, b.ws, b.q.data(), opt, b.o.data(), b.info);
  return g_count;
}

CostPolynomial cost_polynomial(const std::function<long(int)>& count) {
  constexpr int kSamples = 9, kMaxDegree = 4;
  std::vector<long long> diff(kSamples);
  for (int D = 1; D <= kSamples; ++D) diff[std::size_t(D - 1)] = count(D);
  // delta[k] = k-th forward difference at D = 1.
  std::vector<long long> delta;
  for (int k = 0; k < kSamples; ++k) {
    delta.push_back(diff[0]);
    for (int i = 0; i + 1 < kSamples - k; ++i) diff[std::size_t(i)] = diff[std::size_t(i) + 1] - diff[std::size_t(i)];
  }
  CostPolynomial p;
  p.verified = true;
  for (int k = kMaxDegree + 1; k < kSamples; ++k) p.verified = p.verified && delta[std::size_t(k)] == 0;
  // Newton form: count(D) = sum_k delta[k] * C(D - 1, k). Expand 24 * count in
  // monomials (24 = 4! clears every denominator k!).
  std::vector<long long> c24(kMaxDegree + 1, 0);
  long long fact = 1;
  for (int k = 0; k <= kMaxDegree; ++k) {
    if (k > 0) fact *= k;
    // (D - 1)(D - 2)...(D - k) in monomials.
    std::vector<long long> poly = {1};
    for (int m = 1; m <= k; ++m) {
      std::vector<long long> next(poly.size() + 1, 0);
      for (std::size_t i = 0; i < poly.size(); ++i) {
        next[i + 1] += poly[i];
        next[i] -= m * poly[i];
      }
      poly = next;
    }
    for (std::size_t i = 0; i < poly.size(); ++i) c24[i] += delta[std::size_t(k)] * (24 / fact) * poly[i];
  }
  p.coeff.resize(c24.size());
  for (std::size_t i = 0; i < c24.size(); ++i) {
    p.coeff[i] = double(c24[i]) / 24.0;
    if (c24[i] != 0) p.degree = int(i);
  }
  return p;
}

double CostPolynomial::operator()(double D) const {
  double v = 0;
  for (std::size_t i = coeff.size(); i-- > 0;) v = v * D + coeff[i];
  return v;
}

std::string CostPolynomial::str() const {
  std::string s;
  for (int k = degree; k >= 0; --k) {
    const double c = coeff[std::size_t(k)];
    if (c == 0) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", std::fabs(c));
    s += s.empty() ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
    s += buf;
    if (k >= 1) s += " D";
    if (k >= 2) s += "^" + std::to_string(k);
  }
  return s.empty() ? "0" : s;
}

}  // namespace vla::claims
