// Counterexamples as safetensors files with metadata (counterexample.hpp).
#include "vla/properties/counterexample.hpp"

#include <cstdio>
#include <stdexcept>

#include "vla/io/stream_io.hpp"

namespace vla::props {

namespace {

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

const std::string& need(const io::Metadata& m, const std::string& key, const std::filesystem::path& path) {
  const auto it = m.find(key);
  if (it == m.end()) throw std::invalid_argument("counterexample " + path.string() + ": metadata has no '" + key + "'");
  return it->second;
}

double to_num(const std::string& s, const std::string& key, const std::filesystem::path& path) {
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty()) throw std::invalid_argument("counterexample " + path.string() + ": '" + key + "' is not a number: " + s);
  return x;
}

}  // namespace

void save_counterexample(const std::filesystem::path& path, const Counterexample& cx, bool overwrite) {
  const Options& o = cx.opt;
  io::Metadata m{
      {"vla.claim", cx.claim},
      {"vla.family", to_string(cx.c.family)},
      {"vla.seed", std::to_string(cx.c.seed)},
      {"vla.found_by", cx.found_by},
      {"vla.note", cx.note},
      {"vla.lambda0", num(o.lambda0)},
      {"vla.feature_map", to_string(o.feature_map)},
      {"vla.readout", to_string(o.readout)},
      {"vla.normalize", to_string(o.normalize)},
      {"vla.model", to_string(o.model)},
      {"vla.u_unit_scaled", o.u_unit_scaled ? "1" : "0"},
      {"vla.delta_floor", num(o.delta_floor)},
      {"vla.ridge_every", std::to_string(o.ridge_every)},
      {"vla.ridge", num(o.ridge)},
      {"vla.den_floor", num(o.den_floor)},
      {"vla.deltanet_beta", num(o.deltanet_beta)},
      {"vla.deltanet_decay", num(o.deltanet_decay)},
  };
  for (const auto& [k, v] : cx.extra) m["vla.extra." + k] = v;
  io::save_stream(path, cx.c.stream, io::DType::F64, m, overwrite);
}

Counterexample load_counterexample(const std::filesystem::path& path) {
  const io::StreamFile f = io::load_stream(path);
  for (const auto& [name, dt] : f.dtypes)
    if (dt != io::DType::F64) throw std::invalid_argument("counterexample " + path.string() + ": tensor '" + name + "' is not F64");
  const io::Metadata& m = f.metadata;
  Counterexample cx;
  cx.claim = need(m, "vla.claim", path);
  cx.found_by = need(m, "vla.found_by", path);
  cx.note = need(m, "vla.note", path);
  cx.c.stream = f.stream;
  cx.c.family = parse_family(need(m, "vla.family", path));
  cx.c.seed = static_cast<std::uint64_t>(to_num(need(m, "vla.seed", path), "vla.seed", path));
  Options& o = cx.opt;
  o.lambda0 = to_num(need(m, "vla.lambda0", path), "vla.lambda0", path);
  o.feature_map = parse_feature_map(need(m, "vla.feature_map", path));
  o.readout = parse_readout(need(m, "vla.readout", path));
  o.normalize = parse_normalize(need(m, "vla.normalize", path));
  o.model = parse_model(need(m, "vla.model", path));
  o.u_unit_scaled = need(m, "vla.u_unit_scaled", path) == "1";
  o.delta_floor = to_num(need(m, "vla.delta_floor", path), "vla.delta_floor", path);
  o.ridge_every = static_cast<int>(to_num(need(m, "vla.ridge_every", path), "vla.ridge_every", path));
  o.ridge = to_num(need(m, "vla.ridge", path), "vla.ridge", path);
  o.den_floor = to_num(need(m, "vla.den_floor", path), "vla.den_floor", path);
  o.deltanet_beta = to_num(need(m, "vla.deltanet_beta", path), "vla.deltanet_beta", path);
  o.deltanet_decay = to_num(need(m, "vla.deltanet_decay", path), "vla.deltanet_decay", path);
  cx.c.lambda0 = o.lambda0;
  cx.c.feature_map = o.feature_map;
  const std::string prefix = "vla.extra.";
  for (const auto& [k, v] : m)
    if (k.rfind(prefix, 0) == 0) cx.extra[k.substr(prefix.size())] = v;
  validate(o);
  validate_stream(cx.c.stream, o);
  return cx;
}

std::filesystem::path counterexample_dir() { return VLA_COUNTEREXAMPLES_DIR; }

}  // namespace vla::props
