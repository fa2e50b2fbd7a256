#include "vla/gate/battery.hpp"

#include <fmt/format.h>

#include "vla/properties/generators.hpp"

namespace vla::gate {

namespace {

Dims shape(int B, int T, int H, int D) { return Dims{B, T, H, D, D}; }

std::string shape_id(const Dims& d) { return fmt::format("B{}T{}H{}D{}", d.B, d.T, d.H, d.Dk); }

// FNV-1a: a case's seed follows from its id, so adding a case changes no other.
std::uint64_t seed_of(const std::string& id) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return h;
}

BatteryCase make(props::Family fam, Preset preset, const Dims& d, const std::string& variant, Options base, bool with_u) {
  BatteryCase c;
  c.family = props::to_string(fam);
  c.preset = to_string(preset);
  c.id = c.family + "/" + c.preset + "/" + shape_id(d) + (variant.empty() ? "" : "/" + variant);
  c.seed = seed_of(c.id);
  props::MakeOptions mo;
  mo.feature_map = base.feature_map;
  mo.lambda0 = base.lambda0;  // the preset's; lambda_extremes draws its own
  mo.with_u = with_u;
  const props::Case pc = props::make_case(fam, d, c.seed, mo);
  c.stream = pc.stream;
  c.opt = pc.options(base);
  return c;
}

}  // namespace

std::vector<Dims> battery_shapes() {
  return {
      shape(1, 1, 1, 16),     // one step
      shape(2, 65, 3, 16),    // just past 64 steps; B*H = 6, not a multiple of 4
      shape(1, 64, 5, 32),    // exactly 64 steps; B*H = 5
      shape(2, 130, 2, 16),   // past two 64-step wraps; B*H = 4
      shape(1, 63, 2, 64),    // just short of 64 steps
      shape(1, 21, 1, 128),   // the largest head; one vla-v3 ridge
      shape(3, 40, 3, 32),    // B*H = 9
      shape(1, 4096, 1, 16),  // long: late-step defects
  };
}

std::vector<BatteryCase> battery(bool quick) {
  const std::vector<Dims> shapes = battery_shapes();
  std::vector<BatteryCase> out;
  int rot = 0;
  for (props::Family fam : props::all_families())
    for (Preset preset : {Preset::paper, Preset::vla_v3}) {
      const Options base = preset_options(preset);
      if (quick) {
        out.push_back(make(fam, preset, shapes[rot++ % shapes.size()], "", base, false));
      } else {
        for (const Dims& d : shapes) out.push_back(make(fam, preset, d, "", base, false));
      }
    }
  // The quick battery's rotation gives the anisotropic family short streams; its
  // errors grow with the length (up to ~sqrt(T) amplification through its later
  // steps, docs/FINDINGS.md), so it also runs on the long shape (the full battery
  // has it already: the same id and stream).
  if (quick) out.push_back(make(props::Family::anisotropic, Preset::paper, shapes.back(), "", preset_options(Preset::paper), false));
  // Options the presets leave at their defaults.
  const Dims d = shapes[1];
  auto variant = [&](const std::string& name, Preset preset, auto change, bool with_u) {
    Options o = preset_options(preset);
    change(o);
    out.push_back(make(props::Family::gaussian, preset, d, name, o, with_u));
  };
  variant("identity", Preset::paper, [](Options& o) { o.feature_map = FeatureMap::identity; }, false);
  variant("raw", Preset::paper, [](Options& o) { o.readout = Readout::raw; }, false);
  variant("normalize-key", Preset::paper, [](Options& o) { o.normalize = Normalize::key; }, false);
  variant("normalize-gate", Preset::paper, [](Options& o) { o.normalize = Normalize::gate; }, false);
  variant("normalize-none", Preset::paper, [](Options& o) { o.normalize = Normalize::none; }, false);
  variant("explicit-u", Preset::paper, [](Options&) {}, true);
  variant("explicit-u", Preset::vla_v3, [](Options&) {}, true);
  // vla-v3's other stabilisers without its ridge steps: the scan form refuses
  // ridge steps (docs/CHUNKED.md 8.4), so these are its only vla-v3 cases.
  variant("no-ridge", Preset::vla_v3, [](Options& o) { o.ridge_every = 0; }, false);
  variant("no-ridge-explicit-u", Preset::vla_v3, [](Options& o) { o.ridge_every = 0; }, true);
  return out;
}

}  // namespace vla::gate
