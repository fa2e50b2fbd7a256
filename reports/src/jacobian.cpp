// Jacobian: the step Jacobians J_t = I - a^_t k^_t^T of S_t with respect to
// S_{t-1} (Proposition 2 says ||J_t||_2 = 1 with unit a^ and k^), and the
// gradient's amplification through T steps, ||J_T ... J_1||_2, with and without
// normalisation, in binary128 so that the growth shown is the maths, not
// rounding. The product is formed in binary128; its spectral norm is the square
// root of the largest eigenvalue of P^T P, taken on P scaled to unit max entry
// and rounded to double: that eigenvalue is perfectly conditioned (Weyl), so the
// result is accurate to a few double ulps whatever the growth.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "vla/reference/trace.hpp"
#include "vla/report/curves.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/deps_hp.hpp"
#include "vla/report/parallel.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace {

using nlohmann::json;
using F = ref::Float128;
using MatF = Eigen::Matrix<F, Eigen::Dynamic, Eigen::Dynamic>;
using VecF = Eigen::Matrix<F, Eigen::Dynamic, 1>;

json params(Profile p, const RunEnv&) {
  json j;
  switch (p) {
    case Profile::full:
      j = {{"dims", {32, 64, 96}}, {"lambdas", {0.1, 1.0, 10.0}}, {"T_normalised", 1000}, {"T_unnormalised", 64},
           {"seeds", 2}, {"families", {"gaussian", "adversarial-jacobian"}}};
      break;
    case Profile::quick:
      j = {{"dims", {32, 96}}, {"lambdas", {1.0, 10.0}}, {"T_normalised", 200}, {"T_unnormalised", 32},
           {"seeds", 1}, {"families", {"gaussian"}}};
      break;
    case Profile::tiny:
      j = {{"dims", {8, 96}}, {"lambdas", {1.0}}, {"T_normalised", 30}, {"T_unnormalised", 25}, {"seeds", 1},
           {"families", {"gaussian"}}};
      break;
  }
  // The gradient-window construction (normalised): W warm-up steps per point.
  switch (p) {
    case Profile::full:
      j["window"] = {{"W", {16, 64, 256, 1024, 4096, 16384, 65536}}, {"lambdas", {1.0, 0.1}}};
      break;
    case Profile::quick:
      j["window"] = {{"W", {16, 64, 256, 1024, 4096}}, {"lambdas", {1.0, 0.1}}};
      break;
    case Profile::tiny:
      j["window"] = {{"W", {16, 64}}, {"lambdas", {1.0}}};
      break;
  }
  j["paper"] = {{"d", 96}, {"T", 25}, {"amplification", 1e32}};
  j["per_decade"] = 20;
  j["precision_bits"] = 113;
  return j;
}

// Steps where the product's norm is taken: log-spaced, plus the paper's step.
std::vector<int> checkpoints(int T, int per_decade, int extra) {
  std::vector<int> c;
  for (int i = 0;; ++i) {
    const int t = static_cast<int>(std::lround(std::pow(10.0, double(i) / per_decade)));
    if (t > T) break;
    if (c.empty() || c.back() != t) c.push_back(t);
  }
  if (extra <= T) c.push_back(extra);
  c.push_back(T);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

double log10_spectral_norm(const MatF& P) {
  const F scale = P.cwiseAbs().maxCoeff();
  if (scale == 0) return -std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd Q = (P / scale).unaryExpr([](const F& x) { return static_cast<double>(x); });
  const double lmax = deps::max_eig_sym(Q.transpose() * Q);
  return static_cast<double>(boost::multiprecision::log10(scale)) + 0.5 * std::log10(lmax);
}

struct RunOut {
  std::vector<double> log10_prod;  // at the checkpoints
  std::vector<double> step_norms;  // every step
};

RunOut run_one(const std::string& family, int d, double lambda0, bool normalised, int T, std::uint64_t seed,
               const std::vector<int>& cps) {
  Options opt = preset_options(Preset::paper);
  opt.lambda0 = lambda0;
  opt.normalize = normalised ? Normalize::both : Normalize::none;
  const Stream s = deps::make_stream(family, Dims{1, T, 1, d, d}, seed, opt);
  ref::TraceOptions to;
  to.with_A = false;
  const auto trace = ref::trace_head<F>(s, opt, to);
  RunOut out;
  MatF P = MatF::Identity(d, d);
  std::size_t ci = 0;
  for (const auto& st : trace) {
    out.step_norms.push_back(deps::jacobian_step_norm(st.a_hat, st.k_hat));
    // P <- J_t P with J_t = I - a k^T: the gradient with respect to S_0 is G_T J_T ... J_1.
    const VecF r = P.transpose() * st.k_hat;
    P.noalias() -= st.a_hat * r.transpose();
    if (ci < cps.size() && st.t + 1 == cps[ci]) {
      out.log10_prod.push_back(log10_spectral_norm(P));
      ++ci;
    }
  }
  return out;
}

struct Config {
  int d;
  double lambda0;
  bool normalised;
};

json compute(const json& P, const RunEnv& env) {
  const std::vector<int> dims = P["dims"];
  const std::vector<double> lambdas = P["lambdas"];
  const std::vector<std::string> families = P["families"];
  const int seeds = P["seeds"], per_decade = P["per_decade"], paper_T = P["paper"]["T"];
  std::vector<Config> configs;
  for (bool nrm : {true, false})
    for (int d : dims)
      for (double l : lambdas) configs.push_back({d, l, nrm});
  const int streams = int(families.size()) * seeds;
  std::vector<std::vector<RunOut>> runs(configs.size(), std::vector<RunOut>(streams));
  // Work in units of d^2 * T (the cost of one binary128 step is proportional to d^2).
  double total = 0;
  for (const auto& c : configs) total += double(c.d) * c.d * (c.normalised ? P["T_normalised"] : P["T_unnormalised"]).get<double>() * streams;
  Progress bar("jacobian", total, env.progress);
  parallel_for(configs.size() * streams, env.jobs, [&](std::size_t i) {
    const Config& c = configs[i / streams];
    const int si = int(i % streams);
    const int T = c.normalised ? P["T_normalised"] : P["T_unnormalised"];
    runs[i / streams][si] = run_one(families[si / seeds], c.d, c.lambda0, c.normalised, T, 3000 + si % seeds,
                                    checkpoints(T, per_decade, paper_T));
    bar.add(double(c.d) * c.d * T);
  });

  json out = {{"configs", json::array()}, {"step_norm_source", deps::jacobian_source()}};
  // The window construction: a handful of 2 x 2 recurrences at 256 bits.
  out["windows"] = json::array();
  out["window_source"] = deps::gradient_window_source();
  for (double l : P["window"]["lambdas"])
    for (int W : P["window"]["W"]) {
      const deps::GradientWindow g = deps::gradient_window(W, l);
      out["windows"].push_back({{"lambda0", l}, {"W", g.W}, {"w", g.w}, {"T", g.W + g.w},
                                {"amplification", g.amplification}, {"limit", g.limit}, {"bound", g.bound}});
    }
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const Config& c = configs[k];
    const int T = c.normalised ? P["T_normalised"] : P["T_unnormalised"];
    const auto cps = checkpoints(T, per_decade, paper_T);
    std::vector<double> all_norms, med(cps.size()), mx(cps.size());
    for (std::size_t i = 0; i < cps.size(); ++i) {
      std::vector<double> v;
      for (const auto& r : runs[k]) v.push_back(r.log10_prod[i]);
      med[i] = median_of(v);
      mx[i] = *std::max_element(v.begin(), v.end());
    }
    for (const auto& r : runs[k]) all_norms.insert(all_norms.end(), r.step_norms.begin(), r.step_norms.end());
    json cj = {{"d", c.d},
               {"lambda0", c.lambda0},
               {"normalisation", c.normalised ? "both" : "none"},
               {"T", T},
               {"streams", streams},
               {"steps", cps},
               {"log10_product_median", med},
               {"log10_product_max", mx},
               {"step_norm",
                {{"min", quantile_of(all_norms, 0)},
                 {"q1", quantile_of(all_norms, 0.25)},
                 {"median", quantile_of(all_norms, 0.5)},
                 {"q3", quantile_of(all_norms, 0.75)},
                 {"max", quantile_of(all_norms, 1)}}}};
    const auto it = std::find(cps.begin(), cps.end(), paper_T);
    if (it != cps.end()) {
      const std::size_t i = std::size_t(it - cps.begin());
      cj["at_paper_T"] = {{"log10_median", med[i]}, {"log10_max", mx[i]}};
    }
    out["configs"].push_back(cj);
  }
  return out;
}

std::string cfg_label(const json& c) {
  return "d_h=" + std::to_string(c["d"].get<int>()) + ", {/Symbol l}_0=" + show(num(c["lambda0"].get<double>()));
}

Figure boxes(const json& R, bool normalised) {
  Figure f;
  f.plot.id = normalised ? "jacobian_step_normalised" : "jacobian_step_unnormalised";
  f.plot.title = normalised ? "||J_t||_2 per step, unit gate and key (paper)" : "||J_t||_2 per step, normalisation removed";
  f.plot.xlabel = "head dimension and {/Symbol l}_0";
  f.plot.ylabel = "||J_t||_2 (spectral norm, no unit)";
  f.plot.logy = !normalised;
  f.plot.key = "top left";
  Series s{"distribution over steps and streams (whiskers: min, max; box: quartiles; bar: median)",
           Series::Style::boxes, 0};
  double x = 1;
  for (const auto& c : R["configs"]) {
    if ((c["normalisation"] == "both") != normalised) continue;
    const auto& n = c["step_norm"];
    s.x.push_back(x);
    s.lo.push_back(n["min"]);
    s.q1.push_back(n["q1"]);
    s.y.push_back(n["median"]);
    s.q3.push_back(n["q3"]);
    s.hi.push_back(n["max"]);
    f.plot.xtics.push_back({x, cfg_label(c)});
    x += 1;
  }
  f.plot.xrange = std::make_pair(0.3, x - 0.3);
  f.plot.series.push_back(s);
  if (normalised) {
    f.plot.hlines.push_back({1.0, "Proposition 2: ||J_t||_2 = 1"});
    // The supremum over unit gate and key (properties/FINDINGS: ||J_t|| -> golden ratio as c_t -> 0).
    f.plot.hlines.push_back({(1.0 + std::sqrt(5.0)) / 2.0, "supremum for unit vectors: golden ratio"});
  }
  if (normalised) f.plot.yrange = std::make_pair(0.9, std::max(1.8, s.hi.empty() ? 1.8 : *std::max_element(s.hi.begin(), s.hi.end()) * 1.05));
  f.caption = normalised
                  ? "Spectral norm of each step's Jacobian with the paper's normalisation, over all steps and streams, "
                    "per head dimension and lambda0. The paper's unit-Jacobian proposition says it is exactly one (dotted line)."
                  : "Spectral norm of each step's Jacobian with the key and gate normalisation removed, over all "
                    "steps and streams, per head dimension and lambda0 (logarithmic axis).";
  return f;
}

Figure product(const json& P, const json& R, bool normalised) {
  Figure f;
  f.plot.id = normalised ? "jacobian_product_normalised" : "jacobian_product_unnormalised";
  f.plot.title = normalised ? "Gradient amplification ||J_T ... J_1||_2, unit gate and key (paper)"
                            : "Gradient amplification ||J_T ... J_1||_2, normalisation removed";
  f.plot.xlabel = "number of steps T";
  f.plot.ylabel = "||J_T ... J_1||_2 (no unit)";
  f.plot.logx = f.plot.logy = true;
  f.plot.key = "outside right top vertical";
  std::map<int, int> colour;
  std::map<double, Series::Style> style;
  const Series::Style styles[] = {Series::Style::line, Series::Style::dashed, Series::Style::linespoints};
  for (const auto& c : R["configs"]) {
    if ((c["normalisation"] == "both") != normalised) continue;
    const int d = c["d"];
    const double l = c["lambda0"];
    if (!colour.count(d)) colour[d] = int(colour.size());
    if (!style.count(l)) style[l] = styles[style.size() % 3];
    Series s{cfg_label(c) + " (median)", style[l], colour[d]};
    s.x = c["steps"].get<std::vector<double>>();
    for (double v : c["log10_product_median"]) s.y.push_back(std::pow(10.0, v));
    f.plot.series.push_back(s);
  }
  if (!normalised) {
    Series paper{"paper: 10^{32} after 25 steps at d_h = 96", Series::Style::points, 6};
    paper.x = {P["paper"]["T"].get<double>()};
    paper.y = {P["paper"]["amplification"].get<double>()};
    f.plot.series.push_back(paper);
    f.plot.vlines.push_back({P["paper"]["T"].get<double>(), "T = 25"});
  } else {
    f.plot.hlines.push_back({1.0, "no amplification"});
  }
  f.caption = std::string(normalised ? "With the paper's normalisation: " : "Without normalisation: ") +
              "spectral norm of the product of the step Jacobians (the factor by which a gradient at step T can be "
              "amplified on its way back to the initial state), median over streams, computed in binary128. Colour: "
              "head dimension; line style: lambda0.";
  return f;
}

// Windows (normalised): the construction's amplification against T, with its limit
// and the proven upper bound, per lambda0.
Figure windows(const json& R) {
  Figure f;
  f.plot.id = "jacobian_window_normalised";
  f.plot.title = "Gradient amplification through a window, unit gate and key (paper): the construction";
  f.plot.xlabel = "number of steps T = W + w";
  f.plot.ylabel = "window amplification (no unit)";
  f.plot.logx = f.plot.logy = true;
  f.plot.key = "top left";
  std::map<double, int> colour;
  for (const auto& g : R["windows"]) colour.emplace(g["lambda0"].get<double>(), int(colour.size()));
  for (const auto& [l, col] : colour) {
    Series meas{"{/Symbol l}_0=" + show(num(l)) + ": measured", Series::Style::linespoints, col};
    Series lim{"{/Symbol l}_0=" + show(num(l)) + ": limit (1+{/Symbol k}_0)/(2 sqrt {/Symbol k}_0)", Series::Style::line, col};
    Series bnd{"{/Symbol l}_0=" + show(num(l)) + ": upper bound", Series::Style::dashed, col};
    for (const auto& g : R["windows"]) {
      if (g["lambda0"].get<double>() != l) continue;
      const double T = g["T"].get<double>();
      meas.x.push_back(T), lim.x.push_back(T), bnd.x.push_back(T);
      meas.y.push_back(g["amplification"]), lim.y.push_back(g["limit"]), bnd.y.push_back(g["bound"]);
    }
    f.plot.series.push_back(meas);
    f.plot.series.push_back(lim);
    f.plot.series.push_back(bnd);
  }
  f.plot.hlines.push_back({1.0, "Proposition 2: no amplification"});
  f.caption = "With the paper's normalisation a gradient can still be amplified through many steps, without bound: W "
              "steps of one key make the penalty anisotropic (condition number kappa0 of M), then w steps of a second key, "
              "at the angle that minimises the gate's cosine for that condition number, all share one gate, so the window's "
              "Jacobian is P^w and its norm tends to the limit drawn, of the order of the square root of T over lambda0. "
              "Dashed: the derived upper bound on that window (docs/FINDINGS.md, Gradient flow through many steps). "
              "Computed in MPFR.";
  return f;
}

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "jacobian";
  s.title = "Jacobians and gradient amplification";
  s.data = R;
  std::string dims, lambdas, fams;
  for (const auto& d : P["dims"]) dims += (dims.empty() ? "" : ", ") + std::to_string(d.get<int>());
  for (const auto& l : P["lambdas"]) lambdas += (lambdas.empty() ? "" : ", ") + show(num(l.get<double>()));
  for (const auto& f : P["families"]) fams += (fams.empty() ? "" : ", ") + f.get<std::string>();
  s.blocks.push_back(para(
      "The recurrence runs in binary128 ({bits} significand bits) with the paper's normalisation for T = {Tn} steps "
      "and without it for T = {Tu} steps, for head dimensions {dims} and lambda0 in {lambdas}, on {seeds} seed(s) of "
      "each family ({fams}). J_t = I - a^_t k^_t^T is the Jacobian of S_t with respect to the previous state "
      "(acting on the rows of the state); a gradient at step T reaches the initial state multiplied by J_T ... J_1. Step norms: {src}.",
      {{"bits", num(P["precision_bits"].get<double>())},
       {"Tn", num(P["T_normalised"].get<double>())},
       {"Tu", num(P["T_unnormalised"].get<double>())},
       {"dims", Code{dims}},
       {"lambdas", Code{lambdas}},
       {"seeds", num(P["seeds"].get<double>())},
       {"fams", Code{fams}},
       {"src", Code{R["step_norm_source"].get<std::string>()}}}));
  Table t;
  t.caption = "Step Jacobian norms and the amplification through all steps (normalisation: both, the paper's key and "
              "gate normalisation; none, both removed)";
  t.columns = {"normalisation", "d_h", "lambda0", "median ||J_t||_2", "max ||J_t||_2", "steps T",
               "||J_T ... J_1||_2 (median)", "||J_T ... J_1||_2 (max)"};
  for (const auto& c : R["configs"]) {
    t.rows.push_back({Code{c["normalisation"]}, num(c["d"].get<double>()), num(c["lambda0"].get<double>()),
                      num(c["step_norm"]["median"].get<double>(), 4), num(c["step_norm"]["max"].get<double>(), 4),
                      num(c["T"].get<double>()), num(std::pow(10.0, c["log10_product_median"].back().get<double>())),
                      num(std::pow(10.0, c["log10_product_max"].back().get<double>()))});
  }
  s.blocks.push_back(t);
  // The paper's case: d_h = 96, normalisation removed, 25 steps.
  const int pd = P["paper"]["d"];
  Table pc;
  pc.caption = "The paper's case: normalisation removed, amplification after the paper's number of steps";
  pc.columns = {"d_h", "lambda0", "steps", "||J_T ... J_1||_2 (median)", "(max)", "paper"};
  for (const auto& c : R["configs"]) {
    if (c["normalisation"] != "none" || c["d"] != pd || !c.contains("at_paper_T")) continue;
    const double med = std::pow(10.0, c["at_paper_T"]["log10_median"].get<double>());
    pc.rows.push_back({num(pd), num(c["lambda0"].get<double>()), num(P["paper"]["T"].get<double>()), num(med),
                       num(std::pow(10.0, c["at_paper_T"]["log10_max"].get<double>())),
                       num(P["paper"]["amplification"].get<double>())});
    if (c["lambda0"] == 1.0)
      b.headlines.push_back({"gradient amplification without normalisation, d_h and steps as in the paper, lambda0 one",
                             num(med), "jacobian"});
  }
  if (!pc.rows.empty()) s.blocks.push_back(pc);
  s.blocks.push_back(boxes(R, true));
  s.blocks.push_back(product(P, R, true));
  Table wt;
  wt.caption = "Gradient amplification through a window with the paper's normalisation (the construction; elu1, u = k^)";
  wt.columns = {"lambda0", "W (first key)", "w (second key)", "steps T", "window amplification", "limit", "upper bound"};
  double largest = 0;
  for (const auto& g : R["windows"]) {
    wt.rows.push_back({num(g["lambda0"].get<double>()), num(g["W"].get<double>()), num(g["w"].get<double>()),
                       num(g["T"].get<double>()), num(g["amplification"].get<double>(), 6), num(g["limit"].get<double>(), 6),
                       num(g["bound"].get<double>(), 4)});
    if (g["lambda0"].get<double>() == 1.0 && g["amplification"].get<double>() > largest) {
      largest = g["amplification"];
    }
  }
  s.blocks.push_back(para("Windows. A gradient at step T reaching the state before step s is multiplied by J_T ... J_s; "
                          "the paper's unit-Jacobian proposition would make that at most one. The construction below ({src}) shows it is not bounded "
                          "at all with the paper's normalisation; it is at most polynomial in T (the upper bound).",
                          {{"src", Code{R["window_source"].get<std::string>()}}}));
  s.blocks.push_back(wt);
  s.blocks.push_back(windows(R));
  if (largest > 0)
    b.headlines.push_back({"largest gradient amplification through a window with the paper's normalisation, lambda0 one, "
                           "on the longest construction (the paper's unit-Jacobian proposition implies at most one)",
                           num(largest, 4), "jacobian"});
  s.blocks.push_back(boxes(R, false));
  s.blocks.push_back(product(P, R, false));
  double max_norm = 0;
  for (const auto& c : R["configs"])
    if (c["normalisation"] == "both") max_norm = std::max(max_norm, c["step_norm"]["max"].get<double>());
  b.headlines.push_back({"largest ||J_t||_2 with the paper's normalisation (the paper says exactly one)", num(max_norm, 4),
                         "jacobian"});
  return b;
}

}  // namespace

Stage jacobian_stage() { return {"jacobian", "Jacobians and gradient amplification", params, compute, build}; }

}  // namespace vla::report
