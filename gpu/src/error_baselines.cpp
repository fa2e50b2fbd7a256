// Monte Carlo arithmetic (Parker, Stott & Pierce, 1997; CESTAC, Vignes 1993):
// the baselines of the error model, see error_baselines.hpp.
#include "vla/gpu/error_baselines.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "vla/core/bf16.hpp"
#include "vla/core/splitmix.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/tf32.hpp"
#include "vla/gpu/twin_policy.hpp"
#include "vla/reference/run.hpp"

namespace vla::accuracy {

namespace {

thread_local std::uint64_t tl_rng = 1;
thread_local std::uint64_t tl_sample_key = 0;  // one per Monte Carlo sample

// A uniform number in [0, 1) that is a function of the value (to 2^-16 of it,
// coarser than the float noise of the samples) and of the sample: equal values
// round alike within a sample, as under any deterministic rounding (a
// symmetric A stays symmetric, a value stored again unchanged rounds again
// the same way), while each sample draws its own rounding (core::splitmix64).
double value_uniform(double a, int e) {
  const std::uint64_t z =
      core::splitmix64(static_cast<std::uint64_t>(std::ldexp(a, 16 - e)) ^ (static_cast<std::uint64_t>(e + 2048) << 20) ^ tl_sample_key);
  return static_cast<double>(z >> 11) * 0x1p-53;
}

// Uniform in [-1, 1) (xorshift64: fast, and statistically plenty here).
double xi() {
  tl_rng ^= tl_rng << 13;
  tl_rng ^= tl_rng >> 7;
  tl_rng ^= tl_rng << 17;
  return static_cast<double>(tl_rng >> 11) * 0x1p-52 - 1.0;
}

// One float rounding, at random: relative error up to 2^-24 in the normal
// range, a random neighbour on the subnormal grid below it, Inf past FLT_MAX.
double round_at_random(double r) {
  if (r == 0 || !std::isfinite(r)) return r;
  if (std::fabs(r) < 0x1p-126) {
    const double g = r * 0x1p149, f = std::floor(g);
    return (f + (g - f > 0.5 * (xi() + 1.0) ? 1.0 : 0.0)) * 0x1p-149;
  }
  const double p = r * (1.0 + 0x1p-24 * xi());
  return std::fabs(p) > double(FLT_MAX) ? std::copysign(INFINITY, p) : p;
}

// A float whose every operation rounds at random (held in a double).
struct Mc {
  double v = 0;
  Mc() = default;
  explicit Mc(double x) : v(x) {}
  explicit Mc(int x) : v(x) {}
  explicit Mc(long x) : v(static_cast<double>(x)) {}
  friend Mc operator+(Mc a, Mc b) { return Mc(round_at_random(a.v + b.v)); }
  friend Mc operator-(Mc a, Mc b) { return Mc(round_at_random(a.v - b.v)); }
  friend Mc operator*(Mc a, Mc b) { return Mc(round_at_random(a.v * b.v)); }
  friend Mc operator/(Mc a, Mc b) { return Mc(round_at_random(a.v / b.v)); }
  friend Mc operator-(Mc a) { return Mc(-a.v); }
  friend bool operator<(Mc a, Mc b) { return a.v < b.v; }
  friend bool operator>(Mc a, Mc b) { return a.v > b.v; }
  friend bool operator<=(Mc a, Mc b) { return a.v <= b.v; }
  friend bool operator>=(Mc a, Mc b) { return a.v >= b.v; }
  friend bool operator==(Mc a, Mc b) { return a.v == b.v; }
  friend bool operator!=(Mc a, Mc b) { return a.v != b.v; }
  // Product and sum rounded separately: covers fused and unfused kernels alike.
  friend Mc vfma(const Mc& a, const Mc& b, const Mc& c) { return Mc(round_at_random(round_at_random(a.v * b.v) + c.v)); }
  friend Mc vsqrt(const Mc& a) { return Mc(round_at_random(std::sqrt(a.v))); }
  friend Mc vexp(const Mc& a) { return Mc(round_at_random(std::exp(a.v))); }
};

// The policy's rounding of S and A when stored (StateRounding), at random:
// stochastic rounding to one of the two neighbours on the storage type's grid
// (bf16: 8 significant bits, tf32: 11; below 2^-126 the fixed subnormal grid),
// the upper one with probability equal to the fraction of the spacing that x
// covers past the lower one. A value already on the grid stays exact, as with
// any rounding. Not round to nearest: an honest implementation stores RN of
// *its own* float value, computed by its own formula (the fused kernels take the
// gate from z where that is exact, core::gate_from_z_exact), so which way an
// entry rounds, and how that rounding reaches the outputs, is another draw per
// implementation; with round to nearest every sample drew the same roundings,
// one draw where the stream amplifies them (docs/FINDINGS.md item 8). The plain
// run keeps round to nearest, and with it the bias of stagnating increments.
template <StateRounding R>
double store_at_random(double x) {
  if constexpr (R == StateRounding::none) {
    return x;
  } else {
    constexpr int p = R == StateRounding::bf16 ? 8 : 11;  // significant bits
    if (x == 0 || !std::isfinite(x)) return x;
    const double a = std::fabs(x);
    int e = 0;
    std::frexp(a, &e);  // a in [2^(e-1), 2^e)
    const double spacing = std::ldexp(1.0, std::max(e, -125) - p);
    const double g = a / spacing, lo = std::floor(g);
    const double r = (lo + (g - lo > value_uniform(a, e) ? 1.0 : 0.0)) * spacing;
    return std::copysign(r >= 0x1p128 ? INFINITY : r, x);
  }
}

template <StateRounding R>
struct McPolicy {
  using T = Mc;
  static T dot(const T* a, const T* b, int n) {
    T acc(0.0);
    for (int j = 0; j < n; ++j) acc = vfma(a[j], b[j], acc);
    return acc;
  }
  static T store_state(const T& x) { return T(store_at_random<R>(x.v)); }
  static T store_out(const T& x) { return x; }
};

template <class S>
double value(const S& x) {
  if constexpr (std::is_same_v<S, Mc>) return x.v;
  else return x;
}

template <class S, class Policy>
Outputs run_with(const Stream& s, const Options& opt) {
  const ref::Result<S> r = ref::run_recurrent<S, Policy>(s, opt);
  Outputs out;
  out.dims = r.dims;
  auto conv = [](const std::vector<S>& x, std::vector<double>& y) {
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = value(x[i]);
  };
  conv(r.o, out.o);
  conv(r.S, out.S);
  conv(r.A, out.A);
  conv(r.state_norm, out.state_norm);
  return out;
}

template <StateRounding R>
Outputs run_random(const Stream& s, const Options& opt, int sample) {
  tl_rng = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(sample + 1) + 0x632be59bd9b4e019ull;
  tl_sample_key = 0xd1b54a32d192ed03ull * static_cast<std::uint64_t>(sample + 1);
  return run_with<Mc, McPolicy<R>>(s, opt);
}

Outputs run_random(const Stream& s, const Options& opt, StateRounding r, int sample) {
  switch (r) {
    case StateRounding::bf16: return run_random<StateRounding::bf16>(s, opt, sample);
    case StateRounding::tf32: return run_random<StateRounding::tf32>(s, opt, sample);
    default: return run_random<StateRounding::none>(s, opt, sample);
  }
}

// tf32-state: S and A rounded to tf32 when stored (float arithmetic in between).
struct PrecTf32State : gpu::PrecFp32 {
  static float store_state(float x) { return gpu::round_tf32(x); }
};

StateRounding state_rounding(impl::Kind kind) {
  return kind == impl::Kind::bf16_state ? StateRounding::bf16 : StateRounding::none;
}

// The policy's storage rounding of S and A, with o left unrounded.
template <class Prec>
struct OutUnrounded {
  static float store_state(float x) { return Prec::store_state(x); }
  static float store_out(float x) { return x; }
};

}  // namespace

std::vector<Outputs> baselines(const Stream& rounded, const Options& opt, StateRounding state, int samples) {
  if (samples < 0) throw std::invalid_argument("error model: negative number of baseline samples");
  if (opt.model != Model::vla) throw std::invalid_argument("error model: the baselines run the VLA recurrence only");
  std::vector<Outputs> out;
  // Deterministic round to nearest, one plain order: its errors can add up
  // with a bias that random rounding does not have (docs/ERROR_MODEL.md).
  if (state == StateRounding::bf16) out.push_back(run_with<float, gpu::PlainPolicy<OutUnrounded<gpu::PrecBf16State>>>(rounded, opt));
  else if (state == StateRounding::tf32) out.push_back(run_with<float, gpu::PlainPolicy<OutUnrounded<PrecTf32State>>>(rounded, opt));
  else out.push_back(run_with<float, gpu::PlainPolicy<OutUnrounded<gpu::PrecFp32>>>(rounded, opt));
  for (int k = 0; k < samples; ++k) out.push_back(run_random(rounded, opt, state, k));
  return out;
}

std::vector<Outputs> baselines(const Stream& rounded, const Options& opt, impl::Kind kind, int samples) {
  return baselines(rounded, opt, state_rounding(kind), samples);
}

std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt, StateRounding state, int first, int count) {
  if (first < 0 || count < 0) throw std::invalid_argument("error model: negative baseline sample index or count");
  if (opt.model != Model::vla) throw std::invalid_argument("error model: the baselines run the VLA recurrence only");
  std::vector<Outputs> out;
  for (int k = first; k < first + count; ++k) out.push_back(run_random(rounded, opt, state, k));
  return out;
}

std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt, impl::Kind kind, int first, int count) {
  return more_baselines(rounded, opt, state_rounding(kind), first, count);
}

}  // namespace vla::accuracy
