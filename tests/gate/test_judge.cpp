// The judge: the reference is fed exactly what the candidate consumed, invalid
// inputs are told apart from failures, a planted error fails where it is planted.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vla/core/bf16.hpp"
#include "vla/gate/battery.hpp"
#include "vla/gate/judge.hpp"
#include "vla/properties/generators.hpp"

using namespace vla;
using namespace vla::gate;
using impl::Kind;

namespace {
Stream gaussian(int B, int T, int H, int D, std::uint64_t seed) { return props::make_stream(props::Family::gaussian, Dims{B, T, H, D, D}, seed); }
}  // namespace

TEST(Judge, RoundsInputsOnceToWhatTheCandidateConsumes) {
  Stream s = gaussian(1, 3, 1, 16, 1);
  s.q[0] = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);  // just above a bf16 tie: up when rounded once, to even (down) via float
  const Stream b = round_inputs(s, Kind::bf16);
  EXPECT_EQ(b.q[0], 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(b.q[0], double(core::round_bf16_from_double(s.q[0])));
  const Stream f = round_inputs(s, Kind::fp32);
  EXPECT_EQ(f.q[0], double(float(s.q[0])));
  EXPECT_TRUE(needs_rounding(s, Kind::bf16));
  EXPECT_FALSE(needs_rounding(b, Kind::bf16));
  EXPECT_FALSE(needs_rounding(f, Kind::fp32));
  // The reference runs on exactly these values.
  const Expected e = expect(s, Options{}, Kind::bf16);
  ASSERT_TRUE(e.valid);
  EXPECT_EQ(e.input.q, b.q);
}

TEST(Judge, InvalidInputIsNotAFailure) {
  Stream s = gaussian(1, 4, 1, 16, 2);
  s.v[5] = std::numeric_limits<double>::quiet_NaN();
  Expected e = expect(s, Options{}, Kind::fp32);
  EXPECT_FALSE(e.valid);
  EXPECT_NE(e.reason.find("'v'"), std::string::npos) << e.reason;
  EXPECT_EQ(run_and_judge(production(Kind::fp32, impl::Device::cpu), e).status, Status::invalid);
  // A key whose features vanish once rounded to bf16 (identity map, tiny key).
  Stream z = gaussian(1, 2, 1, 16, 3);
  for (int j = 0; j < 16; ++j) z.k[16 + j] = 1e-45;
  Options id;
  id.feature_map = FeatureMap::identity;
  e = expect(z, id, Kind::bf16);
  EXPECT_FALSE(e.valid);
  EXPECT_NE(e.reason.find("bf16"), std::string::npos) << e.reason;
}

TEST(Judge, ProductionTwinPassesAndAPlantedErrorFailsAtItsStep) {
  const Stream s = gaussian(2, 70, 3, 16, 4);
  for (Kind kind : {Kind::fp32, Kind::bf16, Kind::bf16_state}) {
    const Expected e = expect(s, preset_options(Preset::vla_v3), kind);
    const Outputs good = production(kind, impl::Device::cpu).run(e.input, e.opt);
    const Judgement j = judge(good, e);
    EXPECT_EQ(j.status, Status::pass) << impl::to_string(kind) << ": " << j.verdict.summary();
    Outputs bad = good;
    const std::size_t i = e.ref.dims.off(1, 66, 2, 16) + 3;
    bad.o[i] = e.ref.o[i] * 1.5 + 0.1;
    const Judgement k = judge(bad, e);
    EXPECT_EQ(k.status, Status::fail);
    EXPECT_EQ(k.verdict.first_fail_step, 66);
    EXPECT_EQ(k.verdict.worst.t, 66);
    EXPECT_EQ(k.verdict.worst.index, 3);
    Outputs nan = good;
    nan.S[7] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(judge(nan, e).status, Status::fail);
  }
}

TEST(Judge, BatteryCoversEveryFamilyBothPresetsAndAwkwardShapes) {
  for (bool quick : {true, false}) {
    const auto cases = battery(quick);
    std::set<std::string> fam, pre, ids;
    std::set<int> T, D, BH;
    for (const auto& c : cases) {
      fam.insert(c.family), pre.insert(c.preset);
      EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
      T.insert(c.stream.dims.T), D.insert(c.stream.dims.Dk), BH.insert(c.stream.dims.B * c.stream.dims.H);
    }
    EXPECT_EQ(fam.size(), props::all_families().size());
    EXPECT_EQ(pre, (std::set<std::string>{"paper", "vla-v3"}));
    EXPECT_EQ(D, (std::set<int>{16, 32, 64, 128}));
    for (int t : {1, 63, 64, 65, 4096}) EXPECT_TRUE(T.count(t)) << t;
    EXPECT_TRUE(BH.count(5) && BH.count(9) && BH.count(4));
  }
  // Deterministic: the same cases on every run.
  const auto a = battery(true), b = battery(true);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].stream.k, b[i].stream.k);
}
