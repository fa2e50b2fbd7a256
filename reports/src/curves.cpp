#include "vla/report/curves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vla/core/bf16.hpp"

namespace vla::report {

std::vector<double> step_rel_error(const Outputs& cand, const Outputs& ref, int b, int h) {
  const Dims& d = ref.dims;
  std::vector<double> e(d.T);
  for (int t = 0; t < d.T; ++t) {
    const std::size_t o = d.off(b, t, h, d.Dv);
    double err = 0, m = 0;
    bool finite = true;
    for (int i = 0; i < d.Dv; ++i) {
      const double c = cand.o[o + i], r = ref.o[o + i];
      finite = finite && std::isfinite(c);
      err = std::max(err, std::fabs(c - r));
      m = std::max(m, std::fabs(r));
    }
    e[t] = !finite ? std::numeric_limits<double>::infinity() : m > 0 ? err / m : err;
  }
  return e;
}

namespace {

// Monotone integer image of a float's bit pattern: consecutive floats differ by one.
std::int64_t ordinal32(float x) {
  std::int32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i < 0 ? std::int64_t(std::numeric_limits<std::int32_t>::min()) - i : i;
}

std::int64_t ordinal16(float x) {
  const std::int32_t i = static_cast<std::int16_t>(core::bf16_bits_rne(x));
  return i < 0 ? std::int64_t(std::numeric_limits<std::int16_t>::min()) - i : i;
}

}  // namespace

double ulps_between(double x, double y, Format fmt) {
  // y is rounded to float then (for bf16) to bf16: the double rounding can only
  // differ from a direct rounding on exact ties of the second step, off by one ulp.
  const float xf = static_cast<float>(x), yf = static_cast<float>(y);
  if (fmt == Format::f32) return static_cast<double>(std::llabs(ordinal32(xf) - ordinal32(yf)));
  return static_cast<double>(std::llabs(ordinal16(xf) - ordinal16(yf)));
}

std::vector<double> step_bits_error(const Outputs& cand, const Outputs& ref, int b, int h, Format fmt) {
  const Dims& d = ref.dims;
  const double full = fmt == Format::f32 ? 32.0 : 16.0;
  std::vector<double> e(d.T);
  for (int t = 0; t < d.T; ++t) {
    const std::size_t o = d.off(b, t, h, d.Dv);
    double sum = 0;
    for (int i = 0; i < d.Dv; ++i) {
      const double c = cand.o[o + i];
      sum += std::isfinite(c) ? std::min(full, std::log2(1.0 + ulps_between(c, ref.o[o + i], fmt))) : full;
    }
    e[t] = sum / d.Dv;
  }
  return e;
}

double median_of(std::vector<double> v) { return quantile_of(std::move(v), 0.5); }

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end(), [](double a, double b) {
    if (std::isnan(a)) return false;  // NaN last
    if (std::isnan(b)) return true;
    return a < b;
  });
  const double pos = q * (v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

Spread spread(const std::vector<std::vector<double>>& curves) {
  Spread s;
  if (curves.empty()) return s;
  const std::size_t n = curves.front().size();
  s.median.resize(n);
  s.worst.resize(n);
  std::vector<double> col(curves.size());
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t c = 0; c < curves.size(); ++c) col[c] = curves[c][t];
    double w = -std::numeric_limits<double>::infinity();
    for (double x : col) w = std::isnan(x) || std::isnan(w) ? std::numeric_limits<double>::quiet_NaN() : std::max(w, x);
    s.worst[t] = w;
    s.median[t] = median_of(col);
  }
  return s;
}

long first_exit(const std::vector<double>& err, const std::vector<double>& env) {
  const std::size_t n = std::min(err.size(), env.size());
  for (std::size_t t = 0; t < n; ++t) {
    if (std::isnan(env[t])) continue;
    if (std::isnan(err[t]) || err[t] > env[t]) return static_cast<long>(t);
  }
  return -1;
}

XY log_downsample(const std::vector<double>& v, int per_decade, Reduce kind) {
  XY out;
  const std::size_t n = v.size();
  std::size_t start = 0;  // first index of the current bin
  while (start < n) {
    // Bin ends at the largest step <= 10^((k+1)/per_decade) for the bin k holding start+1.
    const double k = std::floor(std::log10(double(start + 1)) * per_decade + 1e-9);
    std::size_t end = static_cast<std::size_t>(std::floor(std::pow(10.0, (k + 1) / per_decade) + 1e-9));
    end = std::clamp<std::size_t>(end, start + 1, n);  // exclusive index == last step
    std::vector<double> bin(v.begin() + start, v.begin() + end);
    double y = bin.back();
    if (kind == Reduce::max) {
      y = -std::numeric_limits<double>::infinity();
      for (double e : bin) y = std::isnan(e) ? e : std::max(y, e);
    } else if (kind == Reduce::median) {
      y = median_of(bin);
    }
    out.x.push_back(double(end));
    out.y.push_back(y);
    start = end;
  }
  return out;
}

std::vector<int> doubling_steps(int T) {
  std::vector<int> s;
  for (long t = 1; t < T; t *= 2) s.push_back(static_cast<int>(t));
  if (T >= 1) s.push_back(T);
  return s;
}

}  // namespace vla::report
