// The reports of a small gate run: JUnit XML counts, JSON content, Markdown
// table; the accuracy baseline catches a worsened statistic and only that.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vla/gate/gate.hpp"
#include "vla/gate/report.hpp"

using namespace vla;
using namespace vla::gate;
namespace fs = std::filesystem;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
GateReport small_run() {
  GateConfig cfg;
  cfg.quick = true;
  cfg.candidates = find_candidates("fp32,mutant:S-transposed", impl::Device::cpu);
  cfg.fuzz_cases = 3;
  return run_gate(cfg);
}
}  // namespace

TEST(Reports, JunitJsonMarkdown) {
  const GateReport rep = small_run();
  ASSERT_EQ(rep.summaries.size(), 2u);
  EXPECT_TRUE(rep.summaries[0].passed());
  EXPECT_FALSE(rep.summaries[1].passed());
  EXPECT_FALSE(rep.passed());
  const std::string x = junit_xml(rep);
  EXPECT_EQ(count(x, "<testcase "), rep.results.size());
  EXPECT_EQ(count(x, "<failure "), std::size_t(rep.summaries[1].fail + rep.summaries[0].fail));
  EXPECT_EQ(count(x, "<testsuite "), 2u);
  const auto j = nlohmann::json::parse(json_report(rep));
  EXPECT_EQ(j["results"].size(), rep.results.size());
  EXPECT_EQ(j["candidates"][1]["name"], "mutant:S-transposed");
  EXPECT_FALSE(j["passed"].get<bool>());
  const std::string md = markdown_summary(rep);
  EXPECT_NE(md.find("| `fp32` |"), std::string::npos) << md;
  EXPECT_NE(md.find("mutation score: 1/1"), std::string::npos) << md;
  // As a gate run the rejected mutant fails it; as a mutation campaign the
  // rejection is what was wanted, and the page's verdict says so.
  EXPECT_FALSE(verdict_passed(rep, false));
  EXPECT_TRUE(verdict_passed(rep, true));
  EXPECT_NE(md.find("## vla gate: **FAILED**"), std::string::npos) << md;
  EXPECT_NE(markdown_summary(rep, true).find("## vla gate (mutation campaign): passed"), std::string::npos);
  GateReport missed = rep;
  for (auto& s : missed.summaries) s.fail = 0;  // a mutant that got through
  EXPECT_FALSE(verdict_passed(missed, true));
}

// A new empty folder for a baseline file (removed by the test).
fs::path fresh_dir() {
  std::string t = (fs::path(::testing::TempDir()) / "vla-base-XXXXXX").string();
  return ::mkdtemp(t.data());
}

TEST(Reports, BaselineFlagsAWorsenedStatisticOnly) {
  const fs::path dir = fresh_dir();
  const fs::path file = dir / "baseline.json";
  GateConfig cfg;
  cfg.quick = true;
  cfg.candidates = find_candidates("fp32", impl::Device::cpu);
  cfg.fuzz_cases = 5;
  GateReport rep = run_gate(cfg);
  write_baseline(rep, file, false);
  EXPECT_THROW(write_baseline(rep, file, false), std::invalid_argument);  // never replaced silently
  compare_with_baseline(rep, file);
  EXPECT_TRUE(rep.regressions.empty());
  // The same run with its error statistics worse than the factor allows.
  GateReport worse = rep;
  worse.summaries[0].o_rel_max *= kBaselineFactor * 1.5;
  compare_with_baseline(worse, file);
  ASSERT_EQ(worse.regressions.size(), 1u);
  EXPECT_NE(worse.regressions[0].find("o_rel_max"), std::string::npos);
  EXPECT_FALSE(worse.passed());
  // No entry for the other mode: a clear error, not a pass.
  GateReport full = rep;
  full.quick = false;
  EXPECT_THROW(compare_with_baseline(full, file), std::invalid_argument);
  fs::remove_all(dir);
}

// Refreshing the baseline from a run of some implementations replaces theirs and keeps every other entry.
TEST(Reports, BaselineRefreshKeepsTheCandidatesTheRunDidNotRun) {
  const fs::path dir = fresh_dir();
  const fs::path file = dir / "baseline.json";
  GateConfig cfg;
  cfg.quick = true;
  cfg.fuzz_cases = 2;
  cfg.candidates = find_candidates("fp32,bf16", impl::Device::cpu);
  const GateReport both = run_gate(cfg);
  write_baseline(both, file, false);
  cfg.candidates = find_candidates("bf16", impl::Device::cpu);
  GateReport bf16 = run_gate(cfg);
  bf16.summaries[0].o_rel_max *= kBaselineFactor * 2;  // a worse bf16, stored by the refresh
  write_baseline(bf16, file, true);
  check_baseline(file, true, "cpu");
  {
    std::ifstream in(file);
    const nlohmann::json j = nlohmann::json::parse(in);
    const auto& entry = j["modes"]["quick"]["cpu"];
    EXPECT_EQ(entry[bf16.summaries[0].name]["o_rel_max"].get<double>(), bf16.summaries[0].o_rel_max);  // refreshed
    EXPECT_TRUE(entry.contains("fp32"));
  }
  GateReport again = both;
  compare_with_baseline(again, file);  // fp32's entry is still there (else: throws), bf16's is the refreshed one
  EXPECT_TRUE(again.regressions.empty());
  GateReport worse_fp32 = both;
  for (auto& s : worse_fp32.summaries)
    if (s.name == "fp32") s.o_rel_max *= kBaselineFactor * 1.5;
  compare_with_baseline(worse_fp32, file);
  ASSERT_EQ(worse_fp32.regressions.size(), 1u);  // fp32 kept its own statistics
  EXPECT_NE(worse_fp32.regressions[0].find("fp32"), std::string::npos);
  EXPECT_THROW(check_baseline(file, false, "cpu"), std::invalid_argument);  // no full-mode entry
  fs::remove_all(dir);
}
