// Every CUDA call and launch is checked: a failure throws std::runtime_error
// naming the call, the file and line, and CUDA's message.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace vla::gpu {

inline void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + " at " + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace vla::gpu

#define VLA_CUDA_CHECK(call) ::vla::gpu::cuda_check((call), #call, __FILE__, __LINE__)
