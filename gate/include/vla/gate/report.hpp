// The gate's reports: JUnit XML for CI systems, JSON for tools, Markdown for a
// pull-request comment; and the accuracy baseline (stored statistics that a
// later run must not worsen by more than a stated factor).
#pragma once

#include <filesystem>
#include <string>

#include "vla/gate/gate.hpp"

namespace vla::gate {

std::string junit_xml(const GateReport& rep);
std::string json_report(const GateReport& rep);
std::string markdown_summary(const GateReport& rep);

// The mutation score line and the honest variants' verdict, when the report
// holds mutants or honest variants ("" otherwise).
std::string mutation_summary(const GateReport& rep);

// The measured table of a mutation campaign (docs/GATE.md): per candidate the
// judged cases, failures and their rate, and err/tol of the worst element per
// case (min, median, max over the cases).
std::string campaign_table(const GateReport& rep);

// All-or-nothing write of a text file (refuses to replace one unless overwrite).
void write_text(const std::filesystem::path& path, const std::string& text, bool overwrite);

// ---- accuracy baseline ---------------------------------------------------------

// A candidate's statistic may grow by at most this factor over the stored one.
// docs/GATE.md: the largest ratio measured between honest variants' statistics
// and the production twin's is below 2 for every statistic but one; 4 leaves
// room for honest changes that the stored baseline has not seen.
inline constexpr double kBaselineFactor = 4.0;

// Compares rep's summaries with the baseline file's entry for rep's mode
// (quick or full) and appends one line per worsened statistic to rep.regressions.
// Throws std::invalid_argument when the file is malformed or lacks an entry
// for a production candidate of the report.
void compare_with_baseline(GateReport& rep, const std::filesystem::path& file);

// Writes (or updates, keeping the other mode's entry) the baseline file.
void write_baseline(const GateReport& rep, const std::filesystem::path& file, bool overwrite);

}  // namespace vla::gate
