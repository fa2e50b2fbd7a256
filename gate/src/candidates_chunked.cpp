// The chunked kernels as gate candidates (issue 8). A chunked policy is judged
// by the error model of its baseline kind (impl::baseline_kind): chunked-fp32
// as fp32, chunked-bf16 as bf16-state, whose inputs, baselines and precision
// (accuracy::precision_of) are the chunked policy's own, so the two share the
// battery's reference runs with the fused kernels. Their domain (D <= 64, unit
// keys for chunked-bf16: impl::chunked_unsupported) makes other cases invalid
// for them, not failures.
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
  c.kind = impl::baseline_kind(kind);
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
    for (auto k : {impl::ChunkedKind::fp32, impl::ChunkedKind::bf16})
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
