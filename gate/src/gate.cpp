#include "vla/gate/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "vla/gate/battery.hpp"
#include "vla/gate/domain.hpp"

namespace vla::gate {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

CaseResult result_of(const Judgement& j, double seconds) {
  CaseResult r;
  r.status = j.status;
  r.message = j.status == Status::invalid ? j.reason : (j.reason.empty() ? j.verdict.summary() : j.reason);
  if (j.status != Status::invalid) {
    r.worst_ratio = j.verdict.worst.ratio;
    r.group_ratio = j.verdict.max_group_ratio;
    r.first_fail_step = j.verdict.first_fail_step;
    r.o_rel_error = j.o_rel_error;
    r.beyond = j.verdict.beyond;
  }
  r.seconds = seconds;
  return r;
}

double quantile(std::vector<double> x, double q) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  return x[static_cast<std::size_t>(q * double(x.size() - 1) + 0.5)];
}

}  // namespace

bool GateReport::passed() const {
  for (const auto& s : summaries) {
    if (must_fail(s) ? s.fail == 0 : (!s.passed() || s.judged_nothing())) return false;
  }
  return regressions.empty();
}

std::vector<std::string> GateReport::judged_nothing() const {
  std::vector<std::string> v;
  for (const auto& s : summaries)
    if (s.judged_nothing() && !must_fail(s)) v.push_back(s.name);
  return v;
}

std::vector<CandidateSummary> summarise(const std::vector<Candidate>& cands, const std::vector<CaseResult>& results) {
  std::vector<CandidateSummary> out;
  for (const auto& c : cands) {
    CandidateSummary s;
    s.name = c.name;
    s.role = to_string(c.role);
    s.defect = c.defect;
    std::vector<double> wr, orel;
    for (const auto& r : results) {
      if (r.candidate != c.name) continue;
      ++s.cases;
      if (r.status == Status::pass) ++s.pass;
      if (r.status == Status::fail) {
        ++s.fail;
        if (s.first_failure.empty()) s.first_failure = r.suite + " " + r.id;
      }
      if (r.status == Status::invalid) ++s.invalid;
      if (r.status != Status::invalid && r.beyond > 0) ++s.breakdown;
      // A non-finite ratio (an output that overflowed where the reference did not) is the worst there is.
      if (r.status != Status::invalid) wr.push_back(std::isfinite(r.worst_ratio) ? r.worst_ratio : HUGE_VAL);
      if (r.status != Status::invalid) orel.push_back(r.o_rel_error);
    }
    s.worst_ratio_min = wr.empty() ? 0 : *std::min_element(wr.begin(), wr.end());
    s.worst_ratio_p50 = quantile(wr, 0.5);
    s.worst_ratio_max = wr.empty() ? 0 : *std::max_element(wr.begin(), wr.end());
    s.o_rel_p50 = quantile(orel, 0.5);
    s.o_rel_max = orel.empty() ? 0 : *std::max_element(orel.begin(), orel.end());
    out.push_back(s);
  }
  return out;
}

GateReport run_gate(const GateConfig& cfg, const Progress& progress) {
  const auto t0 = Clock::now();
  GateReport rep;
  rep.device = cfg.device;
  rep.quick = cfg.quick;
  rep.mutation_campaign = cfg.mutation_campaign;
  std::set<std::string> killed;  // candidates already failed (with stop_at_first_failure)
  std::vector<Policy> policies;  // each judged on its own reference runs, shared by its candidates
  for (const auto& c : cfg.candidates)
    if (std::find(policies.begin(), policies.end(), c.policy) == policies.end()) policies.push_back(c.policy);
  // The replay runs where the case ran: without --device a GPU host would replay a CPU twin's failure on the kernel.
  const std::string dev = cfg.device == "cuda" || cfg.device == "cpu" ? " --device " + cfg.device : "";

  auto judge_all = [&](const std::string& suite, const std::string& id, const std::string& origin, const Stream& s,
                       const Options& opt, const Policy& policy, const std::string& replay_args) {
    const Expected e = expect(s, opt, policy);
    for (const auto& c : cfg.candidates) {
      if (!(c.policy == policy) || killed.count(c.name)) continue;
      const auto t1 = Clock::now();
      const Judgement j = judge_in_domain(c, e);  // timed before result_of reads the clock (argument order is unspecified)
      CaseResult r = result_of(j, since(t1));
      r.suite = suite;
      r.id = id;
      r.origin = origin;
      r.candidate = c.name;
      r.replay = "vla " + replay_args + " --impl " + c.name + dev;
      if (r.status == Status::fail && cfg.stop_at_first_failure) killed.insert(c.name);
      if (progress) progress(r);
      rep.results.push_back(std::move(r));
    }
  };

  for (const BatteryCase& bc : battery(cfg.quick)) {
    if (!cfg.only_case.empty() && bc.id != cfg.only_case) continue;
    for (const Policy& policy : policies)
      judge_all("battery", bc.id, bc.family, bc.stream, bc.opt, policy, "gate --case '" + bc.id + "'" + (cfg.quick ? " --quick" : ""));
  }
  if (cfg.only_case.empty()) {
    for (int j = 0; j < cfg.fuzz_cases; ++j) {
      const std::uint64_t seed = case_seed(cfg.fuzz_seed, static_cast<std::uint64_t>(j));
      for (const Policy& policy : policies) {
        const FuzzCase fc = make_fuzz_case(seed, policy.input(), cfg.fuzz_limits);
        judge_all("fuzz", fmt::format("seed 0x{:016x}", seed), fc.origin, fc.stream, fc.opt, policy,
                  fmt::format("fuzz --case-seed 0x{:016x}", seed));
      }
    }
  }
  rep.summaries = summarise(cfg.candidates, rep.results);
  rep.seconds = since(t0);
  return rep;
}

}  // namespace vla::gate
