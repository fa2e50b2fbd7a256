#include <stdexcept>
#include <string>

#include "candidates_internal.hpp"

namespace vla::gate {

std::vector<Candidate> make_driver_mutants();  // mutants_driver.cpp
std::vector<Candidate> make_policy_mutants();  // mutants_policy.cpp

std::string to_string(Role r) { return r == Role::production ? "production" : r == Role::honest ? "honest" : "mutant"; }

namespace {
// The kernels' shape contract (impl::run checks it too): variants and mutants
// reject what the kernels reject, so that every candidate sees the same domain.
void check_kernel_dims(const Dims& d) {
  if (d.Dk != d.Dv || (d.Dk != 16 && d.Dk != 32 && d.Dk != 64 && d.Dk != 128))
    throw std::invalid_argument("the fused kernels need Dk = Dv in {16, 32, 64, 128} (got Dk=" + std::to_string(d.Dk) +
                                ", Dv=" + std::to_string(d.Dv) + ")");
}

std::vector<Candidate> checked(std::vector<Candidate> v) {
  for (auto& c : v) {
    Runner r = std::move(c.run);
    c.run = [r](const Stream& s, const Options& o) {
      check_kernel_dims(s.dims);
      if (o.model != Model::vla) throw std::invalid_argument("the kernels run the VLA recurrence only");
      return r(s, o);
    };
  }
  return v;
}
}  // namespace

Candidate production(impl::Kind kind, impl::Device device) {
  const std::string where = device == impl::Device::cuda ? "the CUDA kernel" : "the kernel's CPU twin";
  return Candidate{impl::to_string(kind), kind, Role::production, "", where + " as shipped",
                   [kind, device](const Stream& s, const Options& o) { return impl::run(s, o, kind, device); }};
}

const std::vector<Candidate>& honest_variants() {
  static const std::vector<Candidate> v = checked(make_honest_variants());
  return v;
}

// The names a group or a single name resolves to among the variants: the fused
// kernels' lists and the chunked kernels'.
static const std::vector<const std::vector<Candidate>*>& variant_lists() {
  static const std::vector<const std::vector<Candidate>*> v{&honest_variants(), &chunked_honest_variants(), &mutants(),
                                                            &chunked_mutants()};
  return v;
}

const std::vector<Candidate>& mutants() {
  static const std::vector<Candidate> v = [] {
    std::vector<Candidate> m = make_driver_mutants();
    for (auto& c : make_policy_mutants()) m.push_back(std::move(c));
    return checked(std::move(m));
  }();
  return v;
}

std::vector<Candidate> find_candidates(std::string_view names, impl::Device device) {
  std::vector<Candidate> out;
  std::string_view rest = names;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string name(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (name.empty()) continue;
    if (name == "production") {
      for (auto k : {impl::Kind::fp32, impl::Kind::bf16, impl::Kind::bf16_state}) out.push_back(production(k, device));
      continue;
    }
    if (name == "honest" || name == "mutants") {
      // The chunked C32 variants are not in "honest": they share the chunked
      // kernels' known failures (docs/CHUNKED.md, section 6), which would fail
      // `vla gate --mutation`; they run by name.
      for (const auto* list : name == "honest" ? std::vector{&honest_variants()} : std::vector{&mutants(), &chunked_mutants()})
        out.insert(out.end(), list->begin(), list->end());
      continue;
    }
    if (name == "fp32" || name == "bf16" || name == "bf16-state") {
      out.push_back(production(impl::parse_kind(name), device));
      continue;
    }
    if (name == "chunked" || name == "chunked-fp32" || name == "chunked-bf16" || name == "chunked-tf32") {
      for (auto k : {impl::ChunkedKind::fp32, impl::ChunkedKind::bf16, impl::ChunkedKind::tf32})
        if (name == "chunked" || name == impl::to_string(k)) out.push_back(chunked_production(k, device));
      continue;
    }
    if (name == "chunked-scan" || name == "chunked-scan-fp32" || name == "chunked-scan-bf16") {
      for (auto k : {impl::ChunkedKind::scan_fp32, impl::ChunkedKind::scan_bf16})
        if (name == "chunked-scan" || name == impl::to_string(k)) out.push_back(chunked_production(k, device));
      continue;
    }
    bool found = false;
    for (const auto* list : variant_lists())
      for (const auto& c : *list)
        if (c.name == name) {
          if (device != impl::Device::cpu)
            throw std::invalid_argument("--impl " + name + ": variants and mutants are CPU twins; use --device cpu");
          out.push_back(c);
          found = true;
        }
    if (!found) {
      std::string all = "fp32, bf16, bf16-state, chunked-fp32, chunked-bf16, chunked-tf32, chunked-scan-fp32, chunked-scan-bf16, "
                        "production, chunked, chunked-scan, honest, mutants";
      for (const auto* list : variant_lists())
        for (const auto& c : *list) all += ", " + c.name;
      throw std::invalid_argument("unknown implementation '" + name + "' (expected one of: " + all + ")");
    }
  }
  if (out.empty()) throw std::invalid_argument("--impl names no implementation");
  return out;
}

}  // namespace vla::gate
