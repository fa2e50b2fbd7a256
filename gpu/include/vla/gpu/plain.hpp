// The plain same-precision implementation of each precision policy: the one
// generic step (core/recurrence.hpp) in float with left-to-right dot products
// and the policy's rounding points (bf16 inputs/outputs, bf16 state). It is the
// baseline of the error model (error_model.hpp): a kernel is judged by how its
// error compares with this straightforward implementation's error.
#pragma once

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::impl {

// Order of every dot product: left to right, or right to left.
enum class PlainOrder { forward, reversed };

// Any Dk, Dv (VLA model only). Same input rounding as the kernels.
Outputs run_plain(const Stream& s, const Options& opt, Kind kind, PlainOrder order = PlainOrder::forward);

}  // namespace vla::impl
