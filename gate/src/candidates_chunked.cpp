// The chunked kernels as gate candidates (issue 8). Each is judged by its own
// policy (chunked_policy, policy.hpp): chunked-fp32 and chunked-bf16 by that of
// their baseline kind (fp32, bf16-state), whose inputs, baselines and precision
// are the chunked policy's own, so they share the battery's reference runs with
// the fused kernels; chunked-tf32 by its own (tf32 state). Their domain (D <= 64,
// unit keys for chunked-bf16 and chunked-tf32: impl::chunked_unsupported) makes
// other cases invalid for them, not failures. The chunk-parallel (scan) kinds
// (chunked-scan-fp32, chunked-scan-bf16; docs/CHUNKED.md, section 8) are judged
// by the fused fp32 and bf16 policies (float state, double gate), outside ridge
// steps and pivot floors above 1 (ref::scan_unsupported).
#include <string>
#include <vector>

#include "candidates_internal.hpp"

namespace vla::gate {

std::vector<Candidate> make_chunked_mutants();  // mutants_chunked.cpp

namespace {

// The production chunk size (the benchmarked kernels) and the honest variants' one.
constexpr int kProductionC = 64, kVariantC = 32;

Candidate chunked(impl::ChunkedKind kind, impl::Device device, int C, Role role, std::string name, std::string description) {
  Candidate c;
  c.name = std::move(name);
  c.policy = chunked_policy(kind);
  c.role = role;
  c.description = std::move(description);
  c.run = [kind, device, C](const Stream& s, const Options& o) { return impl::run_chunked(s, o, kind, device, C); };
  c.outside = chunked_domain(kind, C);
  return c;
}

}  // namespace

std::function<std::string(const Stream&, const Options&)> chunked_domain(impl::ChunkedKind kind, int C) {
  return [kind, C](const Stream& s, const Options& o) { return impl::chunked_unsupported(s.dims, o, kind, C); };
}

Candidate chunked_production(impl::ChunkedKind kind, impl::Device device) {
  const std::string where = device == impl::Device::cuda ? "the chunked CUDA kernel" : "the chunked kernel's CPU twin";
  return chunked(kind, device, kProductionC, Role::production, impl::to_string(kind), where + " as shipped (C = 64)");
}

const std::vector<Candidate>& chunked_honest_variants() {
  static const std::vector<Candidate> v = [] {
    std::vector<Candidate> out;
    for (auto k : {impl::ChunkedKind::fp32, impl::ChunkedKind::bf16, impl::ChunkedKind::tf32, impl::ChunkedKind::scan_fp32,
                   impl::ChunkedKind::scan_bf16})
      out.push_back(chunked(k, impl::Device::cpu, kVariantC, Role::honest, impl::to_string(k) + "/C32",
                            "the chunked twin with chunks of 32 steps (other chunk boundaries, smaller solves)"));
    return out;
  }();
  return v;
}

const std::vector<Candidate>& chunked_mutants() {
  static const std::vector<Candidate> v = make_chunked_mutants();
  return v;
}

}  // namespace vla::gate
