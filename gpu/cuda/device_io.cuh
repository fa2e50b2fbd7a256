// Owned device allocations, host copies and the device I/O of one run, shared
// by the launchers (fused_run.cu, chunked_run.cu, scan_run.cu); every call checked.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "check.cuh"
#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/inputs.hpp"

namespace vla::gpu {

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;
inline DeviceBuffer device_alloc(std::size_t bytes) {
  void* p = nullptr;
  VLA_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  return DeviceBuffer(p);
}
// A buffer of `bytes` bytes, every byte 0xff (NaN in float, double and bf16): an unwritten element reads back NaN.
inline DeviceBuffer device_poisoned(std::size_t bytes) {
  DeviceBuffer d = device_alloc(bytes);
  VLA_CUDA_CHECK(cudaMemset(d.get(), 0xff, bytes == 0 ? 1 : bytes));
  return d;
}
template <class T>
DeviceBuffer upload(const std::vector<T>& x) {
  DeviceBuffer d = device_alloc(x.size() * sizeof(T));
  VLA_CUDA_CHECK(cudaMemcpy(d.get(), x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
std::vector<T> download(const void* d, std::size_t n) {
  std::vector<T> x(n);
  VLA_CUDA_CHECK(cudaMemcpy(x.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return x;
}

// One run's inputs uploaded (rounded as `in` holds them) and its outputs o, S,
// A, state_norm allocated and poisoned, with p's pointers set (p's options from
// make_params); outputs() downloads them (o converted from bf16 where the inputs
// are bf16). Defined in fused_run.cu (library vla_cuda).
struct DeviceRun {
  DeviceRun(const HostInputs& in, const Options& opt);
  Outputs outputs() const;
  const HostInputs& in;
  FusedParams p;
  DeviceBuffer buf[4], o, S, A, norm;
};

}  // namespace vla::gpu
