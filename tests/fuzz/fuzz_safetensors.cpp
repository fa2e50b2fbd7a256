// libFuzzer target: the safetensors reader and stream loading, as `vla run` and
// `vla check` use them. Bad input must end in FormatError / std::invalid_argument
// (exit 2 in the CLI); any other exception, crash, leak or undefined behaviour
// is a bug. Accepted files must also survive a write/read round trip unchanged.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vla/core/spec.hpp"
#include "vla/io/safetensors.hpp"
#include "vla/io/stream_io.hpp"

namespace {

using namespace vla::io;

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

void require(bool ok) {
  if (!ok) std::abort();
}

void check_round_trip(const File& f) {
  std::vector<Tensor> ts = f.tensors;
  for (auto& t : ts)
    if (t.dtype == DType::F16) t.dtype = DType::F32;  // F16 is read-only; F32 holds every F16 value exactly
  const File g = parse_safetensors(encode_safetensors(ts, f.metadata), "round trip");
  require(g.metadata == f.metadata && g.tensors.size() == f.tensors.size());
  for (const auto& t : ts) {
    const Tensor* u = g.find(t.name);
    require(u && u->dtype == t.dtype && u->shape == t.shape && u->values.size() == t.values.size());
    for (std::size_t i = 0; i < t.values.size(); ++i) require(same(u->values[i], t.values[i]));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  File f;
  try {
    f = parse_safetensors(std::span<const std::uint8_t>(data, size), "fuzz");
  } catch (const FormatError&) {
    return 0;
  }
  for (const auto& t : f.tensors) {
    std::uint64_t n = 1;
    for (auto s : t.shape) n *= s;  // accepted shapes cannot overflow: the buffer bounds them
    require(n == t.values.size());
  }
  check_round_trip(f);
  StreamFile s;
  try {
    s = stream_from_file(f, "fuzz");
  } catch (const FormatError&) {
    return 0;
  }
  require(s.stream.q.size() == s.stream.dims.qk_size() && s.stream.v.size() == s.stream.dims.v_size());
  vla::Options identity;
  identity.feature_map = vla::FeatureMap::identity;
  for (const vla::Options& opt : {vla::Options{}, identity, vla::preset_options(vla::Preset::vla_v3)}) {
    try {
      vla::validate_stream(s.stream, opt);
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
