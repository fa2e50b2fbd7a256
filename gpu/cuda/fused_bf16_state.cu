// The fused kernel's instances for precision PrecBf16State, both layouts (one file
// per precision so that they compile in parallel).
#include "fused_kernel.cuh"

namespace vla::gpu::detail {

VLA_FUSED_INSTANCES(PrecBf16State)

}  // namespace vla::gpu::detail
