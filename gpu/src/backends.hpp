// The two backends behind vla::impl::run (internal to gpu/).
#pragma once

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/gpu/inputs.hpp"

namespace vla::gpu {

// CPU twin of the fused kernel (Dk = Dv in {16, 32, 64, 128}).
Outputs run_twin(const HostInputs& in, const Options& opt, impl::Kind kind);
// The plain same-precision baseline (any Dk, Dv).
Outputs run_plain_inputs(const HostInputs& in, const Options& opt, impl::Kind kind, bool reversed);

#if defined(VLA_HAVE_CUDA)
bool cuda_device_present();
Outputs run_cuda(const HostInputs& in, const Options& opt, impl::Kind kind, impl::FusedLayout layout);
#endif

}  // namespace vla::gpu
