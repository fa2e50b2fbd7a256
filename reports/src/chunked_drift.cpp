// Chunked drift (issue 8): is the chunked form as stable as the recurrence? The
// chunked implementations (chunked-fp32, chunked-bf16, chunked-tf32, and the
// chunk-parallel chunked-scan-fp32, chunked-scan-bf16; CPU twins,
// or the CUDA kernels when a GPU is in use) next to the fused recurrent kernel
// of the same input type and state precision, per step against the double
// reference, with the error model's envelope at each chunked policy's own
// precision; and a probe of the near-collinear family of the generators (every
// key at an angle theta in [1e-6, 1e-2] from one direction), where the chunk's
// Gram matrix is near rank one and its triangular solves are ill-conditioned.
#include <algorithm>
#include <cmath>
#include <map>

#include "vla/report/curves.hpp"
#include "vla/report/deps_chunked.hpp"
#include "vla/report/parallel.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/reference_runs.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

json params(Profile p, const RunEnv& env) {
  json j;
  switch (p) {
    case Profile::full:
      j = {{"T", 16384}, {"D", 64}, {"H", 2}, {"probe_T", 4096}, {"probe_D", 64}, {"probe_seeds", 12}};
      break;
    case Profile::quick:
      j = {{"T", 1024}, {"D", 32}, {"H", 2}, {"probe_T", 256}, {"probe_D", 32}, {"probe_seeds", 6}};
      break;
    case Profile::tiny:
      j = {{"T", 130}, {"D", 16}, {"H", 1}, {"probe_T", 70}, {"probe_D", 16}, {"probe_seeds", 2}};
      break;
  }
  j["C"] = 64;
  j["kinds"] = deps::chunked_kinds();
  j["per_decade"] = 30;
  j["families"] = {"gaussian", "near_collinear"};
  j["device"] = env.cuda ? "cuda" : "cpu";
  j["preset"] = "paper";
  return j;
}

double max_finite_or_inf(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::isfinite(x) ? std::max(m, x) : INFINITY;
  return m;
}

// One stream: every chunked kind and its fused counterpart against the reference.
struct Curves {
  std::vector<std::vector<double>> chunked, fused, env;  // per head, per step
  std::vector<long> exits;                               // per head, 0-based (-1: inside)
};

std::map<std::string, Curves> run_stream(const Stream& s, const Options& opt, int C, bool cuda, bool envelopes) {
  std::map<std::string, Curves> out;
  std::map<std::string, Outputs> refs;  // keyed by the consumed input type
  // Computed once per stream and shared by the kinds that have them in common:
  // the fused counterpart's error curves (fp32 serves three kinds) and the
  // envelopes (one per error model: deps::chunked_model).
  std::map<impl::Kind, std::vector<std::vector<double>>> fused_curves;
  std::map<std::string, std::vector<std::vector<double>>> envs;
  for (const std::string& kind : deps::chunked_kinds()) {
    const Stream in = deps::chunked_consumed_inputs(s, kind);
    const std::string type = deps::chunked_bf16_inputs(kind) ? "bf16" : "float";
    if (!refs.count(type)) refs[type] = run_reference(in, opt, {s.dims.T}).out;
    const Outputs& ref = refs.at(type);
    const Outputs ch = deps::run_chunked(s, opt, kind, cuda, C);
    const impl::Kind counterpart = deps::chunked_counterpart(kind);
    if (!fused_curves.count(counterpart)) {
      const Outputs fu = deps::run_kernel(s, opt, counterpart, cuda);
      for (int h = 0; h < s.dims.H; ++h) fused_curves[counterpart].push_back(step_rel_error(fu, ref, 0, h));
    }
    Curves c;
    c.fused = fused_curves.at(counterpart);
    for (int h = 0; h < s.dims.H; ++h) c.chunked.push_back(step_rel_error(ch, ref, 0, h));
    if (envelopes) {
      const std::string model = deps::chunked_model(kind);
      if (!envs.count(model)) envs[model] = deps::chunked_envelopes(model, in, opt, ref);
      c.env = envs.at(model);
      for (int h = 0; h < s.dims.H; ++h) c.exits.push_back(first_exit(c.chunked[h], c.env[h]));
    }
    out[kind] = std::move(c);
  }
  return out;
}

json xy(const XY& v) { return xy_json(v.x, v.y); }

json compute(const json& P, const RunEnv& env) {
  const std::vector<std::string> families = P["families"];
  const int T = P["T"], D = P["D"], H = P["H"], C = P["C"], per_decade = P["per_decade"];
  const int pT = P["probe_T"], pD = P["probe_D"], seeds = P["probe_seeds"];
  const bool cuda = P["device"] == "cuda";
  const Options opt = preset_options(Preset::paper);
  const std::size_t nf = families.size(), n = nf + std::size_t(seeds);
  Progress bar("chunked drift", double(n), env.progress);
  std::vector<std::map<std::string, Curves>> res(n);
  std::vector<double> theta(seeds);
  parallel_for(n, env.jobs, [&](std::size_t i) {
    if (i < nf) {
      res[i] = run_stream(deps::make_stream(families[i], Dims{1, T, H, D, D}, 2000, opt), opt, C, cuda, true);
    } else {
      const deps::AngleStream a = deps::near_collinear(Dims{1, pT, 1, pD, pD}, 3000 + (i - nf));
      theta[i - nf] = a.theta;
      res[i] = run_stream(a.stream, opt, C, cuda, true);
    }
    bar.add(1);
  });

  json out = {{"families", json::array()}, {"probe", json::array()}};
  for (std::size_t f = 0; f < nf; ++f) {
    json fam = {{"family", families[f]}, {"source", deps::stream_source(families[f])}, {"T", T}, {"kinds", json::array()}};
    for (const std::string& kind : deps::chunked_kinds()) {
      const Curves& c = res[f].at(kind);
      const Spread ch = spread(c.chunked), fu = spread(c.fused), ev = spread(c.env);
      const double mc = max_finite_or_inf(ch.worst), mf = max_finite_or_inf(fu.worst);
      long first = -1;
      for (long x : c.exits)
        if (x >= 0) first = first < 0 ? x + 1 : std::min(first, x + 1);
      fam["kinds"].push_back({{"kind", kind},
                              {"fused", impl::to_string(deps::chunked_counterpart(kind))},
                              {"chunked_median", xy(log_downsample(ch.median, per_decade, Reduce::median))},
                              {"chunked_worst", xy(log_downsample(ch.worst, per_decade, Reduce::max))},
                              {"fused_median", xy(log_downsample(fu.median, per_decade, Reduce::median))},
                              {"env_median", xy(log_downsample(ev.median, per_decade, Reduce::median))},
                              {"chunked_max", mc},
                              {"fused_max", mf},
                              {"chunked_at_T", ch.worst.back()},
                              {"fused_at_T", fu.worst.back()},
                              {"first_exit", first}});
    }
    out["families"].push_back(fam);
  }
  for (int sd = 0; sd < seeds; ++sd) {
    json row = {{"seed", 3000 + sd}, {"theta", theta[sd]}, {"kinds", json::array()}};
    for (const std::string& kind : deps::chunked_kinds()) {
      const Curves& c = res[nf + sd].at(kind);
      row["kinds"].push_back({{"kind", kind},
                              {"chunked_max", max_finite_or_inf(c.chunked[0])},
                              {"fused_max", max_finite_or_inf(c.fused[0])},
                              {"first_exit", c.exits[0] < 0 ? -1 : c.exits[0] + 1}});
    }
    out["probe"].push_back(row);
  }
  std::sort(out["probe"].begin(), out["probe"].end(),
            [](const json& a, const json& b) { return a["theta"].get<double>() < b["theta"].get<double>(); });
  return out;
}

Figure drift_figure(const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  f.plot = step_plot("chunked_drift_o_" + name, "Chunked against recurrent drift, family " + gp_literal(name),
                     "row error max_i |o_{t,i} - o^{ref}_{t,i}| / max_i |o^{ref}_{t,i}|", fam["T"].get<double>());
  int colour = 0;
  std::vector<std::string> fused_drawn;  // chunked-fp32 and chunked-tf32 share fused fp32: one curve, one legend entry
  for (const auto& k : fam["kinds"]) {
    const std::string kn = k["kind"], fn = k["fused"];
    Series ch{kn + " median", Series::Style::line, colour};
    ch.x = k["chunked_median"]["x"].get<std::vector<double>>();
    ch.y = k["chunked_median"]["y"].get<std::vector<double>>();
    Series fu{"fused " + fn + " median", Series::Style::dashed, colour};
    fu.x = k["fused_median"]["x"].get<std::vector<double>>();
    fu.y = k["fused_median"]["y"].get<std::vector<double>>();
    Series ev{kn + " envelope", Series::Style::dotted, colour};
    ev.x = k["env_median"]["x"].get<std::vector<double>>();
    ev.y = k["env_median"]["y"].get<std::vector<double>>();
    const bool fused_new = std::find(fused_drawn.begin(), fused_drawn.end(), fn) == fused_drawn.end();
    if (fused_new) fused_drawn.push_back(fn);
    for (Series* s : {&ch, &fu, &ev})
      if (s != &fu || fused_new) f.plot.series.push_back(*s);
    ++colour;
  }
  f.caption = "Error of o_t per step against the double reference (relative to the row's largest element), median over "
              "heads: each chunked implementation (solid), the fused recurrent kernel with the same inputs and state "
              "precision (dashed, the colour of the first chunked implementation it stands beside: chunked-fp32 and "
              "chunked-tf32 share fused fp32), and the error model's envelope at the chunked policy's own precision "
              "(dotted). Family " + name + ". Both axes logarithmic.";
  return f;
}

Cell ratio_cell(double a, double b) { return b > 0 && std::isfinite(a) ? Cell(num(a / b)) : Cell(text_cell("n/a")); }

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "chunked-drift";
  s.title = "Drift of the chunked kernels";
  s.data = R;
  const bool cuda = P["device"] == "cuda";
  s.blocks.push_back(para(
      "The chunked form (docs/CHUNKED.md) replaces the recurrence's dependent steps by matrix products and triangular "
      "solves inside chunks of {C} steps. Each chunked implementation runs the paper preset on {H} heads of dimension "
      "{D} for T = {T} steps; next to it runs the fused recurrent kernel with the same input type and state precision "
      "(fp32 for chunked-fp32, chunked-tf32 and chunked-scan-fp32, bf16-state for chunked-bf16, whose state enters every "
      "product rounded to bf16, bf16 for chunked-scan-bf16, whose state stays in float). The scan kinds are the "
      "chunk-parallel form (docs/CHUNKED.md, the scan form): gates from a Cholesky factor of each chunk's prefix sum M_c in "
      "double, the state in float. Errors are against the double recurrence fed exactly the consumed inputs; the envelope is the error "
      "model's at each chunked policy's own precision (accuracy::precision_of and accuracy::baselines of the "
      "ChunkedKind, docs/CHUNKED.md). They ran {where}.",
      {{"C", num(P["C"].get<double>())},
       {"H", num(P["H"].get<double>())},
       {"D", num(P["D"].get<double>())},
       {"T", num(P["T"].get<double>())},
       {"where", std::string(cuda ? "on the GPU" : "as their CPU twins (no GPU in use), which reproduce the kernels' numerics")}}));

  Table t;
  t.caption = "Worst row error of o_t over all steps, chunked and fused, and envelope exits";
  t.columns = {"family", "chunked", "worst over steps", "fused counterpart", "its worst over steps", "chunked over fused",
               "chunked worst at T", "first step outside the envelope"};
  std::map<std::string, double> worst_ratio;
  std::map<std::string, long> exit_by_kind;
  for (const auto& fam : R["families"])
    for (const auto& k : fam["kinds"]) {
      const std::string kn = k["kind"];
      const double mc = k["chunked_max"], mf = k["fused_max"];
      const long fe = k["first_exit"];
      t.rows.push_back({Code{fam["family"]}, Code{kn}, num(mc), Code{k["fused"]}, num(mf), ratio_cell(mc, mf),
                        num(k["chunked_at_T"].get<double>()), step_or_never(fe)});
      if (fe > 0) exit_by_kind[kn] = exit_by_kind.count(kn) && exit_by_kind[kn] > 0 ? std::min(exit_by_kind[kn], fe) : fe;
      else if (!exit_by_kind.count(kn)) exit_by_kind[kn] = -1;
    }
  s.blocks.push_back(t);
  for (const auto& fam : R["families"]) {
    s.blocks.push_back(para("Family {f}: {source}.", {{"f", Code{fam["family"]}}, {"source", Code{fam["source"].get<std::string>()}}}));
    s.blocks.push_back(drift_figure(fam));
  }

  // The near-collinear probe.
  Table p;
  p.caption = "Near-collinear keys: worst row error of o_t over the stream, chunked and fused, by key angle";
  p.columns = {"theta (radians)"};
  for (const std::string& kind : deps::chunked_kinds()) {
    p.columns.push_back(kind);
    p.columns.push_back("fused for " + kind);
    p.columns.push_back("ratio for " + kind);
    p.columns.push_back("first step outside, " + kind);
  }
  for (const auto& row : R["probe"]) {
    std::vector<Cell> r = {num(row["theta"].get<double>())};
    for (const auto& k : row["kinds"]) {
      const std::string kn = k["kind"];
      const double mc = k["chunked_max"], mf = k["fused_max"];
      r.push_back(num(mc));
      r.push_back(num(mf));
      r.push_back(ratio_cell(mc, mf));
      r.push_back(step_or_never(k["first_exit"].get<long>()));
      if (mf > 0 && std::isfinite(mc)) worst_ratio[kn] = std::max(worst_ratio[kn], mc / mf);
      else if (!std::isfinite(mc)) worst_ratio[kn] = INFINITY;
      const long fe = k["first_exit"];
      if (fe > 0) exit_by_kind[kn] = exit_by_kind.count(kn) && exit_by_kind[kn] > 0 ? std::min(exit_by_kind[kn], fe) : fe;
    }
    p.rows.push_back(r);
  }
  s.blocks.push_back(para(
      "Probe: {n} streams of the generators' near_collinear family ({T} steps, one head of dimension {D}), each with all "
      "keys at one angle theta from a common direction, drawn between the family's bounds. Small theta makes the "
      "chunk's Gram matrix near rank one: its LDL^T pivots and the state's triangular system are the places where "
      "the chunked form could amplify rounding that the recurrence does not. The ratio column divides the chunked "
      "worst error by the fused kernel's on the same stream.",
      {{"n", num(P["probe_seeds"].get<double>())}, {"T", num(P["probe_T"].get<double>())}, {"D", num(P["probe_D"].get<double>())}}));
  s.blocks.push_back(p);

  for (const std::string& kind : deps::chunked_kinds()) {
    if (worst_ratio.count(kind))
      b.headlines.push_back({"largest ratio of the chunked to the fused worst row error on the near-collinear probe streams, " + kind,
                             std::isfinite(worst_ratio[kind]) ? Cell(num(worst_ratio[kind])) : Cell(text_cell("not finite")),
                             "chunked-drift"});
    if (exit_by_kind.count(kind))
      b.headlines.push_back({"first step outside the error model's envelope, " + kind + ", any stream",
                             step_or_never(exit_by_kind[kind]), "chunked-drift"});
  }
  return b;
}

}  // namespace

Stage chunked_drift_stage() {
  return {"chunked-drift", "Drift of the chunked kernels", params, compute, build};
}

}  // namespace vla::report
