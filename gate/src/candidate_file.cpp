// Depends on io/ and core/ only: the libFuzzer harness (tests/fuzz) compiles it with clang.
#include "vla/gate/candidate_file.hpp"

#include <string>
#include <vector>

namespace vla::gate {

namespace {

std::string shape_string(const std::vector<std::uint64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

CandidateFile candidate_from_file(const io::File& file, const Dims& d, std::string_view source) {
  const std::string src(source);
  auto fail = [&](const std::string& what) -> void { throw io::FormatError(src + ": " + what); };
  for (const auto& t : file.tensors)
    if (t.name != "o" && t.name != "S" && t.name != "A" && t.name != "state_norm") {
      std::string printable;
      for (char c : t.name) printable += (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) ? c : '?';
      fail("unexpected tensor '" + printable + "' (a candidate holds o, and optionally S, A, state_norm)");
    }
  const auto B = std::uint64_t(d.B), T = std::uint64_t(d.T), H = std::uint64_t(d.H), Dk = std::uint64_t(d.Dk), Dv = std::uint64_t(d.Dv);
  const std::map<std::string, std::vector<std::uint64_t>> expected = {
      {"o", {B, T, H, Dv}}, {"S", {B, H, Dv, Dk}}, {"A", {B, H, Dk, Dk}}, {"state_norm", {B, T, H}}};
  const std::map<std::string, const char*> layout = {
      {"o", "[B, T, H, Dv]"}, {"S", "[B, H, Dv, Dk]"}, {"A", "[B, H, Dk, Dk]"}, {"state_norm", "[B, T, H]"}};
  if (!file.find("o")) fail("missing tensor 'o' (the candidate's outputs, [B, T, H, Dv])");
  CandidateFile c;
  c.out.dims = d;
  for (const auto& [name, shape] : expected) {
    const io::Tensor* t = file.find(name);
    if (!t) continue;
    if (t->shape != shape)
      fail("tensor '" + name + "' has shape " + shape_string(t->shape) + ", expected " + shape_string(shape) + " " + layout.at(name) +
           " for the input's B=" + std::to_string(B) + " T=" + std::to_string(T) + " H=" + std::to_string(H) + " Dk=" +
           std::to_string(Dk) + " Dv=" + std::to_string(Dv));
    c.dtypes[name] = t->dtype;
    std::vector<double>& dst = name == "o" ? c.out.o : name == "S" ? c.out.S : name == "A" ? c.out.A : c.out.state_norm;
    dst = t->values;
  }
  return c;
}

CandidateFile load_candidate(const std::filesystem::path& path, const Dims& input) {
  return candidate_from_file(io::read_safetensors(path), input, path.string());
}

}  // namespace vla::gate
