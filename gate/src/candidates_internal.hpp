// Internal to gate/: the lists behind candidate.hpp, each built in its own file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vla/gate/candidate.hpp"

namespace vla::gate {

using Runner = std::function<Outputs(const Stream&, const Options&)>;

std::vector<Candidate> make_honest_variants();  // honest.cpp
std::vector<Candidate> make_mutants();          // mutants_*.cpp, joined in mutants.cpp

// The domain of the chunked implementation `kind` at chunk size C, as a
// Candidate::outside (candidates_chunked.cpp).
std::function<std::string(const Stream&, const Options&)> chunked_domain(impl::ChunkedKind kind, int C);

}  // namespace vla::gate
