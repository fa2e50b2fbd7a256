// The plain runs of the reference at its three scalars, compiled once
// (src/instances_fast.cpp for double and Float128, src/instances_mpfr.cpp for
// Mpfr) so that no other translation unit instantiates the MPFR step again.
#pragma once

#include "vla/core/stream.hpp"
#include "vla/reference/run.hpp"
#include "vla/reference/scalars.hpp"

namespace vla::ref {

// Runs opt.model (VLA, linear, DeltaNet through the generic step; softmax through
// run_softmax) at Scalar. Mpfr runs at the calling thread's precision
// (MpfrPrecision); run_mpfr sets it. Does not validate: run_certified does.
template <class Scalar>
Result<Scalar> run_model(const Stream& s, const Options& opt);
extern template Result<double> run_model<double>(const Stream&, const Options&);
extern template Result<Float128> run_model<Float128>(const Stream&, const Options&);
extern template Result<Mpfr> run_model<Mpfr>(const Stream&, const Options&);

Result<Mpfr> run_mpfr(const Stream& s, const Options& opt, long bits);

// Rounded to double; A is left empty for the models without one (linear, DeltaNet).
template <class Scalar>
Outputs to_outputs(const Result<Scalar>& r) {
  Outputs out;
  out.dims = r.dims;
  auto conv = [](const std::vector<Scalar>& x, std::vector<double>& y) {
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = to_double(x[i]);
  };
  conv(r.o, out.o);
  conv(r.S, out.S);
  conv(r.A, out.A);
  conv(r.state_norm, out.state_norm);
  return out;
}

}  // namespace vla::ref
