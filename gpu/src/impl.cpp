// vla::impl: the entry point of the implementations under test. Checks what the
// kernels support, rounds the inputs once to the implementation's input type,
// then runs the CPU twin or the CUDA kernel on exactly those values.
#include "vla/gpu/impl.hpp"

#include <stdexcept>
#include <string>

#include "backends.hpp"
#include "vla/gpu/inputs.hpp"
#include "vla/gpu/plain.hpp"

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

bool cuda_available() {
#if defined(VLA_HAVE_CUDA)
  return gpu::cuda_device_present();
#else
  return false;
#endif
}

namespace {
void check_model(const Options& opt, Kind kind) {
  validate(opt);
  if (opt.model != Model::vla)
    throw std::invalid_argument("implementation '" + to_string(kind) + "' runs the VLA recurrence only; model '" +
                                to_string(opt.model) + "' exists in the reference alone");
}
void check_dims(const Dims& d, Kind kind) {
  if (d.B < 1 || d.T < 1 || d.H < 1) throw std::invalid_argument("implementation '" + to_string(kind) + "': B, T and H must be >= 1");
  if (d.Dk != d.Dv)
    throw std::invalid_argument("implementation '" + to_string(kind) + "' needs Dk = Dv (got Dk=" + std::to_string(d.Dk) +
                                ", Dv=" + std::to_string(d.Dv) + ")");
  if (d.Dk != 16 && d.Dk != 32 && d.Dk != 64 && d.Dk != 128)
    throw std::invalid_argument("implementation '" + to_string(kind) + "' supports head dimensions 16, 32, 64, 128 (got " +
                                std::to_string(d.Dk) + ")");
}
}  // namespace

Outputs run(const Stream& s, const Options& opt, Kind kind, Device device, FusedLayout layout) {
  check_model(opt, kind);
  check_dims(s.dims, kind);
  validate_stream(s, opt);
  const gpu::HostInputs in = gpu::prepare_inputs(s, kind != Kind::fp32);
  gpu::check_rounded_keys(in, opt);
  if (device == Device::cpu) return gpu::run_twin(in, opt, kind);
#if defined(VLA_HAVE_CUDA)
  if (!gpu::cuda_device_present())
    throw std::runtime_error("implementation '" + to_string(kind) + "' on cuda: no CUDA device is visible (use --device cpu for the CPU twin)");
  return gpu::run_cuda(in, opt, kind, layout);
#else
  (void)layout;
  throw std::runtime_error("implementation '" + to_string(kind) +
                           "' on cuda: this build has no CUDA kernels (nvcc was not found when it was configured); use --device cpu");
#endif
}

Outputs run_plain(const Stream& s, const Options& opt, Kind kind, PlainOrder order) {
  check_model(opt, kind);
  if (s.dims.B < 1 || s.dims.T < 1 || s.dims.H < 1) throw std::invalid_argument("plain " + to_string(kind) + ": B, T and H must be >= 1");
  validate_stream(s, opt);
  const gpu::HostInputs in = gpu::prepare_inputs(s, kind != Kind::fp32);
  gpu::check_rounded_keys(in, opt);
  return gpu::run_plain_inputs(in, opt, kind, order == PlainOrder::reversed);
}

}  // namespace vla::impl
