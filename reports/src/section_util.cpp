#include <algorithm>

#include "vla/report/sections.hpp"

namespace vla::report {

Num num(double v, int sig, std::string unit) { return Num{v, sig, std::move(unit)}; }

Cell step_or_never(long step) {
  if (step > 0) return num(double(step));
  return text_cell("stays inside");
}

int family_T(const nlohmann::json& P, const std::string& family) {
  const int T = P["T"];
  if (family.rfind("adversarial", 0) == 0 && P.contains("adversarial_T")) return std::min(T, P["adversarial_T"].get<int>());
  return T;
}

nlohmann::json xy_json(const std::vector<double>& x, const std::vector<double>& y) { return {{"x", x}, {"y", y}}; }

}  // namespace vla::report
