// What one check of the claims ledger returns (docs/CLAIMS_SCHEMA.md is the
// JSON form of these structs).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vla::claims {

// Ordered JSON keeps evidence in the order the check wrote it, which is the
// order a reader should see it in.
using Json = nlohmann::ordered_json;

enum class Verdict {
  holds,         // the claim as stated survived every test the check ran
  refuted,       // a counterexample (kept, recomputed at high precision) contradicts it
  conditional,   // holds under the stated conditions, which the check names and tests
  inconclusive,  // cannot be settled here; `conditions` says what would settle it
};
std::string to_string(Verdict);
Verdict parse_verdict(std::string_view);  // throws std::invalid_argument

enum class Budget { quick, full };
std::string to_string(Budget);

// A counterexample to the claim, small enough to replay by hand.
struct Counterexample {
  std::string description;  // what it is and why it contradicts the claim
  Json input;               // the stream / parameters that reproduce it (inline)
  std::string quantity;     // the quantity compared with the claim
  std::string claimed;      // what the claim says it should be
  std::string computed;     // its value, recomputed at `precision_bits`
  double margin = 0;        // by how much it violates the claim (> 0)
  int precision_bits = 0;   // significand bits of the recomputation
};

// The strongest statement the check could derive and verify instead.
struct Corrected {
  std::string statement;
  bool checked = false;     // verified by the check (see `evidence`)
  std::string how;          // how it was verified
  Json evidence;            // the numbers of that verification
};

struct ClaimResult {
  std::string id, section, statement;
  Verdict verdict = Verdict::inconclusive;
  std::string summary;                  // one line for the summary table
  std::vector<std::string> conditions;  // under which conditions / what would settle it
  Json evidence = Json::object();       // numbers and the parameters that produced them
  std::optional<Counterexample> counterexample;
  std::optional<Corrected> corrected;
  std::string command;                  // reproduces this entry
  double runtime_s = 0;
  std::string error;                    // non-empty when the check itself failed to run
};

}  // namespace vla::claims
