// The options of the recurrence, as docs/SPEC.md defines them.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vla {

enum class FeatureMap { elu1, identity };
enum class Readout { ratio, raw };
enum class Normalize { both, key, gate, none };
enum class Preset { paper, vla_v3 };
// The recurrence being run: VLA itself or one of the baselines with the same I/O.
enum class Model { vla, linear, deltanet, softmax };

struct Options {
  FeatureMap feature_map = FeatureMap::elu1;
  Readout readout = Readout::ratio;
  Normalize normalize = Normalize::both;
  double lambda0 = 1.0;
  // vla-v3 stabilisers, each off by default (the `paper` preset).
  bool u_unit_scaled = false;  // u <- (u / ||u||) / sqrt(Dk)
  double delta_floor = 0.0;    // delta <- max(delta, delta_floor) when > 0
  int ridge_every = 0;         // after the update of step t, t % ridge_every == 0: A += ridge I
  double ridge = 0.0;
  double den_floor = 0.0;      // ratio denominator <- max(den, den_floor) when > 0
  // Baselines.
  Model model = Model::vla;
  double deltanet_beta = 1.0;
  double deltanet_decay = 1.0;

  bool normalize_key() const { return normalize == Normalize::both || normalize == Normalize::key; }
  bool normalize_gate() const { return normalize == Normalize::both || normalize == Normalize::gate; }
};

inline Options preset_options(Preset p) {
  Options o;
  if (p == Preset::vla_v3) {
    o.lambda0 = 10.0;
    o.u_unit_scaled = true;
    o.delta_floor = 1e-4;
    o.ridge_every = 20;
    o.ridge = 1e-3;
    o.den_floor = 1e-6;
  }
  return o;
}

// Names used on the command line and in file metadata.
std::string to_string(FeatureMap);
std::string to_string(Readout);
std::string to_string(Normalize);
std::string to_string(Preset);
std::string to_string(Model);
FeatureMap parse_feature_map(std::string_view);
Readout parse_readout(std::string_view);
Normalize parse_normalize(std::string_view);
Preset parse_preset(std::string_view);
Model parse_model(std::string_view);

// Throws std::invalid_argument naming the offending option.
void validate(const Options&);

// A one-line, stable description of every option (goes into output metadata).
std::string describe(const Options&);

}  // namespace vla
