// Judging a candidate that implements only part of the spec's domain
// (Candidate::outside, e.g. the chunked kernels: D <= 64).
#pragma once

#include "vla/gate/candidate.hpp"
#include "vla/gate/judge.hpp"

namespace vla::gate {

// run_and_judge, except that a valid case outside the candidate's domain is
// invalid for it (status invalid, the reason saying why) and is not run.
Judgement judge_in_domain(const Candidate& c, const Expected& e);

}  // namespace vla::gate
