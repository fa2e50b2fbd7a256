// Internal to gate/: the lists behind candidate.hpp, each built in its own file.
#pragma once

#include <functional>
#include <vector>

#include "vla/gate/candidate.hpp"

namespace vla::gate {

using Runner = std::function<Outputs(const Stream&, const Options&)>;

std::vector<Candidate> make_honest_variants();  // honest.cpp
std::vector<Candidate> make_mutants();          // mutants_*.cpp, joined in mutants.cpp

}  // namespace vla::gate
