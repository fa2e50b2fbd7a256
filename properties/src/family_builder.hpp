// Internal: builds a Case of any family from a Source of quantiles. Shared by the
// seeded API (seeded.cpp) and the RapidCheck generators (rc_generators.cpp).
#pragma once

#include "source.hpp"
#include "vla/properties/generators.hpp"

namespace vla::props::detail {

struct BuildSpec {
  Family family = Family::gaussian;
  Dims dims;
  FeatureMap feature_map = FeatureMap::elu1;
  bool with_u = false;
  double lambda0 = 1.0;  // ignored by lambda_extremes, which draws its own
};

Case build_case(const BuildSpec& spec, Source& src);

}  // namespace vla::props::detail
