// The CUDA backend of vla::impl::run_chunked (internal to gpu/).
#pragma once

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/inputs.hpp"

namespace vla::gpu {
#if defined(VLA_HAVE_CUDA)
Outputs run_cuda_chunked(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C);
#endif
}  // namespace vla::gpu
