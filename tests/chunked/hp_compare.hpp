// Shared by the chunked forms' high-precision tests: the 256-bit MPFR scalar,
// random streams and the agreeing-bits measure of a chunked result against the
// recurrent reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <random>
#include <vector>

#include <string>
#include <tuple>

#include "vla/core/stream.hpp"
#include "vla/reference/run.hpp"

namespace hpc {
using mp = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>, boost::multiprecision::et_off>;
constexpr int kBits = 256;

struct Prec {
  Prec() { mp::default_precision(boost::multiprecision::detail::digits2_2_10(kBits)); }
};

inline vla::Stream random_stream(vla::Dims d, unsigned seed, bool with_u) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n;
  vla::Stream s;
  s.dims = d;
  s.q.resize(d.qk_size());
  s.k.resize(d.qk_size());
  s.v.resize(d.v_size());
  for (auto* x : {&s.q, &s.k, &s.v})
    for (auto& e : *x) e = n(g);
  if (with_u) {
    s.u.resize(d.qk_size());
    for (auto& e : s.u) e = n(g);
  }
  return s;
}

// Agreeing bits: -log2 of the largest difference relative to the tensor's scale.
inline double agreeing_bits(const std::vector<mp>& a, const std::vector<mp>& b) {
  mp diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, mp(abs(a[i] - b[i])));
    scale = std::max(scale, mp(abs(b[i])));
  }
  if (diff == 0) return kBits;
  return double(-log2(diff / (scale > 0 ? scale : mp(1))));
}

// Expects at least kBits - 32 agreeing bits in every output of a chunked run `x`
// against the recurrent `rec` (o, S, A, ||S_t||, gate cosines); `label` names
// the case in a failure. Returns the fewest agreeing bits.
inline double expect_agreement(const vla::ref::Result<mp>& x, const vla::ref::Result<mp>& rec, const std::string& label) {
  double fewest = kBits;
  for (auto [what, a, b] : {std::tuple{"o", &x.o, &rec.o}, {"S", &x.S, &rec.S}, {"A", &x.A, &rec.A},
                            {"state_norm", &x.state_norm, &rec.state_norm}, {"gate_cos", &x.gate_cos, &rec.gate_cos}}) {
    const double bits = agreeing_bits(*a, *b);
    fewest = std::min(fewest, bits);
    EXPECT_GE(bits, kBits - 32) << label << " " << what;
  }
  return fewest;
}
}  // namespace hpc
