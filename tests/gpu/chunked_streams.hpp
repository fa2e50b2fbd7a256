// Streams for the chunked implementation's tests (CPU twin and CUDA kernel):
// the adversarial family that stresses the chunk's triangular solves.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "streams.hpp"
#include "vla/gpu/chunked_twin.hpp"

namespace vla::ts {

// Near-collinear keys: k_t = s_t base + eps n_t with one fixed random base per
// head, n_t ~ N(0, I) and s_t = +1 (or alternating +-1 when alternate, which
// with the identity feature map makes a^_i . k^_t close to -1 for i < t: the
// unit triangular T = I + strict_upper(Ah^T K) then has entries near +-1 and its
// inverse grows like 2^C). q, v ~ N(0, 1). The Gram matrix U^T A U is near rank one.
inline Stream make_collinear(int B, int T, int H, int D, double eps, bool alternate, std::uint64_t seed) {
  Stream s = make_stream(B, T, H, D, seed);
  std::mt19937_64 rng(seed ^ 0x5eedu);
  std::normal_distribution<double> n01(0.0, 1.0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      std::vector<double> base(D);
      for (auto& x : base) x = n01(rng);
      for (int t = 0; t < T; ++t) {
        const double sign = alternate && (t % 2) ? -1.0 : 1.0;
        const std::size_t o = s.dims.off(b, t, h, D);
        for (int j = 0; j < D; ++j) s.k[o + j] = sign * base[j] + eps * n01(rng);
      }
    }
  return s;
}

// A stream whose values overflow float at step t_star + 1 (the causality probe
// of the chunked form, docs/CHUNKED.md section 6): v_{t*} = +3e38 and
// v_{t*+1} = -3e38 in every entry, the other inputs N(0, 1). With positive
// a^.k^ (elu1 features, unit keys) the residual r_{t*+1} = v_{t*+1} - S_{t*} k^
// is below -FLT_MAX: -Inf in float (and after rounding the inputs to bf16).
inline Stream make_late_overflow(int B, int T, int H, int D, int t_star, std::uint64_t seed) {
  Stream s = make_stream(B, T, H, D, seed);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < D; ++j) {
        s.v[s.dims.off(b, t_star, h, D) + j] = 3e38;
        s.v[s.dims.off(b, t_star + 1, h, D) + j] = -3e38;
      }
  return s;
}

// Causality of a run on the full stream against a run on its first t_star steps:
// the o and ||S_t|| elements of steps t < t_star that differ bit for bit or are
// non-finite in the full run, and the non-finite elements of steps t > t_star
// (where the probe overflows).
struct CausalCheck {
  std::size_t differ = 0, nonfinite_before = 0, nonfinite_after = 0;
  bool bitwise() const { return differ == 0 && nonfinite_before == 0; }
  std::string summary() const {
    return std::to_string(differ) + " elements before the overflow differ from the prefix run, " + std::to_string(nonfinite_before) +
           " non-finite there, " + std::to_string(nonfinite_after) + " non-finite after it";
  }
};
inline CausalCheck causal_check(const Outputs& full, const Outputs& prefix, int t_star) {
  CausalCheck c;
  const Dims& d = full.dims;
  auto same = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  for (int b = 0; b < d.B; ++b)
    for (int t = 0; t < d.T; ++t)
      for (int h = 0; h < d.H; ++h) {
        const std::size_t on = (std::size_t(b) * d.T + t) * d.H + h, pn = (std::size_t(b) * t_star + t) * d.H + h;
        for (int i = 0; i <= d.Dv; ++i) {  // i = Dv: ||S_t||
          const double x = i < d.Dv ? full.o[d.off(b, t, h, d.Dv) + i] : full.state_norm[on];
          if (t > t_star) {
            c.nonfinite_after += !std::isfinite(x);
          } else if (t < t_star) {
            c.nonfinite_before += !std::isfinite(x);
            const double y = i < d.Dv ? prefix.o[prefix.dims.off(b, t, h, d.Dv) + i] : prefix.state_norm[pn];
            c.differ += !same(x, y);
          }
        }
      }
  return c;
}

// x and y have the same elements bit for bit (NaN payloads included).
inline bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}
// Every output element of a and b has the same bits.
inline bool same_bits(const Outputs& a, const Outputs& b) {
  return same_bits(a.o, b.o) && same_bits(a.S, b.S) && same_bits(a.A, b.A) && same_bits(a.state_norm, b.state_norm);
}

// The steps t < t_star of a run on the full stream as outputs of the prefix
// stream: o and ||S_t|| from `full`, the final S and A from `prefix` (the run on
// the first t_star steps), so that the error model judges the earlier steps'
// outputs of the full run (accuracy::check with the prefix stream's reference
// and baselines).
inline Outputs before_overflow(const Outputs& full, const Outputs& prefix, int t_star) {
  Outputs r = prefix;
  const Dims& d = full.dims;
  for (int b = 0; b < d.B; ++b)
    for (int t = 0; t < t_star; ++t)
      for (int h = 0; h < d.H; ++h) {
        for (int i = 0; i < d.Dv; ++i) r.o[prefix.dims.off(b, t, h, d.Dv) + i] = full.o[d.off(b, t, h, d.Dv) + i];
        r.state_norm[(std::size_t(b) * t_star + t) * d.H + h] = full.state_norm[(std::size_t(b) * d.T + t) * d.H + h];
      }
  return r;
}

}  // namespace vla::ts
