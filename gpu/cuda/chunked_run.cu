// Host side of the chunked kernel: dispatch on (precision, D, C), launch with
// the shared-memory plan, and run_cuda_chunked (copies in, poisons the outputs,
// launches, copies out), the backend of vla::impl::run_chunked.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../src/chunked_backend.hpp"
#include "check.cuh"
#include "chunked_dispatch.cuh"
#include "vla/core/bf16.hpp"
#include "vla/gpu/chunked_launch.hpp"

namespace vla::gpu {
namespace {

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;
DeviceBuffer device_alloc(std::size_t bytes) {
  void* p = nullptr;
  VLA_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  return DeviceBuffer(p);
}
template <class T>
DeviceBuffer upload(const std::vector<T>& x) {
  DeviceBuffer d = device_alloc(x.size() * sizeof(T));
  VLA_CUDA_CHECK(cudaMemcpy(d.get(), x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
std::vector<T> download(const DeviceBuffer& d, std::size_t n) {
  std::vector<T> x(n);
  VLA_CUDA_CHECK(cudaMemcpy(x.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return x;
}

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
  return download<float>(out, x.size());
}

namespace chunked {
ChunkedLayout forced_layout = ChunkedLayout::automatic;
}  // namespace chunked

void set_chunked_layout(ChunkedLayout layout) { chunked::forced_layout = layout; }

void launch_chunked(const FusedParams& p, impl::ChunkedKind kind, int C, void* stream) {
  if (p.B < 1 || p.T < 1 || p.H < 1) throw std::invalid_argument("chunked kernel: B, T and H must be >= 1");
  const auto s = static_cast<cudaStream_t>(stream);
  if (kind == impl::ChunkedKind::bf16) return chunked::launch_prec<PrecBf16>(p, C, s);
  if (kind == impl::ChunkedKind::tf32) return chunked::launch_prec<chunked::PrecTf32>(p, C, s);
  return chunked::launch_prec<PrecFp32>(p, C, s);
}

KernelInfo chunked_pipelined_info(impl::ChunkedKind kind, int D, int C) {
  if (kind == impl::ChunkedKind::bf16) return chunked::pipelined_info_prec<PrecBf16>(D, C);
  if (kind == impl::ChunkedKind::tf32) return chunked::pipelined_info_prec<chunked::PrecTf32>(D, C);
  return chunked::pipelined_info_prec<PrecFp32>(D, C);
}

KernelInfo chunked_kernel_info(impl::ChunkedKind kind, int D, int C) {
  if (kind == impl::ChunkedKind::bf16) return chunked::info_prec<PrecBf16>(D, C);
  if (kind == impl::ChunkedKind::tf32) return chunked::info_prec<chunked::PrecTf32>(D, C);
  return chunked::info_prec<PrecFp32>(D, C);
}

Outputs run_cuda_chunked(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C) {
  const Dims& d = in.dims;
  FusedParams p = make_params(opt, d, in.has_u);
  DeviceBuffer buf[4];
  for (int w = 0; w < 4; ++w) {
    if (w == 3 && !in.has_u) continue;
    buf[w] = in.bf16 ? upload(in.h[w]) : upload(in.f[w]);
  }
  p.q = buf[0].get();
  p.k = buf[1].get();
  p.v = buf[2].get();
  p.u = in.has_u ? buf[3].get() : nullptr;
  const std::size_t n_o = d.v_size(), n_s = std::size_t(d.B) * d.H * d.Dv * d.Dk, n_a = std::size_t(d.B) * d.H * d.Dk * d.Dk,
                    n_norm = std::size_t(d.B) * d.T * d.H;
  const std::size_t bytes_o = n_o * (in.bf16 ? 2 : 4), bytes_s = n_s * 4, bytes_a = n_a * 4, bytes_norm = n_norm * 4;
  DeviceBuffer o = device_alloc(bytes_o), S = device_alloc(bytes_s), A = device_alloc(bytes_a), norm = device_alloc(bytes_norm);
  // Poison (all-ones bytes are NaN in float and bf16): an unwritten element reads back NaN.
  VLA_CUDA_CHECK(cudaMemset(o.get(), 0xff, bytes_o));
  VLA_CUDA_CHECK(cudaMemset(S.get(), 0xff, bytes_s));
  VLA_CUDA_CHECK(cudaMemset(A.get(), 0xff, bytes_a));
  VLA_CUDA_CHECK(cudaMemset(norm.get(), 0xff, bytes_norm));
  p.o = o.get();
  p.S = static_cast<float*>(S.get());
  p.A = static_cast<float*>(A.get());
  p.state_norm = static_cast<float*>(norm.get());
  launch_chunked(p, kind, C, nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  Outputs out;
  out.allocate(d, true);
  if (in.bf16) {
    const auto ob = download<std::uint16_t>(o, n_o);
    for (std::size_t i = 0; i < n_o; ++i) out.o[i] = core::bf16_bits_to_float(ob[i]);
  } else {
    const auto of = download<float>(o, n_o);
    for (std::size_t i = 0; i < n_o; ++i) out.o[i] = of[i];
  }
  const auto sf = download<float>(S, n_s), af = download<float>(A, n_a), nf = download<float>(norm, n_norm);
  for (std::size_t i = 0; i < n_s; ++i) out.S[i] = sf[i];
  for (std::size_t i = 0; i < n_a; ++i) out.A[i] = af[i];
  for (std::size_t i = 0; i < n_norm; ++i) out.state_norm[i] = nf[i];
  return out;
}

}  // namespace vla::gpu
