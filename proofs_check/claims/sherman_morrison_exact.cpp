// sherman-morrison-exact [2.2]: "A_t = M_t^{-1} is maintained exactly by the
// rank-1 Sherman-Morrison update at O(d^2) per step".
//
// Exactness: at every step of every stream the residual ||A_t M_t - I||_F, with
// M_t = lambda0 I + sum_{s<=t} u_s u_s^T built directly from the penalty
// directions the step used, is computed at 128 and 256 bits (and in double
// against the error model) by the properties' Sherman-Morrison checks. An exact identity
// leaves rounding only, which shrinks with the unit roundoff; an inexact one
// (the published vla-v3 stabilisers: a ridge added every 20 steps, a floor on
// delta) leaves the same residual at every precision.
// Cost: the operation count of one VLA step (counted from the spec's code on a
// counting scalar) as an exact polynomial in D.
#include <algorithm>
#include <cmath>

#include "common.hpp"
#include "vla/claims/flops.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"

namespace vla::claims {

namespace {

using hp::Mp;

// Over every step of one stream: the largest residual ||A_t M_t - I||_F and the
// largest ratio residual / error-model bound (the properties' Sherman-Morrison
// checks, docs/FINDINGS.md "SM"; the bound is infinite once a ridge was added).
struct SmSummary {
  double residual = 0, ratio = 0, kappa = 1;
};
SmSummary summarise(const std::vector<props::SmCheck>& checks) {
  SmSummary s;
  for (const auto& c : checks) {
    s.residual = std::max(s.residual, c.residual);
    s.kappa = std::max(s.kappa, c.kappa);
    if (std::isfinite(c.bound) && c.bound > 0) s.ratio = std::max(s.ratio, c.residual / c.bound);
  }
  return s;
}
SmSummary at_bits(const Stream& s, const Options& opt, long bits) {
  return summarise(props::sherman_morrison_checks(s, opt, 0, 0, bits));
}

void run(const RunContext& ctx, ClaimResult& r) {
  const bool quick = ctx.quick();
  const int T = quick ? 24 : 64;
  struct Case {
    std::string name;
    props::Family f;
    bool with_u;
  };
  const std::vector<Case> cases = {{"gaussian", props::Family::gaussian, false},
                                   {"gaussian, explicit u", props::Family::gaussian, true},
                                   {"near-collinear keys", props::Family::near_collinear, false},
                                   {"repeated keys", props::Family::repeated, false},
                                   {"lambda0 from 1e-8 to 1e8", props::Family::lambda_extremes, false}};
  const std::vector<int> dks = quick ? std::vector<int>{4} : std::vector<int>{4, 8};
  const int seeds = quick ? 1 : 3;
  Json rows = Json::array();
  PrecisionPair worst{0, 0, kBitsLo, kBitsHi};
  bool exact = true;
  double worst_double_rel = 0, worst_model_ratio = 0;
  for (int dk : dks) {
    for (const auto& c : cases) {
      for (int seed = 1; seed <= seeds; ++seed) {
        props::MakeOptions mo;
        mo.with_u = c.with_u;
        const auto cs = props::make_case(c.f, Dims{1, T, 1, dk, 2}, std::uint64_t(seed), mo);
        const Options opt = cs.options();
        const SmSummary lo = at_bits(cs.stream, opt, kBitsLo), hi = at_bits(cs.stream, opt, kBitsHi);
        const SmSummary dbl = summarise(props::sherman_morrison_checks_double(cs.stream, opt, 0, 0));
        const PrecisionPair p{lo.residual, hi.residual, kBitsLo, kBitsHi};
        const bool ex = exact_by_precision_scaling(p);
        exact = exact && ex;
        keep_least_exact(worst, p);
        worst_double_rel = std::max(worst_double_rel, dbl.ratio);
        worst_model_ratio = std::max({worst_model_ratio, lo.ratio, hi.ratio});
        rows.push_back({{"inputs", c.name}, {"Dk", dk}, {"T", T}, {"seed", seed}, {"lambda0", cs.lambda0},
                        {"residual @128 bits", p.diff_lo}, {"residual @256 bits", p.diff_hi}, {"exact", ex},
                        {"residual @double", dbl.residual}, {"residual / model bound @double", dbl.ratio},
                        {"cond(M_t)", hi.kappa}});
      }
    }
    ctx.say("  sherman-morrison: Dk=" + std::to_string(dk) + " done");
  }

  // The published stabilisers (vla-v3): ridge A += 1e-3 I every 20 steps, delta >= 1e-4.
  const auto v3case = props::make_case(props::Family::gaussian, Dims{1, T, 1, 4, 2}, 1);
  Options v3 = preset_options(Preset::vla_v3);
  v3.feature_map = v3case.feature_map;
  const PrecisionPair pv3{at_bits(v3case.stream, v3, kBitsLo).residual, at_bits(v3case.stream, v3, kBitsHi).residual,
                          kBitsLo, kBitsHi};
  const bool v3_exact = exact_by_precision_scaling(pv3);

  // Cost per step, counted from the spec's code.
  Options vla;
  const CostPolynomial square = cost_polynomial([&](int D) { return count_step(vla, D, D).flops(); });
  const CostPolynomial in_dk = cost_polynomial([&](int D) { return count_step(vla, D, 1).flops(); });

  r.verdict = decide_sherman_morrison(exact, square.verified ? double(square.degree) : -1.0, v3_exact);
  r.summary = std::string(exact ? "A_t M_t = I to rounding at every step (residual scales with the unit roundoff)"
                                : "A_t M_t - I does NOT shrink with precision") +
              "; cost " + square.str() + " flops per step at Dk = Dv = D" +
              (v3_exact ? "" : "; the vla-v3 stabilisers break exactness");
  r.conditions = {"Exact without stabilisers (the paper preset), for every input family tested, including lambda0 drawn "
                  "log-uniformly from 1e-8 to 1e8 (the lambda_extremes family: " + std::to_string(seeds) + " seed(s) per "
                  "head dimension here) and ill-conditioned (near-collinear) keys.",
                  "With the published vla-v3 stabilisers A_t is not M_t^{-1}, by its ridge (added to A every 20 steps; "
                  "its delta floor does not act on these streams): residual " +
                      sci(pv3.diff_hi) + " at 256 bits (" + sci(pv3.diff_lo) + " at 128).",
                  "In double the residual stays within the properties' error model (docs/FINDINGS.md, SM): at most " +
                      sci(worst_double_rel, 3) + " of its bound over these streams (" + sci(worst_model_ratio, 3) +
                      " at 128 and 256 bits)."};
  r.evidence["method"] = "props::sherman_morrison_checks: M_t = lambda0 I + sum u_s u_s^T from the u the step used "
                         "(reference trace), residual ||A_t M_t - I||_F max over t, at 128 and 256 bits and in double, "
                         "with the error model of docs/FINDINGS.md (SM)";
  r.evidence["largest residual / error-model bound"] = {{"MPFR", worst_model_ratio}, {"double", worst_double_rel}};
  r.evidence["worst residual"] = pair_json(worst);
  r.evidence["per stream"] = rows;
  r.evidence["vla-v3 residual"] = pair_json(pv3);
  r.evidence["flops per step, Dk = Dv = D"] = square.str();
  r.evidence["flops per step, Dv = 1, Dk = D"] = in_dk.str();
  r.evidence["cost polynomials exact"] = square.verified && in_dk.verified;
}

}  // namespace

ClaimDef claim_sherman_morrison_exact() {
  return {"sherman-morrison-exact", "2.2",
          "The inverse penalty A_t = M_t^{-1} is maintained exactly by the rank-1 Sherman-Morrison update, at O(d^2) "
          "cost per step.",
          run};
}

}  // namespace vla::claims
