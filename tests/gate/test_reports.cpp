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
  // One test case per judgement, plus the verdict's: each candidate judged on at least one case.
  EXPECT_EQ(count(x, "<testcase "), rep.results.size() + 2);
  EXPECT_EQ(count(x, "<failure "), std::size_t(rep.summaries[1].fail + rep.summaries[0].fail));
  EXPECT_EQ(count(x, "<testsuite "), 3u);
  const auto j = nlohmann::json::parse(json_report(rep));
  EXPECT_EQ(j["results"].size(), rep.results.size());
  EXPECT_EQ(j["candidates"][1]["name"], "mutant:S-transposed");
  EXPECT_FALSE(j["passed"].get<bool>());
  const std::string md = markdown_summary(rep);
  EXPECT_NE(md.find("| `fp32` |"), std::string::npos) << md;
  EXPECT_NE(md.find("mutation score: 1/1"), std::string::npos) << md;
  // As a gate run the rejected mutant fails it; as a mutation campaign the
  // rejection is what was wanted, and every report's verdict says so.
  EXPECT_NE(md.find("## vla gate: **FAILED**"), std::string::npos) << md;
  GateReport campaign = rep;
  campaign.mutation_campaign = true;
  EXPECT_TRUE(campaign.passed());
  EXPECT_NE(markdown_summary(campaign).find("## vla gate (mutation campaign): passed"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(json_report(campaign))["passed"].get<bool>());
  const std::string cx = junit_xml(campaign);
  EXPECT_EQ(count(cx, "<failure "), 0u) << cx;  // the mutant's rejections are system-out of passed cases
  EXPECT_NE(cx.find("name=\"mutant:S-transposed is rejected\" time=\"0\"/>"), std::string::npos) << cx;
  GateReport missed = campaign;
  for (auto& s : missed.summaries) s.fail = 0;  // a mutant that got through
  EXPECT_FALSE(missed.passed());
  EXPECT_EQ(count(junit_xml(missed), "<failure "), 1u);
  EXPECT_FALSE(nlohmann::json::parse(json_report(missed))["passed"].get<bool>());
}

// A candidate judged on no case has shown nothing: every report fails the run, as the exit code does.
TEST(Reports, ACandidateJudgedOnNothingFailsEveryReport) {
  GateReport rep = small_run();
  for (auto& s : rep.summaries) s.invalid += s.pass + s.fail, s.pass = s.fail = 0;
  for (auto& r : rep.results) r.status = Status::invalid;
  EXPECT_FALSE(rep.passed());
  EXPECT_EQ(rep.judged_nothing().size(), 2u);
  const auto j = nlohmann::json::parse(json_report(rep));
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_EQ(j["judged_on_no_case"].size(), 2u);
  EXPECT_NE(markdown_summary(rep).find("**FAILED**"), std::string::npos);
  EXPECT_NE(markdown_summary(rep).find("was judged on no case"), std::string::npos);
  const std::string x = junit_xml(rep);
  EXPECT_EQ(count(x, "<failure "), 2u) << x;
  EXPECT_NE(x.find("nothing is shown"), std::string::npos) << x;
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
  const std::string x = junit_xml(worse);  // a CI system reading only the JUnit file sees the regression too
  EXPECT_EQ(count(x, "<failure "), 1u) << x;
  EXPECT_NE(x.find("accuracy within the stored baseline"), std::string::npos) << x;
  EXPECT_EQ(count(junit_xml(rep), "<failure "), 0u);
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
  check_baseline(file, true, "cpu", {"fp32", "bf16"});
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
  EXPECT_THROW(check_baseline(file, false, "cpu", {"fp32"}), std::invalid_argument);  // no full-mode entry
  fs::remove_all(dir);
}

// Everything a run would need from the baseline is checked before the run: the file, its entry, each statistic.
TEST(Reports, BaselineCheckedWholeBeforeTheRun) {
  const fs::path dir = fresh_dir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const std::string head = R"({"format": "vla-gate-accuracy-baseline/1", "modes": {"quick": {"cpu": )";
  const std::string stats = R"({"worst_ratio_p50": 0.1, "worst_ratio_max": 0.5, "o_rel_p50": 1e-7, "o_rel_max": 1e-6})";
  EXPECT_NO_THROW(check_baseline(write("ok.json", head + R"({"fp32": )" + stats + "}}}}"), true, "cpu", {"fp32"}));
  auto refused = [&](const fs::path& f, const std::vector<std::string>& prod, const std::string& says) {
    try {
      check_baseline(f, true, "cpu", prod);
      ADD_FAILURE() << f << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(dir / "ok.json", {"fp32", "bf16"}, "no statistics for 'bf16'");
  refused(write("num.json", head + R"({"fp32": 5}}}})"), {"fp32"}, "no statistics for 'fp32'");
  refused(write("str.json", head + R"({"fp32": {"worst_ratio_p50": "x", "worst_ratio_max": 0.5, "o_rel_p50": 1, "o_rel_max": 1}}}}})"),
          {"fp32"}, "'fp32.worst_ratio_p50' is not a number");
  refused(write("arr.json", head + "[]}}}"), {"fp32"}, "not an object");
  refused(write("fmt.json", R"({"format": 3})"), {"fp32"}, "not an accuracy baseline");
  refused(write("cut.json", head), {"fp32"}, "malformed JSON");
  refused(dir, {"fp32"}, "not a file");
  fs::remove_all(dir);
}
