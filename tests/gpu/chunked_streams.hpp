// Streams for the chunked implementation's tests (CPU twin and CUDA kernel):
// the adversarial family that stresses the chunk's triangular solves.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "streams.hpp"

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

}  // namespace vla::ts
