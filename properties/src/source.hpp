// A stream of uniform quantiles and the transforms every family is built from.
// The seeded API feeds it from mt19937_64, the RapidCheck API from shrinkable
// picks; "simplest" is p = 1/2 in both cases, and every transform below maps
// p = 1/2 to the simplest value of its kind (0, the median, the lower bound).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace vla::props::detail {

class Source {
 public:
  virtual ~Source() = default;
  // A uniform quantile in the open interval (0, 1).
  virtual double p() = 0;

  // Distance from the median, in [0, 1): the simplest value is 0.
  double magnitude() { return std::fabs(2.0 * p() - 1.0); }
  // Integer in [lo, hi], simplest lo.
  int integer(int lo, int hi) {
    const int v = lo + static_cast<int>(magnitude() * (hi - lo + 1));
    return v > hi ? hi : v;
  }
  bool coin(double prob_true) { return magnitude() >= 1.0 - prob_true; }  // simplest false
  // Uniform on [lo, hi] with the midpoint simplest.
  double uniform(double lo, double hi) { return lo + (hi - lo) * p(); }
  double normal();
  double student_t(double nu);
  double cauchy();
  double exponential() { return -std::log1p(-p()); }  // Exp(1), simplest ln 2
};

// Seeded, platform-independent (mt19937_64 is fully specified by the standard).
class SeededSource final : public Source {
 public:
  explicit SeededSource(std::uint64_t seed) : g_(seed) {}
  double p() override {
    // 53 random bits, centred in their cell: never 0 or 1.
    return (static_cast<double>(g_() >> 11) + 0.5) * 0x1p-53;
  }

 private:
  std::mt19937_64 g_;
};

}  // namespace vla::props::detail
