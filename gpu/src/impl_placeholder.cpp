// Placeholder until the kernels and twins land (owned by the gpu component):
// every call says clearly that the implementation is not built yet.
#include <stdexcept>

#include "vla/gpu/impl.hpp"

namespace vla::impl {
std::string to_string(Kind k) { return k == Kind::fp32 ? "fp32" : k == Kind::bf16 ? "bf16" : "bf16-state"; }
std::string to_string(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }
Kind parse_kind(std::string_view s) {
  if (s == "fp32") return Kind::fp32;
  if (s == "bf16") return Kind::bf16;
  if (s == "bf16-state") return Kind::bf16_state;
  throw std::invalid_argument("unknown implementation '" + std::string(s) + "' (expected fp32, bf16, bf16-state)");
}
Device parse_device(std::string_view s) {
  if (s == "cpu") return Device::cpu;
  if (s == "cuda") return Device::cuda;
  throw std::invalid_argument("unknown device '" + std::string(s) + "' (expected cpu, cuda)");
}
bool cuda_available() { return false; }
Outputs run(const Stream&, const Options&, Kind k, Device) {
  throw std::invalid_argument("implementation '" + to_string(k) + "' is not available in this build yet");
}
}  // namespace vla::impl
