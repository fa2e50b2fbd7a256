// Deterministic random streams and error measures shared by the reference tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "vla/reference/models.hpp"

namespace vla::ref::test {

// Entries uniform in [-1, 1) from a fixed seed (uniform_real_distribution is
// computed the same way by libstdc++ everywhere).
inline Stream random_stream(int B, int T, int H, int Dk, int Dv, std::uint64_t seed, bool with_u = false) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Stream s;
  s.dims = {B, T, H, Dk, Dv};
  auto fill = [&](std::vector<double>& x, std::size_t n) {
    x.resize(n);
    for (auto& e : x) e = U(gen);
  };
  fill(s.q, s.dims.qk_size());
  fill(s.k, s.dims.qk_size());
  fill(s.v, s.dims.v_size());
  if (with_u) fill(s.u, s.dims.qk_size());
  return s;
}

// max over every element of |x - ref| / (largest |ref| of the element's group),
// with the groups of certify.hpp: rows of o, matrices of S and A, single
// state_norm entries. Computed at `bits` so the measure adds no error of its own.
template <class Scalar>
double normwise_error(const Result<Scalar>& x, const Result<Mpfr>& ref, long bits = 2200) {
  MpfrPrecision scope(bits);
  const Dims& d = ref.dims;
  double worst = 0.0;
  auto tensor = [&](const std::vector<Scalar>& a, const std::vector<Mpfr>& r, std::size_t group) {
    for (std::size_t g = 0; g < r.size(); g += group) {
      Mpfr scale(0);
      for (std::size_t i = g; i < g + group; ++i)
        if (abs(r[i]) > scale) scale = abs(r[i]);
      for (std::size_t i = g; i < g + group; ++i) {
        const Mpfr diff = abs(to_mpfr(a[i], bits) - r[i]);
        const double e = mpfr_zero_p(diff.get()) ? 0.0 : (mpfr_zero_p(scale.get()) ? 1.0 : double(diff / scale));
        if (e > worst) worst = e;
      }
    }
  };
  tensor(x.o, ref.o, std::size_t(d.Dv));
  tensor(x.S, ref.S, std::size_t(d.Dv) * d.Dk);
  if (!ref.A.empty()) tensor(x.A, ref.A, std::size_t(d.Dk) * d.Dk);
  tensor(x.state_norm, ref.state_norm, 1);
  return worst;
}

}  // namespace vla::ref::test
