// The implementations under test, behind one entry point: each precision
// policy runs either as a CUDA kernel or as its CPU twin (the same numerics on
// the host, so CI without a GPU still checks the kernels' arithmetic).
#pragma once

#include <string>
#include <string_view>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::impl {

enum class Kind {
  fp32,       // float32 in/out, float32 state S, A, n
  bf16,       // bf16 in/out, float32 state and accumulation
  bf16_state  // bf16 in/out, S and A stored in bf16 between steps
};
enum class Device { cpu, cuda };
// The fused kernel's block layout (fused_traits.hpp): automatic chooses per
// launch (cluster while B*H clusters run at once, SMs shared, the wide build
// beyond the shipped one's wave at D = 32 and 64; beyond, many-heads at D = 32
// and 64, elsewhere few-heads while B*H blocks fit in one wave of it, else
// many-heads: fused_kernel.cuh, reports/gpu/FLOOR.md "The layouts' reach"); the
// others force one (tests, benchmarks). cluster is kernel v8's: one thread-block
// cluster per head, the A recurrence and the gate on one SM, S on others. The
// CPU twin is the same for all.
enum class FusedLayout { automatic, few_heads, many_heads, cluster };

std::string to_string(Kind);
std::string to_string(Device);
Kind parse_kind(std::string_view);      // "fp32", "bf16", "bf16-state"
Device parse_device(std::string_view);  // "cpu", "cuda"

// True when this build has the CUDA kernels and a GPU is visible.
bool cuda_available();

// Runs implementation `kind` on `device` (Device::cpu = the CPU twin). The
// stream holds the values as given; the implementation rounds them to its input
// type itself. Throws std::invalid_argument for unsupported shapes/options and
// std::runtime_error when the device is unavailable.
Outputs run(const Stream& s, const Options& opt, Kind kind, Device device, FusedLayout layout = FusedLayout::automatic);

}  // namespace vla::impl
