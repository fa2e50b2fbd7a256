#include "vla/core/stream.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "vla/core/formulas.hpp"
#include "vla/core/spec.hpp"

namespace vla {

namespace {
std::string where(const Dims& d, std::size_t flat, int D) {
  const std::size_t dd = flat % D, rest = flat / D;
  const std::size_t h = rest % d.H, bt = rest / d.H;
  const std::size_t t = bt % d.T, b = bt / d.T;
  return "[b=" + std::to_string(b) + ", t=" + std::to_string(t) + ", h=" + std::to_string(h) + ", d=" + std::to_string(dd) + "]";
}

void check_finite(const std::vector<double>& x, const char* name, const Dims& d, int D) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      throw std::invalid_argument(std::string("tensor '") + name + "' has a non-finite value (" + std::to_string(x[i]) + ") at " + where(d, i, D));
    }
  }
}
}  // namespace

void validate_stream(const Stream& s, const Options& opt) {
  const Dims& d = s.dims;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  if (d.B < 1 || d.T < 1 || d.H < 1 || d.Dk < 1 || d.Dv < 1) {
    throw std::invalid_argument("every dimension must be >= 1 (B=" + std::to_string(d.B) + " T=" + std::to_string(d.T) +
                                " H=" + std::to_string(d.H) + " Dk=" + std::to_string(d.Dk) + " Dv=" + std::to_string(d.Dv) + ")");
  }
  auto size_is = [](const std::vector<double>& x, std::size_t n, const char* name) {
    if (x.size() != n) throw std::invalid_argument(std::string("tensor '") + name + "' has " + std::to_string(x.size()) + " elements, expected " + std::to_string(n));
  };
  size_is(s.q, d.qk_size(), "q");
  size_is(s.k, d.qk_size(), "k");
  size_is(s.v, d.v_size(), "v");
  if (s.has_u()) size_is(s.u, d.qk_size(), "u");
  check_finite(s.q, "q", d, d.Dk);
  check_finite(s.k, "k", d, d.Dk);
  check_finite(s.v, "v", d, d.Dv);
  if (s.has_u()) check_finite(s.u, "u", d, d.Dk);
  // A zero feature vector has no direction: k^ = phi(k)/||phi(k)|| is undefined.
  for (std::size_t row = 0; row < d.qk_size() / d.Dk; ++row) {
    // "Zero" means every feature is zero; a sum of squares would underflow to 0
    // for tiny but valid keys (|phi| < 2^-537) and wrongly reject them.
    bool any_nonzero = false;
    for (int j = 0; j < d.Dk && !any_nonzero; ++j) any_nonzero = core::phi(s.k[row * d.Dk + j], elu1) != 0.0;
    if (!any_nonzero) throw std::invalid_argument("tensor 'k' has a zero feature vector phi(k) at " + where(d, row * d.Dk, d.Dk) + " (d = all)");
    // A zero u is a valid (no-op) penalty update, unless it must be unit-normalised.
    if (s.has_u() && opt.u_unit_scaled) {
      bool u_nonzero = false;
      for (int j = 0; j < d.Dk && !u_nonzero; ++j) u_nonzero = s.u[row * d.Dk + j] != 0.0;
      if (!u_nonzero) throw std::invalid_argument("tensor 'u' is zero at " + where(d, row * d.Dk, d.Dk) + " (d = all) but the u_unit_scaled stabiliser must normalise it");
    }
  }
}

void check_ratio_readout_defined(const Stream& s, const Options& opt) {
  const Dims& d = s.dims;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  if (opt.readout != Readout::ratio || opt.den_floor > 0.0 || opt.model == Model::softmax) return;
  {
    std::vector<double> n(d.Dk);
    for (int b = 0; b < d.B; ++b) {
      for (int h = 0; h < d.H; ++h) {
        std::fill(n.begin(), n.end(), 0.0);
        for (int t = 0; t < d.T; ++t) {
          const std::size_t o = d.off(b, t, h, d.Dk);
          double den = 0;
          for (int j = 0; j < d.Dk; ++j) {
            n[j] += core::phi(s.k[o + j], elu1);
            den += n[j] * core::phi(s.q[o + j], elu1);
          }
          if (den == 0.0) {
            throw std::invalid_argument("the ratio readout is undefined at " + where(d, o, d.Dk) +
                                        " (d = all): n_t . phi(q_t) = 0 (use --readout raw or --den-floor X)");
          }
        }
      }
    }
  }
}

NonFiniteOutputs find_non_finite(const Outputs& out) {
  const Dims& d = out.dims;
  NonFiniteOutputs r;
  // name(i): the tensor's index of its flat element i.
  auto scan = [&](const std::vector<double>& x, const char* tensor, auto name) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isfinite(x[i])) continue;
      if (r.count++ == 0) r.first = std::string(tensor) + name(i) + " = " + std::to_string(x[i]);
    }
  };
  // [B, H, R, C] (S: R = Dv, C = Dk; A: R = C = Dk).
  auto matrix = [&](int R, int C) {
    return [=](std::size_t i) {
      const std::size_t c = i % C, r = i / C % R, h = i / C / R % d.H, b = i / C / R / d.H;
      return "[b=" + std::to_string(b) + ", h=" + std::to_string(h) + ", i=" + std::to_string(r) + ", j=" + std::to_string(c) + "]";
    };
  };
  scan(out.o, "o", [&](std::size_t i) { return where(d, i, d.Dv); });
  scan(out.S, "S", matrix(d.Dv, d.Dk));
  scan(out.A, "A", matrix(d.Dk, d.Dk));
  scan(out.state_norm, "state_norm", [&](std::size_t i) {
    const std::size_t h = i % d.H, t = i / d.H % d.T, b = i / d.H / d.T;
    return "[b=" + std::to_string(b) + ", t=" + std::to_string(t) + ", h=" + std::to_string(h) + "]";
  });
  return r;
}

}  // namespace vla
