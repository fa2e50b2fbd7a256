// The judge takes the precision policy, and with it the error model's unit
// roundoffs and baselines, from the candidate itself (gate/include/vla/gate/policy.hpp):
// chunked-tf32 is judged at tf32's precision, and the gate runs it like any
// other candidate (CPU twin here).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "vla/gate/candidate.hpp"
#include "vla/gate/domain.hpp"
#include "vla/gate/gate.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/policy.hpp"
#include "vla/properties/generators.hpp"

using namespace vla;
using namespace vla::gate;
using impl::ChunkedKind;
using impl::Kind;

namespace {
Stream gaussian(int B, int T, int H, int D, std::uint64_t seed) {
  return props::make_stream(props::Family::gaussian, Dims{B, T, H, D, D}, seed);
}
bool same(const std::vector<Outputs>& a, const std::vector<Outputs>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].o != b[i].o || a[i].S != b[i].S || a[i].A != b[i].A || a[i].state_norm != b[i].state_norm) return false;
  return true;
}
}  // namespace

// chunked-fp32 and chunked-bf16 claim their fused baseline kind because their
// model is that kind's (so the gate shares its reference runs); chunked-tf32's
// is not, so it claims its own.
TEST(Policy, ChunkedPoliciesShareTheFusedModel) {
  const Options opt = preset_options(Preset::paper);
  for (ChunkedKind k : {ChunkedKind::fp32, ChunkedKind::bf16}) {
    const Policy p = chunked_policy(k);
    EXPECT_EQ(p, Policy(impl::baseline_kind(k))) << impl::to_string(k);
    const accuracy::Precision own = accuracy::precision_of(k), used = p.precision();
    EXPECT_EQ(own.u_out, used.u_out);
    EXPECT_EQ(own.u_state, used.u_state);
    EXPECT_EQ(own.bf16_out, used.bf16_out);
    const Stream s = round_inputs(gaussian(1, 20, 1, 16, 5), impl::input_kind(k));
    EXPECT_TRUE(same(accuracy::baselines(s, opt, k), p.baselines(s, opt))) << impl::to_string(k);
  }
  const Policy tf = chunked_policy(ChunkedKind::tf32);
  EXPECT_EQ(tf, Policy(ChunkedKind::tf32));
  EXPECT_FALSE(tf == Policy(Kind::fp32));
  EXPECT_EQ(tf.name(), "chunked-tf32");
  EXPECT_EQ(tf.input(), Kind::fp32);
  EXPECT_EQ(tf.precision().u_state, std::ldexp(1.0, -11));
  EXPECT_EQ(tf.precision().u_out, std::ldexp(1.0, -24));
}

TEST(Policy, FindCandidatesNamesChunkedTf32) {
  const auto one = find_candidates("chunked-tf32", impl::Device::cpu);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "chunked-tf32");
  EXPECT_EQ(one[0].policy, Policy(ChunkedKind::tf32));
  std::set<std::string> names;
  for (const auto& c : find_candidates("chunked", impl::Device::cpu)) names.insert(c.name);
  EXPECT_EQ(names, (std::set<std::string>{"chunked-fp32", "chunked-bf16", "chunked-tf32"}));
  EXPECT_EQ(find_candidates("chunked-tf32/C32", impl::Device::cpu).at(0).policy, Policy(ChunkedKind::tf32));
}

// The policy is what decides: the chunked-tf32 twin passes the model at its own
// precision and fails it at fp32's (tf32 operands carry 2^-11 relative errors,
// 8,192 times float's), on the same stream.
TEST(Policy, ChunkedTf32IsJudgedAtTf32Precision) {
  const Stream s = gaussian(1, 70, 2, 32, 6);
  const Options opt = preset_options(Preset::vla_v3);
  const Candidate tf32 = chunked_production(ChunkedKind::tf32, impl::Device::cpu);
  const Judgement own = judge_in_domain(tf32, expect(s, opt, tf32.policy));
  EXPECT_EQ(own.status, Status::pass) << own.verdict.summary();
  Candidate as_fp32 = tf32;
  as_fp32.policy = Kind::fp32;
  const Judgement wrong = judge_in_domain(as_fp32, expect(s, opt, as_fp32.policy));
  EXPECT_EQ(wrong.status, Status::fail) << wrong.verdict.summary();
}

// The gate runs chunked-tf32 end to end (quick battery, a small fuzz budget): its
// cases are judged (not all invalid), by reference runs of its own policy, and a
// planted chunk-boundary defect under its policy is rejected.
TEST(Policy, GateRunsChunkedTf32) {
  GateConfig cfg;
  cfg.quick = true;
  cfg.candidates = find_candidates("chunked-tf32,mutant:chunked-tf32-last-step-dropped", impl::Device::cpu);
  cfg.fuzz_cases = 20;
  const GateReport rep = run_gate(cfg);
  ASSERT_EQ(rep.summaries.size(), 2u);
  const CandidateSummary& prod = rep.summaries[0];
  const CandidateSummary& mutant = rep.summaries[1];
  EXPECT_GT(prod.pass, prod.invalid) << "chunked-tf32 was judged on too few cases";
  EXPECT_GT(mutant.fail, 0) << "the tf32 chunk-boundary mutant was not rejected";
  std::printf("  chunked-tf32: %d pass, %d fail (%s), %d outside; mutant rejected on %d of %d\n", prod.pass, prod.fail,
              prod.first_failure.c_str(), prod.invalid, mutant.fail, mutant.pass + mutant.fail);
}
