// Host side of the chunk-parallel ("scan") form: the workspace between the
// stages, launch_scan (stage 1, scan_gate.cu, then stage 2, scan_state.cu, on
// one stream) and run_cuda_scan, the backend of vla::impl::run_chunked for
// chunked-scan-fp32 and chunked-scan-bf16 (copies in, poisons every output and
// every buffer between the stages, launches, copies out).
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "../src/chunked_backend.hpp"
#include "check.cuh"
#include "device_io.cuh"
#include "scan_gate.cuh"
#include "scan_stages.cuh"
#include "vla/core/refused.hpp"
#include "vla/gpu/packed_lower.hpp"
#include "vla/reference/scan_start_refusal.hpp"

namespace vla::gpu {
namespace scan {
namespace {

void* poisoned(std::size_t bytes) {
  void* p = nullptr;
  VLA_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  VLA_CUDA_CHECK(cudaMemset(p, 0xff, bytes == 0 ? 1 : bytes));
  return p;
}

}  // namespace

Workspace::Workspace(int B, int T, int H, int D, int C, bool u_separate, bool ratio) {
  const std::size_t n = std::size_t(B) * T * H * D * sizeof(float);
  out.khat = static_cast<float*>(poisoned(n));
  out.phiq = static_cast<float*>(poisoned(n));
  out.gate = static_cast<float*>(poisoned(n));
  out.den = ratio ? static_cast<float*>(poisoned(std::size_t(B) * T * H * sizeof(float))) : nullptr;
  gate_scratch = poisoned(gate_scratch_bytes(B, T, H, D, C, u_separate));
  start_status = gate_start_status(gate_scratch, B, T, H, D, C, u_separate);
  out.nsum = ratio ? gate_nsum(gate_scratch, B, T, H, D, C, u_separate) : nullptr;
  state_scratch = poisoned(state_scratch_bytes(B, T, H, D, C));
  VLA_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  VLA_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  VLA_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
}

Workspace::~Workspace() {
  for (void* p : {static_cast<void*>(out.khat), static_cast<void*>(out.phiq), static_cast<void*>(out.gate), static_cast<void*>(out.den),
                  gate_scratch, state_scratch})
    if (p) cudaFree(p);
  if (fork) cudaEventDestroy(fork);
  if (join) cudaEventDestroy(join);
  if (side) cudaStreamDestroy(side);
}

void check_gate_start_status(const unsigned* status, int D, const std::string& who) {
  unsigned bits = 0;
  VLA_CUDA_CHECK(cudaMemcpy(&bits, status, sizeof bits, cudaMemcpyDeviceToHost));
  if (bits == 0) return;
  float bound = 0;
  std::memcpy(&bound, &bits, sizeof bound);
  throw core::StreamRefused(ref::scan_start_refusal(bound, D, start_factor_unit_roundoff(), who));
}

ScanStepsLayout forced_steps_layout = ScanStepsLayout::automatic;  // set_scan_steps_layout (tests, bench)
bool form_norms = true;                                             // set_scan_norms (tests)

GateParams gate_params(const FusedParams& p, bool bf16_io, int C, const Workspace& w) {
  GateParams g;
  g.steps_layout = forced_steps_layout;
  g.B = p.B, g.T = p.T, g.H = p.H, g.D = p.D, g.C = C;
  g.bf16_io = bf16_io;
  g.q = p.q, g.k = p.k, g.u = p.u;
  g.elu1 = p.elu1, g.normalize_key = p.normalize_key, g.normalize_gate = p.normalize_gate, g.ratio = p.ratio;
  g.u_unit_scaled = p.u_unit_scaled;
  g.lambda0 = p.lambda0, g.delta_floor = p.delta_floor, g.den_floor = p.den_floor;
  g.A = p.A;
  g.out = w.out;
  if (!p.ratio) g.out.den = nullptr;
  g.scratch = w.gate_scratch;
  g.steps_float = ref::kernel_scan_steps_float(bf16_io, p.u != nullptr || p.u_unit_scaled, g.form);
  // scan_den (and, in the Woodbury form, scan_final_A) on the side stream beside the steps, except
  // beside the float steps, where they run after them: measured on the H100 (2026-12-06,
  // reports/gpu/2026-12-06-h100-scan-focus.md; chunked-scan-bf16, C = 32, D = 64), the gate stage
  // took 0.849 ms with scan_den beside the float steps and 0.754 serial at B = 1, H = 16,
  // T = 16,384 (a wave of one-warp blocks: scan_den's blocks share their SMs and lengthen the
  // chain), 2.595 against 2.624 at T = 65,536 and 8.971 against 8.974 at B = 8, H = 128.
  g.side = g.steps_float ? nullptr : w.side;
  g.fork = w.fork, g.join = w.join;
  return g;
}

StateParams state_params(const FusedParams& p, bool bf16_io, int C, const Workspace& w) {
  StateParams s;
  s.B = p.B, s.T = p.T, s.H = p.H, s.D = p.D, s.C = C;
  s.bf16_io = bf16_io;
  s.v = p.v;
  s.in = w.out;
  if (!p.ratio) s.in.den = nullptr;
  s.o = p.o;
  s.S = p.S;
  s.state_norm = p.state_norm;
  s.den_floor = p.den_floor;
  s.scratch = w.state_scratch;
  return s;
}

void launch_scan(const FusedParams& p, bool bf16_io, int C, const Workspace& w, cudaStream_t s) {
  // As ref::scan_unsupported (the host path checks the Options first; this guards the device-pointer entry).
  if (p.ridge_every > 0)
    throw std::invalid_argument("scan form: --ridge-every (" + std::to_string(p.ridge_every) +
                                ") is not supported: with ridge steps A_t is not the inverse of the prefix sum the form scans");
  if (p.delta_floor > 1.0)
    throw std::invalid_argument("scan form: --delta-floor above 1 is not supported (the floor then acts)");
  if (!gate_supported(p.D, C))
    throw std::invalid_argument("scan form: (D, C) = (" + std::to_string(p.D) + ", " + std::to_string(C) +
                                ") not supported (D in {16, 32, 64}, C in {32, 64})");
  require_aligned_inputs(p, "scan form");
  const GateParams g = gate_params(p, bf16_io, C, w);
  const StateParams st = state_params(p, bf16_io, C, w);
  if (gate_folds_state_prep_by_default(p.D, C, p.u != nullptr || p.u_unit_scaled, g.form)) return launch_folded(g, st, p.v, s);
  launch_gate(g, s);
  launch_state(st, s);
}

void launch_folded(GateParams g, StateParams st, const void* v, cudaStream_t s) {
  if (!gate_folds_state_prep(g.D, g.C, g.u != nullptr || g.u_unit_scaled, g.form))
    throw std::invalid_argument("scan form: the state prep folds into the steps kernel only in the per-step form, u = k^, C = 32, D >= 32");
  // The steps kernel writes Kt and Vt where the state stage's prep would (8.18).
  g.v = v;
  g.steps_float = false;  // the fold is built into the double steps kernel (8.18); an experiment, not a launcher's choice
  state_prep_targets(st, &g.kt_out, &g.vt_out);
  st.prep_done = true;
  launch_gate(g, s);
  launch_state(st, s);
}

}  // namespace scan

void set_scan_steps_layout(ScanStepsLayout layout) { scan::forced_steps_layout = layout; }
void set_scan_norms(bool form) { scan::form_norms = form; }

Outputs run_cuda_scan(const HostInputs& in, const Options& opt, impl::ChunkedKind kind, int C) {
  if (!impl::is_scan(kind)) throw std::invalid_argument("run_cuda_scan: " + impl::to_string(kind) + " is not a scan kind");
  DeviceRun run(in, opt);
  const Dims& d = in.dims;
  const scan::Workspace w(d.B, d.T, d.H, d.Dk, C, in.has_u || opt.u_unit_scaled, opt.readout == Readout::ratio);
  FusedParams p = run.p;
  if (!scan::form_norms) p.state_norm = nullptr;
  scan::launch_scan(p, in.bf16, C, w, nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  scan::check_gate_start_status(w.start_status, d.Dk, "the " + impl::to_string(kind) + " kernels");  // no output past a refusal
  return run.outputs();
}

namespace {
// Stage 1 alone on the inputs, then read(workspace) after it completed (a refused segment start throws first).
template <class Read>
auto run_gate_stage(const HostInputs& in, const Options& opt, int C, Read read) {
  DeviceRun run(in, opt);
  const Dims& d = in.dims;
  const scan::Workspace w(d.B, d.T, d.H, d.Dk, C, in.has_u || opt.u_unit_scaled, opt.readout == Readout::ratio);
  scan::launch_gate(scan::gate_params(run.p, in.bf16, C, w), nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  scan::check_gate_start_status(w.start_status, d.Dk, "the scan gate kernels");
  return read(w);
}
}  // namespace

std::vector<float> run_cuda_scan_gates(const HostInputs& in, const Options& opt, int C) {
  return run_gate_stage(in, opt, C, [&](const scan::Workspace& w) { return download<float>(w.out.gate, in.dims.qk_size()); });
}

ScanSegmentStarts run_cuda_scan_segment_starts(const HostInputs& in, const Options& opt, int C) {
  return run_gate_stage(in, opt, C, [&](const scan::Workspace& w) {
    const Dims& d = in.dims;
    const scan::SegmentStarts st = scan::gate_segment_starts(w.gate_scratch, d.B, d.T, d.H, d.Dk, C, in.has_u || opt.u_unit_scaled);
    const std::size_t bh = std::size_t(d.B) * d.H, D = std::size_t(d.Dk), P = std::size_t(packed_size(d.Dk));
    ScanSegmentStarts out;
    out.segments = st.segments;
    out.M = download<double>(st.M, bh * (st.segments + 1) * P);
    out.A = download<double>(st.A, bh * st.segments * D * D);
    return out;
  });
}

}  // namespace vla::gpu
