// Host side of the CUDA backend: device detection, the launcher's dispatch on
// precision, and run_cuda (copies in, poisons the outputs, launches, copies out).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../src/backends.hpp"
#include "check.cuh"
#include "device_io.cuh"
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
  if (!p.q || !p.k || !p.v || !p.o || !p.S || !p.A || !p.state_norm)
    throw std::invalid_argument("fused kernel: q, k, v, o, S, A and state_norm are required (the fused kernels always form the norms)");
  require_aligned_inputs(p, "fused kernel");
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

// One run's device buffers (device_io.cuh), shared with the chunked launchers.
DeviceRun::DeviceRun(const HostInputs& in_, const Options& opt) : in(in_), p(make_params(opt, in_.dims, in_.has_u)) {
  const Dims& d = in.dims;
  for (int w = 0; w < 4; ++w) {
    if (w == 3 && !in.has_u) continue;
    buf[w] = in.bf16 ? upload(in.h[w]) : upload(in.f[w]);
  }
  p.q = buf[0].get();
  p.k = buf[1].get();
  p.v = buf[2].get();
  p.u = in.has_u ? buf[3].get() : nullptr;
  o = device_poisoned(d.v_size() * (in.bf16 ? 2 : 4));
  S = device_poisoned(std::size_t(d.B) * d.H * d.Dv * d.Dk * 4);
  A = device_poisoned(std::size_t(d.B) * d.H * d.Dk * d.Dk * 4);
  norm = device_poisoned(std::size_t(d.B) * d.T * d.H * 4);
  p.o = o.get();
  p.S = static_cast<float*>(S.get());
  p.A = static_cast<float*>(A.get());
  p.state_norm = static_cast<float*>(norm.get());
}

Outputs DeviceRun::outputs() const {
  const Dims& d = in.dims;
  const std::size_t n_o = d.v_size(), n_s = std::size_t(d.B) * d.H * d.Dv * d.Dk, n_a = std::size_t(d.B) * d.H * d.Dk * d.Dk,
                    n_norm = std::size_t(d.B) * d.T * d.H;
  Outputs out;
  out.allocate(d, true);
  if (in.bf16) {
    const auto ob = download<std::uint16_t>(o.get(), n_o);
    for (std::size_t i = 0; i < n_o; ++i) out.o[i] = core::bf16_bits_to_float(ob[i]);
  } else {
    const auto of = download<float>(o.get(), n_o);
    for (std::size_t i = 0; i < n_o; ++i) out.o[i] = of[i];
  }
  const auto sf = download<float>(S.get(), n_s), af = download<float>(A.get(), n_a), nf = download<float>(norm.get(), n_norm);
  for (std::size_t i = 0; i < n_s; ++i) out.S[i] = sf[i];
  for (std::size_t i = 0; i < n_a; ++i) out.A[i] = af[i];
  for (std::size_t i = 0; i < n_norm; ++i) out.state_norm[i] = nf[i];
  return out;
}

Outputs run_cuda(const HostInputs& in, const Options& opt, impl::Kind kind, impl::FusedLayout layout) {
  DeviceRun run(in, opt);
  run.p.layout = layout;
  launch_fused(run.p, kind, nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  return run.outputs();
}

}  // namespace vla::gpu
