// The ledger as a Markdown page: one summary row per claim, then one section
// per claim with its conditions, evidence, counterexample and corrected statement.
#include <cstdio>
#include <sstream>

#include "vla/claims/ledger.hpp"

namespace vla::claims {

namespace {

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string scalar(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  if (v.is_null()) return "-";
  return v.dump();
}

bool is_scalar(const Json& v) { return !v.is_object() && !v.is_array(); }

// An array of flat objects with the same keys reads best as a table.
bool is_table(const Json& v) {
  if (!v.is_array() || v.empty() || !v[0].is_object()) return false;
  for (const auto& row : v) {
    if (!row.is_object() || row.size() != v[0].size()) return false;
    for (auto it = row.begin(); it != row.end(); ++it)
      if (!v[0].contains(it.key()) || !is_scalar(it.value())) return false;
  }
  return true;
}

void render(std::ostringstream& md, const Json& v, int depth);

void render_table(std::ostringstream& md, const Json& rows) {
  md << "\n|";
  for (auto it = rows[0].begin(); it != rows[0].end(); ++it) md << " " << cell(it.key()) << " |";
  md << "\n|";
  for (std::size_t i = 0; i < rows[0].size(); ++i) md << " --- |";
  md << "\n";
  for (const auto& r : rows) {
    md << "|";
    for (auto it = rows[0].begin(); it != rows[0].end(); ++it) md << " " << cell(scalar(r[it.key()])) << " |";
    md << "\n";
  }
  md << "\n";
}

void render(std::ostringstream& md, const Json& v, int depth) {
  const std::string pad(std::size_t(2 * depth), ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (is_scalar(it.value())) {
        md << pad << "- **" << it.key() << "**: " << scalar(it.value()) << "\n";
      } else if (is_table(it.value())) {
        md << pad << "- **" << it.key() << "**:\n";
        render_table(md, it.value());
      } else {
        md << pad << "- **" << it.key() << "**:\n";
        render(md, it.value(), depth + 1);
      }
    }
  } else if (v.is_array()) {
    bool flat = true;
    for (const auto& x : v) flat = flat && is_scalar(x);
    if (flat) {
      md << pad << "- ";
      for (std::size_t i = 0; i < v.size(); ++i) md << (i ? ", " : "") << scalar(v[i]);
      md << "\n";
    } else if (is_table(v)) {
      render_table(md, v);
    } else {
      for (const auto& x : v) {
        if (is_scalar(x)) md << pad << "- " << scalar(x) << "\n";
        else render(md, x, depth);
      }
    }
  } else {
    md << pad << "- " << scalar(v) << "\n";
  }
}

}  // namespace

std::string to_markdown(const Ledger& l) {
  std::ostringstream md;
  md << "# Claims ledger\n\n";
  md << "Every claim of the paper (seed summary) checked by an executable test; the paper's claims are "
        "hypotheses. Budget: `" << to_string(l.budget) << "`; produced by " << l.tool << ".\n\n";
  md << "Verdicts: `holds` (survived every test run), `refuted` (counterexample kept, recomputed at high "
        "precision), `conditional` (holds under the named, tested conditions), `inconclusive` (cannot be "
        "settled here; says what would settle it).\n\n";
  md << "| claim | section | verdict | summary |\n| --- | --- | --- | --- |\n";
  for (const auto& r : l.claims)
    md << "| [`" << r.id << "`](#" << r.id << ") | " << cell(r.section) << " | **" << to_string(r.verdict) << "** | "
       << cell(r.summary) << " |\n";
  for (const auto& r : l.claims) {
    md << "\n## " << r.id << "\n\n";
    md << "*Section " << r.section << ".* " << r.statement << "\n\n";
    md << "**Verdict: " << to_string(r.verdict) << ".** " << r.summary << "\n\n";
    if (!r.error.empty()) md << "**The check failed to run:** " << r.error << "\n\n";
    if (!r.conditions.empty()) {
      md << "**Conditions**\n\n";
      for (const auto& c : r.conditions) md << "- " << c << "\n";
      md << "\n";
    }
    if (!r.evidence.empty()) {
      md << "**Evidence**\n\n";
      render(md, r.evidence, 0);
      md << "\n";
    }
    if (r.counterexample) {
      const auto& c = *r.counterexample;
      md << "**Counterexample** (recomputed at " << c.precision_bits << " bits)\n\n" << c.description << "\n\n";
      md << "- quantity: " << c.quantity << "\n- claimed: " << c.claimed << "\n- computed: " << c.computed
         << "\n- margin: " << scalar(Json(c.margin)) << "\n- input:\n\n```json\n" << c.input.dump() << "\n```\n\n";
    }
    if (r.corrected) {
      const auto& c = *r.corrected;
      md << "**Corrected statement** (" << (c.checked ? "checked" : "NOT checked") << ")\n\n" << c.statement << "\n\n";
      if (!c.how.empty()) md << "How it was checked: " << c.how << "\n\n";
      if (!c.evidence.is_null() && !c.evidence.empty()) render(md, c.evidence, 0), md << "\n";
    }
    md << "Reproduce: `" << r.command << "` (" << scalar(Json(r.runtime_s)) << " s)\n";
  }
  return md.str();
}

}  // namespace vla::claims
