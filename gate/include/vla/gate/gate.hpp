// `vla gate`: the fixed battery and a fuzz budget, run on a list of candidates,
// with the results gathered for the reports (report.hpp) and the accuracy
// baseline (baseline.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vla/gate/candidate.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/judge.hpp"

namespace vla::gate {

struct CaseResult {
  std::string suite;      // "battery" or "fuzz"
  std::string id;         // battery id, or "seed 0x..." for a fuzz case
  std::string origin;     // family / adversarial
  std::string candidate;  // candidate name
  Status status = Status::invalid;
  std::string message;    // the verdict's summary, or why the case is invalid
  double worst_ratio = 0;   // err / tol of the worst element
  double group_ratio = 0;   // the calibration statistic (error over the model's scale)
  double o_rel_error = 0;   // max over o rows of |cand - ref|_inf / |ref|_inf
  int first_fail_step = -1;
  std::size_t beyond = 0;  // elements not judged: the precision policy breaks down there (docs/ERROR_MODEL.md)
  double seconds = 0;
  std::string replay;     // a command that reruns this case alone
};

struct GateConfig {
  bool quick = false;
  std::vector<Candidate> candidates;
  std::string device = "cpu";
  int fuzz_cases = 0;             // random + adversarial cases per precision policy
  std::uint64_t fuzz_seed = 1;
  FuzzLimits fuzz_limits;
  std::string only_case;          // run only the battery case with this id (empty: all)
  bool stop_at_first_failure = false;  // per candidate (mutation runs: one kill suffices)
  bool mutation_campaign = false;      // the verdict: mutants must fail, honest variants pass
};

struct CandidateSummary {
  std::string name, role, defect;
  int cases = 0, pass = 0, fail = 0, invalid = 0;
  int breakdown = 0;  // judged cases where the policy broke down from some step on (judged up to there)
  std::string first_failure;  // id of the first failing case
  // Accuracy statistics over the judged (pass or fail) cases.
  double worst_ratio_min = 0, worst_ratio_p50 = 0, worst_ratio_max = 0, o_rel_p50 = 0, o_rel_max = 0;
  bool passed() const { return fail == 0; }
  // Judged on no case (every one outside its domain, or skipped by an external kernel): it has shown nothing.
  bool judged_nothing() const { return pass + fail == 0; }
};

struct GateReport {
  std::string device;
  bool quick = false;
  bool mutation_campaign = false;
  double seconds = 0;
  std::vector<CaseResult> results;
  std::vector<CandidateSummary> summaries;  // in the order of the candidates
  // Set by the baseline comparison (report.hpp), if any.
  bool baseline_compared = false;
  std::vector<std::string> regressions;
  // The run's verdict, the one every report and the exit code give. A gate run: every candidate judged on at least
  // one case and failing none, and no accuracy regression against a stored baseline. A mutation campaign: every
  // planted mutant rejected, every honest variant judged and passed, no regression.
  bool passed() const;
  // A planted mutant of a mutation campaign: its failures are the gate doing its job, and it must have some.
  bool must_fail(const CandidateSummary& s) const { return mutation_campaign && s.role == "mutant"; }
  // The candidates judged on no case (they fail the run: nothing is shown).
  std::vector<std::string> judged_nothing() const;
};

using Progress = std::function<void(const CaseResult&)>;
GateReport run_gate(const GateConfig& cfg, const Progress& progress = {});

// Summaries recomputed from report.results (for each candidate of `cfg`).
std::vector<CandidateSummary> summarise(const std::vector<Candidate>& cands, const std::vector<CaseResult>& results);

}  // namespace vla::gate
