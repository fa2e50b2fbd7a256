// Memory-level recall (from the claims ledger) and the ledger's verdicts.
//
// The recall numbers are the ledger's: n key/value pairs written into each
// model's state and read back with the keys (no training), which is not the
// paper's trained-model experiment; the section says so.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "vla/report/deps.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

const std::vector<std::string> kRecallClaims = {"capacity-exact-recall", "recall-n24-d32", "long-context-retention",
                                                 "overload-graceful"};

json params(Profile p, const RunEnv&) { return {{"budget", p == Profile::full ? "full" : "quick"}}; }

json compute(const json& P, const RunEnv&) { return {{"ledger", deps::claims(P["budget"] == "quick")}}; }

const json* find_claim(const json& ledger, const std::string& id) {
  for (const auto& c : ledger["claims"])
    if (c["id"] == id) return &c;
  return nullptr;
}

// One sweep of the ledger's recall evidence: an x axis (n/d_h or T) and one
// accuracy array per model, under a key that names the keys and feature map.
struct Curve {
  std::string model;
  std::vector<double> x, y;
};
struct Sweep {
  std::string name;
  std::vector<Curve> curves;
};

std::vector<Sweep> recall_sweeps(const json& evidence, const std::string& axis) {
  std::vector<Sweep> out;
  if (!evidence.is_object()) return out;
  for (const auto& [key, sweep] : evidence.items()) {
    if (!sweep.is_object() || !sweep.contains(axis) || !sweep.contains("accuracy")) continue;
    const auto& acc = sweep["accuracy"];
    if (!acc.is_object() || !sweep[axis].is_array()) continue;
    Sweep sw{key, {}};
    for (const auto& [model, ys] : acc.items()) {
      if (!ys.is_array()) continue;
      Curve c{model, sweep[axis].get<std::vector<double>>(), ys.get<std::vector<double>>()};
      if (c.x.size() == c.y.size()) sw.curves.push_back(std::move(c));
    }
    if (!sw.curves.empty()) out.push_back(std::move(sw));
  }
  return out;
}

// A file-name-safe stem.
std::string slug(const std::string& s) {
  std::string o;
  for (char c : s) o += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return o;
}

Figure recall_figure(const std::string& id, const std::string& title, const std::string& xlabel, bool logx,
                     const std::vector<Curve>& curves, const std::string& caption) {
  Figure f;
  f.plot.id = id;
  f.plot.title = title;
  f.plot.xlabel = xlabel;
  f.plot.ylabel = "exact-match recall accuracy (fraction)";
  f.plot.logx = logx;
  f.plot.yrange = std::make_pair(-0.02, 1.05);
  f.plot.key = "outside right top vertical";
  int colour = 0;
  for (const auto& c : curves) {
    Series s{c.model, Series::Style::linespoints, colour++};
    s.x = c.x;
    s.y = c.y;
    f.plot.series.push_back(s);
  }
  f.caption = caption;
  return f;
}

std::string report_section_of(const std::string& claim) {
  if (claim == "la-norm-growth" || claim == "prop1-bounded-state" || claim == "state-norm-ratio") return "state-norm";
  if (claim == "prop2-unit-jacobian" || claim == "gradient-flow-stable" || claim == "unnormalized-growth") return "jacobian";
  if (claim == "sherman-morrison-exact") return "sherman-morrison";
  if (std::find(kRecallClaims.begin(), kRecallClaims.end(), claim) != kRecallClaims.end()) return "recall";
  return "";  // no section of the report measures it: the ledger's own check is the evidence
}

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "recall";
  s.title = "Memory-level recall and the claims ledger";
  const json& ledger = R["ledger"];
  s.data = R;
  s.blocks.push_back(para(
      "Recall here is memory-level: the claims ledger writes n key/value pairs into the state of each model and "
      "reads them back with the keys, decoding by the nearest stored value. Nothing is trained, so these are not "
      "the paper's MQAR numbers from trained two-layer models; they test whether the memory itself can hold and "
      "return the associations. Ledger budget: {budget}.",
      {{"budget", Code{P["budget"].get<std::string>()}}}));
  int n = 0;
  for (const auto& id : kRecallClaims) {
    const json* c = find_claim(ledger, id);
    if (!c) continue;
    for (const std::string axis : {"n_over_dh", "T"}) {
      for (const auto& sw : recall_sweeps((*c)["evidence"], axis)) {
        const bool by_T = axis == "T";
        s.blocks.push_back(para("The ledger's check {id}, sweep {sweep}:", {{"id", Code{id}}, {"sweep", Quote{sw.name}}}));
        s.blocks.push_back(recall_figure(
            "recall_" + std::to_string(++n) + "_" + slug(id), gp_literal(id) + ": " + gp_literal(sw.name),
            by_T ? "sequence length T (steps)" : "load n / d_h (pairs per head dimension)", by_T, sw.curves,
            "Exact-match recall (memory level, no training) against " +
                std::string(by_T ? "the sequence length" : "the load") + ", one line per model and setting."));
      }
    }
  }
  // Every claim: verdict, the ledger's one-line summary, its conditions.
  Table t;
  t.caption = "The claims ledger";
  t.columns = {"claim", "paper section", "verdict", "summary (the ledger's words)", "conditions"};
  for (const auto& c : ledger["claims"]) {
    std::string cond;
    for (const auto& x : c.value("conditions", json::array())) cond += (cond.empty() ? "" : "; ") + x.get<std::string>();
    t.rows.push_back({Code{c["id"]}, Quote{c.value("section", "")}, text_cell(c["verdict"]),
                      Quote{c.value("summary", "")}, Quote{cond}});
    t.row_links.push_back("");
  }
  s.blocks.push_back(t);
  return b;
}

}  // namespace

std::string claim_report_section(const std::string& claim) { return report_section_of(claim); }

Stage recall_stage() { return {"recall", "Memory-level recall and the claims ledger", params, compute, build}; }

}  // namespace vla::report
