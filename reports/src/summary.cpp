// The summary: headline figures of every section, the claims ledger's verdicts
// (one row per claim, linking to the section with its evidence), and where,
// when, with what and how the report was made.
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

Table key_values(const std::string& caption, const json& obj) {
  Table t;
  t.caption = caption;
  t.columns = {"item", "value"};
  for (const auto& [k, v] : obj.items()) t.rows.push_back({Code{k}, Quote{v.is_string() ? v.get<std::string>() : v.dump()}});
  return t;
}

}  // namespace

Section build_summary(const SummaryInputs& in) {
  Section s;
  s.id = "summary";
  s.title = "Summary";
  const json& m = in.meta;
  s.blocks.push_back(para(
      "How far the fp32, bf16 and bf16-state kernels drift from the exact recurrence, where the state grows, and "
      "what happens to gradients without normalisation. Made on {date} by {command} ({profile} profile); the "
      "kernels ran {where}.",
      {{"date", Quote{m["date"]}},
       {"command", Code{m["command"]}},
       {"profile", Code{m["profile"]}},
       {"where", std::string(in.env.cuda ? "on the GPU listed below" : "as their CPU twins (no GPU in use)")}}));
  if (in.cfg.profile != Profile::full) {
    s.blocks.push_back(para("This is a reduced run (shorter streams, fewer heads and seeds). The full report is "
                            "{full}, within ten minutes on two cores.",
                            {{"full", Code{"build/bin/vla report"}}}));
  }

  Table h;
  h.caption = "Headline figures";
  h.columns = {"figure", "value", "section"};
  for (const auto& b : in.built) {
    for (const auto& x : b.headlines) {
      h.rows.push_back({text_cell(x.what), x.value, Code{x.section}});
      h.row_links.push_back(x.section);
    }
  }
  if (!h.rows.empty()) s.blocks.push_back(h);

  // Claims verdicts, from the ledger run of the recall stage.
  const json* ledger = nullptr;
  if (in.results.contains("recall") && in.results["recall"].contains("ledger")) ledger = &in.results["recall"]["ledger"];
  if (ledger) {
    Table c;
    c.caption = "Claims of the paper: the ledger's verdicts";
    c.columns = {"claim", "verdict", "summary (the ledger's words)", "reproduce", "section measuring the same quantity"};
    int counts[4] = {0, 0, 0, 0};
    for (const auto& cl : (*ledger)["claims"]) {
      const std::string v = cl["verdict"];
      counts[v == "holds" ? 0 : v == "refuted" ? 1 : v == "conditional" ? 2 : 3]++;
      const std::string id = cl["id"], sec = claim_report_section(id);
      const std::string cmd = cl.value("command", "vla claims --only " + id);
      c.rows.push_back({Code{id}, text_cell(v), Quote{cl.value("summary", "")}, Code{cmd},
                        sec.empty() ? Cell(text_cell("none: the ledger's check only")) : Cell(Code{sec})});
      c.row_links.push_back(sec);
    }
    s.blocks.push_back(para("The claims ledger: {h} hold, {r} refuted, {c} conditional, {i} inconclusive. Each verdict "
                            "rests on the ledger's own check, on streams and constructions of its own (the reproduce "
                            "column); a section that measures the same quantity does so on the report's streams, which "
                            "need not reach the ledger's counterexamples (the state-norm section's search does not find "
                            "the ledger's growing streams for the state-norm claim). The timing claims come from the "
                            "newest committed GPU log, not from this run.",
                            {{"h", num(counts[0])}, {"r", num(counts[1])}, {"c", num(counts[2])}, {"i", num(counts[3])}}));
    s.blocks.push_back(c);
  } else {
    s.blocks.push_back(para("The claims ledger was not part of this run (it is the section {id}).", {{"id", Code{"recall"}}}));
  }

  s.blocks.push_back(key_values("Machine", m["machine"]));
  s.blocks.push_back(key_values("GPU", m["gpu"]));
  s.blocks.push_back(key_values("Versions", m["versions"]));
  Table st;
  st.caption = "Stages";
  st.columns = {"stage", "status", "time", "result"};
  for (const auto& b : in.built) {
    const auto& tm = m["stage_timings"][b.section.id];
    st.rows.push_back({Code{b.section.id}, text_cell(b.section.status), num(tm["seconds"].get<double>(), 2, "s"),
                       text_cell(tm["cached"].get<bool>() ? "from the cache" : "computed")});
    st.row_links.push_back(b.section.id);
  }
  s.blocks.push_back(st);
  s.data = {{"headlines", h.rows.size()}};
  return s;
}

}  // namespace vla::report
