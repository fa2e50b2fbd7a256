// The precision policy a candidate claims: the error model judges it by this
// (docs/ERROR_MODEL.md). A fused kernel's (impl::Kind) or a chunked kernel's
// (impl::ChunkedKind), each with its input type, its unit roundoffs
// (accuracy::precision_of) and its Monte Carlo baselines (accuracy::baselines),
// all as the gpu library defines them for that kind: the gate adds no model.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/error_model.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::gate {

class Policy {
 public:
  Policy(impl::Kind kind = impl::Kind::fp32) : of_(kind) {}  // implicit: a fused kind is a policy
  explicit Policy(impl::ChunkedKind kind) : of_(kind) {}

  std::string name() const;
  // The fused kind whose input type it consumes: inputs are rounded as it rounds them.
  impl::Kind input() const;
  accuracy::Precision precision() const;
  // The baselines on the rounded inputs, and the escalation's extra samples.
  std::vector<Outputs> baselines(const Stream& rounded, const Options& opt) const;
  std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt) const;

  bool operator==(const Policy&) const = default;

 private:
  std::variant<impl::Kind, impl::ChunkedKind> of_;
};

// The policy a chunked implementation is judged by: its baseline kind
// (impl::baseline_kind) where that kind has the same input type and unit
// roundoffs (chunked-fp32 as fp32, chunked-bf16 as bf16-state: their baselines
// are the same too, Policy.ChunkedPoliciesShareTheFusedModel checks it), so that
// they share its reference runs in the gate; its own otherwise (chunked-tf32:
// u_state = 2^-11, baselines with the state rounded to tf32).
Policy chunked_policy(impl::ChunkedKind kind);

}  // namespace vla::gate
