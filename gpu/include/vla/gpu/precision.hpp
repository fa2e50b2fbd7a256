// The three precision policies of the fused kernels: what the inputs and o are
// stored as, and where values are rounded. Used by the kernels (device) and by
// their twins and the plain baselines (host), so each rounding point is written
// once.
#pragma once

#include <cstdint>

#include "vla/core/bf16.hpp"
#include "vla/core/hd.hpp"

namespace vla::gpu {

// fp32: float in and out, float state S, A, n.
struct PrecFp32 {
  using In = float;
  using Out = float;
  static constexpr bool bf16_io = false;
  static constexpr bool bf16_state = false;
  VLA_HD static float load(In x) { return x; }
  VLA_HD static float store_state(float x) { return x; }
  VLA_HD static float store_out(float x) { return x; }
  VLA_HD static Out out_bits(float x) { return x; }
};

// bf16: bf16 in and out (bit patterns), float state and accumulation.
struct PrecBf16 {
  using In = std::uint16_t;
  using Out = std::uint16_t;
  static constexpr bool bf16_io = true;
  static constexpr bool bf16_state = false;
  VLA_HD static float load(In x) { return core::bf16_bits_to_float(x); }
  VLA_HD static float store_state(float x) { return x; }
  VLA_HD static float store_out(float x) { return core::round_bf16(x); }
  VLA_HD static Out out_bits(float x) { return core::bf16_bits_rne(x); }
};

// bf16-state: as bf16, and every entry of S and A rounded to bf16 when it is
// stored between steps (float arithmetic in between).
struct PrecBf16State : PrecBf16 {
  static constexpr bool bf16_state = true;
  VLA_HD static float store_state(float x) { return core::round_bf16(x); }
};

}  // namespace vla::gpu
