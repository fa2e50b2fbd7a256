// Sherman-Morrison: how far each implementation's A_t is from the exact inverse
// of the accumulated penalty M_t = lambda0 I + sum_{s<=t} u_s u_s^T, against t,
// for the double reference and the three kernels, under the paper preset and
// the vla-v3 stabilisers (whose ridge and floors move A_t away from M_t^{-1} on
// purpose).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "vla/report/curves.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/deps_hp.hpp"
#include "vla/report/parallel.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/reference_runs.hpp"
#include "vla/report/sections.hpp"
#include "vla/reference/run.hpp"

namespace vla::report {

namespace {

using nlohmann::json;

const std::vector<std::string> kImpls = {"double reference", "fp32", "bf16", "bf16-state"};

json params(Profile p, const RunEnv& env) {
  json j;
  switch (p) {
    case Profile::full:
      j = {{"T", 16384}, {"D", 64}, {"seeds", 1}, {"adversarial_T", 4096},
           {"families", {"gaussian", "near_collinear", "adversarial-jacobian"}}};
      break;
    case Profile::quick:
      j = {{"T", 2048}, {"D", 32}, {"seeds", 1}, {"adversarial_T", 1024},
           {"families", {"gaussian", "near_collinear", "adversarial-jacobian"}}};
      break;
    case Profile::tiny:
      j = {{"T", 128}, {"D", 16}, {"seeds", 1}, {"adversarial_T", 64},
           {"families", {"gaussian", "near_collinear", "adversarial-jacobian"}}};
      break;
  }
  j["presets"] = {"paper", "vla-v3"};
  j["device"] = env.cuda ? "cuda" : "cpu";
  return j;
}

// One pass of the double reference that keeps its A_t at each checkpoint and
// every penalty direction u_s it used (u_s depends on one input only, so double
// gives it to a few ulps).
struct RefPenalty {
  std::vector<std::vector<double>> A;
  std::vector<std::vector<double>> us;
};

struct PenaltyObserver {
  const std::vector<int>* cps;
  RefPenalty* out;
  void operator()(int, int t, int, const core::HeadState<double>& st, const core::Workspace<double>& ws,
                  const core::StepInfo<double>&) const {
    out->us.push_back(ws.u);
    const auto it = std::lower_bound(cps->begin(), cps->end(), t + 1);
    if (it != cps->end() && *it == t + 1) out->A.push_back(st.A);
  }
};

RefPenalty reference_with_penalty(const Stream& consumed, const Options& opt, const std::vector<int>& cps) {
  RefPenalty out;
  PenaltyObserver obs{&cps, &out};
  (void)ref::run_recurrent<double>(consumed, opt, obs);
  return out;
}

double condition(const std::vector<std::vector<double>>& us, double lambda0, int upto) {
  const int d = int(us.front().size());
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(d, d) * lambda0;
  for (int s = 0; s < upto; ++s) {
    const Eigen::Map<const Eigen::VectorXd> u(us[s].data(), d);
    M.noalias() += u * u.transpose();
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M, Eigen::EigenvaluesOnly);
  return es.eigenvalues().maxCoeff() / es.eigenvalues().minCoeff();
}

impl::Kind kind_of(const std::string& name) { return impl::parse_kind(name); }

// residual[impl][checkpoint] for one stream and preset, plus cond(M_t).
struct StreamOut {
  std::vector<std::vector<double>> residual;
  std::vector<double> cond;
};

StreamOut run_stream(const Stream& s, const Options& opt, const std::vector<int>& cps, bool cuda, Progress& bar) {
  const int T = s.dims.T;
  StreamOut out;
  // Penalties for float inputs (reference, fp32) and bf16 inputs (bf16 kernels).
  const Stream in_f32 = deps::consumed_inputs(s, impl::Kind::fp32), in_bf16 = deps::consumed_inputs(s, impl::Kind::bf16);
  const RefPenalty r32 = reference_with_penalty(in_f32, opt, cps), r16 = reference_with_penalty(in_bf16, opt, cps);
  for (int c : cps) out.cond.push_back(condition(r32.us, opt.lambda0, c));
  bar.add(2);
  for (const auto& name : kImpls) {
    std::vector<double> res(cps.size());
    if (name == "double reference") {
      for (std::size_t i = 0; i < cps.size(); ++i) res[i] = deps::sm_residual(r32.A[i], r32.us, opt.lambda0, cps[i] - 1, true);
    } else {
      const impl::Kind k = kind_of(name);
      const auto& us = k == impl::Kind::fp32 ? r32.us : r16.us;
      for (std::size_t i = 0; i < cps.size(); ++i) {
        const Outputs o = deps::run_kernel(cps[i] == T ? s : prefix(s, cps[i]), opt, k, cuda);
        res[i] = deps::sm_residual(o.A, us, opt.lambda0, cps[i] - 1, false);
        bar.add(double(cps[i]) / T);
      }
    }
    out.residual.push_back(std::move(res));
  }
  return out;
}

Options preset(const std::string& p) { return preset_options(parse_preset(p)); }

json compute(const json& P, const RunEnv& env) {
  const std::vector<std::string> families = P["families"], presets = P["presets"];
  const int D = P["D"], seeds = P["seeds"];
  const bool cuda = P["device"] == "cuda";
  const std::size_t n = families.size() * presets.size() * seeds;
  std::vector<StreamOut> outs(n);
  Progress bar("sherman-morrison", double(n) * (2 + 3 * 2.0), env.progress);
  parallel_for(n, env.jobs, [&](std::size_t i) {
    const std::size_t sd = i % seeds, p = (i / seeds) % presets.size(), f = i / (seeds * presets.size());
    const Options opt = preset(presets[p]);
    const int T = family_T(P, families[f]);
    const Stream s = deps::make_stream(families[f], Dims{1, T, 1, D, D}, 4000 + sd, opt);
    outs[i] = run_stream(s, opt, doubling_steps(T), cuda, bar);
  });
  json out = {{"families", json::array()}, {"residual_source", deps::sm_residual_source()}};
  for (std::size_t f = 0; f < families.size(); ++f) {
    json fam = {{"family", families[f]},
                {"source", deps::stream_source(families[f])},
                {"steps", doubling_steps(family_T(P, families[f]))},
                {"presets", json::array()}};
    for (std::size_t p = 0; p < presets.size(); ++p) {
      json pj = {{"preset", presets[p]}, {"impls", json::array()}};
      std::vector<std::vector<double>> conds;
      for (int sd = 0; sd < seeds; ++sd) conds.push_back(outs[(f * presets.size() + p) * seeds + sd].cond);
      pj["cond_M_median"] = spread(conds).median;
      for (std::size_t k = 0; k < kImpls.size(); ++k) {
        std::vector<std::vector<double>> curves;
        for (int sd = 0; sd < seeds; ++sd) curves.push_back(outs[(f * presets.size() + p) * seeds + sd].residual[k]);
        const Spread sp = spread(curves);
        pj["impls"].push_back({{"impl", kImpls[k]}, {"median", sp.median}, {"max", sp.worst}});
      }
      fam["presets"].push_back(pj);
    }
    out["families"].push_back(fam);
  }
  return out;
}

Figure figure(const json& fam) {
  Figure f;
  const std::string name = fam["family"];
  const auto steps = fam["steps"].get<std::vector<double>>();
  f.plot = step_plot("sherman_morrison_" + name, "Inverse-penalty residual, family " + gp_literal(name), "||A_t M_t - I||_F", steps.back());
  for (const auto& p : fam["presets"]) {
    const bool v3 = p["preset"] == "vla-v3";
    int colour = 0;
    for (const auto& im : p["impls"]) {
      Series s{im["impl"].get<std::string>() + (v3 ? ", vla-v3" : ", paper"),
               v3 ? Series::Style::dashed : Series::Style::linespoints, colour++};
      s.x = steps;
      s.y = im["median"].get<std::vector<double>>();
      f.plot.series.push_back(s);
    }
  }
  f.caption = "Frobenius norm of A_t M_t - I, where A_t is each implementation's inverse penalty and M_t the exact "
              "accumulated penalty, at steps one, two, four and so on (median over seeds), for the family " + name +
              ". Solid with points: the paper preset; dashed: the vla-v3 stabilisers. Both axes logarithmic.";
  return f;
}

Built build(const json& P, const json& R) {
  Built b;
  Section& s = b.section;
  s.id = "sherman-morrison";
  s.title = "Sherman-Morrison: the inverse penalty";
  s.data = R;
  s.blocks.push_back(para(
      "A_t should equal the inverse of M_t = lambda0 I + sum of u_s u_s^T over the steps so far (exactly, in exact "
      "arithmetic, for the paper preset). Each implementation runs T = {T} steps ({Tadv} for the adversarial "
      "search) on one head of dimension {D}, "
      "{seeds} seed(s) per family; M_t is formed from the penalty directions the double reference uses on the inputs "
      "the implementation consumed (a direction depends on one input only, so double gives it to a few ulps); the "
      "residual of the double reference itself is evaluated in MPFR, the kernels' in double, whose own error is "
      "far below theirs. With vla-v3, the ridge added every so many steps and the floors make A_t differ "
      "from the inverse by design, so its residual measures the stabilisers, not rounding. Residual: {src}.",
      {{"T", num(P["T"].get<double>())},
       {"Tadv", num(P["adversarial_T"].get<double>())},
       {"D", num(P["D"].get<double>())},
       {"seeds", num(P["seeds"].get<double>())},
       {"src", Code{R["residual_source"].get<std::string>()}}}));
  Table t;
  t.caption = "||A_T M_T - I||_F at the last step (median over seeds), the condition number of M_T, and the residual "
              "that rounding alone makes at float's and at bf16's unit roundoff";
  t.columns = {"family", "preset", "condition number of M_T", "rounding scale, float (D u cond)", "rounding scale, bf16 (D u cond)"};
  // First-order yardstick: an inverse kept to working precision u leaves ||A M - I|| of order D u cond(M) (a
  // backward-stable inverse; Higham, ch. 14). Above it by orders of magnitude, A_T is not an inverse of M_T.
  const double D = P["D"].get<double>(), u_float = 0x1p-24, u_bf16 = 0x1p-8;
  for (const auto& im : R["families"][0]["presets"][0]["impls"]) t.columns.push_back(im["impl"].get<std::string>());
  std::map<std::string, double> worst;
  for (const auto& fam : R["families"]) {
    for (const auto& p : fam["presets"]) {
      const double cond = p["cond_M_median"].back().get<double>();
      std::vector<Cell> row = {Code{fam["family"]}, Code{p["preset"]}, num(cond), num(D * u_float * cond), num(D * u_bf16 * cond)};
      for (const auto& im : p["impls"]) {
        const double v = im["median"].back();
        row.push_back(num(v));
        if (p["preset"] == "paper") worst[im["impl"]] = std::max(worst[im["impl"]], im["max"].back().get<double>());
      }
      t.rows.push_back(row);
    }
  }
  s.blocks.push_back(t);
  s.blocks.push_back(para("How to read it: a residual of the order of the rounding scale of the implementation's state "
                          "(float for fp32 and bf16, bf16 for bf16-state, which stores A in bf16) is that precision's "
                          "rounding; one of order one or more means A_T is no longer an inverse of M_T, as with "
                          "vla-v3's ridge by design."));
  for (const auto& fam : R["families"]) s.blocks.push_back(figure(fam));
  for (const auto& [impl, w] : worst)
    b.headlines.push_back({"largest ||A_T M_T - I||_F at the last step, paper preset, " + impl, num(w), "sherman-morrison"});
  return b;
}

}  // namespace

Stage sherman_morrison_stage() {
  return {"sherman-morrison", "Sherman-Morrison: the inverse penalty", params, compute, build};
}

}  // namespace vla::report
