// sherman-morrison-exact [2.2]: "A_t = M_t^{-1} is maintained exactly by the
// rank-1 Sherman-Morrison update at O(d^2) per step".
//
// Exactness: at every step of every stream the residual ||A_t M_t - I||_F, with
// M_t = lambda0 I + sum_{s<=t} u_s u_s^T built directly from the penalty
// directions the step used, is computed at 128 and 256 bits. An exact identity
// leaves rounding only, which shrinks with the unit roundoff; an inexact one
// (the published vla-v3 stabilisers: a ridge added every 20 steps, a floor on
// delta) leaves the same residual at every precision.
// Cost: the operation count of one VLA step (counted from the spec's code on a
// counting scalar) as an exact polynomial in D.
#include <cmath>

#include "common.hpp"
#include "vla/claims/flops.hpp"
#include "vla/claims/measures.hpp"
#include "vla/properties/generators.hpp"

namespace vla::claims {

namespace measure {
template <class T>
double sm_residual(const Stream& s, const Options& opt) {
  const auto tr = ref::trace_head<T>(s, opt, ref::TraceOptions{});
  const int dk = s.dims.Dk;
  hp::Mat<T> M = hp::Mat<T>::Identity(dk, dk) * T(opt.lambda0);
  const hp::Mat<T> I = hp::Mat<T>::Identity(dk, dk);
  double worst = 0;
  for (const auto& st : tr) {
    M += st.u * st.u.transpose();
    worst = std::max(worst, hp::as_double(T((st.A * M - I).norm())));
  }
  return worst;
}
template double sm_residual<double>(const Stream&, const Options&);
template double sm_residual<hp::Mp>(const Stream&, const Options&);
}  // namespace measure

namespace {

using hp::Mp;

// The largest cond(M_t) along the stream (double), for the double-precision error scale.
double max_condition(const Stream& s, const Options& opt) {
  const auto tr = ref::trace_head<double>(s, opt, ref::TraceOptions{});
  hp::Mat<double> M = hp::Mat<double>::Identity(s.dims.Dk, s.dims.Dk) * opt.lambda0;
  double kappa = 1;
  for (const auto& st : tr) {
    M += st.u * st.u.transpose();
    const auto sv = hp::singular_values(M);
    kappa = std::max(kappa, sv(0) / sv(sv.size() - 1));
  }
  return kappa;
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
  double worst_double_rel = 0;
  for (int dk : dks) {
    for (const auto& c : cases) {
      for (int seed = 1; seed <= seeds; ++seed) {
        props::MakeOptions mo;
        mo.with_u = c.with_u;
        const auto cs = props::make_case(c.f, Dims{1, T, 1, dk, 2}, std::uint64_t(seed), mo);
        const Options opt = cs.options();
        const PrecisionPair p = at_two_precisions([&] { return measure::sm_residual<Mp>(cs.stream, opt); });
        const double dres = measure::sm_residual<double>(cs.stream, opt), kappa = max_condition(cs.stream, opt);
        const bool ex = exact_by_precision_scaling(p);
        exact = exact && ex;
        if (p.diff_hi >= worst.diff_hi) worst = p;
        // In double the residual is rounding of order t * Dk * cond(M_t) * 2^-53.
        const double normalised = dres / (T * dk * kappa * std::ldexp(1.0, -53));
        worst_double_rel = std::max(worst_double_rel, normalised);
        rows.push_back({{"inputs", c.name}, {"Dk", dk}, {"T", T}, {"seed", seed}, {"lambda0", cs.lambda0},
                        {"residual @128 bits", p.diff_lo}, {"residual @256 bits", p.diff_hi},
                        {"exact", ex}, {"residual @double", dres}, {"cond(M_t)", kappa}});
      }
    }
    ctx.say("  sherman-morrison: Dk=" + std::to_string(dk) + " done");
  }

  // The published stabilisers (vla-v3): ridge A += 1e-3 I every 20 steps, delta >= 1e-4.
  const auto v3case = props::make_case(props::Family::gaussian, Dims{1, T, 1, 4, 2}, 1);
  Options v3 = preset_options(Preset::vla_v3);
  v3.feature_map = v3case.feature_map;
  const PrecisionPair pv3 = at_two_precisions([&] { return measure::sm_residual<Mp>(v3case.stream, v3); });
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
  r.conditions = {"Exact without stabilisers (the paper preset), for every input family tested, including lambda0 from "
                  "1e-8 to 1e8 and ill-conditioned (near-collinear) keys.",
                  "With the published vla-v3 stabilisers (ridge every 20 steps, delta floor) A_t is not M_t^{-1}: residual " +
                      sci(pv3.diff_hi) + " at 256 bits (" + sci(pv3.diff_lo) + " at 128).",
                  "In double the residual is rounding, at most " + sci(worst_double_rel, 3) +
                      " x (t Dk cond(M_t) 2^-53) over these streams."};
  r.evidence["method"] = "M_t = lambda0 I + sum u_s u_s^T from the u the step used (reference trace); residual "
                         "||A_t M_t - I||_F, max over t, at 128 and 256 bits";
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
