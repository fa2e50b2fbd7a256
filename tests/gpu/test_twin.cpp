// The CPU twins of the fused kernels against the double reference, under the
// error model; the twin's reduction order; poisoning. These run everywhere (CI
// has no GPU) and so check the kernels' arithmetic on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "streams.hpp"
#include "vla/core/recurrence.hpp"
#include "vla/gpu/error_model.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/gpu/plain.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/twin_policy.hpp"

using namespace vla;
using vla::impl::Kind;

namespace {

const Kind kKinds[] = {Kind::fp32, Kind::bf16, Kind::bf16_state};

accuracy::Verdict twin_verdict(const Stream& s0, const Options& opt, Kind kind) {
  const Stream s = ts::rounded_for(s0, kind);
  const Outputs cand = impl::run(s, opt, kind, impl::Device::cpu);
  const ts::Baselines base = ts::baselines(s, opt, kind);
  const Outputs ref = ts::reference_double(s, opt);
  return accuracy::check(cand, ref, base.ptrs(), accuracy::precision_of(kind));
}

struct Shape {
  int D, T, B, H;
};

void sweep(const std::vector<Shape>& shapes, Preset preset, std::uint64_t seed) {
  for (const Shape& sh : shapes) {
    const Stream s = ts::make_stream(sh.B, sh.T, sh.H, sh.D, seed + sh.D * 7919 + sh.T);
    for (Kind kind : kKinds) {
      const auto v = twin_verdict(s, preset_options(preset), kind);
      EXPECT_TRUE(v.pass) << impl::to_string(kind) << " D=" << sh.D << " T=" << sh.T << " B=" << sh.B << " H=" << sh.H
                          << " preset " << to_string(preset) << ": " << v.summary();
    }
  }
}

}  // namespace

// T in {1, 2, 63, 64, 65, 1000, 4096} and every D; B*H = 15 is odd (no block
// multiple). Long T only at small D so that CI stays quick on 2 cores.
TEST(TwinVsReference, PaperPresetShapes) {
  sweep({{16, 1, 3, 5}, {16, 2, 3, 5}, {16, 63, 3, 5}, {16, 64, 3, 5}, {16, 65, 3, 5}, {16, 1000, 3, 5}, {16, 4096, 1, 3},
         {32, 1, 3, 5}, {32, 2, 3, 5}, {32, 65, 3, 5}, {32, 1000, 1, 3},
         {64, 1, 3, 5}, {64, 63, 3, 5}, {64, 64, 1, 3}, {64, 1000, 1, 1},
         {128, 1, 1, 3}, {128, 2, 1, 3}, {128, 65, 1, 3}},
        Preset::paper, 11);
}

TEST(TwinVsReference, VlaV3PresetShapes) {
  // T = 65 passes the ridge at t = 20, 40, 60; T = 1000 and 4096 many times.
  sweep({{16, 1, 3, 5}, {16, 65, 3, 5}, {16, 4096, 1, 3}, {32, 65, 3, 5}, {32, 1000, 1, 3}, {64, 65, 1, 3}, {128, 65, 1, 2}},
        Preset::vla_v3, 23);
}

// Every option on its own, with and without a u input, on short streams.
TEST(TwinVsReference, EachOption) {
  struct C {
    std::string name;
    Options opt;
    int T;
  };
  std::vector<C> cases;
  auto add = [&](std::string name, int T, auto edit) {
    Options o;
    edit(o);
    cases.push_back({std::move(name), o, T});
  };
  add("identity map", 40, [](Options& o) { o.feature_map = FeatureMap::identity; });
  add("raw readout", 40, [](Options& o) { o.readout = Readout::raw; });
  add("normalize key", 40, [](Options& o) { o.normalize = Normalize::key; });
  add("normalize gate", 40, [](Options& o) { o.normalize = Normalize::gate; });
  // Without normalisation the state grows geometrically: 12 steps stay far from
  // float's range (NormalizeNoneOverflowsFloatNorm shows what lies beyond).
  add("normalize none", 12, [](Options& o) { o.normalize = Normalize::none; });
  add("lambda0 0.25", 40, [](Options& o) { o.lambda0 = 0.25; });
  add("u unit scaled", 40, [](Options& o) { o.u_unit_scaled = true; });
  add("delta floor", 40, [](Options& o) { o.delta_floor = 1.5; });  // binds: delta = 1 + u.z <= 1 + 1/lambda0 = 2
  add("ridge", 40, [](Options& o) { o.ridge_every = 3; o.ridge = 0.05; });
  add("den floor", 40, [](Options& o) { o.den_floor = 1e3; });  // binds for short streams
  for (const auto& c : cases)
    for (bool with_u : {false, true}) {
      const Stream s = ts::make_stream(2, c.T, 3, 16, 101, ts::Family::gaussian, with_u);
      for (Kind kind : kKinds) {
        const auto v = twin_verdict(s, c.opt, kind);
        EXPECT_TRUE(v.pass) << c.name << (with_u ? " with u" : "") << " " << impl::to_string(kind) << ": " << v.summary();
      }
    }
}

// A finding about float implementations, not a bug of the twin: without
// normalisation ||S_t||_F passes sqrt(FLT_MAX) ~ 1.8e19 within ~20 steps here,
// so the sum of squares overflows and the float state norm is Inf while every
// entry of S is still finite. The error model's baselines overflow there too
// (they keep float's range): from that step on the head is beyond what the
// policy computes, and the model says so (Verdict::beyond) instead of judging.
TEST(TwinVsReference, NormalizeNoneOverflowsFloatNorm) {
  Options opt;
  opt.normalize = Normalize::none;
  const int B = 2, T = 40, H = 3;
  const Stream s = ts::rounded_for(ts::make_stream(B, T, H, 16, 101, ts::Family::gaussian, true), Kind::fp32);
  const Outputs tw = impl::run(s, opt, Kind::fp32, impl::Device::cpu);
  const Outputs ref = ts::reference_double(s, opt);
  int crossing = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      int first_over = -1, first_inf = -1;
      for (int t = 0; t < T; ++t) {
        const std::size_t i = (std::size_t(b) * T + t) * H + h;
        if (first_over < 0 && ref.state_norm[i] > std::sqrt(3.4028234663852886e38)) first_over = t;
        if (first_inf < 0 && std::isinf(tw.state_norm[i])) first_inf = t;
      }
      if (first_over < 0) continue;
      ++crossing;
      EXPECT_NEAR(first_inf, first_over, 1) << "b=" << b << " h=" << h;
    }
  ASSERT_GT(crossing, 0) << "no head grows past float's range any more; pick another stream";
  const auto v = accuracy::check(tw, ref, ts::baselines(s, opt, Kind::fp32).ptrs(), accuracy::precision_of(Kind::fp32));
  EXPECT_TRUE(v.pass) << v.summary();
  EXPECT_GT(v.beyond_nonfinite, 0u) << v.summary();
  EXPECT_GE(v.first_beyond_step, 0);
  // A non-finite value before the breakdown still fails.
  Outputs early = tw;
  early.state_norm[0] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(accuracy::check(early, ref, ts::baselines(s, opt, Kind::fp32).ptrs(), accuracy::precision_of(Kind::fp32)).pass);
}

// Heavy-tailed entries (Student-t, 3 degrees of freedom) at D = 32.
TEST(TwinVsReference, HeavyTailedInputs) {
  const Stream s = ts::make_stream(2, 300, 3, 32, 77, ts::Family::heavy, true);
  for (Kind kind : kKinds) {
    const auto v = twin_verdict(s, Options{}, kind);
    EXPECT_TRUE(v.pass) << impl::to_string(kind) << ": " << v.summary();
  }
}

// The twin's dot order, by hand, at D = 16 (G = 4 lanes of CW = 4 columns).
// a = [1e8 1 1 1 | -1e8 1 1 1 | 2 0 0 0 | 0 0 0 0], b = ones. Per lane, FMAs
// from zero: 1e8 + 1 + 1 + 1 = 1e8 (the float spacing at 1e8 is 8), likewise
// -1e8, then 2 and 0. Tree: (1e8 + 2) + (-1e8 + 0) = 1e8 - 1e8 = 0.
// Left to right instead: 1e8 + 3 ones = 1e8, -1e8 -> 0, + 3 + 2 = 5.
TEST(TwinOrder, DotIsLaneSegmentsThenShuffleTree) {
  using Tw = gpu::TwinPolicy<gpu::FusedTraits<16>, gpu::PrecFp32>;
  using Pl = gpu::PlainPolicy<gpu::PrecFp32>;
  static_assert(gpu::FusedTraits<16>::G == 4 && gpu::FusedTraits<16>::CW == 4, "the derivation assumes this layout");
  const float a[16] = {1e8f, 1, 1, 1, -1e8f, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0};
  float ones[16];
  for (float& x : ones) x = 1.0f;
  EXPECT_EQ(Tw::dot(a, ones, 16), 0.0f);
  EXPECT_EQ(Pl::dot(a, ones, 16), 5.0f);
}

// ||S||_F^2 over D = 16 rows: G = 4 lanes, R = 2 rows per thread, so after the
// reduce-scatter one warp holds all 16 rows, one per 2 lanes, and sums them by
// the shuffle tree over lanes 16, 8, 4, 2 apart: the tree over the 16 rows.
// x = [1e8 1 -1e8 1 0 0 0 0 4 0 ...]. m = 8: p0 = 1e8 + 4 = 1e8 (a tie, to
// even), p1 = 1, p2 = -1e8, p3 = 1; m = 4: unchanged; m = 2: p0 = 0, p1 = 2;
// m = 1: 2. Left to right: 1e8 + 1 = 1e8, - 1e8 = 0, + 1 + 4 = 5.
TEST(TwinOrder, FrobeniusSumIsTreeOverWarpRowsThenWarps) {
  using Tw = gpu::TwinPolicy<gpu::FusedTraits<16>, gpu::PrecFp32>;
  static_assert(gpu::FusedTraits<16>::R == 2 && gpu::FusedTraits<16>::G == 4 && gpu::FusedTraits<16>::NW == 1, "layout");
  float x[16] = {1e8f, 1, -1e8f, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Tw::sum(x, 16), 2.0f);
  EXPECT_EQ(core::policy_sum<gpu::PlainPolicy<gpu::PrecFp32>>(x, 16), 5.0f);
}

// The gate taken from z (core::gate_from_z_exact): with u = k^ the twin skips
// the product A_t k^, which changes its rounding only; with a u input, or a
// ridge every step, it must take the product, bit for bit as a policy without
// the hook does.
namespace {
template <int D>
struct TwinWithoutShortcut : gpu::TwinPolicy<gpu::FusedTraits<D>, gpu::PrecFp32> {
  static constexpr bool gate_from_z = false;
};
template <class P>
std::vector<float> final_state(const Options& opt, bool with_u, int T, std::uint64_t seed) {
  constexpr int D = 16;
  const Stream s = ts::rounded_for(ts::make_stream(1, T, 1, D, seed, ts::Family::gaussian, with_u), Kind::fp32);
  core::HeadState<float> st;
  core::Workspace<float> ws;
  ws.resize(D, D);
  st.reset(D, D, opt.lambda0);
  core::StepInfo<float> info;
  std::vector<float> q(D), k(D), v(D), u(D), o(D);
  for (int t = 0; t < T; ++t) {
    for (int j = 0; j < D; ++j) {
      const std::size_t at = s.dims.off(0, t, 0, D) + j;
      q[j] = float(s.q[at]), k[j] = float(s.k[at]), v[j] = float(s.v[at]);
      if (with_u) u[j] = float(s.u[at]);
    }
    core::vla_step<P>(st, ws, q.data(), k.data(), v.data(), with_u ? u.data() : nullptr, opt, o.data(), info);
  }
  std::vector<float> out = st.S;
  out.insert(out.end(), st.A.begin(), st.A.end());
  return out;
}
}  // namespace

TEST(TwinOrder, GateFromZOnlyWhereExact) {
  using Tw = gpu::TwinPolicy<gpu::FusedTraits<16>, gpu::PrecFp32>;
  using No = TwinWithoutShortcut<16>;
  const Options paper;
  const auto a = final_state<Tw>(paper, false, 60, 41), b = final_state<No>(paper, false, 60, 41);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  EXPECT_GT(diff, 0.0) << "the shortcut was not taken";
  // Rounding only: per step each entry of S and A comes from D-term dot products (gamma_D ~ D u, u = 2^-24) and the
  // two orders' differences add up at most linearly over the T = 60 steps of this well-conditioned stream (paper
  // preset, lambda0 = 1): |diff| <= 2 T D u max|entry| (1.1e-4 of the scale). A wrong shortcut (a missing factor,
  // the wrong z) changes entries by O(1) of their size.
  EXPECT_LE(diff, 2.0 * 60 * 16 * 0x1p-24 * scale) << "the shortcut changed more than rounding";
  EXPECT_EQ(final_state<Tw>(paper, true, 60, 41), final_state<No>(paper, true, 60, 41)) << "u given: no shortcut";
  Options ridge;
  ridge.ridge_every = 1;
  ridge.ridge = 0.05;
  EXPECT_EQ(final_state<Tw>(ridge, false, 60, 41), final_state<No>(ridge, false, 60, 41)) << "ridge every step: no shortcut";
  Options floor;
  floor.delta_floor = 4.0;  // above 1 + k^.z <= 1 + 1/lambda0 = 2: binds at every step
  EXPECT_EQ(final_state<Tw>(floor, false, 60, 41), final_state<No>(floor, false, 60, 41)) << "floored delta: no shortcut";
}

// The twin and the plain policy are the same maths in another order: their
// results differ (the orders are really different) but only by rounding: both
// sit within the error model of the reference (its Monte Carlo baselines are
// what rounding at this policy costs on this stream).
TEST(TwinOrder, TwinDiffersFromPlainOnlyByRounding) {
  const Stream s = ts::rounded_for(ts::make_stream(1, 200, 2, 64, 5), Kind::fp32);
  const Outputs tw = impl::run(s, Options{}, Kind::fp32, impl::Device::cpu);
  const Outputs pl = impl::run_plain(s, Options{}, Kind::fp32);
  const Outputs ref = ts::reference_double(s, Options{});
  std::size_t differing = 0;
  for (std::size_t i = 0; i < ref.o.size(); ++i) differing += tw.o[i] != pl.o[i];
  EXPECT_GT(differing, 0u) << "the twin's order should differ from left to right somewhere";
  const ts::Baselines base = ts::baselines(s, Options{}, Kind::fp32);
  const auto prec = accuracy::precision_of(Kind::fp32);
  for (const Outputs* out : {&tw, &pl}) {
    const auto v = accuracy::check(*out, ref, base.ptrs(), prec);
    EXPECT_TRUE(v.pass) << (out == &tw ? "twin: " : "plain: ") << v.summary();
    EXPECT_EQ(v.beyond, 0u) << "every element judged";
  }
}

// Bad input: clear errors naming what is wrong.
TEST(TwinErrors, UnsupportedShapesAndModels) {
  Stream s = ts::make_stream(1, 4, 1, 16, 3);
  Options opt;
  opt.model = Model::linear;
  EXPECT_THROW(impl::run(s, opt, Kind::fp32, impl::Device::cpu), std::invalid_argument);
  Stream s24 = ts::make_stream(1, 4, 1, 24, 3);
  try {
    impl::run(s24, Options{}, Kind::bf16, impl::Device::cpu);
    FAIL() << "D = 24 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("24"), std::string::npos) << e.what();
  }
  // A key that rounds to a zero feature vector in bf16 (identity map, |k| < 2^-134).
  Options id;
  id.feature_map = FeatureMap::identity;
  Stream tiny = ts::make_stream(1, 2, 1, 16, 3);
  for (int j = 0; j < 16; ++j) tiny.k[16 + j] = 1e-42;
  EXPECT_NO_THROW(impl::run(tiny, id, Kind::fp32, impl::Device::cpu));  // 1e-42 is a float subnormal
  try {
    impl::run(tiny, id, Kind::bf16, impl::Device::cpu);
    FAIL() << "zero bf16 key accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t=1"), std::string::npos) << e.what();
  }
  if (!impl::cuda_available()) EXPECT_THROW(impl::run(s, Options{}, Kind::fp32, impl::Device::cuda), std::runtime_error);
}
