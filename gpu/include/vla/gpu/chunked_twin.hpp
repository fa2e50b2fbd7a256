// The chunked kernels' operand policies for the twin: the chunked reference
// (reference/include/vla/reference/chunked.hpp) at float with every product's
// operands rounded as the kernel rounds them. Host only (Eigen).
#pragma once

#include <tuple>

#include "vla/core/bf16.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/tf32.hpp"
#include "vla/reference/chunked.hpp"
#include "vla/reference/chunked_scan.hpp"

namespace vla::gpu {

// Tensor-core operands: every entry rounded to bf16 (float accumulation follows).
struct Bf16Operands {
  static ref::Mat<float> op(const ref::Mat<float>& m) { return m.unaryExpr([](float x) { return core::round_bf16(x); }); }
};

// TF32 tensor-core operands: every entry rounded as cvt.rna.tf32.f32 rounds it
// (float accumulation follows; a product of two tf32 values is exact in float).
struct Tf32Operands {
  static ref::Mat<float> op(const ref::Mat<float>& m) { return m.unaryExpr([](float x) { return round_tf32(x); }); }
};

// The first T steps of every head of s (the gate's mutant that drops the last
// step, the chunked form's causality tests).
inline Stream prefix_stream(const Stream& s, int T) {
  Stream p;
  p.dims = s.dims;
  p.dims.T = T;
  const Dims& d = s.dims;
  for (auto [dst, src, D] : {std::tuple{&p.q, &s.q, d.Dk}, {&p.k, &s.k, d.Dk}, {&p.v, &s.v, d.Dv}, {&p.u, &s.u, d.Dk}}) {
    if (src->empty()) continue;
    for (int b = 0; b < d.B; ++b)
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < d.H; ++h) dst->insert(dst->end(), src->begin() + d.off(b, t, h, D), src->begin() + d.off(b, t, h, D) + D);
  }
  return p;
}

// The twin on a stream already rounded to the kernel's input type (float and
// bf16 values are doubles exactly, so converting them to float is exact): the
// chunked reference at float with operand policy Ops and structure policy
// Structure (ref::ChunkStructure in production; the gate's chunk-boundary
// mutants replace it), o stored as the kernel stores it.
// o stored as the kernel stores it (bf16 when bf16_out), the rest as computed.
inline Outputs twin_outputs(const ref::Result<float>& r, bool bf16_out) {
  Outputs out;
  out.allocate(r.dims, true);
  for (std::size_t i = 0; i < r.o.size(); ++i) out.o[i] = bf16_out ? core::round_bf16(r.o[i]) : r.o[i];
  for (std::size_t i = 0; i < r.S.size(); ++i) out.S[i] = r.S[i];
  for (std::size_t i = 0; i < r.A.size(); ++i) out.A[i] = r.A[i];
  for (std::size_t i = 0; i < r.state_norm.size(); ++i) out.state_norm[i] = r.state_norm[i];
  return out;
}

template <class Ops, class Structure = ref::ChunkStructure>
Outputs run_twin(const Stream& rounded, const Options& opt, int C, bool bf16_out) {
  return twin_outputs(ref::run_chunked<float, Ops, Structure>(rounded, opt, C), bf16_out);
}

// The scan kinds' twin: the scan form's reference with the gate stage in double
// and the state in float, as the kernels compute them (docs/CHUNKED.md, section 8),
// in the kernels' segments (ref::scan_segment_chunks(C, B H, T) chunks per factorisation of
// M_c, A_c carried in between: 8.10), with structure policy Structure
// (ref::ScanStructure in production; the gate's scan mutants replace one of its hooks).
// The state's chunk products as the kernels' pass forms them (8.13, 8.24,
// ref::scan_state_policy, the launcher's choice too): summed in double and rounded
// once at D >= 32, with R one chunk ahead where the v7 pass runs (D in {32, 64}, C <= D;
// v6 elsewhere), per-step float fmas at D = 16 (v4).
// The gates as the kernels' gate stage forms them (ref::kernel_scan_gate_form: the
// per-step Sherman-Morrison step in double from each segment's M_c^{-1}, 8.16, with the
// rank-1 look-ahead where u = k^, 8.19).
// The steps in float for chunked-scan-bf16 where they look ahead (ref::kernel_scan_steps_float,
// 8.23; bf16_out is that kind's).
template <class Structure = ref::ScanStructure>
Outputs run_scan_twin(const Stream& rounded, const Options& opt, int C, bool bf16_out) {
  const bool u_separate = rounded.has_u() || opt.u_unit_scaled;
  const ref::ScanGateForm form = ref::kernel_scan_gate_form(u_separate);
  const int L = ref::scan_segment_chunks(C, rounded.dims);
  const ref::ScanStatePolicy policy = ref::scan_state_policy(rounded.dims.Dk, C);
  if (ref::kernel_scan_steps_float(bf16_out, u_separate))
    return twin_outputs(ref::run_chunked_scan<float, double, Structure, float>(rounded, opt, C, L, policy, form), bf16_out);
  return twin_outputs(ref::run_chunked_scan<float, double, Structure>(rounded, opt, C, L, policy, form), bf16_out);
}

}  // namespace vla::gpu
