// Definition of trace_head (trace.hpp), included by the two instantiation files.
#include <stdexcept>
#include <string>

#include "vla/reference/run.hpp"
#include "vla/reference/trace.hpp"

namespace vla::ref {

template <class Scalar>
std::vector<TraceStep<Scalar>> trace_head(const Stream& s, const Options& opt, const TraceOptions& topt) {
  validate(opt);
  validate_stream(s, opt);
  if (opt.model != Model::vla) throw std::invalid_argument("trace_head: only the VLA model has A_t and a gate (model = " + to_string(opt.model) + ")");
  if (topt.stride < 1) throw std::invalid_argument("trace_head: stride must be >= 1, got " + std::to_string(topt.stride));
  const Stream one = slice_head(s, topt.b, topt.h);
  const int dk = one.dims.Dk, dv = one.dims.Dv, T = one.dims.T;
  std::vector<TraceStep<Scalar>> out;
  out.reserve(std::size_t(T / topt.stride + 1));
  auto observe = [&](int, int t, int, const core::HeadState<Scalar>& st, const core::Workspace<Scalar>& ws,
                     const core::StepInfo<Scalar>& info) {
    if ((t + 1) % topt.stride != 0 && t != T - 1) return;
    TraceStep<Scalar> r;
    r.t = t;
    if (topt.with_A) {
      r.A.resize(dk, dk);
      for (int i = 0; i < dk; ++i)
        for (int j = 0; j < dk; ++j) r.A(i, j) = st.A[std::size_t(i) * dk + j];
    }
    if (topt.with_S) {
      r.S.resize(dv, dk);
      for (int i = 0; i < dv; ++i)
        for (int j = 0; j < dk; ++j) r.S(i, j) = st.S[std::size_t(i) * dk + j];
    }
    r.k_hat.resize(dk);
    r.u.resize(dk);
    r.a_hat.resize(dk);
    for (int j = 0; j < dk; ++j) {
      r.k_hat(j) = ws.kh[j];
      r.u(j) = ws.u[j];
      r.a_hat(j) = ws.a[j];
    }
    r.c = info.gate_cos;
    r.state_norm = info.state_norm;
    r.delta = info.delta;
    out.push_back(std::move(r));
  };
  run_recurrent<Scalar>(one, opt, observe);
  return out;
}

}  // namespace vla::ref
