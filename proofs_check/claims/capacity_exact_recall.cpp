// capacity-exact-recall [3.2]: "d_h associations per head; new writes go
// orthogonally to recently used subspaces; exact recall up to the capacity".
//
// Memory level (NOT the paper's trained MQAR): n <= d_h pairs are written and the
// state is read back with each key.
//  * Exactness at MPFR: max_i ||S_n k^_i - v_i|| / ||v_i|| at 128 and 256 bits, for
//    orthonormal keys and for generic keys (exact = scales with the unit roundoff).
//  * Decoding: exact-match accuracy at n = d_h and n = d_h/2 (recall.hpp), swept
//    over lambda0 and the key distribution.
//  * "Orthogonal writes": the overlap |a^_t . k^_s| of each write direction with
//    the earlier keys, against |k^_t . k^_s| (the write direction of linear
//    attention and DeltaNet).
// Derived and checked: the write identity S_t k^_t = (1 - c_t) S_{t-1} k^_t + c_t v_t
// (c_t = a^_t . k^_t), so the latest pair is stored exactly only when c_t = 1; and,
// with the gate unnormalised (recursive least squares), S_n K - V = -lambda0 V
// (lambda0 I + K^T K)^{-1} exactly for n <= d_h independent keys.
#include <cmath>

#include <algorithm>

#include "common.hpp"
#include "vla/claims/measures.hpp"
#include "vla/claims/recall.hpp"
#include "vla/properties/generators.hpp"

namespace vla::claims {
namespace {

using hp::Mp;
using MatM = hp::Mat<Mp>;
using VecM = hp::Vec<Mp>;

VecM value_at(const Stream& s, int t) {
  VecM x(s.dims.Dv);
  for (int i = 0; i < s.dims.Dv; ++i) x(i) = Mp(s.v[std::size_t(t) * s.dims.Dv + i]);
  return x;
}

}  // namespace

namespace measure {

Stream basis_key_stream(int n, int dk, int dv, std::uint64_t seed) {
  Stream s = props::make_stream(props::Family::gaussian, Dims{1, n, 1, dk, dv}, seed);
  std::fill(s.k.begin(), s.k.end(), 0.0);
  for (int i = 0; i < n; ++i) s.k[std::size_t(i) * dk + std::size_t(i % dk)] = 1.0;
  s.q = s.k;
  return s;
}

// max_i ||S_n k^_i - v_i|| / ||v_i|| after the whole stream.
double recall_error(const Stream& s, const Options& opt) {
  ref::TraceOptions topt;
  topt.with_S = true;
  topt.with_A = false;
  const auto tr = ref::trace_head<Mp>(s, opt, topt);
  double worst = 0;
  for (int i = 0; i < s.dims.T; ++i) {
    const VecM v = value_at(s, i);
    worst = std::max(worst, hp::as_double(Mp((tr.back().S * tr[std::size_t(i)].k_hat - v).norm() / v.norm())));
  }
  return worst;
}

// max_t ||S_t k^_t - ((1 - c_t) S_{t-1} k^_t + c_t v_t)||.
double write_identity(const Stream& s, const Options& opt) {
  ref::TraceOptions topt;
  topt.with_S = true;
  topt.with_A = false;
  const auto tr = ref::trace_head<Mp>(s, opt, topt);
  MatM prev = MatM::Zero(s.dims.Dv, s.dims.Dk);
  double worst = 0;
  for (std::size_t t = 0; t < tr.size(); ++t) {
    const VecM k = tr[t].k_hat;
    const VecM expect = Mp(Mp(1) - tr[t].c) * (prev * k) + tr[t].c * value_at(s, int(t));
    worst = std::max(worst, hp::as_double(Mp((tr[t].S * k - expect).norm())));
    prev = tr[t].S;
  }
  return worst;
}

}  // namespace measure

namespace {

// || (S_n K - V) + lambda0 V (lambda0 I + K^T K)^{-1} ||_F with the gate unnormalised.
double rls_formula(const Stream& s, double lambda0) {
  Options opt;
  opt.normalize = Normalize::key;
  opt.lambda0 = lambda0;
  opt.feature_map = FeatureMap::identity;
  ref::TraceOptions topt;
  topt.with_S = true;
  topt.with_A = false;
  const auto tr = ref::trace_head<Mp>(s, opt, topt);
  const int n = s.dims.T, dk = s.dims.Dk, dv = s.dims.Dv;
  MatM K(dk, n), V(dv, n);
  for (int i = 0; i < n; ++i) {
    K.col(i) = tr[std::size_t(i)].k_hat;
    V.col(i) = value_at(s, i);
  }
  const MatM G = Mp(lambda0) * MatM::Identity(n, n) + K.transpose() * K;
  // X = V G^{-1}  <=>  G X^T = V^T (G symmetric).
  const MatM X = hp::solve(G, MatM(V.transpose())).transpose();
  return hp::as_double(Mp((tr.back().S * K - V + Mp(lambda0) * X).norm()));
}

// Mean |a^_t . k^_s| and |k^_t . k^_s| over s < t (double trace).
std::pair<double, double> write_overlaps(const Stream& s, const Options& opt) {
  ref::TraceOptions topt;
  topt.with_A = false;
  const auto tr = ref::trace_head<double>(s, opt, topt);
  double ak = 0, kk = 0;
  long n = 0;
  for (std::size_t t = 1; t < tr.size(); ++t)
    for (std::size_t u = 0; u < t; ++u, ++n) {
      ak += std::fabs(tr[t].a_hat.dot(tr[u].k_hat));
      kk += std::fabs(tr[t].k_hat.dot(tr[u].k_hat));
    }
  return {ak / double(n), kk / double(n)};
}

void run(const RunContext& ctx, ClaimResult& r) {
  const bool quick = ctx.quick();
  const int d = 8;
  // Exactness at MPFR, n = d pairs.
  // Orthonormal keys: the unit basis vectors (exactly orthogonal in every precision; with
  // elu1 no two feature vectors are orthogonal, so the identity map is used).
  Options ortho_opt;
  ortho_opt.feature_map = FeatureMap::identity;
  const Stream ortho = measure::basis_key_stream(d, d, 3, 1);
  props::MakeOptions id_mo;
  id_mo.feature_map = FeatureMap::identity;
  const auto gauss_elu = props::make_case(props::Family::gaussian, Dims{1, d, 1, d, 3}, 1);
  const auto gauss_id = props::make_case(props::Family::gaussian, Dims{1, d, 1, d, 3}, 1, id_mo);
  const PrecisionPair e_ortho = at_two_precisions([&] { return measure::recall_error(ortho, ortho_opt); });
  const PrecisionPair e_elu = at_two_precisions([&] { return measure::recall_error(gauss_elu.stream, gauss_elu.options()); });
  const PrecisionPair e_id = at_two_precisions([&] { return measure::recall_error(gauss_id.stream, gauss_id.options()); });
  PrecisionPair ident{0, 0, kBitsLo, kBitsHi}, rls = ident;
  const std::vector<std::pair<const Stream*, Options>> idents = {
      {&ortho, ortho_opt}, {&gauss_elu.stream, gauss_elu.options()}, {&gauss_id.stream, gauss_id.options()}};
  for (const auto& [st, o] : idents) {
    const PrecisionPair p = at_two_precisions([&] { return measure::write_identity(*st, o); });
    keep_least_exact(ident, p);
  }
  for (double l0 : {1.0, 0.01}) {
    const PrecisionPair p = at_two_precisions([&] { return rls_formula(gauss_id.stream, l0); });
    keep_least_exact(rls, p);
  }
  const bool exact_orthogonal = exact_by_precision_scaling(e_ortho);
  const bool exact_generic = exact_by_precision_scaling(e_elu) && exact_by_precision_scaling(e_id);
  ctx.say("  capacity: exactness at MPFR done");

  // Decoding accuracy at the capacity (memory level).
  const int dh = 32, reps = quick ? 4 : 20;
  Json acc_rows = Json::array();
  double acc_min = 1, acc_max = 0;
  for (KeyDist kd : {KeyDist::gaussian_elu1, KeyDist::gaussian_identity}) {
    for (double l0 : {0.01, 0.1, 1.0, 10.0}) {
      Options vla;
      vla.lambda0 = l0;
      RecallTask full{dh, dh, dh, kd, Filler::pad, reps, 1}, half{dh, dh / 2, dh / 2, kd, Filler::pad, reps, 1};
      const double a_full = recall_accuracy(full, vla).accuracy, a_half = recall_accuracy(half, vla).accuracy;
      acc_min = std::min(acc_min, a_full);
      acc_max = std::max(acc_max, a_full);
      acc_rows.push_back({{"keys", to_string(kd)}, {"lambda0", l0}, {"accuracy n = d_h/2", a_half},
                          {"accuracy n = d_h", a_full}});
    }
  }
  // Accuracy against the load up to the capacity, every model (plot-ready series).
  std::vector<std::pair<std::string, Json>> series;
  for (KeyDist kd : {KeyDist::gaussian_elu1, KeyDist::gaussian_identity}) {
    const std::vector<int> ns = {dh / 4, dh / 2, 3 * dh / 4, dh};
    Json acc = Json::object();
    for (const auto& m : recall_models({0.1, 1.0}, {1.0}, {1.0})) {
      std::vector<double> a;
      for (int n : ns) a.push_back(recall_accuracy(RecallTask{dh, n, n, kd, Filler::pad, reps, 1}, m.opt).accuracy);
      acc[m.label] = a;
    }
    std::vector<double> load;
    for (int n : ns) load.push_back(double(n) / dh);
    series.push_back({"recall vs load up to capacity, " + to_string(kd), {{"n_over_dh", load}, {"accuracy", acc}}});
  }
  // Overlap of the writes with earlier keys (elu1 keys, n = d_h).
  Json overlap_rows = Json::array();
  for (double l0 : {0.01, 1.0}) {
    const auto cs = props::make_case(props::Family::gaussian, Dims{1, dh, 1, dh, dh}, 7);
    Options o = cs.options();
    o.lambda0 = l0;
    const auto [ak, kk] = write_overlaps(cs.stream, o);
    overlap_rows.push_back({{"lambda0", l0}, {"mean |a^_t . k^_s|, s < t (VLA write)", ak},
                            {"mean |k^_t . k^_s| (linear/DeltaNet write)", kk}});
  }
  ctx.say("  capacity: memory-level recall done");

  // Minimal counterexample: two pairs in two dimensions (elu1, lambda0 = 1).
  const Stream cx = stream_of({{1.0, -40.0}, {0.0, 0.0}}, {{1.0}, {-1.0}});
  Options co;
  double cx_err = 0;
  {
    ref::MpfrPrecision p(kBitsHi);
    cx_err = measure::recall_error(cx, co);
  }

  r.verdict = decide_capacity(exact_orthogonal, exact_generic);
  r.summary = "memory level: exact recall up to d_h only for orthogonal keys; generic keys are stored approximately "
              "(decoding accuracy at n = d_h: " + sci(acc_min, 3) + " .. " + sci(acc_max, 3) + ")";
  r.conditions = {"Memory-level task (write n pairs, read back with the keys, decode by nearest value): NOT the paper's "
                  "trained MQAR experiment.",
                  "Exact (S_n k^_i = v_i for all i <= n = d_h) for orthonormal keys: " +
                      std::string(exact_orthogonal ? "yes" : "no") + "; for generic keys: " +
                      std::string(exact_generic ? "yes" : "no") + ".",
                  "With the paper's elu1 features no two keys are orthogonal (every feature is > 0), so exact recall of "
                  "more than one pair cannot be guaranteed.",
                  "A write with c_t < 1 moves S k^_t only part of the way to v_t, and moves the read-out of earlier keys "
                  "by r_t (a^_t . k^_s)."};
  r.evidence["max_i ||S_n k^_i - v_i|| / ||v_i||, unit basis keys (identity map), n = d = 8"] = pair_json(e_ortho);
  r.evidence["same, gaussian keys, elu1"] = pair_json(e_elu);
  r.evidence["same, gaussian keys, identity map"] = pair_json(e_id);
  r.evidence["decoding accuracy (d_h = 32, reps " + std::to_string(reps) + ")"] = acc_rows;
  r.evidence["write overlaps with earlier keys (d_h = 32, n = 32)"] = overlap_rows;
  for (const auto& [name, sv] : series) r.evidence[name] = sv;
  if (!exact_generic) {
    Counterexample c;
    c.description = "Two pairs, Dk = 2, Dv = 1, elu1, lambda0 = 1: k^_1 ~ e_1, k^_2 = (1,1)/sqrt 2, v = (1, -1). The second "
                    "write's gate a^_2 is not orthogonal to k^_1, so it overwrites part of the first pair.";
    c.input = stream_json(cx, co);
    c.quantity = "max_i ||S_2 k^_i - v_i|| / ||v_i||";
    c.claimed = "0 (exact recall, n = 2 <= d_h = 2)";
    c.computed = sci(cx_err, 12);
    c.margin = cx_err;
    c.precision_bits = kBitsHi;
    r.counterexample = c;
  }
  Corrected cs;
  cs.statement = "Each write satisfies S_t k^_t = (1 - c_t) S_{t-1} k^_t + c_t v_t with c_t = a^_t . k^_t, so a pair is "
                 "stored exactly only when c_t = 1; for orthonormal keys every pair up to n = d_h is recalled exactly. With "
                 "the gate unnormalised (recursive least squares) and n <= d_h independent keys, S_n K - V = "
                 "-lambda0 V (lambda0 I + K^T K)^{-1}: exact recall only in the limit lambda0 -> 0.";
  cs.checked = exact_by_precision_scaling(ident) && exact_by_precision_scaling(rls) && exact_orthogonal;
  cs.how = "the write identity at every step of three streams and the RLS formula (lambda0 = 1 and 0.01) at 128 and 256 "
           "bits (differences must scale with the unit roundoff)";
  cs.evidence["write identity"] = pair_json(ident);
  cs.evidence["RLS recall formula"] = pair_json(rls);
  r.corrected = cs;
}

}  // namespace

ClaimDef claim_capacity_exact_recall() {
  return {"capacity-exact-recall", "3.2",
          "VLA keeps the capacity of d_h associations per head, routes new writes orthogonally to recently used "
          "subspaces, and recalls exactly up to the capacity limit.",
          run};
}

}  // namespace vla::claims
