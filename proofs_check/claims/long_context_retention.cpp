// long-context-retention [4]: "n = 8 pairs, T up to 512: VLA keeps accuracy 1.000,
// DeltaNet collapses to about 0.01 at every length, its scalar gate decaying old
// associations before the queries arrive" (trained two-layer MQAR).
//
// As for recall-n24-d32, the numbers belong to trained models (verdict
// `inconclusive`); the memory-level analogue is run as evidence: 8 pairs written
// first, then filler tokens up to T (a repeated pad key or fresh random keys,
// both with value 0), then the memory is read with the 8 keys.
#include <map>

#include "common.hpp"
#include "vla/claims/recall.hpp"

namespace vla::claims {
namespace {

void run(const RunContext& ctx, ClaimResult& r) {
  const bool quick = ctx.quick();
  const int d = 32, n = 8, reps = quick ? 3 : 20;
  const std::vector<int> lengths = quick ? std::vector<int>{8, 64, 512} : std::vector<int>{8, 32, 64, 128, 256, 512};
  const auto models = recall_models({0.1, 1, 10}, quick ? std::vector<double>{1} : std::vector<double>{0.5, 1}, {1, 0.99, 0.9});
  const std::vector<KeyDist> keys = quick ? std::vector<KeyDist>{KeyDist::gaussian_elu1}
                                          : std::vector<KeyDist>{KeyDist::gaussian_elu1, KeyDist::gaussian_identity};
  std::map<std::string, std::pair<double, double>> at_max;  // model -> accuracy range at the longest T
  Json rows = Json::array();
  for (KeyDist kd : keys) {
    for (Filler f : {Filler::pad, Filler::random_key}) {
      Json acc = Json::object();
      for (const auto& m : models) {
        Json row = {{"keys", to_string(kd)}, {"filler", to_string(f)}, {"model", m.label}};
        std::vector<double> curve;
        for (int T : lengths) {
          const double a = recall_accuracy(RecallTask{d, n, T, kd, f, reps, 1}, m.opt).accuracy;
          row["T=" + std::to_string(T)] = a;
          curve.push_back(a);
          if (T == lengths.back()) {
            auto& rg = at_max.try_emplace(m.model, 2.0, -1.0).first->second;
            rg.first = std::min(rg.first, a);
            rg.second = std::max(rg.second, a);
          }
        }
        rows.push_back(row);
        acc[m.label] = curve;
      }
      r.evidence["recall vs T, " + to_string(kd) + ", filler " + to_string(f)] = {{"T", lengths}, {"accuracy", acc}};
      ctx.say("  long-context: " + to_string(kd) + ", " + to_string(f) + " done");
    }
  }
  std::string summary;
  for (const auto& [name, rg] : at_max) summary += (summary.empty() ? "" : ", ") + name + " " + sci(rg.first, 3) + ".." + sci(rg.second, 3);
  r.verdict = Verdict::inconclusive;
  r.summary = "trained-model numbers, not reproducible without training; memory level at T = " +
              std::to_string(lengths.back()) + " (not the paper's experiment): " + summary;
  r.conditions = {"What would settle it: training the paper's two-layer MQAR models at each length; this ledger trains nothing.",
                  "Memory-level analogue (evidence only): the outcome depends on what the filler tokens write, which the "
                  "paper's setting (queries and noise tokens passing through a trained model) does not pin down; both "
                  "a repeated pad key and fresh random keys, with value 0, are reported."};
  r.evidence["task"] = {{"d_h", d}, {"n", n}, {"T", lengths}, {"draws", reps}, {"pairs", "first n positions"},
                        {"decoding", "largest cosine among the n values"}};
  r.evidence["paper (trained)"] = {{"VLA", 1.000}, {"DeltaNet", 0.01}};
  r.evidence["memory level"] = rows;
}

}  // namespace

ClaimDef claim_long_context_retention() {
  return {"long-context-retention", "4",
          "Long-context retention (trained MQAR, n = 8 pairs, T up to 512): VLA keeps accuracy 1.000 while DeltaNet "
          "collapses to about 0.01 at every length.",
          run};
}

}  // namespace vla::claims
