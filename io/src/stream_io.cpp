#include "vla/io/stream_io.hpp"

#include <algorithm>
#include <climits>

#include "text.hpp"

namespace vla::io {

namespace {

constexpr const char* kAxes[] = {"B", "T", "H", "D"};

[[noreturn]] void fail(std::string_view source, const std::string& what) { throw FormatError(std::string(source) + ": " + what); }

// The tensor named `name` as a rank-4 [B, T, H, D] shape with every extent in [1, INT_MAX].
std::vector<std::uint64_t> rank4(const Tensor& t, std::string_view source) {
  if (t.shape.size() != 4) {
    fail(source, "tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) + " (shape " + shape_string(t.shape) +
                     "), expected rank 4 [B, T, H, D]");
  }
  for (int i = 0; i < 4; ++i) {
    if (t.shape[i] == 0) fail(source, "tensor '" + t.name + "' has shape " + shape_string(t.shape) + ": dimension " + kAxes[i] + " is 0");
    if (t.shape[i] > static_cast<std::uint64_t>(INT_MAX)) {
      fail(source, "tensor '" + t.name + "' has shape " + shape_string(t.shape) + ": dimension " + kAxes[i] + " is too large");
    }
  }
  return t.shape;
}

}  // namespace

int StreamFile::min_significand_bits() const {
  int m = 53;
  for (const auto& [name, d] : dtypes) m = std::min(m, significand_bits(d));
  return m;
}

StreamFile stream_from_file(const File& file, std::string_view source) {
  for (const auto& t : file.tensors) {
    if (t.name != "q" && t.name != "k" && t.name != "v" && t.name != "u") {
      fail(source, "unexpected tensor '" + printable(t.name) + "' (a stream holds q, k, v and optionally u)");
    }
  }
  auto need = [&](const char* name) -> const Tensor& {
    const Tensor* t = file.find(name);
    if (!t) fail(source, std::string("missing tensor '") + name + "' (a stream holds q, k, v and optionally u)");
    return *t;
  };
  const Tensor& q = need("q");
  const Tensor& k = need("k");
  const Tensor& v = need("v");
  const Tensor* u = file.find("u");

  const auto qs = rank4(q, source);
  for (const Tensor* t : {&k, u}) {
    if (t && rank4(*t, source) != qs) {
      fail(source, "tensor '" + t->name + "' has shape " + shape_string(t->shape) + " but 'q' has " + shape_string(qs) +
                       " (q, k and u must have the same shape)");
    }
  }
  const auto vs = rank4(v, source);
  if (!std::equal(vs.begin(), vs.begin() + 3, qs.begin())) {
    fail(source, "tensor 'v' has shape " + shape_string(vs) + " but 'q' has " + shape_string(qs) + " (B, T and H must match)");
  }

  StreamFile out;
  Dims& d = out.stream.dims;
  d.B = static_cast<int>(qs[0]);
  d.T = static_cast<int>(qs[1]);
  d.H = static_cast<int>(qs[2]);
  d.Dk = static_cast<int>(qs[3]);
  d.Dv = static_cast<int>(vs[3]);
  out.stream.q = q.values;
  out.stream.k = k.values;
  out.stream.v = v.values;
  if (u) out.stream.u = u->values;
  for (const Tensor* t : {&q, &k, &v, u})
    if (t) out.dtypes[t->name] = t->dtype;
  out.metadata = file.metadata;
  return out;
}

StreamFile load_stream(const std::filesystem::path& path) { return stream_from_file(read_safetensors(path), path.string()); }

std::vector<Tensor> stream_tensors(const Stream& s, DType dtype) {
  const Dims& d = s.dims;
  auto u64 = [](int x) { return static_cast<std::uint64_t>(x); };
  const std::vector<std::uint64_t> qk = {u64(d.B), u64(d.T), u64(d.H), u64(d.Dk)};
  std::vector<Tensor> ts = {{"q", dtype, qk, s.q}, {"k", dtype, qk, s.k}, {"v", dtype, {u64(d.B), u64(d.T), u64(d.H), u64(d.Dv)}, s.v}};
  if (s.has_u()) ts.push_back({"u", dtype, qk, s.u});
  return ts;
}

void save_stream(const std::filesystem::path& path, const Stream& s, DType dtype, const Metadata& metadata, bool overwrite) {
  write_safetensors(path, stream_tensors(s, dtype), metadata, overwrite);
}

std::vector<Tensor> output_tensors(const Outputs& out, DType dtype) {
  const Dims& d = out.dims;
  auto u64 = [](int x) { return static_cast<std::uint64_t>(x); };
  std::vector<Tensor> ts = {{"o", dtype, {u64(d.B), u64(d.T), u64(d.H), u64(d.Dv)}, out.o},
                            {"S", dtype, {u64(d.B), u64(d.H), u64(d.Dv), u64(d.Dk)}, out.S}};
  if (!out.A.empty()) ts.push_back({"A", dtype, {u64(d.B), u64(d.H), u64(d.Dk), u64(d.Dk)}, out.A});
  ts.push_back({"state_norm", dtype, {u64(d.B), u64(d.T), u64(d.H)}, out.state_norm});
  return ts;
}

void save_outputs(const std::filesystem::path& path, const Outputs& out, const Metadata& metadata, DType dtype, bool overwrite) {
  write_safetensors(path, output_tensors(out, dtype), metadata, overwrite);
}

}  // namespace vla::io
