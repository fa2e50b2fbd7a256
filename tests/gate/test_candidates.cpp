// The candidates the gate judges are what they claim to be: the variant driver
// reproduces the production twin bit for bit (so a mutant differs from the
// shipped twin by its planted defect alone), every mutant does change the
// outputs, every honest variant changes only rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "orders.hpp"
#include "variant_driver.hpp"
#include "vla/gate/battery.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/twin_policy.hpp"
#include "vla/properties/generators.hpp"

using namespace vla;
using namespace vla::gate;
using impl::Kind;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}
bool same_outputs(const Outputs& a, const Outputs& b) {
  return a.dims == b.dims && same_bits(a.o, b.o) && same_bits(a.S, b.S) && same_bits(a.A, b.A) && same_bits(a.state_norm, b.state_norm);
}

Stream stream(Kind kind, int B, int T, int H, int D, std::uint64_t seed, props::Family f = props::Family::gaussian) {
  return round_inputs(props::make_stream(f, Dims{B, T, H, D, D}, seed), kind);
}

template <class Prec, int D>
Outputs twin_via_variant_driver(const Stream& s, const Options& o) {
  return run_variant<float, gpu::TwinPolicy<gpu::FusedTraits<D>, Prec>>(s, o);
}

}  // namespace

// The driver the variants and policy mutants run through is the production
// twin's loop: with the twin's own policy it gives the same bits.
TEST(Candidates, VariantDriverReproducesTheTwinBitForBit) {
  for (Preset p : {Preset::paper, Preset::vla_v3}) {
    const Options opt = preset_options(p);
    const Stream s16 = stream(Kind::fp32, 2, 45, 3, 16, 11);
    EXPECT_TRUE(same_outputs(twin_via_variant_driver<gpu::PrecFp32, 16>(s16, opt), impl::run(s16, opt, Kind::fp32, impl::Device::cpu)));
    const Stream s32 = stream(Kind::bf16, 1, 30, 2, 32, 12);
    EXPECT_TRUE(same_outputs(twin_via_variant_driver<gpu::PrecBf16, 32>(s32, opt), impl::run(s32, opt, Kind::bf16, impl::Device::cpu)));
    const Stream s64 = stream(Kind::bf16_state, 1, 25, 1, 64, 13);
    EXPECT_TRUE(same_outputs(twin_via_variant_driver<gpu::PrecBf16State, 64>(s64, opt),
                             impl::run(s64, opt, Kind::bf16_state, impl::Device::cpu)));
  }
}

TEST(Candidates, ListsAreWhatTheIssueAsksFor) {
  EXPECT_GE(mutants().size(), 12u);
  std::set<std::string> kinds;
  for (const auto& m : mutants()) {
    EXPECT_EQ(m.role, Role::mutant);
    EXPECT_FALSE(m.description.empty());
    kinds.insert(m.defect);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"maths", "indexing", "precision", "rare"}));
  std::set<std::string> honest;
  for (const auto& h : honest_variants()) honest.insert(h.name.substr(h.name.find('/') + 1));
  for (const char* v : {"reversed", "pairwise", "kahan", "fma-off", "wide-acc"}) EXPECT_TRUE(honest.count(v)) << v;
  EXPECT_THROW(find_candidates("fp33", impl::Device::cpu), std::invalid_argument);
  EXPECT_EQ(find_candidates("production,mutant:ftz", impl::Device::cpu).size(), 4u);
}

// Every mutant changes some output on some battery case (else it would be an
// equivalent mutant that no gate could reject); every honest variant changes
// bits somewhere too (else it would prove nothing), and only by rounding: its
// largest relative difference from the twin on a benign stream is small.
TEST(Candidates, MutantsChangeOutputsAndHonestVariantsOnlyRounding) {
  const auto cases = battery(true);
  for (const auto& m : mutants()) {
    bool changed = false;
    for (const auto& bc : cases) {
      const Stream s = round_inputs(bc.stream, m.policy.input());
      Outputs a, b;
      try {
        a = m.run(s, bc.opt);
        b = impl::run(s, bc.opt, m.policy.input(), impl::Device::cpu);
      } catch (const std::invalid_argument&) {
        continue;
      }
      if (!same_outputs(a, b)) {
        changed = true;
        break;
      }
    }
    EXPECT_TRUE(changed) << m.name << " never changes an output on the quick battery";
  }
  const Options opt;
  for (const auto& h : honest_variants()) {
    const Stream s = stream(h.policy.input(), 1, 50, 2, 16, 21);
    const Outputs a = h.run(s, opt), b = impl::run(s, opt, h.policy.input(), impl::Device::cpu);
    EXPECT_FALSE(same_outputs(a, b)) << h.name;
    // Different only by rounding: the variant is inside its policy's error model on this stream, every element judged.
    const Judgement j = judge(a, expect(s, opt, h.policy));
    EXPECT_TRUE(j.verdict.pass) << h.name << ": " << j.verdict.summary();
    EXPECT_GT(j.verdict.checked, 0u) << h.name;
    EXPECT_EQ(j.verdict.beyond, 0u) << h.name;
  }
}

TEST(Candidates, RejectWhatTheKernelsReject) {
  const Stream s = props::make_stream(props::Family::gaussian, Dims{1, 4, 1, 8, 8}, 1);
  for (const auto* list : {&honest_variants(), &mutants()})
    for (const auto& c : *list) EXPECT_THROW(c.run(s, Options{}), std::invalid_argument) << c.name;
}

// The Kahan order carries an overflowed product as inf, as a plain sum does (docs/FINDINGS.md, item 6): unguarded,
// its compensation (inf - sum) - inf made the sum NaN, which no normalisation downstream can neutralise.
TEST(Candidates, KahanCarriesAnOverflowAsInfNotNaN) {
  float sum = 1e35f, comp = -2e11f;
  kahan_add(sum, comp, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isinf(sum) && sum > 0);
  kahan_add(sum, comp, 1.0f);
  EXPECT_TRUE(std::isinf(sum) && sum > 0) << sum;
  EXPECT_FALSE(std::isnan(comp));
  // Finite sums keep their compensation: 1 + 2^-24 + 2^-24 is exact with it, 1 without.
  float s = 1.0f, c = 0.0f;
  kahan_add(s, c, 0x1p-24f);
  kahan_add(s, c, 0x1p-24f);
  EXPECT_EQ(s, 1.0f + 0x1p-23f);
}
