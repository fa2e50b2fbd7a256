#include "vla/report/sections.hpp"

namespace vla::report {

Num num(double v, int sig, std::string unit) { return Num{v, sig, std::move(unit)}; }

Cell step_or_never(long step) {
  if (step > 0) return num(double(step));
  return text_cell("stays inside");
}

nlohmann::json xy_json(const std::vector<double>& x, const std::vector<double>& y) { return {{"x", x}, {"y", y}}; }

}  // namespace vla::report
