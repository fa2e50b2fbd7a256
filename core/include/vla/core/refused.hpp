// An implementation's refusal of a stream it cannot compute to its contract, found while it runs
// (the scan form's segment start beyond double's reach, docs/CHUNKED.md 8.27): the stream is valid
// for the recurrence, not for this implementation, and nothing is written. The CLI reports it as
// bad input (exit 2); `vla gate` counts it as the implementation's failure on a valid stream.
#pragma once

#include <stdexcept>

namespace vla::core {

struct StreamRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace vla::core
