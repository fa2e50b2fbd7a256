// The fused kernel's instances for precision PrecFp32 (one file per precision so
// that they compile in parallel).
#include <stdexcept>
#include <string>

#include "fused_kernel.cuh"

namespace vla::gpu::detail {

template <>
void launch_prec<PrecFp32>(const FusedParams& p, cudaStream_t stream) {
  switch (p.D) {
    case 16: return launch_typed<16, PrecFp32>(p, stream);
    case 32: return launch_typed<32, PrecFp32>(p, stream);
    case 64: return launch_typed<64, PrecFp32>(p, stream);
    case 128: return launch_typed<128, PrecFp32>(p, stream);
    default: throw std::invalid_argument("fused kernel: head dimension " + std::to_string(p.D) + " is not one of 16, 32, 64, 128");
  }
}

template <>
KernelInfo kernel_info_prec<PrecFp32>(int d) {
  switch (d) {
    case 16: return kernel_info_typed<16, PrecFp32>();
    case 32: return kernel_info_typed<32, PrecFp32>();
    case 64: return kernel_info_typed<64, PrecFp32>();
    case 128: return kernel_info_typed<128, PrecFp32>();
    default: throw std::invalid_argument("fused kernel: head dimension " + std::to_string(d) + " is not one of 16, 32, 64, 128");
  }
}

}  // namespace vla::gpu::detail
