// Host side of the chunked kernel: dispatch on (precision, D, C), launch with
// the shared-memory plan, and run_cuda_chunked (copies in, poisons the outputs,
// launches, copies out), the backend of vla::impl::run_chunked; the scan kinds
// go to scan_run.cu.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../src/chunked_backend.hpp"
#include "check.cuh"
#include "chunked_dispatch.cuh"
#include "device_io.cuh"
#include "scan_gate.cuh"
#include "vla/core/bf16.hpp"
#include "vla/gpu/chunked_launch.hpp"

namespace vla::gpu {
namespace {

__global__ void round_tf32_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = chunked::to_tf32(x[i]);
}

}  // namespace

std::vector<float> device_round_tf32(const std::vector<float>& x) {
  const DeviceBuffer in = upload(x), out = device_alloc(x.size() * 4);
  const int n = int(x.size());
  if (n > 0) round_tf32_kernel<<<(n + 255) / 256, 256>>>(static_cast<const float*>(in.get()), static_cast<float*>(out.get()), n);
  VLA_CUDA_CHECK(cudaGetLastError());
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  return download<float>(out.get(), x.size());
}

namespace chunked {
ChunkedLayout forced_layout = ChunkedLayout::automatic;
}  // namespace chunked

void set_chunked_layout(ChunkedLayout layout) { chunked::forced_layout = layout; }

void launch_chunked(const FusedParams& p, impl::ChunkedKind kind, int C, void* stream) {
  if (p.B < 1 || p.T < 1 || p.H < 1) throw std::invalid_argument("chunked kernel: B, T and H must be >= 1");
  require_aligned_inputs(p, "chunked kernel");
  const auto s = static_cast<cudaStream_t>(stream);
  if (impl::is_scan(kind)) {
    // The scan form with a workspace of its own (allocated and freed here: the
    // benchmark keeps one, scan::launch_scan).
    const scan::Workspace w(p.B, p.T, p.H, p.D, C, p.u || p.u_unit_scaled, p.ratio);
    scan::launch_scan(p, impl::bf16_io(kind), C, w, s);
    VLA_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  if (kind == impl::ChunkedKind::bf16) return chunked::launch_prec<PrecBf16>(p, C, s);
  if (kind == impl::ChunkedKind::tf32) return chunked::launch_prec<chunked::PrecTf32>(p, C, s);
  return chunked::launch_prec<PrecFp32>(p, C, s);
}

KernelInfo chunked_pipelined_info(impl::ChunkedKind kind, int D, int C) {
  if (impl::is_scan(kind)) throw std::invalid_argument("chunked kernel info: " + impl::to_string(kind) + " is the scan form (several kernels)");
  if (kind == impl::ChunkedKind::bf16) return chunked::pipelined_info_prec<PrecBf16>(D, C);
  if (kind == impl::ChunkedKind::tf32) return chunked::pipelined_info_prec<chunked::PrecTf32>(D, C);
  return chunked::pipelined_info_prec<PrecFp32>(D, C);
}

KernelInfo chunked_kernel_info(impl::ChunkedKind kind, int D, int C) {
  if (impl::is_scan(kind)) throw std::invalid_argument("chunked kernel info: " + impl::to_string(kind) + " is the scan form (several kernels)");
  if (kind == impl::ChunkedKind::bf16) return chunked::info_prec<PrecBf16>(D, C);
  if (kind == impl::ChunkedKind::tf32) return chunked::info_prec<chunked::PrecTf32>(D, C);
  return chunked::info_prec<PrecFp32>(D, C);
}

Outputs run_cuda_chunked(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C) {
  if (impl::is_scan(kind)) return run_cuda_scan(in, opt, kind, C);
  DeviceRun run(in, opt);
  launch_chunked(run.p, kind, C, nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  return run.outputs();
}

}  // namespace vla::gpu
