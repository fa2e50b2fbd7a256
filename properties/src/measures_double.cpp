// The measures at double (measures_impl.hpp), and the precision-free helpers.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "measures_impl.hpp"

namespace vla::props {

VLA_PROPS_MEASURES_INSTANTIATE(double)

double gamma_n(int n, double u) { return n * u / (1.0 - n * u); }
double unit_roundoff_bits(long bits) { return std::ldexp(1.0, -static_cast<int>(bits)); }

double sm_local_error(int dk, double lambda0, double w2, double u) {
  const double g = gamma_n(dk + 1, u);
  const double a = std::sqrt(static_cast<double>(dk)) / lambda0;
  return a * (u + 5.0 * g * a * w2 * (1.0 + a * w2));
}

double sm_residual_bound(int dk, double lambda0, const std::vector<double>& w2, const std::vector<double>& mnorm,
                         double kappa_t, double u) {
  double sum = 0;
  for (std::size_t s = 0; s < w2.size(); ++s) sum += mnorm[s] * sm_local_error(dk, lambda0, w2[s], u);
  return 2.0 * std::sqrt(kappa_t) * sum;
}

PlateauTest state_norm_plateau_test(const std::vector<double>& norms) {
  if (norms.size() < 2) throw std::invalid_argument("state_norm_plateau_test: needs T >= 2");
  PlateauTest p;
  p.T = static_cast<int>(norms.size());
  const std::size_t half = norms.size() / 2;
  p.max_half = *std::max_element(norms.begin(), norms.begin() + half);
  p.max_full = std::max(p.max_half, *std::max_element(norms.begin() + half, norms.end()));
  p.beta = p.max_half > 0 ? std::log2(p.max_full / p.max_half) * std::log(2.0) / std::log(double(p.T) / half)
                          : (p.max_full > 0 ? INFINITY : 0.0);
  p.plateau = p.beta <= PlateauTest::kBetaMax;
  return p;
}

PlateauTest state_norm_plateau_test(const std::vector<double>& norms, const std::vector<double>& vnorms) {
  if (vnorms.size() != norms.size()) throw std::invalid_argument("state_norm_plateau_test: one value norm per step");
  std::vector<double> r(norms.size());
  double vmax = 0;
  for (std::size_t t = 0; t < norms.size(); ++t) {
    vmax = std::max(vmax, vnorms[t]);
    r[t] = vmax > 0 ? norms[t] / vmax : norms[t];
  }
  return state_norm_plateau_test(r);
}

std::vector<double> growth_exponents(const std::vector<double>& norms) {
  std::vector<double> out;
  double m = 0, m_prev = 0;
  std::size_t next = 1;
  for (std::size_t t = 0; t < norms.size(); ++t) {
    m = std::max(m, norms[t]);
    if (t + 1 == next) {
      if (next > 1) out.push_back(m_prev > 0 ? std::log2(m / m_prev) : INFINITY);
      m_prev = m;
      next *= 2;
    }
  }
  return out;
}

}  // namespace vla::props

namespace vla::props {

double bits_lost(double rel) {
  if (!(rel > 0)) return 0.0;  // exact (a NaN quotient is handled by the caller)
  return std::clamp(53.0 + std::log2(rel), 0.0, 53.0);
}
double BitsLost::state() const { return std::max({S, A, state_norm}); }
double BitsLost::max() const { return std::max(o, state()); }

}  // namespace vla::props
