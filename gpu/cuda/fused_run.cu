// Host side of the CUDA backend: device detection, the launcher's dispatch on
// precision, and run_cuda (copies in, poisons the outputs, launches, copies out).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../src/backends.hpp"
#include "check.cuh"
#include "fused_kernel.cuh"
#include "vla/core/bf16.hpp"
#include "vla/gpu/fused.hpp"

namespace vla::gpu {

bool cuda_device_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" status
    return false;
  }
  return n > 0;
}

void launch_fused(const FusedParams& p, impl::Kind kind, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (p.B < 1 || p.T < 1 || p.H < 1) throw std::invalid_argument("fused kernel: B, T and H must be >= 1");
  switch (kind) {
    case impl::Kind::fp32: return detail::launch_prec<PrecFp32>(p, s);
    case impl::Kind::bf16: return detail::launch_prec<PrecBf16>(p, s);
    case impl::Kind::bf16_state: return detail::launch_prec<PrecBf16State>(p, s);
  }
  throw std::logic_error("launch_fused: unknown kind");
}

KernelInfo fused_kernel_info(const FusedParams& p, impl::Kind kind) {
  switch (kind) {
    case impl::Kind::fp32: return detail::kernel_info_prec<PrecFp32>(p);
    case impl::Kind::bf16: return detail::kernel_info_prec<PrecBf16>(p);
    case impl::Kind::bf16_state: return detail::kernel_info_prec<PrecBf16State>(p);
  }
  throw std::logic_error("fused_kernel_info: unknown kind");
}

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

}  // namespace

Outputs run_cuda(const HostInputs& in, const Options& opt, impl::Kind kind, impl::FusedLayout layout) {
  const Dims& d = in.dims;
  FusedParams p = make_params(opt, d, in.has_u);
  p.layout = layout;
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
  const std::size_t out_elem = in.bf16 ? sizeof(std::uint16_t) : sizeof(float);
  const std::size_t bytes_o = n_o * out_elem, bytes_s = n_s * 4, bytes_a = n_a * 4, bytes_norm = n_norm * 4;
  DeviceBuffer o = device_alloc(bytes_o), S = device_alloc(bytes_s), A = device_alloc(bytes_a), norm = device_alloc(bytes_norm);
  // Poison: all-ones bytes are NaN in float and in bf16, so an element the
  // kernel fails to write reads back as NaN.
  VLA_CUDA_CHECK(cudaMemset(o.get(), 0xff, bytes_o));
  VLA_CUDA_CHECK(cudaMemset(S.get(), 0xff, bytes_s));
  VLA_CUDA_CHECK(cudaMemset(A.get(), 0xff, bytes_a));
  VLA_CUDA_CHECK(cudaMemset(norm.get(), 0xff, bytes_norm));
  p.o = o.get();
  p.S = static_cast<float*>(S.get());
  p.A = static_cast<float*>(A.get());
  p.state_norm = static_cast<float*>(norm.get());

  launch_fused(p, kind, nullptr);
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
