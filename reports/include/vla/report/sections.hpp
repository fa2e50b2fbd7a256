// The report's stages (one file each) and the summary built from their results.
#pragma once

#include "vla/report/report.hpp"

namespace vla::report {

Stage drift_stage();             // drift.cpp
Stage chunked_drift_stage();     // chunked_drift.cpp
Stage state_norm_stage();        // state_norm.cpp
Stage jacobian_stage();          // jacobian.cpp
Stage sherman_morrison_stage();  // sherman_morrison.cpp
Stage recall_stage();            // recall.cpp (and the claims ledger table)

struct SummaryInputs {
  const Config& cfg;
  const RunEnv& env;
  const nlohmann::json& meta;
  const std::vector<Built>& built;
  const nlohmann::json& results;  // stage id -> result
};
Section build_summary(const SummaryInputs& in);  // summary.cpp

// The report section that shows a claim's evidence (the ledger table otherwise).
std::string claim_report_section(const std::string& claim);

// Steps run for a stream family: T, or the shorter "adversarial_T" of the
// parameters for the adversarial searches (which score many candidates per step).
int family_T(const nlohmann::json& params, const std::string& family);

// Shared by the section builders.
Num num(double v, int sig = 3, std::string unit = "");
Cell step_or_never(long first_exit_step);  // 1-based step, or "stays inside"
nlohmann::json xy_json(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace vla::report
