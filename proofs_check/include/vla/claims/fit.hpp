// Growth-rate fits: ||S_T|| ~ c T^p by least squares on (log T, log ||S_T||).
#pragma once

#include <string>
#include <vector>

namespace vla::claims {

struct PowerFit {
  double exponent = 0;   // p
  double stderr_p = 0;   // standard error of p from the regression residuals
  double log_c = 0;      // intercept, natural log
  int points = 0;
};

// x > 0, y > 0, at least 3 points with distinct x (std::invalid_argument otherwise).
PowerFit fit_power(const std::vector<double>& x, const std::vector<double>& y);

// Growth classes at the rates the claims name: bounded (p = 0), like sqrt(T)
// (a random walk, p = 1/2), linear (p = 1), faster (p >= 3/2). The boundaries
// are the midpoints 1/4, 3/4, 5/4 between those hypotheses, and a fit is only
// classified when its 3-sigma interval lies inside one class; otherwise the
// data cannot tell the rates apart and the class is `ambiguous`.
enum class Growth { bounded, sqrt_like, linear, superlinear, ambiguous };
Growth classify_growth(const PowerFit& f);
std::string to_string(Growth);

}  // namespace vla::claims
