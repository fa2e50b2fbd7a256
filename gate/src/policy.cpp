#include "vla/gate/policy.hpp"

namespace vla::gate {

namespace {
template <class... F>
struct Overload : F... {
  using F::operator()...;
};
}  // namespace

std::string Policy::name() const {
  return std::visit([](auto k) { return impl::to_string(k); }, of_);
}

impl::Kind Policy::input() const {
  return std::visit(Overload{[](impl::Kind k) { return k; }, [](impl::ChunkedKind k) { return impl::input_kind(k); }}, of_);
}

accuracy::Precision Policy::precision() const {
  return std::visit([](auto k) { return accuracy::precision_of(k); }, of_);
}

std::vector<Outputs> Policy::baselines(const Stream& rounded, const Options& opt) const {
  return std::visit([&](auto k) { return accuracy::baselines(rounded, opt, k, accuracy::kBaselineSamples); }, of_);
}

std::vector<Outputs> Policy::more_baselines(const Stream& rounded, const Options& opt) const {
  // Samples numbered after the first look's, so that they are new draws.
  return std::visit(
      [&](auto k) { return accuracy::more_baselines(rounded, opt, k, accuracy::kBaselineSamples, accuracy::kEscalationSamples); }, of_);
}

Policy chunked_policy(impl::ChunkedKind kind) {
  const Policy own(kind), fused(impl::baseline_kind(kind));
  const accuracy::Precision a = own.precision(), b = fused.precision();
  const bool same = a.u_out == b.u_out && a.u_state == b.u_state && a.bf16_out == b.bf16_out &&
                    (own.input() == impl::Kind::fp32) == (fused.input() == impl::Kind::fp32);
  return same ? fused : own;
}

}  // namespace vla::gate
