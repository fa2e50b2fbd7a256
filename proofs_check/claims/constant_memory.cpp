// constant-memory [5]: "VLA is a constant-memory model: its state has a fixed size,
// independent of T, and needs no KV cache".
//
// The recurrence carries exactly one HeadState from step to step (run.hpp): the
// check records its size (numbers stored in S, A and n) after every step of long
// streams and compares it across T. Softmax attention, for contrast, must keep
// every (k_s, v_s) of the prefix: (Dk + Dv) t numbers after t steps.
#include <algorithm>

#include "common.hpp"
#include "vla/reference/policy.hpp"
#include "vla/properties/generators.hpp"
#include "vla/reference/run.hpp"

namespace vla::claims {
namespace {

struct SizeLog {
  std::vector<double>* sizes;
  void operator()(int, int, int, const core::HeadState<double>& st, const core::Workspace<double>&,
                  const core::StepInfo<double>&) const {
    sizes->push_back(double(st.S.size() + st.A.size() + st.n.size()));
  }
};

void run(const RunContext& ctx, ClaimResult& r) {
  const int T = ctx.quick() ? 2048 : 16384, dk = 16, dv = 16;
  const Stream s = props::make_stream(props::Family::gaussian, Dims{1, T, 1, dk, dv}, 1);
  Json rows = Json::array();
  std::vector<double> vla_sizes;
  for (Model m : {Model::vla, Model::deltanet, Model::linear}) {
    Options o;
    o.model = m;
    std::vector<double> sizes;
    ref::run_recurrent<double, ref::RefPolicy<double>>(s, o, SizeLog{&sizes});
    if (m == Model::vla) vla_sizes = sizes;
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    rows.push_back({{"model", to_string(m)}, {"numbers stored, min over t", *lo}, {"max over t", *hi},
                    {"verdict", to_string(decide_constant(sizes))}});
  }
  rows.push_back({{"model", "softmax (KV cache, by definition)"}, {"numbers stored, min over t", double(dk + dv)},
                  {"max over t", double(dk + dv) * T}, {"verdict", to_string(Verdict::refuted)}});
  r.verdict = decide_constant(vla_sizes);
  r.summary = "VLA's state holds Dk^2 + Dv Dk + Dk = " + sci(vla_sizes.empty() ? 0 : vla_sizes.front(), 6) +
              " numbers at every t up to " + std::to_string(T) + " (no KV cache); softmax's cache grows as (Dk + Dv) t";
  r.conditions = {"Constant in T, but the inverse penalty A_t adds Dk^2 numbers to linear attention's Dv Dk + Dk: at "
                  "Dk = Dv the state is about twice linear attention's and DeltaNet's."};
  r.evidence["parameters"] = {{"T", T}, {"Dk", dk}, {"Dv", dv}, {"inputs", "gaussian"}};
  r.evidence["state size"] = rows;
}

}  // namespace

ClaimDef claim_constant_memory() {
  return {"constant-memory", "5",
          "VLA is a constant-memory sequence model: a fixed-size state, independent of T, with no KV-cache infrastructure.",
          run};
}

}  // namespace vla::claims
