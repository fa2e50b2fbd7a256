// RapidCheck generators: the families of families.cpp fed by shrinkable picks.
#include <cstdint>
#include <iomanip>
#include <ostream>

#include "family_builder.hpp"
#include "rc_source.hpp"
#include "vla/properties/generators.hpp"

namespace vla::props {

namespace {

Dims draw_dims(const GenLimits& lim) {
  Dims d;
  // Drawn in this order so that shrinking reduces T first, then the head size.
  d.T = *rc::gen::inRange(lim.min_T, lim.max_T + 1);
  d.Dk = *rc::gen::inRange(lim.min_Dk, lim.max_Dk + 1);
  d.Dv = *rc::gen::inRange(lim.min_Dv, lim.max_Dv + 1);
  d.B = *rc::gen::inRange(1, lim.max_B + 1);
  d.H = *rc::gen::inRange(1, lim.max_H + 1);
  return d;
}

}  // namespace

rc::Gen<Case> gen_case(Family f, const GenLimits& lim) {
  return rc::gen::exec([f, lim] {
    detail::BuildSpec spec;
    spec.family = f;
    spec.dims = draw_dims(lim);
    spec.feature_map = lim.draw_feature_map ? *rc::gen::element(FeatureMap::elu1, FeatureMap::identity) : FeatureMap::elu1;
    spec.with_u = lim.force_u ? true : lim.draw_u ? *rc::gen::weightedElement<bool>({{3, false}, {1, true}}) : false;
    detail::RcSource src;
    spec.lambda0 = lim.draw_lambda0 ? std::pow(10.0, src.uniform(-2.0, 2.0)) : 1.0;
    return detail::build_case(spec, src);
  });
}

rc::Gen<Case> gen_any_case(const GenLimits& lim) {
  return rc::gen::mapcat(rc::gen::elementOf(all_families()), [lim](Family f) { return gen_case(f, lim); });
}

rc::Gen<Stream> gen_stream(Family f, const GenLimits& lim) {
  return rc::gen::map(gen_case(f, lim), [](const Case& c) { return c.stream; });
}

rc::Gen<PoisonedCase> gen_poisoned(const GenLimits& lim) {
  return rc::gen::exec([lim] {
    PoisonedCase pc;
    pc.clean = *gen_any_case(lim);
    pc.poisoned = pc.clean.stream;
    static const char* const kTensors[] = {"q", "k", "v", "u"};
    const int ntensors = pc.clean.stream.has_u() ? 4 : 3;
    pc.tensor = kTensors[*rc::gen::inRange(0, ntensors)];
    const std::size_t n = std::string(pc.tensor) == "v" ? pc.clean.stream.v.size() : pc.clean.stream.q.size();
    pc.index = *rc::gen::inRange<std::size_t>(0, n);
    pc.kind = *rc::gen::element(Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::neg_zero);
    poison(pc.poisoned, pc.tensor, pc.index, pc.kind);
    return pc;
  });
}

namespace {
void show_tensor(std::ostream& os, const char* name, const std::vector<double>& x) {
  os << "  " << name << " = [";
  for (std::size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << std::setprecision(17) << x[i];
  os << "]\n";
}
}  // namespace

void showValue(const Case& c, std::ostream& os) {
  os << "Case{family=" << to_string(c.family) << " lambda0=" << std::setprecision(17) << c.lambda0
     << " feature_map=" << vla::to_string(c.feature_map) << " nu=" << c.params.nu << " rho=" << c.params.rho
     << " pool=" << c.params.pool << " theta=" << c.params.theta << " rank=" << c.params.rank
     << " omega=" << c.params.omega << " seed=" << c.seed << "}\n";
  vla::showValue(c.stream, os);
}

void showValue(const PoisonedCase& pc, std::ostream& os) {
  os << "poison " << to_string(pc.kind) << " at " << pc.tensor << "[" << pc.index << "] of\n";
  showValue(pc.clean, os);
}

}  // namespace vla::props

namespace vla {
void showValue(const Stream& s, std::ostream& os) {
  const Dims& d = s.dims;
  os << "Stream{B=" << d.B << " T=" << d.T << " H=" << d.H << " Dk=" << d.Dk << " Dv=" << d.Dv << "}\n";
  props::show_tensor(os, "q", s.q);
  props::show_tensor(os, "k", s.k);
  props::show_tensor(os, "v", s.v);
  if (s.has_u()) props::show_tensor(os, "u", s.u);
}
}  // namespace vla
