// Honest variants of the kernels: the same maths and the same precision policy
// (storage types and rounding points), with a different rounding inside it.
// Each one is a build-time instantiation of the generic step with another
// reduction order (orders.hpp) or scalar (flt.hpp). The gate must pass them all.
// Every variant computes in float32 (or wider: wide-acc) between the policy's
// rounding points, which is where the bf16 policies allow float32 arithmetic.
#include <string>
#include <vector>

#include "candidates_internal.hpp"
#include "orders.hpp"
#include "variant_driver.hpp"
#include "vla/gpu/precision.hpp"

namespace vla::gate {

namespace {

using impl::Kind;
using NoFma = Flt<NoFmaOps>;

template <template <class, class> class Order, class S>
Runner for_kind(Kind kind) {
  switch (kind) {
    case Kind::fp32: return [](const Stream& s, const Options& o) { return run_variant<S, Order<S, gpu::PrecFp32>>(s, o); };
    case Kind::bf16: return [](const Stream& s, const Options& o) { return run_variant<S, Order<S, gpu::PrecBf16>>(s, o); };
    case Kind::bf16_state:
      return [](const Stream& s, const Options& o) { return run_variant<S, Order<S, gpu::PrecBf16State>>(s, o); };
  }
  return {};
}

template <class Prec>
Outputs wide(const Stream& s, const Options& o) {
  return run_variant<float, WideAccumulator<Prec>>(s, o);
}

}  // namespace

std::vector<Candidate> make_honest_variants() {
  std::vector<Candidate> v;
  for (Kind kind : {Kind::fp32, Kind::bf16, Kind::bf16_state}) {
    const std::string k = impl::to_string(kind);
    auto add = [&](const std::string& name, const std::string& what, Runner r) {
      v.push_back(Candidate{k + "/" + name, kind, Role::honest, "", what, std::move(r)});
    };
    add("reversed", "every dot product and row sum right to left", for_kind<ReversedOrder, float>(kind));
    add("pairwise", "rounded products summed by recursive halving", for_kind<PairwiseOrder, float>(kind));
    add("kahan", "rounded products summed with Kahan's compensation", for_kind<KahanOrder, float>(kind));
    add("fma-off", "no fused multiply-add anywhere (product and sum each rounded)", for_kind<SequentialOrder, NoFma>(kind));
    Runner w = kind == Kind::fp32 ? Runner(wide<gpu::PrecFp32>) : kind == Kind::bf16 ? Runner(wide<gpu::PrecBf16>) : Runner(wide<gpu::PrecBf16State>);
    add("wide-acc", "dot products accumulated in double, rounded to float once", std::move(w));
  }
  // Not here: bf16-state with S and A kept in float between steps. That is
  // not the bf16-state policy (which fixes bf16 storage of the state) but the
  // bf16 policy, which the gate judges as its own production kind.
  return v;
}

}  // namespace vla::gate
