// Internal: a Source whose quantiles are RapidCheck picks (usable inside
// rc::gen::exec or a property only).
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "source.hpp"

namespace vla::props::detail {

// Each quantile is one RapidCheck pick over 2^32 - 1 values at full size, so the
// family's distribution does not depend on RapidCheck's size parameter; it
// shrinks towards pick 0, which is mapped to p = 1/2 (picks 2j - 1 and 2j go to
// 1/2 -+ j 2^-32), so a shrunk case holds each family's simplest values.
class RcSource final : public detail::Source {
 public:
  double p() override {
    const std::uint32_t m = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint32_t>(0u, 0xFFFFFFFFu));
    if (m == 0) return 0.5;
    const double j = static_cast<double>((static_cast<std::uint64_t>(m) + 1) / 2);
    return (m % 2 == 1) ? 0.5 - j * 0x1p-32 : 0.5 + j * 0x1p-32;
  }
};

}  // namespace vla::props::detail
