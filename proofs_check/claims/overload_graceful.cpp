// overload-graceful [4]: "for n > d_h, VLA degrades more gracefully than additive
// linear attention, because the adaptive penalty overwrites recently written
// directions preferentially and so partly preserves old associations".
//
// Memory level (NOT the paper's trained MQAR): n pairs written, read back with
// the keys (recall.hpp), at loads n/d_h from 0.5 to 3. For each key distribution
// and lambda0, VLA "degrades more gracefully" when its accuracy is at least
// linear attention's at every overload n > d_h, and when it loses no more
// accuracy from n = d_h than linear attention does (the degradation itself). The
// paper gives neither lambda0 nor the key statistics: swept; holds when both
// readings hold in every setting, refuted when neither holds in any.
#include "common.hpp"
#include "vla/claims/recall.hpp"

namespace vla::claims {
namespace {

void run(const RunContext& ctx, ClaimResult& r) {
  const bool quick = ctx.quick();
  const int d = 32, reps = quick ? 3 : 20;
  const std::vector<int> ns = {16, 32, 48, 64, 96};  // the verdict uses n > d_h
  const std::vector<double> lambdas = {0.1, 1.0, 10.0};
  Options lin, dn;
  lin.model = Model::linear;
  dn.model = Model::deltanet;
  std::size_t agree = 0, agree_drop = 0, total = 0;
  std::vector<std::string> failing, steeper;
  for (KeyDist kd : {KeyDist::gaussian_elu1, KeyDist::gaussian_identity}) {
    auto curve = [&](const Options& o) {
      std::vector<double> a;
      for (int n : ns) a.push_back(recall_accuracy(RecallTask{d, n, n, kd, Filler::pad, reps, 1}, o).accuracy);
      return a;
    };
    Json acc = Json::object();
    const std::vector<double> la = curve(lin);
    for (double l0 : lambdas) {
      Options vla;
      vla.lambda0 = l0;
      const std::vector<double> va = curve(vla);
      // Two readings of "degrades more gracefully": at least as accurate at every overload (levels), and losing
      // no more accuracy from n = d_h than linear attention does (the degradation itself).
      std::size_t at_dh = 0;
      while (at_dh < ns.size() && ns[at_dh] != d) ++at_dh;
      bool graceful = true, smaller_drop = true;
      for (std::size_t i = 0; i < ns.size(); ++i)
        if (ns[i] > d) {
          graceful = graceful && va[i] >= la[i];
          if (at_dh < ns.size()) smaller_drop = smaller_drop && (va[at_dh] - va[i]) <= (la[at_dh] - la[i]);
        }
      ++total;
      agree += graceful;
      agree_drop += smaller_drop;
      if (!graceful) failing.push_back(to_string(kd) + ", lambda0 = " + sci(l0, 2));
      if (!smaller_drop) steeper.push_back(to_string(kd) + ", lambda0 = " + sci(l0, 2));
      acc["VLA lambda0=" + sci(l0, 2)] = va;
    }
    acc["linear attention"] = la;
    acc["DeltaNet beta=1 decay=1"] = curve(dn);
    std::vector<double> load;
    for (int n : ns) load.push_back(double(n) / d);
    r.evidence["recall vs load, " + to_string(kd)] = {{"n_over_dh", load}, {"accuracy", acc}};
    ctx.say("  overload: " + to_string(kd) + " done");
  }
  // Holds only if both readings hold everywhere; refuted if neither holds anywhere.
  const Verdict levels = decide_sweep(agree, total), drops = decide_sweep(agree_drop, total);
  r.verdict = levels == drops ? levels : Verdict::conditional;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& f : v) s += (s.empty() ? "" : "; ") + f;
    return s.empty() ? std::string("none") : s;
  };
  r.summary = "memory level: VLA at least as accurate as linear attention at every n > d_h in " + std::to_string(agree) +
              " of " + std::to_string(total) + " settings, and losing no more accuracy from n = d_h in " +
              std::to_string(agree_drop) + " of " + std::to_string(total);
  r.conditions = {"Memory-level task (write n pairs, read back with the keys, decode by the nearest value): NOT the "
                  "paper's trained MQAR.",
                  "Settings where linear attention does better at some n > d_h: " + list(failing) + ".",
                  "Settings where VLA loses more accuracy than linear attention from n = d_h to some n > d_h: " +
                      list(steeper) + " (where linear attention is already near chance at n = d_h the comparison says "
                      "little).",
                  "The stated mechanism (recently written directions overwritten first) does not hold: the penalty is "
                  "order-free (penalty-contracts-written)."};
  r.evidence["task"] = {{"d_h", d}, {"n", ns}, {"draws", reps}, {"decoding", "largest cosine among the n values"}};
}

}  // namespace

ClaimDef claim_overload_graceful() {
  return {"overload-graceful", "4",
          "In the overload regime n > d_h, VLA degrades more gracefully than additive linear attention, because the "
          "adaptive penalty preferentially overwrites recently written directions.",
          run};
}

}  // namespace vla::claims
