#include "vla/gpu/inputs.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "vla/core/bf16.hpp"
#include "vla/core/formulas.hpp"

namespace vla::gpu {

float HostInputs::value(int which, std::size_t i) const {
  return bf16 ? core::bf16_bits_to_float(h[which][i]) : f[which][i];
}

HostInputs prepare_inputs(const Stream& s, bool bf16) {
  HostInputs in;
  in.dims = s.dims;
  in.has_u = s.has_u();
  in.bf16 = bf16;
  const std::vector<double>* src[4] = {&s.q, &s.k, &s.v, &s.u};
  for (int w = 0; w < 4; ++w) {
    const auto& x = *src[w];
    if (bf16) {
      in.h[w].resize(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) in.h[w][i] = core::bf16_bits_rne_from_double(x[i]);
    } else {
      in.f[w].resize(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) in.f[w][i] = static_cast<float>(x[i]);
    }
  }
  return in;
}

void check_rounded_keys(const HostInputs& in, const Options& opt) {
  const Dims& d = in.dims;
  // A finite double beyond the type's range rounds to Inf: the kernel would compute on Inf and write non-finite
  // outputs for an input that looked valid (vla check refuses the same input by this rule).
  static const char* const kNames[4] = {"q", "k", "v", "u"};
  for (int w = 0; w < 4; ++w) {
    const std::size_t n = in.bf16 ? in.h[w].size() : in.f[w].size();
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(in.value(w, i)))
        throw std::invalid_argument(std::string("tensor '") + kNames[w] + "' has a value beyond " + (in.bf16 ? "bf16" : "float32") +
                                    "'s range at element " + std::to_string(i) + " (it rounds to inf)");
  }
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  for (int b = 0; b < d.B; ++b)
    for (int t = 0; t < d.T; ++t)
      for (int h = 0; h < d.H; ++h) {
        const std::size_t o = d.off(b, t, h, d.Dk);
        bool any = false;
        for (int j = 0; j < d.Dk && !any; ++j) any = core::phi(in.value(1, o + j), elu1) != 0.0f;
        if (!any) {
          throw std::invalid_argument(std::string("tensor 'k' at [b=") + std::to_string(b) + ", t=" + std::to_string(t) +
                                      ", h=" + std::to_string(h) + "] has a zero feature vector once rounded to " +
                                      (in.bf16 ? "bf16" : "float32") + " (no direction to normalise)");
        }
      }
}

}  // namespace vla::gpu
