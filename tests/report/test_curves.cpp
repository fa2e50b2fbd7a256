// Curve helpers, including envelope exits on synthetic curves with a planted drift.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "vla/report/curves.hpp"
#include "vla/report/plot.hpp"

using namespace vla::report;

// An error curve that grows like sqrt(t) u inside an envelope of 4 sqrt(t) u,
// then drifts off (doubling per step) from a planted step on.
static std::vector<double> planted(int T, int from, std::vector<double>& env) {
  const double u = std::ldexp(1.0, -24);
  std::vector<double> e(T);
  env.resize(T);
  for (int t = 0; t < T; ++t) {
    env[t] = 4 * std::sqrt(t + 1.0) * u;
    e[t] = std::sqrt(t + 1.0) * u;
    if (t >= from) e[t] *= std::pow(2.0, t - from + 1);
  }
  return e;
}

TEST(FirstExit, FindsThePlantedStep) {
  std::vector<double> env;
  // Doubling from step `from`: the error is 2, 4, 8 times the honest one; it
  // passes 4x at the third drifting step (factor 8 > 4).
  const auto e = planted(1000, 700, env);
  EXPECT_EQ(first_exit(e, env), 702);
  std::vector<double> env2;
  const auto honest = planted(1000, 1000, env2);
  EXPECT_EQ(first_exit(honest, env2), -1);
}

TEST(FirstExit, NanErrorIsOutsideNanEnvelopeIsSkipped) {
  EXPECT_EQ(first_exit({1, NAN, 1}, {2, 2, 2}), 1);
  EXPECT_EQ(first_exit({5, 1}, {NAN, 2}), -1);
}

TEST(LogDownsample, KeepsTheWorstOfEachBinAndEndsAtT) {
  std::vector<double> v(10000, 1.0);
  v[5000] = 99;
  const XY d = log_downsample(v, 10, Reduce::max);
  EXPECT_LT(d.x.size(), 60u);
  EXPECT_EQ(d.x.back(), 10000);
  double m = 0;
  for (double y : d.y) m = std::max(m, y);
  EXPECT_EQ(m, 99);
  for (std::size_t i = 1; i < d.x.size(); ++i) EXPECT_GT(d.x[i], d.x[i - 1]);
}

TEST(Ulps, CountsRepresentableValues) {
  const float one = 1.0f;
  EXPECT_EQ(ulps_between(std::nextafter(one, 2.0f), 1.0, Format::f32), 1);
  EXPECT_EQ(ulps_between(1.0 + 3 * std::ldexp(1.0, -7), 1.0, Format::bf16), 3);
  EXPECT_EQ(ulps_between(-0.0, 0.0, Format::f32), 0);
  EXPECT_EQ(ulps_between(-std::ldexp(1.0, -149), std::ldexp(1.0, -149), Format::f32), 2);
}

TEST(Spread, MedianAndWorstStepByStep) {
  const Spread s = spread({{1, 5}, {2, 1}, {3, 3}});
  EXPECT_EQ(s.median, (std::vector<double>{2, 3}));
  EXPECT_EQ(s.worst, (std::vector<double>{3, 5}));
}

TEST(RenderPlot, RefusesTwoCurvesTitledAlike) {
  // Checked before any file is written: the folder need not exist.
  Plot p;
  p.id = "twins";
  Series a{"fused fp32 median", Series::Style::line, 0}, b{"fused fp32 median", Series::Style::dashed, 1};
  a.x = b.x = {1.0, 2.0};
  a.y = b.y = {1e-7, 2e-7};
  p.series = {a, b};
  try {
    render_plot(p, "/nonexistent-vla-dir");
    FAIL() << "a plot with two series titled alike was rendered";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("two series are titled 'fused fp32 median'"), std::string::npos) << e.what();
  }
  p.series[1].title = "";  // an untitled curve has no legend entry to confuse: it fails only at writing the file now
  EXPECT_THROW(render_plot(p, "/nonexistent-vla-dir"), std::runtime_error);
}
