// The ledger as JSON (docs/CLAIMS_SCHEMA.md): writer, validator and reader.
#include <set>
#include <stdexcept>

#include "vla/claims/ledger.hpp"

namespace vla::claims {

namespace {

Json counterexample_json(const Counterexample& c) {
  Json j;
  j["description"] = c.description;
  j["input"] = c.input;
  j["quantity"] = c.quantity;
  j["claimed"] = c.claimed;
  j["computed"] = c.computed;
  j["margin"] = c.margin;
  j["precision_bits"] = c.precision_bits;
  return j;
}

Json corrected_json(const Corrected& c) {
  Json j;
  j["statement"] = c.statement;
  j["checked"] = c.checked;
  j["how"] = c.how;
  j["evidence"] = c.evidence;
  return j;
}

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument("claims JSON: " + where + ": " + what);
}

void need(const Json& j, const char* key, Json::value_t type, const std::string& where) {
  if (!j.contains(key)) bad(where, std::string("missing field '") + key + "'");
  const Json& v = j.at(key);
  // number_float: any number; number_unsigned: any non-negative integer (an int
  // written by this program is stored signed, the same value parsed back unsigned).
  bool ok = v.type() == type;
  if (type == Json::value_t::number_float) ok = v.is_number();
  if (type == Json::value_t::number_unsigned) ok = v.is_number_integer() && v.get<long long>() >= 0;
  if (!ok) bad(where + "." + key, std::string("has type ") + v.type_name());
}

}  // namespace

Json to_json(const ClaimResult& r) {
  Json j;
  j["id"] = r.id;
  j["section"] = r.section;
  j["statement"] = r.statement;
  j["verdict"] = to_string(r.verdict);
  j["summary"] = r.summary;
  j["conditions"] = r.conditions;
  j["evidence"] = r.evidence.is_null() ? Json::object() : r.evidence;
  j["counterexample"] = r.counterexample ? counterexample_json(*r.counterexample) : Json(nullptr);
  j["corrected_statement"] = r.corrected ? corrected_json(*r.corrected) : Json(nullptr);
  j["command"] = r.command;
  j["runtime_s"] = r.runtime_s;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

Json to_json(const Ledger& l) {
  Json j;
  j["schema"] = kSchema;
  j["tool"] = l.tool;
  j["budget"] = to_string(l.budget);
  j["claims"] = Json::array();
  for (const auto& r : l.claims) j["claims"].push_back(to_json(r));
  return j;
}

void validate_json(const Json& j) {
  using T = Json::value_t;
  if (!j.is_object()) bad("top level", "is not an object");
  need(j, "schema", T::string, "top level");
  if (j["schema"] != kSchema) bad("schema", "is '" + j["schema"].get<std::string>() + "', expected " + kSchema);
  need(j, "tool", T::string, "top level");
  need(j, "budget", T::string, "top level");
  if (j["budget"] != "quick" && j["budget"] != "full") bad("budget", "must be quick or full");
  need(j, "claims", T::array, "top level");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j["claims"].size(); ++i) {
    const Json& c = j["claims"][i];
    const std::string w = "claims[" + std::to_string(i) + "]";
    if (!c.is_object()) bad(w, "is not an object");
    for (const char* k : {"id", "section", "statement", "verdict", "summary", "command"}) need(c, k, T::string, w);
    if (!seen.insert(c["id"].get<std::string>()).second) bad(w, "duplicate id " + c["id"].get<std::string>());
    try {
      (void)find_claim(c["id"].get<std::string>());
    } catch (const std::invalid_argument& e) {
      bad(w + ".id", e.what());
    }
    try {
      (void)parse_verdict(c["verdict"].get<std::string>());
    } catch (const std::invalid_argument& e) {
      bad(w + ".verdict", e.what());
    }
    need(c, "conditions", T::array, w);
    for (const auto& s : c["conditions"])
      if (!s.is_string()) bad(w + ".conditions", "holds a non-string");
    need(c, "evidence", T::object, w);
    need(c, "runtime_s", T::number_float, w);
    if (!c.contains("counterexample")) bad(w, "missing field 'counterexample'");
    if (!c["counterexample"].is_null()) {
      const Json& x = c["counterexample"];
      const std::string wx = w + ".counterexample";
      if (!x.is_object()) bad(wx, "is neither null nor an object");
      for (const char* k : {"description", "quantity", "claimed", "computed"}) need(x, k, T::string, wx);
      need(x, "margin", T::number_float, wx);
      need(x, "precision_bits", T::number_unsigned, wx);
      if (!x.contains("input")) bad(wx, "missing field 'input'");
    }
    if (!c.contains("corrected_statement")) bad(w, "missing field 'corrected_statement'");
    if (!c["corrected_statement"].is_null()) {
      const Json& x = c["corrected_statement"];
      const std::string wx = w + ".corrected_statement";
      if (!x.is_object()) bad(wx, "is neither null nor an object");
      need(x, "statement", T::string, wx);
      need(x, "checked", T::boolean, wx);
      need(x, "how", T::string, wx);
      if (!x.contains("evidence")) bad(wx, "missing field 'evidence'");
    }
    // A refutation carries its counterexample (issue 5).
    if (c["verdict"] == "refuted" && c["counterexample"].is_null()) bad(w, "is refuted but has no counterexample");
  }
}

Ledger ledger_from_json(const Json& j) {
  validate_json(j);
  Ledger l;
  l.budget = j["budget"] == "quick" ? Budget::quick : Budget::full;
  l.tool = j["tool"];
  for (const auto& c : j["claims"]) {
    ClaimResult r;
    r.id = c["id"];
    r.section = c["section"];
    r.statement = c["statement"];
    r.verdict = parse_verdict(c["verdict"].get<std::string>());
    r.summary = c["summary"];
    r.conditions = c["conditions"].get<std::vector<std::string>>();
    r.evidence = c["evidence"];
    r.command = c["command"];
    r.runtime_s = c["runtime_s"];
    if (c.contains("error")) r.error = c["error"];
    if (!c["counterexample"].is_null()) {
      const Json& x = c["counterexample"];
      r.counterexample = Counterexample{x["description"], x["input"], x["quantity"], x["claimed"],
                                        x["computed"], x["margin"], x["precision_bits"]};
    }
    if (!c["corrected_statement"].is_null()) {
      const Json& x = c["corrected_statement"];
      r.corrected = Corrected{x["statement"], x["checked"], x["how"], x["evidence"]};
    }
    l.claims.push_back(std::move(r));
  }
  return l;
}

}  // namespace vla::claims
