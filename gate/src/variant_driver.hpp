// Runs the generic step (core::vla_step) with a variant's scalar and policy over
// a whole stream, through the reference's driver template (ref::run_recurrent,
// the one loop over batch, heads and steps), and returns the outputs in double.
// The stream must already hold the values the kernel consumes (rounded once to
// its input type), so that converting them to the variant's scalar is exact.
#pragma once

#include <utility>

#include "flt.hpp"
#include "vla/core/stream.hpp"
#include "vla/reference/run.hpp"

namespace vla::gate {

template <class S, class Policy, class Observer = ref::NoObserver<S>>
Outputs run_variant(const Stream& s, const Options& opt, Observer&& observe = Observer{}) {
  const ref::Result<S> r = ref::run_recurrent<S, Policy>(s, opt, std::forward<Observer>(observe));
  Outputs o;
  o.dims = r.dims;
  auto conv = [](const std::vector<S>& x, std::vector<double>& y) {
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = to_double(x[i]);
  };
  conv(r.o, o.o);
  conv(r.S, o.S);
  conv(r.A, o.A);
  conv(r.state_norm, o.state_norm);
  return o;
}

}  // namespace vla::gate
