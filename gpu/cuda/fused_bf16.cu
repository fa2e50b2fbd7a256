// The fused kernel's instances for precision PrecBf16, both layouts (one file
// per precision so that they compile in parallel).
#include "fused_kernel.cuh"

namespace vla::gpu::detail {

VLA_FUSED_INSTANCES(PrecBf16)

}  // namespace vla::gpu::detail
