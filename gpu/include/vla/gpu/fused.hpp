// The fused forward kernel's parameters and launcher (device pointers; no CUDA
// types, so plain C++ such as the benchmark can include it). One launch runs
// all T steps for every (batch, head): one block per (b, h), state on chip.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::gpu {

using impl::FusedLayout;

struct FusedParams {
  // Inputs [B, T, H, D] of the kernel's input type (float, or bf16 bit
  // patterns); u may be null (then u_t = k^_t). Device pointers, 16-byte aligned.
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* u = nullptr;
  // Outputs: o [B, T, H, D] of the output type; S, A [B, H, D, D] float;
  // state_norm [B, T, H] float. The scan form's launcher (scan::launch_scan) takes a null
  // state_norm as "o and S only" and skips the norms (the output SDPA and fla's kernels give);
  // the fused kernels and the host entries (run_cuda_*) always form them.
  void* o = nullptr;
  float* S = nullptr;
  float* A = nullptr;
  float* state_norm = nullptr;
  int B = 0, T = 0, H = 0, D = 0;
  // Options (docs/SPEC.md), with the constants the generic step derives from
  // them rounded to float on the host exactly as the step does.
  bool elu1 = true, normalize_key = true, normalize_gate = true, ratio = true, u_unit_scaled = false;
  double delta_floor = 0.0, den_floor = 0.0;
  int ridge_every = 0;
  float ridge = 0.0f;
  float inv_lambda0 = 1.0f;  // float(1) / float(lambda0), A_0's diagonal
  double lambda0 = 1.0;      // lambda0 itself: M_0 = lambda0 I of the scan form's gate (double)
  float inv_sqrt_dk = 1.0f;  // float(1) / sqrtf(float(D)), the u scaling
  FusedLayout layout = FusedLayout::automatic;  // block layout (impl.hpp); same results in all
};

// Fills the option fields and the shape; leaves the pointers to the caller.
FusedParams make_params(const Options& opt, const Dims& d, bool has_u);

// The kernels move rows of q, k, v and u by 16-byte pieces (cp.async, float4):
// a pointer that is not 16-byte aligned (an offset into a larger buffer) would
// fault or read the wrong bytes. The launchers call this first: it throws
// std::invalid_argument naming the first such input, the message starting with
// `who`. Host-only and header-only, so the CPU tests check it.
inline void require_aligned_inputs(const FusedParams& p, const std::string& who) {
  const std::pair<const char*, const void*> inputs[] = {{"q", p.q}, {"k", p.k}, {"v", p.v}, {"u", p.u}};
  for (const auto& [name, ptr] : inputs)
    if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      throw std::invalid_argument(who + ": " + name + " must be 16-byte aligned (cudaMalloc's pointers are)");
}

#if defined(VLA_HAVE_CUDA)
// Launches the kernel of `kind` on `stream` (a cudaStream_t; null = default) and
// checks the launch. Throws std::invalid_argument for an unsupported D and
// std::runtime_error for a CUDA error.
void launch_fused(const FusedParams& p, impl::Kind kind, void* stream);

// Registers, shared memory, threads and layout (few_heads, many_heads or
// FusedLayout::cluster) of the kernel that launch p of `kind` runs (p.B, p.H, p.D
// and p.layout are read); for the cluster layout its blocks per cluster and the
// clusters that run at once, blocks of several heads sharing an SM where they fit
// (the most heads that the automatic choice gives the cluster layout).
struct KernelInfo {
  int threads = 0, registers = 0, shared_bytes = 0, local_bytes = 0, blocks_per_sm = 0;
  int cluster_blocks = 1, wave_clusters = 0;
  FusedLayout layout = FusedLayout::few_heads;
};
KernelInfo fused_kernel_info(const FusedParams& p, impl::Kind kind);
#endif

}  // namespace vla::gpu
