// Internal to gate/: streams from the properties' adversarial search
// (properties/adversarial.hpp) with an objective that maximises the error of a
// kernel's twin against the double recurrence, step by step.
#pragma once

#include <cstdint>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::gate {

// One head (B = H = 1) of d.T steps and head dimension d.Dk = d.Dv.
Stream adversarial_stream(impl::Kind kind, const Dims& d, const Options& opt, std::uint64_t seed);

}  // namespace vla::gate
