// The spec's options (docs/SPEC.md) as command-line arguments and as file
// metadata, for the gate's commands: a preset, then every option given
// explicitly on top of it (as `vla run` does), and the exact way back.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "vla/core/spec.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::gate {

struct SpecArgs {
  std::string preset = "paper", feature_map, readout, normalize;
  double lambda0 = 0, delta_floor = 0, ridge = 0, den_floor = 0;
  int ridge_every = 0;
  bool u_unit_scaled = false;
  CLI::Option *o_fm = nullptr, *o_readout = nullptr, *o_norm = nullptr, *o_lambda0 = nullptr, *o_uus = nullptr,
              *o_dfloor = nullptr, *o_rev = nullptr, *o_ridge = nullptr, *o_den = nullptr;
};

// Adds --preset, --feature-map, --readout, --normalize, --lambda0,
// --u-unit-scaled, --delta-floor, --ridge-every, --ridge, --den-floor.
void add_spec_options(CLI::App& app, SpecArgs& a);
// The preset, then each explicitly given option; validated (std::invalid_argument).
Options build_options(const SpecArgs& a);

// Every option written out, so that the line reproduces `opt` whatever the
// defaults become: "--preset paper --feature-map elu1 ... --den-floor 0".
std::string spec_arguments(const Options& opt);

// Into / out of a file's metadata (keys "spec.<name>"); get_options throws
// std::invalid_argument naming a missing or malformed key.
void put_options(io::Metadata& m, const Options& opt);
Options get_options(const io::Metadata& m, const std::string& source);

}  // namespace vla::gate
