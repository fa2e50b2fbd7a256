// A claim of the paper as an executable check, and the list of all of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vla/claims/result.hpp"

namespace vla::claims {

struct RunContext {
  Budget budget = Budget::quick;
  // Progress lines (stderr in the CLI); may be empty.
  std::function<void(const std::string&)> progress;
  // Repository root, for the committed GPU benchmark logs (reports/gpu/);
  // empty: the source tree this library was built from.
  std::string repo_root;
  void say(const std::string& line) const {
    if (progress) progress(line);
  }
  bool quick() const { return budget == Budget::quick; }
  // repo_root, or the source tree this library was built from when it is empty.
  std::string root() const;
};

struct ClaimDef {
  std::string id;         // fixed: tools and reports refer to it
  std::string section;    // of the paper, e.g. "3.1"
  std::string statement;  // the claim, in the ledger's words
  // Fills verdict, summary, conditions, evidence, counterexample, corrected.
  // id, section, statement, command and runtime are filled by the ledger.
  std::function<void(const RunContext&, ClaimResult&)> run;
};

// The 17 claims in the order of the paper.
const std::vector<ClaimDef>& all_claims();
const ClaimDef& find_claim(const std::string& id);  // throws std::invalid_argument naming the id

}  // namespace vla::claims
