// The definitional (recurrent) reference: runs the spec's recurrence, or a
// baseline, over a whole batch of streams at any scalar type.
//
// This is a header template so that any scalar works (double, Float128, Mpfr;
// scalars.hpp); the certified driver (certify.hpp) runs it at increasing
// precision. The plain runs at the three reference scalars are compiled once
// (run_model in instances_*.cpp): include models.hpp for those instead of
// instantiating this template again.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "vla/core/recurrence.hpp"
#include "vla/core/stream.hpp"
#include "vla/reference/policy.hpp"

namespace vla::ref {

// Outputs of one run at scalar type Scalar, before rounding to double.
template <class Scalar>
struct Result {
  Dims dims;
  std::vector<Scalar> o, S, A, state_norm;  // layouts as vla::Outputs
  std::vector<Scalar> gate_cos;             // [B,T,H], VLA only
};

// Per-step observer: called after every step of every (b, h) with the state.
// Used by the properties, claims and reports (Jacobians, A_t, ...).
template <class Scalar>
struct NoObserver {
  void operator()(int, int, int, const core::HeadState<Scalar>&, const core::Workspace<Scalar>&,
                  const core::StepInfo<Scalar>&) const {}
};

template <class Scalar, class Policy = RefPolicy<Scalar>, class Observer = NoObserver<Scalar>>
Result<Scalar> run_recurrent(const Stream& s, const Options& opt, Observer&& observe = Observer{}) {
  const Dims& d = s.dims;
  if (opt.model == Model::softmax) throw std::invalid_argument("run_recurrent: softmax attention has no recurrence; use run_softmax");
  Result<Scalar> r;
  r.dims = d;
  r.o.assign(d.v_size(), Scalar(0));
  r.S.assign(std::size_t(d.B) * d.H * d.Dv * d.Dk, Scalar(0));
  if (opt.model == Model::vla) r.A.assign(std::size_t(d.B) * d.H * d.Dk * d.Dk, Scalar(0));
  r.state_norm.assign(std::size_t(d.B) * d.T * d.H, Scalar(0));
  if (opt.model == Model::vla) r.gate_cos.assign(std::size_t(d.B) * d.T * d.H, Scalar(0));

  core::HeadState<Scalar> st;
  core::Workspace<Scalar> ws;
  ws.resize(d.Dk, d.Dv);
  std::vector<Scalar> q(d.Dk), k(d.Dk), u(d.Dk), v(d.Dv), o(d.Dv);
  core::StepInfo<Scalar> info;
  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      st.reset(d.Dk, d.Dv, opt.lambda0);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk), ov = d.off(b, t, h, d.Dv);
        for (int j = 0; j < d.Dk; ++j) {
          q[j] = Scalar(s.q[ok + j]);
          k[j] = Scalar(s.k[ok + j]);
          if (s.has_u()) u[j] = Scalar(s.u[ok + j]);
        }
        for (int i = 0; i < d.Dv; ++i) v[i] = Scalar(s.v[ov + i]);
        switch (opt.model) {
          case Model::vla:
            core::vla_step<Policy>(st, ws, q.data(), k.data(), v.data(), s.has_u() ? u.data() : nullptr, opt, o.data(), info);
            break;
          case Model::linear: core::linear_step<Policy>(st, ws, q.data(), k.data(), v.data(), opt, o.data(), info); break;
          case Model::deltanet: core::deltanet_step<Policy>(st, ws, q.data(), k.data(), v.data(), opt, o.data(), info); break;
          case Model::softmax: break;
        }
        for (int i = 0; i < d.Dv; ++i) r.o[ov + i] = o[i];
        const std::size_t on = (std::size_t(b) * d.T + t) * d.H + h;
        r.state_norm[on] = info.state_norm;
        if (opt.model == Model::vla) r.gate_cos[on] = info.gate_cos;
        observe(b, t, h, st, ws, info);
      }
      const std::size_t bh = std::size_t(b) * d.H + h;
      for (std::size_t e = 0; e < st.S.size(); ++e) r.S[bh * st.S.size() + e] = st.S[e];
      if (opt.model == Model::vla)
        for (std::size_t e = 0; e < st.A.size(); ++e) r.A[bh * st.A.size() + e] = st.A[e];
    }
  }
  return r;
}

}  // namespace vla::ref
