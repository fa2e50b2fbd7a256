// The current device's multiprocessor count, for the launchers' one-wave rules.
#pragma once

#include <cuda_runtime.h>

#include "check.cuh"

namespace vla::gpu {

// Multiprocessors of the current device (cached per device: the launchers ask on every launch).
inline int device_sms() {
  int dev = 0;
  VLA_CUDA_CHECK(cudaGetDevice(&dev));
  static int cached_dev = -1, sms = 0;
  if (dev != cached_dev) {
    VLA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cached_dev = dev;
  }
  return sms;
}

}  // namespace vla::gpu
