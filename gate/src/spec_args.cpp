#include "vla/gate/spec_args.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace vla::gate {

namespace {
bool given(const CLI::Option* o) { return o && o->count() > 0; }
std::string num(double x) { return fmt::format("{:.17g}", x); }
}  // namespace

void add_spec_options(CLI::App& app, SpecArgs& a) {
  app.add_option("--preset", a.preset, "Preset; explicit options override it")->capture_default_str()->check(CLI::IsMember({"paper", "vla-v3"}));
  a.o_fm = app.add_option("--feature-map", a.feature_map, "phi (default elu1)")->check(CLI::IsMember({"elu1", "identity"}));
  a.o_readout = app.add_option("--readout", a.readout, "ratio or raw (default ratio)")->check(CLI::IsMember({"ratio", "raw"}));
  a.o_norm = app.add_option("--normalize", a.normalize, "both, key, gate or none (default both)")->check(CLI::IsMember({"both", "key", "gate", "none"}));
  a.o_lambda0 = app.add_option("--lambda0", a.lambda0, "Initial penalty (> 0)");
  a.o_uus = app.add_flag("--u-unit-scaled", a.u_unit_scaled, "u <- u/||u||/sqrt(Dk) (--u-unit-scaled=false turns it off)");
  a.o_dfloor = app.add_option("--delta-floor", a.delta_floor, "delta <- max(delta, X)");
  a.o_rev = app.add_option("--ridge-every", a.ridge_every, "Add --ridge I to A after every N-th step");
  a.o_ridge = app.add_option("--ridge", a.ridge, "Ridge added to A");
  a.o_den = app.add_option("--den-floor", a.den_floor, "Ratio denominator <- max(den, X)");
}

Options build_options(const SpecArgs& a) {
  Options o = preset_options(parse_preset(a.preset));
  if (given(a.o_fm)) o.feature_map = parse_feature_map(a.feature_map);
  if (given(a.o_readout)) o.readout = parse_readout(a.readout);
  if (given(a.o_norm)) o.normalize = parse_normalize(a.normalize);
  if (given(a.o_lambda0)) o.lambda0 = a.lambda0;
  if (given(a.o_uus)) o.u_unit_scaled = a.u_unit_scaled;
  if (given(a.o_dfloor)) o.delta_floor = a.delta_floor;
  if (given(a.o_rev)) o.ridge_every = a.ridge_every;
  if (given(a.o_ridge)) o.ridge = a.ridge;
  if (given(a.o_den)) o.den_floor = a.den_floor;
  validate(o);
  // An option given alone that the recurrence would never read (the preset leaves its partner off) is refused
  // rather than recorded as if it acted. Both given (as spec_arguments writes them) is a complete statement.
  if (given(a.o_ridge) && !given(a.o_rev) && o.ridge_every == 0 && o.ridge != 0)
    throw std::invalid_argument("--ridge " + num(o.ridge) + " has no effect: no step adds it (--ridge-every is 0 in preset " + a.preset +
                                "; give --ridge-every N)");
  if (given(a.o_rev) && !given(a.o_ridge) && o.ridge_every > 0 && o.ridge == 0)
    throw std::invalid_argument("--ridge-every " + std::to_string(o.ridge_every) + " has no effect: the ridge is 0 in preset " + a.preset +
                                " (give --ridge X > 0)");
  return o;
}

std::string spec_arguments(const Options& o) {
  if (o.model != Model::vla) throw std::invalid_argument("the gate's commands run the VLA recurrence only");
  return fmt::format("--preset paper --feature-map {} --readout {} --normalize {} --lambda0 {} --u-unit-scaled={} --delta-floor {} "
                     "--ridge-every {} --ridge {} --den-floor {}",
                     to_string(o.feature_map), to_string(o.readout), to_string(o.normalize), num(o.lambda0),
                     o.u_unit_scaled ? "true" : "false", num(o.delta_floor), o.ridge_every, num(o.ridge), num(o.den_floor));
}

void put_options(io::Metadata& m, const Options& o) {
  m["spec.feature_map"] = to_string(o.feature_map);
  m["spec.readout"] = to_string(o.readout);
  m["spec.normalize"] = to_string(o.normalize);
  m["spec.lambda0"] = num(o.lambda0);
  m["spec.u_unit_scaled"] = o.u_unit_scaled ? "1" : "0";
  m["spec.delta_floor"] = num(o.delta_floor);
  m["spec.ridge_every"] = std::to_string(o.ridge_every);
  m["spec.ridge"] = num(o.ridge);
  m["spec.den_floor"] = num(o.den_floor);
}

Options get_options(const io::Metadata& m, const std::string& source) {
  auto get = [&](const char* key) -> const std::string& {
    auto it = m.find(std::string("spec.") + key);
    if (it == m.end()) throw std::invalid_argument(source + ": metadata key 'spec." + key + "' is missing");
    return it->second;
  };
  auto real = [&](const char* key) {
    const std::string& s = get(key);
    double x = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || p != s.data() + s.size())
      throw std::invalid_argument(source + ": metadata key 'spec." + key + "' is not a number: '" + s + "'");
    return x;
  };
  Options o;
  o.feature_map = parse_feature_map(get("feature_map"));
  o.readout = parse_readout(get("readout"));
  o.normalize = parse_normalize(get("normalize"));
  o.lambda0 = real("lambda0");
  const std::string& uus = get("u_unit_scaled");
  if (uus != "0" && uus != "1") throw std::invalid_argument(source + ": metadata key 'spec.u_unit_scaled' must be 0 or 1");
  o.u_unit_scaled = uus == "1";
  o.delta_floor = real("delta_floor");
  const double re = real("ridge_every");
  if (!(re >= 0 && re <= 1e9) || re != static_cast<int>(re)) throw std::invalid_argument(source + ": metadata key 'spec.ridge_every' is not an integer in [0, 1e9]");
  o.ridge_every = static_cast<int>(re);
  o.ridge = real("ridge");
  o.den_floor = real("den_floor");
  validate(o);
  return o;
}

}  // namespace vla::gate
