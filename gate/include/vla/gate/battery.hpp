// The gate's fixed battery: every generator family under both presets, on
// awkward shapes (T = 1, around the 64-step boundaries, long; every head
// dimension of the kernels; B*H of 1, not a multiple of 4, a multiple of 4),
// plus the options the presets do not cover. Deterministic: the same cases on
// every run and machine, so a verdict is reproducible and comparable with the
// stored accuracy baseline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::gate {

struct BatteryCase {
  std::string id;      // "<family>/<preset>/B2T65H3D16" (+ "/<options>" for option variants)
  std::string family;  // generator family (properties/generators.hpp)
  std::string preset;  // "paper" or "vla-v3"
  std::uint64_t seed = 0;
  Stream stream;
  Options opt;
};

// quick: every family x preset on one shape each (the shapes rotate), the
// option variants on one shape; full: every family x preset on every shape.
std::vector<BatteryCase> battery(bool quick);

// The shapes, (B, T, H, D), in the order `battery` uses them.
std::vector<Dims> battery_shapes();

}  // namespace vla::gate
