// The fused kernel's instances for precision PrecBf16State (one file per precision so
// that they compile in parallel).
#include <stdexcept>
#include <string>

#include "fused_kernel.cuh"

namespace vla::gpu::detail {

template <>
void launch_prec<PrecBf16State>(const FusedParams& p, cudaStream_t stream) {
  switch (p.D) {
    case 16: return launch_typed<16, PrecBf16State>(p, stream);
    case 32: return launch_typed<32, PrecBf16State>(p, stream);
    case 64: return launch_typed<64, PrecBf16State>(p, stream);
    case 128: return launch_typed<128, PrecBf16State>(p, stream);
    default: throw std::invalid_argument("fused kernel: head dimension " + std::to_string(p.D) + " is not one of 16, 32, 64, 128");
  }
}

template <>
KernelInfo kernel_info_prec<PrecBf16State>(int d) {
  switch (d) {
    case 16: return kernel_info_typed<16, PrecBf16State>();
    case 32: return kernel_info_typed<32, PrecBf16State>();
    case 64: return kernel_info_typed<64, PrecBf16State>();
    case 128: return kernel_info_typed<128, PrecBf16State>();
    default: throw std::invalid_argument("fused kernel: head dimension " + std::to_string(d) + " is not one of 16, 32, 64, 128");
  }
}

}  // namespace vla::gpu::detail
