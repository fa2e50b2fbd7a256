// State norm: ||S_t||_F against t for VLA (both presets), additive linear
// attention and DeltaNet, on random and adversarial streams, from the double
// reference (the quantity is a norm of the exact state; double is far more
// accurate than the differences between models shown here).
#include <algorithm>
#include <cmath>

#include "vla/report/curves.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/parallel.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/reference_runs.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

struct ModelSpec {
  std::string name;
  Options opt;
};

std::vector<ModelSpec> models(const json& P) {
  Options vla = preset_options(Preset::paper);
  Options v3 = preset_options(Preset::vla_v3);
  Options lin;
  lin.model = Model::linear;
  Options dn;
  dn.model = Model::deltanet;
  dn.deltanet_beta = P["deltanet_beta"];
  dn.deltanet_decay = P["deltanet_decay"];
  return {{"VLA (paper)", vla}, {"VLA (vla-v3)", v3}, {"linear attention", lin}, {"DeltaNet", dn}};
}

json params(Profile p, const RunEnv&) {
  json j;
  switch (p) {
    case Profile::full:
      j = {{"T", 65536}, {"D", 64}, {"H", 2}, {"seeds", 2}, {"adversarial_T", 8192},
           {"families", {"gaussian", "positive", "adversarial-state-norm"}}};
      break;
    case Profile::quick:
      j = {{"T", 4096}, {"D", 64}, {"H", 2}, {"seeds", 1}, {"adversarial_T", 2048},
           {"families", {"gaussian", "positive", "adversarial-state-norm"}}};
      break;
    case Profile::tiny:
      j = {{"T", 1200}, {"D", 16}, {"H", 1}, {"seeds", 1}, {"adversarial_T", 1100},
           {"families", {"gaussian", "positive", "adversarial-state-norm"}}};
      break;
  }
  j["paper_T"] = 1000;
  j["paper_linear"] = 1600;
  j["paper_vla"] = 15;
  j["deltanet_beta"] = 1.0;
  j["deltanet_decay"] = 1.0;
  j["per_decade"] = 30;
  return j;
}

// Least-squares slope of log ||S_t|| against log t over the last decade of steps.
double growth_exponent(const std::vector<double>& v) {
  const std::size_t n = v.size();
  const std::size_t from = std::max<std::size_t>(1, n / 10);
  double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
  for (std::size_t t = from; t < n; ++t) {
    if (!(v[t] > 0)) continue;
    const double x = std::log(double(t + 1)), y = std::log(v[t]);
    sx += x, sy += y, sxx += x * x, sxy += x * y, m += 1;
  }
  const double den = m * sxx - sx * sx;
  return m > 1 && den > 0 ? (m * sxy - sx * sy) / den : std::nan("");
}

json compute(const json& P, const RunEnv& env) {
  const std::vector<std::string> families = P["families"];
  const int D = P["D"], H = P["H"], seeds = P["seeds"], per_decade = P["per_decade"];
  const auto ms = models(P);
  // curves[f][m] = per-step norms of every (seed, head)
  std::vector<std::vector<std::vector<std::vector<double>>>> curves(
      families.size(), std::vector<std::vector<std::vector<double>>>(ms.size()));
  std::mutex mu;
  Progress bar("state norm", double(families.size() * seeds * (ms.size() + 1)), env.progress);
  // The streams first (an adversarial search is costly: once per family and seed), then every model on each.
  std::vector<Stream> streams(families.size() * seeds);
  parallel_for(streams.size(), env.jobs, [&](std::size_t i) {
    const std::size_t sd = i % seeds, f = i / seeds;
    streams[i] = deps::make_stream(families[f], Dims{1, family_T(P, families[f]), H, D, D}, 2000 + sd,
                                   preset_options(Preset::paper));
    bar.add(1);
  });
  parallel_for(streams.size() * ms.size(), env.jobs, [&](std::size_t i) {
    const std::size_t m = i % ms.size(), si = i / ms.size(), f = si / seeds;
    const RefRun r = run_reference(streams[si], ms[m].opt, {});
    std::lock_guard<std::mutex> lock(mu);
    const int T = r.out.dims.T;
    for (int h = 0; h < H; ++h) {
      std::vector<double> c(T);
      for (int t = 0; t < T; ++t) c[t] = r.out.state_norm[std::size_t(t) * H + h];
      curves[f][m].push_back(std::move(c));
    }
    bar.add(1);
  });
  const int paper_T = P["paper_T"];
  json out = {{"families", json::array()}};
  for (std::size_t f = 0; f < families.size(); ++f) {
    const int T = family_T(P, families[f]);
    json fam = {{"family", families[f]}, {"source", deps::stream_source(families[f])}, {"T", T}, {"models", json::array()}};
    for (std::size_t m = 0; m < ms.size(); ++m) {
      const Spread sp = spread(curves[f][m]);
      std::vector<double> lo(T);
      for (int t = 0; t < T; ++t) {
        lo[t] = curves[f][m][0][t];
        for (const auto& c : curves[f][m]) lo[t] = std::min(lo[t], c[t]);
      }
      const XY med = log_downsample(sp.median, per_decade, Reduce::median);
      const XY hi = log_downsample(sp.worst, per_decade, Reduce::max);
      XY low = log_downsample(lo, per_decade, Reduce::last);
      json mj = {{"model", ms[m].name},
                 {"options", describe(ms[m].opt)},
                 {"median", xy_json(med.x, med.y)},
                 {"max", xy_json(hi.x, hi.y)},
                 {"min", xy_json(low.x, low.y)},
                 {"at_T", {{"median", sp.median.back()}, {"max", sp.worst.back()}}},
                 {"growth_exponent", growth_exponent(sp.median)}};
      if (T >= paper_T) mj["at_paper_T"] = {{"median", sp.median[paper_T - 1]}, {"max", sp.worst[paper_T - 1]}};
      fam["models"].push_back(mj);
    }
    out["families"].push_back(fam);
  }
  return out;
}

Figure figure(const json& P, const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  f.plot = step_plot("state_norm_" + name, "State norm, family " + gp_literal(name), "||S_t||_F",
                     std::max(fam["T"].get<double>(), P["paper_T"].get<double>()));
  f.plot.key = "top left";
  int colour = 0;
  for (const auto& m : fam["models"]) {
    Series band{"", Series::Style::band, colour};
    band.x = m["max"]["x"].get<std::vector<double>>();
    band.y = m["min"]["y"].get<std::vector<double>>();
    band.y_hi = m["max"]["y"].get<std::vector<double>>();
    Series med{m["model"].get<std::string>() + " (median)", Series::Style::line, colour};
    med.x = m["median"]["x"].get<std::vector<double>>();
    med.y = m["median"]["y"].get<std::vector<double>>();
    f.plot.series.push_back(band);
    f.plot.series.push_back(med);
    ++colour;
  }
  const double pt = P["paper_T"];
  Series paper_lin{"paper, linear attention", Series::Style::points, 6};
  paper_lin.x = {pt};
  paper_lin.y = {P["paper_linear"].get<double>()};
  Series paper_vla{"paper, VLA (upper bound)", Series::Style::points, 7};
  paper_vla.x = {pt};
  paper_vla.y = {P["paper_vla"].get<double>()};
  f.plot.series.push_back(paper_lin);
  f.plot.series.push_back(paper_vla);
  f.plot.vlines.push_back({pt, "paper: T = 1000"});
  f.caption = "Frobenius norm of the state after each step, median over heads and seeds (line) and the range "
              "(shaded), for the stream family " + name + ". Both axes logarithmic; the dotted line marks the "
              "paper's setting and the two points its reported values.";
  return f;
}

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "state-norm";
  s.title = "State norm against sequence length";
  s.data = R;
  s.blocks.push_back(para(
      "The double-precision reference runs each model for T = {T} steps ({Tadv} for the adversarial search, which "
      "is built against VLA (paper) and then fed to every model) on {H} heads of dimension {D} (Dk = Dv), {seeds} "
      "seed(s) per stream family, inputs as the family draws them (unit scale). VLA (paper) is lambda0 = "
      "{l0}; VLA (vla-v3) adds the published stabilisers; DeltaNet uses beta = {beta} and decay = {decay}. The "
      "paper reports, at T = {pT}, about {plin} for linear attention and below {pvla} for VLA, without stating "
      "the dimension or input scale: the comparison below is of shapes (plateau or growth), not of those "
      "absolute values.",
      {{"T", num(P["T"].get<double>())},
       {"Tadv", num(P["adversarial_T"].get<double>())},
       {"H", num(P["H"].get<double>())},
       {"D", num(P["D"].get<double>())},
       {"seeds", num(P["seeds"].get<double>())},
       {"l0", num(1)},
       {"beta", num(P["deltanet_beta"].get<double>())},
       {"decay", num(P["deltanet_decay"].get<double>())},
       {"pT", num(P["paper_T"].get<double>())},
       {"plin", num(P["paper_linear"].get<double>())},
       {"pvla", num(P["paper_vla"].get<double>())}}));
  Table t;
  t.caption = "||S_t||_F (median over heads and seeds) and its growth exponent over the last decade of steps";
  const bool have_paper = R["families"][0]["models"][0].contains("at_paper_T");
  t.columns = {"family", "model"};
  if (have_paper) t.columns.push_back("at the paper's T (median)");
  t.columns.insert(t.columns.end(), {"at T (median)", "at T (max)", "growth exponent p in ||S_t|| ~ t^p"});
  for (const auto& fam : R["families"]) {
    for (const auto& m : fam["models"]) {
      std::vector<Cell> row = {Code{fam["family"]}, text_cell(m["model"])};
      if (have_paper)
        row.push_back(m.contains("at_paper_T") ? Cell(num(m["at_paper_T"]["median"].get<double>()))
                                               : text_cell("not reached"));
      row.push_back(num(m["at_T"]["median"].get<double>()));
      row.push_back(num(m["at_T"]["max"].get<double>()));
      row.push_back(num(m["growth_exponent"].get<double>(), 2));
      t.rows.push_back(row);
    }
  }
  s.blocks.push_back(t);
  s.blocks.push_back(para("A growth exponent near one half is a random walk (zero-mean values added without "
                          "correction), near one is linear growth (coherent values), near zero is a plateau."));
  for (const auto& fam : R["families"]) s.blocks.push_back(figure(P, fam));

  // Headline: linear / VLA ratio at the paper's T on the first (random) family.
  const auto& g = R["families"][0]["models"];
  if (have_paper) {
    const double lin = g[2]["at_paper_T"]["median"], vla = g[0]["at_paper_T"]["median"];
    b.headlines.push_back({"||S_t||_F at the paper's T, linear attention over VLA (paper), family " +
                               R["families"][0]["family"].get<std::string>(),
                           num(lin / vla), "state-norm"});
  }
  double worst_vla = 0;
  for (const auto& fam : R["families"]) worst_vla = std::max(worst_vla, fam["models"][0]["at_T"]["max"].get<double>());
  b.headlines.push_back({"largest ||S_T||_F of VLA (paper) at the last step, any family", num(worst_vla), "state-norm"});
  return b;
}

}  // namespace

Stage state_norm_stage() { return {"state-norm", "State norm against sequence length", params, compute, build}; }

}  // namespace vla::report
