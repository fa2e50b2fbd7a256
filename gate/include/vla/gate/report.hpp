// The gate's reports: JUnit XML for CI systems, JSON for tools, Markdown for a
// pull-request comment; and the accuracy baseline (stored statistics that a
// later run must not worsen by more than a stated factor).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "vla/gate/gate.hpp"

namespace vla::gate {

std::string junit_xml(const GateReport& rep);
std::string json_report(const GateReport& rep);
// Each report gives the run's verdict, GateReport::passed(): the exit code's.
std::string markdown_summary(const GateReport& rep);

// The mutation score line and the honest variants' verdict, when the report
// holds mutants or honest variants ("" otherwise).
std::string mutation_summary(const GateReport& rep);

// The measured table of a mutation campaign (docs/GATE.md): per candidate the
// judged cases (battery + fuzz), failures and their rate; over the rejected
// cases the worst element's err/tol (min: the tightest rejection; median); over
// the passed cases the largest err/tol (the tightest pass) and the largest
// calibration statistic (docs/ERROR_MODEL.md).
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

// Before a run: throws std::invalid_argument when the baseline file is
// unreadable, malformed, has no entry for this mode (quick or full) and device,
// or lacks a number for a statistic of one of the `production` candidates.
void check_baseline(const std::filesystem::path& file, bool quick, const std::string& device,
                    const std::vector<std::string>& production);
// Before a run: throws when an existing file to update is not a baseline.
void check_baseline_to_update(const std::filesystem::path& file);

// The baseline file's new text: the existing file (if any) with this run's
// production candidates' statistics replaced for its mode and device; the
// other modes, devices and candidates are kept.
std::string baseline_text(const GateReport& rep, const std::filesystem::path& file);
// Writes baseline_text; an existing file is updated only with `overwrite`.
void write_baseline(const GateReport& rep, const std::filesystem::path& file, bool overwrite);

}  // namespace vla::gate
