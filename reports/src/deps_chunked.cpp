// The chunked-drift section's adaptors (deps_chunked.hpp).
#include "vla/report/deps_chunked.hpp"

#include <mutex>

#if defined(VLA_REPORT_HAVE_CHUNKED)
#include "vla/gpu/chunked.hpp"
#endif
#if defined(VLA_REPORT_HAVE_PROPERTIES)
#include "vla/properties/generators.hpp"
#endif

namespace vla::report::deps {

const std::vector<std::string>& chunked_kinds() {
  static const std::vector<std::string> k = {"chunked-fp32", "chunked-bf16", "chunked-tf32", "chunked-scan-fp32", "chunked-scan-bf16"};
  return k;
}

impl::Kind chunked_counterpart(const std::string& kind) {
  return kind == "chunked-bf16" ? impl::Kind::bf16_state : kind == "chunked-scan-bf16" ? impl::Kind::bf16 : impl::Kind::fp32;
}

bool chunked_bf16_inputs(const std::string& kind) { return kind == "chunked-bf16" || kind == "chunked-scan-bf16"; }

// chunked-scan-fp32's precision (float in, out and state) and baselines (the
// recurrence, no state rounding) are chunked-fp32's: gpu/src/chunked_impl.cpp,
// accuracy::precision_of and accuracy::baselines of the ChunkedKind.
std::string chunked_model(const std::string& kind) { return kind == "chunked-scan-fp32" ? "chunked-fp32" : kind; }

Outputs run_chunked(const Stream& s, const Options& opt, const std::string& kind, bool cuda, int C) {
#if defined(VLA_REPORT_HAVE_CHUNKED)
  const impl::ChunkedKind k = impl::parse_chunked_kind(kind);
  if (cuda) {
    static std::mutex gpu;  // one kernel on the GPU at a time (as run_kernel)
    std::lock_guard<std::mutex> lock(gpu);
    return impl::run_chunked(s, opt, k, impl::Device::cuda, C);
  }
  return impl::run_chunked(s, opt, k, impl::Device::cpu, C);
#else
  (void)s, (void)opt, (void)cuda, (void)C;
  throw Unavailable("the chunked implementations (gpu/chunked.hpp) are not in this build, " + kind);
#endif
}

Stream chunked_consumed_inputs(const Stream& s, const std::string& kind) {
#if defined(VLA_REPORT_HAVE_CHUNKED)
  return consumed_inputs(s, impl::input_kind(impl::parse_chunked_kind(kind)));
#else
  (void)s;
  throw Unavailable("the chunked implementations (gpu/chunked.hpp) are not in this build, " + kind);
#endif
}

std::vector<std::vector<double>> chunked_envelopes(const std::string& kind, const Stream& consumed, const Options& opt,
                                                   const Outputs& ref) {
#if defined(VLA_REPORT_HAVE_CHUNKED)
  const impl::ChunkedKind k = impl::parse_chunked_kind(kind);
  const std::vector<Outputs> base = accuracy::baselines(consumed, opt, k);
  std::vector<const Outputs*> bases;
  for (const auto& b : base) bases.push_back(&b);
  std::vector<std::vector<double>> out;
  for (int b = 0; b < ref.dims.B; ++b)
    for (int h = 0; h < ref.dims.H; ++h) out.push_back(accuracy::o_envelope(ref, bases, accuracy::precision_of(k), b, h));
  return out;
#else
  (void)consumed, (void)opt, (void)ref;
  throw Unavailable("the chunked implementations' error model (gpu/chunked.hpp) is not in this build, " + kind);
#endif
}

AngleStream near_collinear(const Dims& dims, std::uint64_t seed) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  const props::Case c = props::make_case(props::Family::near_collinear, dims, seed);
  return {c.stream, c.params.theta};
#else
  (void)dims, (void)seed;
  throw Unavailable("the stream generators (properties/) are not in this build, family near_collinear");
#endif
}

}  // namespace vla::report::deps
