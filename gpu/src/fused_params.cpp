#include <cmath>

#include "vla/gpu/fused.hpp"

namespace vla::gpu {

FusedParams make_params(const Options& opt, const Dims& d, bool has_u) {
  FusedParams p;
  p.B = d.B;
  p.T = d.T;
  p.H = d.H;
  p.D = d.Dk;
  p.elu1 = opt.feature_map == FeatureMap::elu1;
  p.normalize_key = opt.normalize_key();
  p.normalize_gate = opt.normalize_gate();
  p.ratio = opt.readout == Readout::ratio;
  p.u_unit_scaled = opt.u_unit_scaled;
  p.delta_floor = opt.delta_floor;
  p.den_floor = opt.den_floor;
  p.ridge_every = opt.ridge_every;
  p.ridge = static_cast<float>(opt.ridge);
  p.inv_lambda0 = 1.0f / static_cast<float>(opt.lambda0);
  p.lambda0 = opt.lambda0;
  p.inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(d.Dk));
  (void)has_u;
  return p;
}

}  // namespace vla::gpu
