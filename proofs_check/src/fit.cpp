#include "vla/claims/fit.hpp"

#include <cmath>
#include <stdexcept>

namespace vla::claims {

PowerFit fit_power(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3) throw std::invalid_argument("fit_power: need at least 3 (x, y) pairs");
  const double n = double(x.size());
  double sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) throw std::invalid_argument("fit_power: x and y must be > 0");
    sx += std::log(x[i]);
    sy += std::log(y[i]);
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = std::log(x[i]) - mx;
    sxx += dx * dx;
    sxy += dx * (std::log(y[i]) - my);
  }
  if (!(sxx > 0)) throw std::invalid_argument("fit_power: the x values must not all be equal");
  PowerFit f;
  f.exponent = sxy / sxx;
  f.log_c = my - f.exponent * mx;
  double rss = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = std::log(y[i]) - (f.log_c + f.exponent * std::log(x[i]));
    rss += e * e;
  }
  f.stderr_p = std::sqrt(rss / (n - 2) / sxx);
  f.points = int(x.size());
  return f;
}

Growth classify_growth(const PowerFit& f) {
  const double lo = f.exponent - 3 * f.stderr_p, hi = f.exponent + 3 * f.stderr_p;
  if (hi < 0.25) return Growth::bounded;
  if (lo > 0.25 && hi < 0.75) return Growth::sqrt_like;
  if (lo > 0.75 && hi < 1.25) return Growth::linear;
  if (lo > 1.25) return Growth::superlinear;
  return Growth::ambiguous;
}

std::string to_string(Growth g) {
  switch (g) {
    case Growth::bounded: return "bounded";
    case Growth::sqrt_like: return "grows like sqrt(T)";
    case Growth::linear: return "grows linearly";
    case Growth::superlinear: return "grows faster than T";
    case Growth::ambiguous: return "ambiguous";
  }
  return "?";
}

}  // namespace vla::claims
