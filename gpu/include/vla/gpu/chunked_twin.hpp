// The chunked kernels' operand policies for the twin: the chunked reference
// (reference/include/vla/reference/chunked.hpp) at float with every product's
// operands rounded as the kernel rounds them. Host only (Eigen).
#pragma once

#include "vla/core/bf16.hpp"
#include "vla/reference/chunked.hpp"

namespace vla::gpu {

// Tensor-core operands: every entry rounded to bf16 (float accumulation follows).
struct Bf16Operands {
  static ref::Mat<float> op(const ref::Mat<float>& m) { return m.unaryExpr([](float x) { return core::round_bf16(x); }); }
};

}  // namespace vla::gpu
