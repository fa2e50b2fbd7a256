// libFuzzer target: the safetensors reader, stream loading and candidate loading,
// as `vla run` and `vla check` use them. Bad input must end in FormatError / std::invalid_argument
// (exit 2 in the CLI); any other exception, crash, leak or undefined behaviour
// is a bug. Accepted files must also survive a write/read round trip unchanged.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vla/core/spec.hpp"
#include "vla/gate/candidate_file.hpp"
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

// vla check's candidate loading: the file as the outputs of a run whose input
// had the dims that `o` (or else `S`) claims, and Dk from S or A when present.
void check_candidate(const File& f) {
  vla::Dims d{1, 1, 1, 16, 16};
  auto small = [](const Tensor* t, std::size_t rank) {
    if (!t || t->shape.size() != rank) return false;
    for (auto e : t->shape)
      if (e < 1 || e > 4096) return false;
    return true;
  };
  const Tensor* o = f.find("o");
  const Tensor* S = f.find("S");
  if (small(o, 4)) d = vla::Dims{int(o->shape[0]), int(o->shape[1]), int(o->shape[2]), int(o->shape[3]), int(o->shape[3])};
  if (small(S, 4)) d.Dk = int(S->shape[3]);
  try {
    const vla::gate::CandidateFile c = vla::gate::candidate_from_file(f, d, "fuzz");
    require(c.out.o.size() == d.v_size());
    require(c.out.S.empty() || c.out.S.size() == std::size_t(d.B) * d.H * d.Dv * d.Dk);
    require(c.out.A.empty() || c.out.A.size() == std::size_t(d.B) * d.H * d.Dk * d.Dk);
    require(c.out.state_norm.empty() || c.out.state_norm.size() == std::size_t(d.B) * d.T * d.H);
  } catch (const FormatError&) {
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  File f;
  try {
    f = parse_safetensors(std::span<const std::uint8_t>(data, size), "fuzz");
  } catch (const FormatError&) {
    return 0;
  }
  check_candidate(f);
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
