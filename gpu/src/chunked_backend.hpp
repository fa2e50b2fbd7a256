// The CUDA backend of vla::impl::run_chunked (internal to gpu/).
#pragma once

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/inputs.hpp"

#include <vector>

namespace vla::gpu {
#if defined(VLA_HAVE_CUDA)
Outputs run_cuda_chunked(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C);
// The scan kinds (chunked-scan-fp32, chunked-scan-bf16: gpu/cuda/scan_run.cu), to
// which run_cuda_chunked hands them.
Outputs run_cuda_scan(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C);
// Stage 1 of the scan form alone: the gates a^ ([B, T, H, D] float), for the CUDA
// test's diagnosis of a failing run (gate or state stage).
std::vector<float> run_cuda_scan_gates(const HostInputs& in, const Options& opt, int C);
#endif
}  // namespace vla::gpu
