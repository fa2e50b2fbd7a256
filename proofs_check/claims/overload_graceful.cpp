// overload-graceful [4]: "for n > d_h, VLA degrades more gracefully than additive
// linear attention, because the adaptive penalty overwrites recently written
// directions preferentially and so partly preserves old associations".
//
// Memory level (NOT the paper's trained MQAR): n pairs written, read back with
// the keys (recall.hpp), at loads n/d_h from 0.5 to 3. For each key distribution
// and lambda0, VLA "degrades more gracefully" when its accuracy is at least
// linear attention's at every overload n > d_h. The paper gives neither lambda0
// nor the key statistics: swept, and the verdict is holds / conditional /
// refuted by how many settings agree.
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
  std::size_t agree = 0, total = 0;
  std::vector<std::string> failing;
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
      bool graceful = true;
      for (std::size_t i = 0; i < ns.size(); ++i)
        if (ns[i] > d) graceful = graceful && va[i] >= la[i];
      ++total;
      agree += graceful;
      if (!graceful) failing.push_back(to_string(kd) + ", lambda0 = " + sci(l0, 2));
      acc["VLA lambda0=" + sci(l0, 2)] = va;
    }
    acc["linear attention"] = la;
    acc["DeltaNet beta=1 decay=1"] = curve(dn);
    std::vector<double> load;
    for (int n : ns) load.push_back(double(n) / d);
    r.evidence["recall vs load, " + to_string(kd)] = {{"n_over_dh", load}, {"accuracy", acc}};
    ctx.say("  overload: " + to_string(kd) + " done");
  }
  r.verdict = decide_sweep(agree, total);
  std::string fails;
  for (const auto& f : failing) fails += (fails.empty() ? "" : "; ") + f;
  r.summary = "memory level: VLA at least as accurate as linear attention at every n > d_h in " + std::to_string(agree) +
              " of " + std::to_string(total) + " settings";
  r.conditions = {"Memory-level task (write n pairs, read back with the keys, decode by the nearest value): NOT the "
                  "paper's trained MQAR.",
                  "Settings where linear attention does better at some n > d_h: " +
                      (fails.empty() ? std::string("none") : fails) + "."};
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
