// The host runs of the precision policies: the CPU twin of the fused kernel and
// the plain same-precision baseline. Both are the one generic step
// (core::vla_step) at float with a policy; only the policy differs.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends.hpp"
#include "vla/core/recurrence.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/twin_policy.hpp"

namespace vla::gpu {
namespace {

template <class Policy>
Outputs drive(const HostInputs& in, const Options& opt) {
  const Dims& d = in.dims;
  Outputs out;
  out.allocate(d, true);
  // Poison: an element the loop fails to write stays NaN and fails every check.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto* v : {&out.o, &out.S, &out.A, &out.state_norm}) v->assign(v->size(), nan);

  core::HeadState<float> st;
  core::Workspace<float> ws;
  ws.resize(d.Dk, d.Dv);
  core::StepInfo<float> info;
  std::vector<float> q(d.Dk), k(d.Dk), u(d.Dk), v(d.Dv), o(d.Dv);
  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      st.reset(d.Dk, d.Dv, opt.lambda0);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk), ov = d.off(b, t, h, d.Dv);
        for (int j = 0; j < d.Dk; ++j) {
          q[j] = in.value(0, ok + j);
          k[j] = in.value(1, ok + j);
          if (in.has_u) u[j] = in.value(3, ok + j);
        }
        for (int i = 0; i < d.Dv; ++i) v[i] = in.value(2, ov + i);
        core::vla_step<Policy>(st, ws, q.data(), k.data(), v.data(), in.has_u ? u.data() : nullptr, opt, o.data(), info);
        for (int i = 0; i < d.Dv; ++i) out.o[ov + i] = o[i];
        out.state_norm[(std::size_t(b) * d.T + t) * d.H + h] = info.state_norm;
      }
      const std::size_t bh = std::size_t(b) * d.H + h;
      for (std::size_t e = 0; e < st.S.size(); ++e) out.S[bh * st.S.size() + e] = st.S[e];
      for (std::size_t e = 0; e < st.A.size(); ++e) out.A[bh * st.A.size() + e] = st.A[e];
    }
  }
  return out;
}

template <class Prec>
Outputs twin_for(const HostInputs& in, const Options& opt) {
  switch (in.dims.Dk) {
    case 16: return drive<TwinPolicy<FusedTraits<16>, Prec>>(in, opt);
    case 32: return drive<TwinPolicy<FusedTraits<32>, Prec>>(in, opt);
    case 64: return drive<TwinPolicy<FusedTraits<64>, Prec>>(in, opt);
    case 128: return drive<TwinPolicy<FusedTraits<128>, Prec>>(in, opt);
    default: throw std::invalid_argument("fused twin: head dimension " + std::to_string(in.dims.Dk) + " is not one of 16, 32, 64, 128");
  }
}

}  // namespace

Outputs run_twin(const HostInputs& in, const Options& opt, impl::Kind kind) {
  switch (kind) {
    case impl::Kind::fp32: return twin_for<PrecFp32>(in, opt);
    case impl::Kind::bf16: return twin_for<PrecBf16>(in, opt);
    case impl::Kind::bf16_state: return twin_for<PrecBf16State>(in, opt);
  }
  throw std::logic_error("run_twin: unknown kind");
}

Outputs run_plain_inputs(const HostInputs& in, const Options& opt, impl::Kind kind, bool reversed) {
  switch (kind) {
    case impl::Kind::fp32: return reversed ? drive<PlainPolicy<PrecFp32, true>>(in, opt) : drive<PlainPolicy<PrecFp32>>(in, opt);
    case impl::Kind::bf16: return reversed ? drive<PlainPolicy<PrecBf16, true>>(in, opt) : drive<PlainPolicy<PrecBf16>>(in, opt);
    case impl::Kind::bf16_state:
      return reversed ? drive<PlainPolicy<PrecBf16State, true>>(in, opt) : drive<PlainPolicy<PrecBf16State>>(in, opt);
  }
  throw std::logic_error("run_plain: unknown kind");
}

}  // namespace vla::gpu
