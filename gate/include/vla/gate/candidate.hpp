// The implementations the gate can judge, behind one name each:
//   production  "fp32", "bf16", "bf16-state": the kernels (CUDA, or their CPU twins);
//               "chunked-fp32", "chunked-bf16", "chunked-tf32": the chunked kernels
//               (C = 64), each judged by its own policy (chunked_policy, policy.hpp);
//               "chunked-scan-fp32", "chunked-scan-bf16": the chunk-parallel (scan)
//               form's kernels (C = 64; ridge-step cases outside their domain);
//   honest      "<kind>/<variant>": the twin's maths with another honest rounding
//               (summation order, no FMA, a wider accumulator, float state):
//               must pass;
//   mutant      "mutant:<name>": the twin with one planted defect, each a
//               build-time variant (a policy, a scalar, a driver wrapper): must fail.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gate/policy.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::gate {

enum class Role { production, honest, mutant };
std::string to_string(Role);

struct Candidate {
  std::string name;
  Policy policy;  // the precision policy it claims: the error model judges it by this
  Role role = Role::production;
  std::string defect;       // mutants: "maths", "indexing", "precision", "rare" (late steps, particular shapes)
  std::string description;  // what it does differently, in one line
  // Runs on a stream already rounded to its policy's input type (round_inputs(s, policy.input())).
  // Throws std::invalid_argument for a stream or options it does not support.
  std::function<Outputs(const Stream&, const Options&)> run;
  // Why a stream or options lie outside what it implements (empty: inside).
  // Unset: it takes whatever the fused kernels take. A case outside is invalid
  // for this candidate, with the reason, and is not run (judge_in_domain).
  std::function<std::string(const Stream&, const Options&)> outside;
};

Candidate production(impl::Kind kind, impl::Device device);
const std::vector<Candidate>& honest_variants();
const std::vector<Candidate>& mutants();

// The chunked kernels (candidates_chunked.cpp): production at chunk size 64,
// honest variants "<name>/C32" (another chunking must pass too), and the
// chunk-boundary mutants "mutant:chunked-..." (mutants_chunked.cpp). The group
// "mutants" of find_candidates includes the mutants (mutants() above does not);
// the C32 variants run by name (they share the chunked kernels' known failures).
Candidate chunked_production(impl::ChunkedKind kind, impl::Device device);
const std::vector<Candidate>& chunked_honest_variants();
const std::vector<Candidate>& chunked_mutants();

// One name (see above), or a group: "production", "chunked" (chunked-fp32,
// chunked-bf16 and chunked-tf32), "chunked-scan" (chunked-scan-fp32 and
// chunked-scan-bf16), "honest", "mutants". Several
// may be joined with commas. Throws std::invalid_argument naming an unknown one.
std::vector<Candidate> find_candidates(std::string_view names, impl::Device device);

}  // namespace vla::gate
