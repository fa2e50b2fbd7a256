#include "adversary.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>

#include "vla/core/bf16.hpp"
#include "vla/core/recurrence.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/twin_policy.hpp"
#include "vla/properties/adversarial.hpp"

namespace vla::gate {

namespace {

// The objective: after the candidate step, the relative Frobenius error of the
// twin's S and the relative error of its output row, against the double
// recurrence, both fed the inputs rounded to the kernel's input type. Keeps the
// two states of the accepted prefix, so that each candidate costs two steps.
template <class Policy>
class TwinError {
 public:
  TwinError(int D, const Options& opt, bool bf16_in) : opt_(opt), bf16_(bf16_in) {
    tw_.reset(D, D, opt.lambda0);
    rf_.reset(D, D, opt.lambda0);
    tws_.resize(D, D);
    rfs_.resize(D, D);
  }

  double score(const props::StepContext& c) {
    Try t = step(c);
    return t.score;
  }
  void accept(const props::StepContext& c) {
    Try t = step(c);
    tw_ = std::move(t.tw);
    rf_ = std::move(t.rf);
  }

 private:
  struct Try {
    core::HeadState<float> tw;
    core::HeadState<double> rf;
    double score = 0;
  };

  double in(double x) const { return bf16_ ? double(core::round_bf16_from_double(x)) : double(static_cast<float>(x)); }

  Try step(const props::StepContext& c) {
    const Stream& s = c.prefix;
    const Dims& d = s.dims;
    const std::size_t ok = d.off(0, c.t, 0, d.Dk), ov = d.off(0, c.t, 0, d.Dv);
    std::vector<float> qf(d.Dk), kf(d.Dk), uf(d.Dk), vf(d.Dv), of(d.Dv);
    std::vector<double> qd(d.Dk), kd(d.Dk), ud(d.Dk), vd(d.Dv), od(d.Dv);
    for (int j = 0; j < d.Dk; ++j) {
      qd[j] = in(s.q[ok + j]), kd[j] = in(s.k[ok + j]);
      qf[j] = float(qd[j]), kf[j] = float(kd[j]);
      if (s.has_u()) ud[j] = in(s.u[ok + j]), uf[j] = float(ud[j]);
    }
    for (int i = 0; i < d.Dv; ++i) vd[i] = in(s.v[ov + i]), vf[i] = float(vd[i]);
    Try t{tw_, rf_, 0};
    core::StepInfo<float> fi;
    core::StepInfo<double> di;
    core::vla_step<Policy>(t.tw, tws_, qf.data(), kf.data(), vf.data(), s.has_u() ? uf.data() : nullptr, opt_, of.data(), fi);
    core::vla_step<core::SequentialPolicy<double>>(t.rf, rfs_, qd.data(), kd.data(), vd.data(), s.has_u() ? ud.data() : nullptr,
                                                   opt_, od.data(), di);
    double es = 0, ns = 0, eo = 0, no = 0;
    for (std::size_t e = 0; e < t.rf.S.size(); ++e) es += std::pow(t.tw.S[e] - t.rf.S[e], 2), ns += t.rf.S[e] * t.rf.S[e];
    for (int i = 0; i < d.Dv; ++i) eo += std::pow(of[i] - od[i], 2), no += od[i] * od[i];
    const double rs = ns > 0 ? std::sqrt(es / ns) : 0, ro = no > 0 ? std::sqrt(eo / no) : 0;
    t.score = std::isfinite(rs + ro) ? rs + ro : 1e300;  // a non-finite twin is the best find of all
    return t;
  }

  Options opt_;
  bool bf16_;
  core::HeadState<float> tw_;
  core::HeadState<double> rf_;
  core::Workspace<float> tws_;
  core::Workspace<double> rfs_;
};

template <class Prec>
props::Objective objective_for(int D, const Options& opt, bool bf16_in) {
  auto make = [&]<int N>() {
    auto e = std::make_shared<TwinError<gpu::TwinPolicy<gpu::FusedTraits<N>, Prec>>>(D, opt, bf16_in);
    return props::Objective{"twin error", [e](const props::StepContext& c) { return e->score(c); },
                            [e](const props::StepContext& c) { e->accept(c); }};
  };
  switch (D) {
    case 16: return make.template operator()<16>();
    case 32: return make.template operator()<32>();
    case 64: return make.template operator()<64>();
    case 128: return make.template operator()<128>();
    default: throw std::invalid_argument("adversarial stream: head dimension must be 16, 32, 64 or 128");
  }
}

}  // namespace

Stream adversarial_stream(impl::Kind kind, const Dims& d, const Options& opt, std::uint64_t seed) {
  props::AdversaryBounds b;
  b.T = d.T;
  b.Dk = d.Dk;
  b.Dv = d.Dv;
  b.opt = opt;
  b.seed = seed;
  b.V = 1.0;
  b.candidates = 12;
  b.climb = 12;
  const props::Objective obj = kind == impl::Kind::fp32 ? objective_for<gpu::PrecFp32>(d.Dk, opt, false)
                               : kind == impl::Kind::bf16 ? objective_for<gpu::PrecBf16>(d.Dk, opt, true)
                                                          : objective_for<gpu::PrecBf16State>(d.Dk, opt, true);
  return props::adversarial_search(b, obj).adv_case.stream;
}

}  // namespace vla::gate
