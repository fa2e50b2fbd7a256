// The claims ledger: runs the checks and renders their results as JSON
// (docs/CLAIMS_SCHEMA.md) and Markdown. `vla claims` and `vla report` use it.
#pragma once

#include <string>
#include <vector>

#include "vla/claims/claim.hpp"
#include "vla/claims/result.hpp"

namespace vla::claims {

inline constexpr const char* kSchema = "vla-claims/1";

struct Ledger {
  Budget budget = Budget::quick;
  std::string tool;  // producing tool and version
  std::vector<ClaimResult> claims;
};

struct LedgerOptions {
  Budget budget = Budget::quick;
  std::vector<std::string> only;  // ids to run; empty = all
  RunContext context;             // budget is overwritten by `budget`
};

// Runs the selected checks in the paper's order. A check that throws is
// recorded as `inconclusive` with its error; the others still run.
Ledger run_ledger(const LedgerOptions& opt);

// The command line that reproduces one entry.
std::string reproduce_command(const std::string& id, Budget b);

Json to_json(const ClaimResult& r);
Json to_json(const Ledger& l);
// Throws std::invalid_argument naming the first field that does not follow the schema.
void validate_json(const Json& j);
Ledger ledger_from_json(const Json& j);  // validates first

// One summary row per claim, then a section per claim.
std::string to_markdown(const Ledger& l);

}  // namespace vla::claims
