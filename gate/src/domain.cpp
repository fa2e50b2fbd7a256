#include "vla/gate/domain.hpp"

#include <string>

namespace vla::gate {

Judgement judge_in_domain(const Candidate& c, const Expected& e) {
  if (e.valid && c.outside) {
    if (std::string why = c.outside(e.input, e.opt); !why.empty()) {
      Judgement j;
      j.status = Status::invalid;
      j.reason = "outside " + c.name + "'s domain: " + why;
      return j;
    }
  }
  return run_and_judge(c, e);
}

}  // namespace vla::gate
