#include "vla/core/spec.hpp"

#include <cmath>
#include <sstream>

namespace vla {

namespace {
[[noreturn]] void bad(std::string_view what, std::string_view value, std::string_view allowed) {
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(value) + "' (expected one of: " +
                              std::string(allowed) + ")");
}
}  // namespace

std::string to_string(FeatureMap f) { return f == FeatureMap::elu1 ? "elu1" : "identity"; }
std::string to_string(Readout r) { return r == Readout::ratio ? "ratio" : "raw"; }
std::string to_string(Normalize n) {
  switch (n) {
    case Normalize::both: return "both";
    case Normalize::key: return "key";
    case Normalize::gate: return "gate";
    case Normalize::none: return "none";
  }
  return "?";
}
std::string to_string(Preset p) { return p == Preset::paper ? "paper" : "vla-v3"; }
std::string to_string(Model m) {
  switch (m) {
    case Model::vla: return "vla";
    case Model::linear: return "linear";
    case Model::deltanet: return "deltanet";
    case Model::softmax: return "softmax";
  }
  return "?";
}

FeatureMap parse_feature_map(std::string_view s) {
  if (s == "elu1") return FeatureMap::elu1;
  if (s == "identity") return FeatureMap::identity;
  bad("feature map", s, "elu1, identity");
}
Readout parse_readout(std::string_view s) {
  if (s == "ratio") return Readout::ratio;
  if (s == "raw") return Readout::raw;
  bad("readout", s, "ratio, raw");
}
Normalize parse_normalize(std::string_view s) {
  if (s == "both") return Normalize::both;
  if (s == "key") return Normalize::key;
  if (s == "gate") return Normalize::gate;
  if (s == "none") return Normalize::none;
  bad("normalisation", s, "both, key, gate, none");
}
Preset parse_preset(std::string_view s) {
  if (s == "paper") return Preset::paper;
  if (s == "vla-v3") return Preset::vla_v3;
  bad("preset", s, "paper, vla-v3");
}
Model parse_model(std::string_view s) {
  if (s == "vla") return Model::vla;
  if (s == "linear") return Model::linear;
  if (s == "deltanet") return Model::deltanet;
  if (s == "softmax") return Model::softmax;
  bad("model", s, "vla, linear, deltanet, softmax");
}

void validate(const Options& o) {
  auto finite_pos = [](double x) { return std::isfinite(x) && x > 0; };
  if (!finite_pos(o.lambda0)) throw std::invalid_argument("lambda0 must be finite and > 0 (got " + std::to_string(o.lambda0) + ")");
  if (!(o.delta_floor >= 0) || !std::isfinite(o.delta_floor)) throw std::invalid_argument("delta floor must be finite and >= 0");
  if (o.ridge_every < 0) throw std::invalid_argument("ridge interval must be >= 0");
  if (!(o.ridge >= 0) || !std::isfinite(o.ridge)) throw std::invalid_argument("ridge must be finite and >= 0");
  if (!(o.den_floor >= 0) || !std::isfinite(o.den_floor)) throw std::invalid_argument("denominator floor must be finite and >= 0");
  if (!std::isfinite(o.deltanet_beta)) throw std::invalid_argument("deltanet beta must be finite");
  if (!std::isfinite(o.deltanet_decay)) throw std::invalid_argument("deltanet decay must be finite");
}

std::string describe(const Options& o) {
  std::ostringstream s;
  s.precision(17);
  s << "model=" << to_string(o.model) << " feature_map=" << to_string(o.feature_map) << " readout=" << to_string(o.readout)
    << " normalize=" << to_string(o.normalize) << " lambda0=" << o.lambda0 << " u_unit_scaled=" << (o.u_unit_scaled ? 1 : 0)
    << " delta_floor=" << o.delta_floor << " ridge_every=" << o.ridge_every << " ridge=" << o.ridge
    << " den_floor=" << o.den_floor;
  if (o.model == Model::deltanet) s << " deltanet_beta=" << o.deltanet_beta << " deltanet_decay=" << o.deltanet_decay;
  return s.str();
}

}  // namespace vla
