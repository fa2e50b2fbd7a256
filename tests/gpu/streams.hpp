// Test streams and the plumbing shared by the CPU twin tests and the CUDA
// kernel tests: random inputs, rounding a stream to what an implementation
// consumes, and the double reference as vla::Outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vla/core/bf16.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/error_baselines.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/gpu/plain.hpp"
#include "vla/reference/run.hpp"

namespace vla::ts {

enum class Family { gaussian, positive, heavy };

// q, k, v (and u when with_u) with i.i.d. entries: N(0, 1); |N(0, 1)| (elu1 takes
// its x + 1 branch only, so no expf anywhere); or Student-t with 3 degrees of freedom.
inline Stream make_stream(int B, int T, int H, int D, std::uint64_t seed, Family fam = Family::gaussian, bool with_u = false) {
  Stream s;
  s.dims = Dims{B, T, H, D, D};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::student_t_distribution<double> t3(3.0);
  auto draw = [&] {
    switch (fam) {
      case Family::positive: return std::fabs(n01(rng));
      case Family::heavy: return t3(rng);
      default: return n01(rng);
    }
  };
  for (auto* x : {&s.q, &s.k, &s.v}) {
    x->resize(s.dims.qk_size());
    for (auto& e : *x) e = draw();
  }
  if (with_u) {
    s.u.resize(s.dims.qk_size());
    for (auto& e : s.u) e = draw();
  }
  return s;
}

// The stream as the implementation `kind` consumes it (rounded once), so that
// the reference is fed exactly the candidate's inputs.
inline Stream rounded_for(const Stream& s, impl::Kind kind) {
  Stream r = s;
  for (auto* x : {&r.q, &r.k, &r.v, &r.u})
    for (auto& e : *x) e = kind == impl::Kind::fp32 ? double(float(e)) : double(core::round_bf16_from_double(e));
  return r;
}

inline Outputs reference_double(const Stream& s, const Options& opt) {
  auto r = ref::run_recurrent<double>(s, opt);
  Outputs o;
  o.dims = r.dims;
  o.o = std::move(r.o);
  o.S = std::move(r.S);
  o.A = std::move(r.A);
  o.state_norm = std::move(r.state_norm);
  return o;
}

// The error model's baselines (accuracy::baselines, error_baselines.hpp), on the
// inputs the candidate consumed.
struct Baselines {
  std::vector<Outputs> runs;
  std::vector<const Outputs*> ptrs() const {
    std::vector<const Outputs*> p;
    for (const auto& r : runs) p.push_back(&r);
    return p;
  }
};
inline Baselines baselines(const Stream& s, const Options& opt, impl::Kind kind) {
  return {accuracy::baselines(rounded_for(s, kind), opt, kind)};
}

}  // namespace vla::ts
