// Small input streams for the CLI tests.
#pragma once

#include <random>

#include "vla/core/stream.hpp"

namespace vla::cli::test {

// Entries uniform in [-1, 1]: a generic stream with no special structure.
inline Stream random_stream(Dims d, bool with_u, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Stream s;
  s.dims = d;
  auto fill = [&](std::vector<double>& x, std::size_t n) {
    x.resize(n);
    for (auto& e : x) e = U(rng);
  };
  fill(s.q, d.qk_size());
  fill(s.k, d.qk_size());
  fill(s.v, d.v_size());
  if (with_u) fill(s.u, d.qk_size());
  return s;
}

}  // namespace vla::cli::test
