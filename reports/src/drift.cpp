// Drift: how far the fp32, bf16 and bf16-state kernels move away from the
// exact recurrence, step by step, against the error model's envelope.
//
// The reference for the long curves is the double-precision recurrence fed the
// exact inputs the kernel consumed. Its own error is about 1e-16 times the
// stream's error growth, far below float32's 6e-8 (and bf16's 4e-3) unit
// roundoff; the section checks this on a prefix against the certified MPFR
// reference and prints the certified bits.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "vla/report/curves.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/parallel.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/reference_runs.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

const std::vector<impl::Kind> kKinds = {impl::Kind::fp32, impl::Kind::bf16, impl::Kind::bf16_state};

json params(Profile p, const RunEnv& env) {
  json j;
  switch (p) {
    case Profile::full:
      j = {{"T", 65536}, {"D", 64}, {"H", 2}, {"seeds", 2}, {"prefix_T", 256}, {"per_decade", 40},
           {"adversarial_T", 16384}, {"families", {"gaussian", "near_collinear", "anisotropic", "adversarial-jacobian"}}};
      break;
    case Profile::quick:
      j = {{"T", 4096}, {"D", 32}, {"H", 2}, {"seeds", 1}, {"prefix_T", 64}, {"per_decade", 30},
           {"adversarial_T", 2048}, {"families", {"gaussian", "near_collinear", "anisotropic", "adversarial-jacobian"}}};
      break;
    case Profile::tiny:
      j = {{"T", 300}, {"D", 16}, {"H", 2}, {"seeds", 1}, {"prefix_T", 16}, {"per_decade", 20},
           {"adversarial_T", 100}, {"families", {"gaussian", "near_collinear", "anisotropic", "adversarial-jacobian"}}};
      break;
  }
  j["device"] = env.cuda ? "cuda" : "cpu";
  j["preset"] = "paper";
  if (env.external) {
    j["external"] = {{"label", env.external->label}, {"kind", impl::to_string(env.external->kind)}};
    j["no_cache"] = true;  // the kernel behind a command may change while the command does not
  }
  return j;
}

// One curve set of the section: our kernels, and an external kernel where given.
struct Kernel {
  std::string name;  // "fp32", "bf16", "bf16-state" or "external"
  impl::Kind kind;   // the precision policy: inputs, output format, envelope
  std::function<Outputs(const Stream&, const Options&)> run;
};

std::vector<Kernel> kernels_of(const RunEnv& env, bool cuda) {
  std::vector<Kernel> ks;
  for (impl::Kind kind : kKinds)
    ks.push_back({impl::to_string(kind), kind, [kind, cuda](const Stream& s, const Options& o) { return deps::run_kernel(s, o, kind, cuda); }});
  if (env.external) {
    // One stream at a time: the external process (a server especially) is not
    // shared by the section's worker threads.
    auto gate = std::make_shared<std::mutex>();
    const ExternalKernel x = *env.external;
    ks.push_back({"external", x.kind, [x, gate](const Stream& s, const Options& o) {
                    std::lock_guard<std::mutex> lock(*gate);
                    try {
                      return x.run(deps::consumed_inputs(s, x.kind), o);
                    } catch (const std::exception& e) {
                      // Unavailable: the section says why on the page, and vla report exits 1.
                      throw deps::Unavailable("the external kernel (" + x.label + ") failed: " + e.what());
                    }
                  }});
  }
  return ks;
}

Format format_of(impl::Kind k) { return k == impl::Kind::fp32 ? Format::f32 : Format::bf16; }

// Per-curve results of one (family, seed) for one kernel.
struct KindCurves {
  std::vector<std::vector<double>> o_rel, bits, env;  // per head, per step
  std::vector<std::vector<double>> s_rel;             // per head, per checkpoint
  std::vector<long> exits;                            // per head: the model's first failing step (0-based, -1 none)
  std::vector<long> unjudged_from;                    // per head: the first step holding an element not judged (-1 none)
  long judged = 0, not_judged = 0;                    // output elements, over the heads
  std::string env_source, env_missing;
};

struct TaskResult {
  std::map<std::string, KindCurves> kinds;  // by Kernel::name
  json ref_check;  // seed 0 only
};

double frob_rel(const std::vector<double>& a, std::size_t ao, const std::vector<double>& r, std::size_t n) {
  double num = 0, den = 0;
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    finite = finite && std::isfinite(a[ao + i]);
    num += (a[ao + i] - r[i]) * (a[ao + i] - r[i]);
    den += r[i] * r[i];
  }
  if (!finite) return std::numeric_limits<double>::infinity();
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

TaskResult run_task(const json& P, const std::string& family, int seed, const std::vector<Kernel>& kernels, Progress& bar) {
  const int T = family_T(P, family), D = P["D"], H = P["H"];
  const Dims dims{1, T, H, D, D};
  const Options opt = preset_options(Preset::paper);
  const Stream s = deps::make_stream(family, dims, 1000 + seed, opt);
  const std::vector<int> cps = doubling_steps(T);
  TaskResult tr;

  std::map<bool, RefRun> refs;  // keyed by "consumes bf16"
  for (const Kernel& kernel : kernels) {
    const impl::Kind kind = kernel.kind;
    const bool bf = kind != impl::Kind::fp32;
    if (!refs.count(bf)) {
      refs[bf] = run_reference(deps::consumed_inputs(s, kind), opt, cps);
      bar.add(1);
    }
    const RefRun& ref = refs.at(bf);
    const Outputs cand = kernel.run(s, opt);
    bar.add(1);
    KindCurves kc;
    for (int h = 0; h < H; ++h) {
      kc.o_rel.push_back(step_rel_error(cand, ref.out, 0, h));
      kc.bits.push_back(step_bits_error(cand, ref.out, 0, h, format_of(kind)));
    }
    try {
      for (auto& e : deps::envelopes(kind, s, opt, cand, ref.out)) {
        kc.env.push_back(std::move(e.o_rel));
        kc.exits.push_back(e.first_fail_step);
        kc.unjudged_from.push_back(e.first_not_judged_step);
        kc.judged += e.judged;
        kc.not_judged += e.not_judged;
        kc.env_source = e.source;
      }
    } catch (const deps::Unavailable& e) {
      kc.env_missing = e.what();
    }
    // S_t at the checkpoints: the kernels return the final state, so each
    // checkpoint c < T is a run on the first c steps (the recurrence is causal).
    kc.s_rel.assign(H, std::vector<double>(cps.size()));
    const std::size_t sz = std::size_t(D) * D;
    for (std::size_t ci = 0; ci < cps.size(); ++ci) {
      const Outputs pc = cps[ci] == T ? cand : kernel.run(prefix(s, cps[ci]), opt);
      for (int h = 0; h < H; ++h) kc.s_rel[h][ci] = frob_rel(pc.S, h * sz, ref.S_at[h][ci], sz);
      bar.add(double(cps[ci]) / T);
    }
    tr.kinds[kernel.name] = std::move(kc);
  }

  if (seed == 0) {
    // The double reference against the certified one on a prefix.
    const int PT = std::min(P["prefix_T"].get<int>(), T);
    const Stream sp = prefix(deps::consumed_inputs(s, impl::Kind::fp32), PT);
    json rc = {{"family", family}, {"prefix_T", PT}};
    try {
      const deps::Certified c = deps::certified(sp, opt);
      const RefRun& ref = refs.at(false);
      double worst_double = 0, worst_fp32 = 0;
      Outputs refp = c.out;  // same dims as the prefix
      for (int h = 0; h < H; ++h) {
        // Only the first PT steps of the long double run: it is causal, so they are the prefix's run.
        Outputs dbl = prefix_outputs(ref.out, PT);
        const auto e = step_rel_error(dbl, refp, 0, h);
        for (double x : e) worst_double = std::max(worst_double, x);
        const auto& f = tr.kinds.at("fp32").o_rel[h];
        for (int t = 0; t < PT; ++t) worst_fp32 = std::max(worst_fp32, f[t]);
      }
      rc["double_max_rel_error"] = worst_double;
      rc["fp32_max_rel_error"] = worst_fp32;
      rc["certified_bits"] = c.certified_bits;
      rc["working_bits"] = c.working_bits;
      rc["method"] = c.method;
    } catch (const deps::Unavailable& e) {
      rc["unavailable"] = e.what();
    }
    tr.ref_check = rc;
  }
  return tr;
}

json xy(const XY& v) { return xy_json(v.x, v.y); }

json compute(const json& P, const RunEnv& env) {
  const std::vector<std::string> families = P["families"];
  const int seeds = P["seeds"];
  const int per_decade = P["per_decade"];
  const bool cuda = P["device"] == "cuda";
  const std::vector<Kernel> kernels = kernels_of(env, cuda);
  // Work units: 2 reference runs + a run per kernel + prefix runs (about 2 full runs per kernel).
  const double nk = double(kernels.size());
  Progress bar("drift", double(families.size() * seeds) * (2 + nk + nk * 2.0), env.progress);
  std::vector<TaskResult> tasks(families.size() * seeds);
  std::vector<std::string> sources(families.size());
  for (std::size_t f = 0; f < families.size(); ++f) sources[f] = deps::stream_source(families[f]);
  parallel_for(tasks.size(), env.jobs, [&](std::size_t i) {
    tasks[i] = run_task(P, families[i / seeds], int(i % seeds), kernels, bar);
  });

  json out = {{"families", json::array()}, {"reference_check", json::array()}};
  std::string env_source, env_missing;
  for (std::size_t f = 0; f < families.size(); ++f) {
    const int T = family_T(P, families[f]);
    json fam = {{"family", families[f]}, {"source", sources[f]}, {"T", T}, {"kinds", json::array()}};
    for (const Kernel& kernel : kernels) {
      KindCurves all;
      for (int sd = 0; sd < seeds; ++sd) {
        const KindCurves& kc = tasks[f * seeds + sd].kinds.at(kernel.name);
        all.o_rel.insert(all.o_rel.end(), kc.o_rel.begin(), kc.o_rel.end());
        all.bits.insert(all.bits.end(), kc.bits.begin(), kc.bits.end());
        all.env.insert(all.env.end(), kc.env.begin(), kc.env.end());
        all.exits.insert(all.exits.end(), kc.exits.begin(), kc.exits.end());
        all.unjudged_from.insert(all.unjudged_from.end(), kc.unjudged_from.begin(), kc.unjudged_from.end());
        all.judged += kc.judged;
        all.not_judged += kc.not_judged;
        all.s_rel.insert(all.s_rel.end(), kc.s_rel.begin(), kc.s_rel.end());
        if (!kc.env_source.empty()) env_source = kc.env_source;
        if (!kc.env_missing.empty()) env_missing = kc.env_missing;
      }
      const Spread o = spread(all.o_rel), b = spread(all.bits), s = spread(all.s_rel);
      json k = {{"kind", kernel.name},
                {"policy", impl::to_string(kernel.kind)},
                {"curves", all.o_rel.size()},
                {"o_median", xy(log_downsample(o.median, per_decade, Reduce::median))},
                {"o_worst", xy(log_downsample(o.worst, per_decade, Reduce::max))},
                {"bits_median", xy(log_downsample(b.median, per_decade, Reduce::median))},
                {"bits_worst", xy(log_downsample(b.worst, per_decade, Reduce::max))},
                {"s_steps", doubling_steps(T)},
                {"s_median", s.median},
                {"s_worst", s.worst}};
      double max_worst = 0;
      for (double e : o.worst) max_worst = std::isnan(e) ? e : std::max(max_worst, e);
      k["at_T"] = {{"o_median", o.median.back()}, {"o_worst", o.worst.back()}, {"bits_median", b.median.back()},
                   {"bits_worst", b.worst.back()}, {"s_median", s.median.back()}, {"s_worst", s.worst.back()}};
      k["max_o_worst"] = max_worst;
      if (all.env.size() == all.o_rel.size() && !all.env.empty()) {
        const Spread e = spread(all.env);
        k["env_median"] = xy(log_downsample(e.median, per_decade, Reduce::median));
        k["at_T"]["env_median"] = e.median.back();
      }
      if (all.exits.size() == all.o_rel.size()) {
        json exits = json::array();
        long first = -1;
        int leaving = 0;
        for (long x : all.exits) {
          exits.push_back(x < 0 ? -1 : x + 1);  // 1-based step
          if (x >= 0) {
            ++leaving;
            first = first < 0 ? x + 1 : std::min(first, x + 1);
          }
        }
        k["exits"] = exits;
        k["first_exit"] = first;
        k["curves_leaving"] = leaving;
        long unjudged_first = -1;
        for (long x : all.unjudged_from)
          if (x >= 0) unjudged_first = unjudged_first < 0 ? x + 1 : std::min(unjudged_first, x + 1);  // 1-based step
        k["elements_judged"] = all.judged;
        k["elements_not_judged"] = all.not_judged;
        k["first_not_judged_step"] = unjudged_first;
      }
      fam["kinds"].push_back(k);
    }
    out["families"].push_back(fam);
    out["reference_check"].push_back(tasks[f * seeds].ref_check);
  }
  out["envelope_source"] = env_source;
  if (!env_missing.empty()) out["envelope_missing"] = env_missing;
  return out;
}

Figure o_figure(const json& P, const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  f.plot = step_plot("drift_o_" + name, "Output drift, family " + gp_literal(name),
                     "row error max_i |o_{t,i} - o^{ref}_{t,i}| / max_i |o^{ref}_{t,i}|", fam["T"].get<double>());
  int colour = 0;
  for (const auto& k : fam["kinds"]) {
    const std::string kn = k["kind"];
    if (k.contains("env_median")) {
      // The envelope (dotted) and the headroom between the median error and it (shaded).
      Series env{kn + " envelope", Series::Style::dotted, colour};
      env.x = k["env_median"]["x"].get<std::vector<double>>();
      env.y = k["env_median"]["y"].get<std::vector<double>>();
      Series band{"", Series::Style::band, colour};
      band.x = env.x;
      band.y = k["o_median"]["y"].get<std::vector<double>>();
      band.y_hi = env.y;
      if (band.y.size() == band.x.size()) f.plot.series.push_back(band);
      f.plot.series.push_back(env);
    }
    Series med{kn + " median", Series::Style::line, colour};
    med.x = k["o_median"]["x"].get<std::vector<double>>();
    med.y = k["o_median"]["y"].get<std::vector<double>>();
    Series worst{kn + " worst", Series::Style::dashed, colour};
    worst.x = k["o_worst"]["x"].get<std::vector<double>>();
    worst.y = k["o_worst"]["y"].get<std::vector<double>>();
    f.plot.series.push_back(med);
    f.plot.series.push_back(worst);
    ++colour;
  }
  f.caption = "Error of the output o_t per step against the reference, relative to the row's largest reference "
              "element (the error model's measure), for the stream family " + name +
              ": solid lines are the median over heads and seeds, dashed lines the worst, dotted lines the error "
              "model's envelope (median over the same runs), shaded between the median error and it. A curve above "
              "its envelope means the model rejects that row. Both axes logarithmic.";
  return f;
}

Figure bits_figure(const json& P, const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  f.plot = step_plot("drift_bits_" + name, "Bits of error, family " + gp_literal(name),
                     "bits of error (mean over o_t of log_2(1 + ulps))", fam["T"].get<double>(), /*logy=*/false);
  int colour = 0;
  for (const auto& k : fam["kinds"]) {
    const std::string kn = k["kind"];
    Series med{kn + " median", Series::Style::line, colour};
    med.x = k["bits_median"]["x"].get<std::vector<double>>();
    med.y = k["bits_median"]["y"].get<std::vector<double>>();
    Series worst{kn + " worst", Series::Style::dashed, colour};
    worst.x = k["bits_worst"]["x"].get<std::vector<double>>();
    worst.y = k["bits_worst"]["y"].get<std::vector<double>>();
    f.plot.series.push_back(med);
    f.plot.series.push_back(worst);
    ++colour;
  }
  f.caption = "Error of o_t in bits, as Herbie reports it: per element the base-two logarithm of one plus the "
              "distance in ulps of the output's format (float32 for fp32, bf16 for the bf16 kernels), averaged over "
              "the elements of the step. Zero bits means correctly rounded; the format's significand width (float32's or "
              "bf16's) means no correct bit, so the two formats' bits are not comparable.";
  return f;
}

Figure s_figure(const json& P, const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  f.plot = step_plot("drift_s_" + name, "State drift, family " + gp_literal(name),
                     "relative error ||S_t - S_t^{ref}||_F / ||S_t^{ref}||_F", fam["T"].get<double>());
  int colour = 0;
  for (const auto& k : fam["kinds"]) {
    const std::string kn = k["kind"];
    Series med{kn + " median", Series::Style::linespoints, colour};
    med.x = k["s_steps"].get<std::vector<double>>();
    med.y = k["s_median"].get<std::vector<double>>();
    Series worst{kn + " worst", Series::Style::dashed, colour};
    worst.x = med.x;
    worst.y = k["s_worst"].get<std::vector<double>>();
    f.plot.series.push_back(med);
    f.plot.series.push_back(worst);
    ++colour;
  }
  f.caption = "Relative error of the state S_t against the reference at steps one, two, four and so on up to T "
              "(median over heads and seeds, and worst), for the stream family " + name + ".";
  return f;
}

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "drift";
  s.title = "Drift of the kernels against the reference";
  s.data = R;
  const bool cuda = P["device"] == "cuda";
  std::string families;
  for (const auto& f : P["families"]) families += (families.empty() ? "" : ", ") + f.get<std::string>();
  s.blocks.push_back(para(
      "Each kernel runs the paper preset on {B} batch entry with {H} heads of dimension {D} (Dk = Dv) for T = {T} "
      "steps ({Tadv} for the adversarial search, which scores many candidates per step), for {seeds} seed(s) of "
      "each stream family ({families}); the error is measured against the "
      "double-precision recurrence fed exactly the inputs the kernel consumed (rounded to bf16 for the bf16 "
      "kernels). The kernels ran {where}.",
      {{"B", num(1)},
       {"H", num(P["H"].get<double>())},
       {"D", num(P["D"].get<double>())},
       {"T", num(P["T"].get<double>())},
       {"Tadv", num(P["adversarial_T"].get<double>())},
       {"seeds", num(P["seeds"].get<double>())},
       {"families", Code{families}},
       {"where", std::string(cuda ? "on the GPU (its name is in the summary)" : "as their CPU twins (no GPU in use), "
                                                                               "which reproduce the kernels' numerics")}}));

  if (P.contains("external"))
    s.blocks.push_back(para("The curves named external are a kernel outside this repository, run as {label} on the same "
                            "streams and judged by the {kind} precision policy (its inputs rounded as a {kind} kernel "
                            "consumes them); it is never taken from the report's cache.",
                            {{"label", Code{P["external"]["label"].get<std::string>()}},
                             {"kind", Code{P["external"]["kind"].get<std::string>()}}}));

  // Validation of the double reference.
  double min_ratio = 0;
  {
    Table t;
    t.caption = "The double reference checked against the certified reference on a prefix";
    t.columns = {"family", "prefix steps", "double reference: max row error of o_t", "fp32 kernel: same prefix",
                 "ratio", "certified bits", "working bits"};
    bool any = false;
    std::string missing;
    for (const auto& rc : R["reference_check"]) {
      if (rc.contains("unavailable")) {
        missing = rc["unavailable"];
        continue;
      }
      any = true;
      const double d = rc["double_max_rel_error"], f = rc["fp32_max_rel_error"];
      if (d > 0) min_ratio = min_ratio > 0 ? std::min(min_ratio, f / d) : f / d;
      t.rows.push_back({Code{rc["family"]}, num(rc["prefix_T"].get<double>()), num(d), num(f),
                        d > 0 ? Cell(num(f / d)) : Cell(text_cell("exact")), num(rc["certified_bits"].get<double>()),
                        num(rc["working_bits"].get<double>())});
    }
    s.blocks.push_back(para(
        "Why a double reference: the certified MPFR reference costs far too much at these lengths. The double "
        "recurrence's own error is about the double unit roundoff times the stream's error growth, which is the "
        "float32 kernel's error scaled down by the ratio of the two unit roundoffs (about half a billion). The "
        "table checks this on a prefix of each family against the certified reference: the ratio column is how much "
        "smaller the double reference's error is than the fp32 kernel's."));
    if (any) s.blocks.push_back(t);
    else s.blocks.push_back(para("The certified reference is not in this build ({why}); the check was not run.",
                                 {{"why", Code{missing}}}));
  }

  // Headline table per family and kind.
  Table t;
  t.caption = "Row error of o_t at the last step and over all steps, bits of error, and envelope exits";
  t.columns = {"family", "kernel", "median at T", "worst at T", "worst over all steps", "bits of error at T (median, in the output's format)",
               "S_T relative error (worst)", "envelope at T", "first step outside the envelope", "runs outside",
               "output elements not judged", "first step not judged", "runs"};
  const bool have_env = !R.contains("envelope_missing");
  std::map<std::string, double> worst_by_kind;
  std::map<std::string, long> exit_by_kind;
  std::map<std::string, double> judged_by_kind, unjudged_by_kind;
  for (const auto& fam : R["families"]) {
    for (const auto& k : fam["kinds"]) {
      const auto& a = k["at_T"];
      const std::string kn = k["kind"];
      worst_by_kind[kn] = std::max(worst_by_kind[kn], k["max_o_worst"].get<double>());
      std::vector<Cell> row = {Code{fam["family"]}, Code{kn}, num(a["o_median"].get<double>()),
                               num(a["o_worst"].get<double>()), num(k["max_o_worst"].get<double>()),
                               num(a["bits_median"].get<double>(), 3, "bits"), num(a["s_worst"].get<double>())};
      if (k.contains("exits")) {
        const long fe = k["first_exit"];
        if (a.contains("env_median")) row.push_back(num(a["env_median"].get<double>()));
        else row.push_back(text_cell("no per-step form"));
        const double unjudged = k.value("elements_not_judged", 0.0);
        const long first_unjudged = k.value("first_not_judged_step", -1L);
        // "stays inside" only where every element was judged: an element beyond the policy is not inside anything.
        row.push_back(fe > 0 ? step_or_never(fe) : unjudged > 0 ? text_cell("inside where judged") : step_or_never(fe));
        row.push_back(num(k["curves_leaving"].get<double>()));
        row.push_back(num(unjudged));
        row.push_back(first_unjudged > 0 ? Cell(num(double(first_unjudged))) : Cell(text_cell("none")));
        judged_by_kind[kn] += k.value("elements_judged", 0.0);
        unjudged_by_kind[kn] += unjudged;
        if (fe > 0) exit_by_kind[kn] = exit_by_kind.count(kn) ? std::min(exit_by_kind[kn], fe) : fe;
        else if (!exit_by_kind.count(kn)) exit_by_kind[kn] = -1;
      } else {
        for (int i = 0; i < 5; ++i) row.push_back(text_cell("n/a"));
      }
      row.push_back(num(k["curves"].get<double>()));
      t.rows.push_back(row);
    }
  }
  if (have_env) {
    s.blocks.push_back(para("The envelope is the error model's ({source}): a kernel leaves it at the first step "
                            "where the model rejects one of its output elements, each judged against the tolerance "
                            "the model derives for that element from the precision policy and the stream's "
                            "conditioning. It measures whether a kernel is as accurate as its precision policy "
                            "allows, not whether the policy is accurate enough: a wide envelope (bf16-state's) "
                            "admits large errors. Where the policy's own runs keep no correct bit (a row that "
                            "cancels, or every step after the policy breaks down), elements are not judged: they "
                            "are counted in the table, and such a kernel is only inside where judged.",
                            {{"source", Code{R["envelope_source"].get<std::string>()}}}));
  } else {
    s.status = "partial";
    s.blocks.push_back(para("The error model is not in this build ({why}), so no envelope is drawn and no exit step "
                            "is reported.",
                            {{"why", Code{R["envelope_missing"].get<std::string>()}}}));
  }
  s.blocks.push_back(t);
  for (const auto& fam : R["families"]) {
    s.blocks.push_back(para("Family {f}: {source}.", {{"f", Code{fam["family"]}}, {"source", Code{fam["source"].get<std::string>()}}}));
    if (fam["family"] == "anisotropic")
      s.blocks.push_back(para("This family is built so that its later steps amplify earlier errors by up to about the "
                              "square root of T (docs/FINDINGS.md, \"Gradient flow through many steps\"): every kernel's "
                              "error rises over its last steps, and the envelope rises with it; a large error here is the "
                              "stream's conditioning, which the envelope measures, not a kernel defect."));
    s.blocks.push_back(o_figure(P, fam));
    s.blocks.push_back(s_figure(P, fam));
    s.blocks.push_back(bits_figure(P, fam));
  }
  std::vector<std::string> names;
  for (impl::Kind kind : kKinds) names.push_back(impl::to_string(kind));
  if (P.contains("external")) names.push_back("external");
  for (const std::string& kn : names) {
    if (worst_by_kind.count(kn))
      b.headlines.push_back({"worst row error of o_t (relative to the row's largest element), kernel " + kn +
                                 ", any family and step",
                             num(worst_by_kind[kn]), "drift"});
  }
  for (const std::string& kn : names) {
    if (!exit_by_kind.count(kn)) continue;
    const long fe = exit_by_kind[kn];
    const bool some_unjudged = unjudged_by_kind[kn] > 0;
    b.headlines.push_back({"first step outside the error model's envelope, kernel " + kn + ", any family",
                           fe > 0 || !some_unjudged ? step_or_never(fe) : text_cell("inside where judged"), "drift"});
    if (some_unjudged)
      b.headlines.push_back({"share of its output elements the model could not judge (beyond the policy), kernel " + kn,
                             num(unjudged_by_kind[kn] / (unjudged_by_kind[kn] + judged_by_kind[kn])), "drift"});
  }
  if (min_ratio > 0)
    b.headlines.push_back({"how many times smaller the double reference's error is than the fp32 kernel's (least over "
                           "the families, on the certified prefix)",
                           num(min_ratio, 2), "drift"});
  return b;
}

}  // namespace

Stage drift_stage() {
  return {"drift", "Drift of the kernels against the reference", params, compute, build};
}

}  // namespace vla::report
