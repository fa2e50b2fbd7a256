// Planted defects inside the step: each is the twin's own precision policy
// (gpu::TwinPolicy with the kernel's FusedTraits, its reduction order and its
// rounding points) wrapped by a mutation, or run on a scalar with one defective
// primitive, and instantiated at build time through the generic step.
#include <cmath>
#include <string>
#include <vector>

#include "candidates_internal.hpp"
#include "flt.hpp"
#include "orders.hpp"
#include "variant_driver.hpp"
#include "vla/core/bf16.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/precision.hpp"
#include "vla/gpu/twin_policy.hpp"

namespace vla::gate {

namespace {

using impl::Kind;

// The 0-based step being computed, for defects that appear only late: the
// driver's observer advances it after every step of every head.
thread_local long tl_step = 0;
struct Clock {
  int T;
  template <class... Rest>
  void operator()(int, int t, int, const Rest&...) const {
    tl_step = t + 1 == T ? 0 : t + 1;
  }
};

// The twin's policy, Base = TwinPolicy<FusedTraits<D>, Prec>, run on scalar S.
template <class Base, class S>
struct OnScalar {
  using T = S;
  static T dot(const T* a, const T* b, int n) {
    float x[128], y[128];
    for (int j = 0; j < n; ++j) x[j] = raw(a[j]), y[j] = raw(b[j]);
    return T(Base::dot(x, y, n));
  }
  static T sum(const T* a, int n) {
    float x[128];
    for (int j = 0; j < n; ++j) x[j] = raw(a[j]);
    return T(Base::sum(x, n));
  }
  static T store_state(const T& x) { return T(Base::store_state(raw(x))); }
  static T store_out(const T& x) { return T(Base::store_out(raw(x))); }
};

template <class Base>
using Same = Base;

// The FusedTraits of a twin policy (its reduction layout).
template <class P>
struct TraitsOf;
template <class Tr, class Prec>
struct TraitsOf<gpu::TwinPolicy<Tr, Prec>> {
  using type = Tr;
};

// Dispatches the head dimension to the kernel's traits; Mut<Base> is the mutated policy.
template <template <class> class Mut, class Prec, class S = float>
Runner twin_mutant() {
  return [](const Stream& s, const Options& o) -> Outputs {
    const Dims& d = s.dims;
    if (d.Dk != d.Dv) throw std::invalid_argument("the fused kernels need Dk = Dv");
    tl_step = 0;
    const Clock clock{d.T};
    switch (d.Dk) {
      case 16: return run_variant<S, OnScalar<Mut<gpu::TwinPolicy<gpu::FusedTraits<16>, Prec>>, S>>(s, o, clock);
      case 32: return run_variant<S, OnScalar<Mut<gpu::TwinPolicy<gpu::FusedTraits<32>, Prec>>, S>>(s, o, clock);
      case 64: return run_variant<S, OnScalar<Mut<gpu::TwinPolicy<gpu::FusedTraits<64>, Prec>>, S>>(s, o, clock);
      case 128: return run_variant<S, OnScalar<Mut<gpu::TwinPolicy<gpu::FusedTraits<128>, Prec>>, S>>(s, o, clock);
      default: throw std::invalid_argument("the fused kernels support head dimensions 16, 32, 64, 128");
    }
  };
}

// Precision: every lane's partial sum kept in bf16 (rounded after each FMA).
template <class Base>
struct Bf16Accumulator : Base {
  static float dot(const float* a, const float* b, int n) {
    (void)n;
    using Tr = typename TraitsOf<Base>::type;
    float p[Tr::G];
    for (int c = 0; c < Tr::G; ++c) {
      float acc = 0.0f;
      for (int jj = 0; jj < Tr::CW; ++jj) acc = core::round_bf16(core::vfma(a[c * Tr::CW + jj], b[c * Tr::CW + jj], acc));
      p[c] = acc;
    }
    return gpu::tree_sum(p, Tr::G);
  }
};

// Precision: the bf16 kernel stores S and A in bf16 between steps (the
// bf16-state kernel's store, taken by mistake).
template <class Base>
struct StateLeak : Base {
  static float store_state(const float& x) { return core::round_bf16(x); }
};

// Rare (late steps): from step 2048 on, S and A go through a bf16 scratch
// buffer (a spill path that only long sequences reach).
template <class Base>
struct LateSpill : Base {
  static float store_state(const float& x) { return tl_step >= 2048 ? core::round_bf16(x) : Base::store_state(x); }
};

// Rare (one shape): at D = 128 the reduction tree drops the last lane's partial sum.
template <class Base>
struct D128Lane : Base {
  static float dot(const float* a, const float* b, int n) {
    using Tr = typename TraitsOf<Base>::type;
    if constexpr (Tr::D != 128) {
      return Base::dot(a, b, n);
    } else {
      float p[Tr::G];
      for (int c = 0; c < Tr::G; ++c) {
        float acc = 0.0f;
        for (int jj = 0; jj < Tr::CW; ++jj) acc = core::vfma(a[c * Tr::CW + jj], b[c * Tr::CW + jj], acc);
        p[c] = c == Tr::G - 1 ? 0.0f : acc;
      }
      return gpu::tree_sum(p, Tr::G);
    }
  }
};

// Precision: o rounded to bf16 toward zero (truncated) instead of to nearest.
template <class Base>
struct OutTruncate : Base {
  static float store_out(const float& x) { return core::bf16_bits_to_float(static_cast<std::uint16_t>(core::float_bits(x) >> 16)); }
};

// Maths: phi's exp branch by its second-order Taylor polynomial, good near 0 only.
struct ExpTaylorOps : IeeeOps {
  static float exp(float x) { return 1.0f + x + 0.5f * x * x; }
};
// Maths: every norm computed as sqrt(x + 1e-6) (a "safe" epsilon inside the root).
struct NormEpsOps : IeeeOps {
  static float sqrt(float x) { return std::sqrt(x + 1e-6f); }
};
// Precision: every subnormal result flushed to zero (a kernel built with -ftz=true).
struct FtzOps : IeeeOps {
  static float fix(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
};

}  // namespace

std::vector<Candidate> make_policy_mutants() {
  std::vector<Candidate> v;
  auto add = [&](const char* name, Kind kind, const char* defect, const char* what, Runner r) {
    v.push_back(Candidate{std::string("mutant:") + name, kind, Role::mutant, defect, what, std::move(r)});
  };
  add("bf16-accumulator", Kind::bf16, "precision", "each lane's partial dot product is kept in bf16",
      twin_mutant<Bf16Accumulator, gpu::PrecBf16>());
  add("bf16-state-leak", Kind::bf16, "precision", "the bf16 kernel stores S and A in bf16 between steps",
      twin_mutant<StateLeak, gpu::PrecBf16>());
  add("out-truncate", Kind::bf16, "precision", "o is rounded to bf16 toward zero instead of to nearest",
      twin_mutant<OutTruncate, gpu::PrecBf16>());
  add("ftz", Kind::fp32, "precision", "subnormal results are flushed to zero", twin_mutant<Same, gpu::PrecFp32, Flt<FtzOps>>());
  add("exp-taylor", Kind::fp32, "maths", "phi's exp branch is 1 + x + x^2/2 (accurate near 0 only)",
      twin_mutant<Same, gpu::PrecFp32, Flt<ExpTaylorOps>>());
  add("norm-eps", Kind::bf16, "maths", "every norm is sqrt(x + 1e-6)", twin_mutant<Same, gpu::PrecBf16, Flt<NormEpsOps>>());
  add("late-spill", Kind::fp32, "rare", "from step 2048 on, S and A are stored in bf16 between steps",
      twin_mutant<LateSpill, gpu::PrecFp32>());
  add("d128-lane", Kind::fp32, "rare", "at D = 128 every dot product loses the last lane's partial sum",
      twin_mutant<D128Lane, gpu::PrecFp32>());
  return v;
}

}  // namespace vla::gate
