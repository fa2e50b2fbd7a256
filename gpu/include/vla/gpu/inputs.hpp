// A stream's inputs rounded once to an implementation's input type: float for
// fp32, bf16 (bit patterns) for bf16 and bf16-state. The CPU twin and the CUDA
// kernel consume exactly these values.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::gpu {

struct HostInputs {
  Dims dims;
  bool has_u = false;
  bool bf16 = false;
  // Index 0..3 = q, k, v, u, each [B, T, H, D]; only the vectors of the input type are filled.
  std::array<std::vector<float>, 4> f;
  std::array<std::vector<std::uint16_t>, 4> h;
  // Element `i` of tensor `which` as the float the implementation computes with.
  float value(int which, std::size_t i) const;
};

// Rounds every input once (double -> float, or double -> bf16 directly).
HostInputs prepare_inputs(const Stream& s, bool bf16);

// Throws std::invalid_argument naming the first input value that rounds to
// Inf at the implementation's precision (a finite double beyond float's or
// bf16's range), or the first key whose feature vector is zero there (e.g. a
// tiny key rounded to 0 in bf16): such a key has no direction to normalise
// (docs/SPEC.md, bad input).
void check_rounded_keys(const HostInputs& in, const Options& opt);

}  // namespace vla::gpu
