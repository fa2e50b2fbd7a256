// The chunked CUDA kernels against their CPU twins and the recurrent double
// reference (error model), and the drift of the chunked form next to the fused
// recurrent kernel of the same input precision: the carried form (chunked-fp32,
// -bf16, -tf32) and the chunk-parallel scan form (chunked-scan-fp32, -bf16;
// docs/CHUNKED.md section 8), whose runs also print the gate stage's distance to
// the recurrence's gates in double (which stage a failure comes from). Plain main
// (no GTest) so that it builds on the device machine with nvcc alone
// (gpu/standalone). Without a GPU it prints one line saying so and passes.
//   test_gpu_chunked_cuda [--quick] [--shard I/N] [--kinds all|carried|scan]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "chunked_streams.hpp"
#include "streams.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/chunked_launch.hpp"
#include "vla/gpu/tf32.hpp"
#include "vla/gpu/error_model.hpp"
#include "vla/core/refused.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/gpu/packed_lower.hpp"
#include "vla/reference/scan_segment.hpp"
#include "vla/reference/sweep_inverse.hpp"
#if defined(VLA_HAVE_CUDA)
#include "../../gpu/src/chunked_backend.hpp"
#endif

using namespace vla;
using impl::ChunkedKind;

namespace {

int failures = 0, runs = 0;

void fail(const std::string& what) {
  ++failures;
  std::printf("FAIL %s\n", what.c_str());
}

// The kernel schedule of later launches (chunked_launch.hpp).
void use_layout(gpu::ChunkedLayout layout) {
#if defined(VLA_HAVE_CUDA)
  gpu::set_chunked_layout(layout);
#else
  (void)layout;
#endif
}
void use_steps_layout(gpu::ScanStepsLayout layout) {
#if defined(VLA_HAVE_CUDA)
  gpu::set_scan_steps_layout(layout);
#else
  (void)layout;
#endif
}
void use_scan_norms(bool form) {
#if defined(VLA_HAVE_CUDA)
  gpu::set_scan_norms(form);
#else
  (void)form;
#endif
}

// sqrt(sum (a-b)^2 / sum b^2) over a tensor; non-finite a counted apart.
double rel_fro(const std::vector<double>& a, const std::vector<double>& b, std::size_t& nonfinite) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) {
      ++nonfinite;
      continue;
    }
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Case {
  std::string name;
  int B, T, H, D, C;
  Options opt;
  ts::Family fam = ts::Family::gaussian;
  bool with_u = false;
  double collinear_eps = 0;  // > 0: near-collinear keys
  bool alternate = false;
  bool drift = false;        // also run the fused kernel of the same input precision
  bool scan = false;         // the scan kinds (else the carried ones)
  std::string refused;       // non-empty: the run must be refused (std::invalid_argument) naming this
  bool refused_at_run = false;  // ... by core::StreamRefused instead: found while running (a segment start beyond double)
};

// The gates of the scan form's stage 1 on the GPU against the recurrence's
// gates in double on the same rounded inputs (A_t by Sherman-Morrison, w = A_t k^,
// normalised as the options say): the largest relative error of a gate column.
// A diagnosis printed beside the verdict, which is the error model's on the outputs.
double scan_gate_error(const Stream& s, const Options& opt, ChunkedKind kind, int C) {
#if defined(VLA_HAVE_CUDA)
  const gpu::HostInputs in = gpu::prepare_inputs(s, kind == ChunkedKind::scan_bf16);
  const std::vector<float> a = gpu::run_cuda_scan_gates(in, opt, C);
  const Dims& d = s.dims;
  const int D = d.Dk;
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  auto unit = [](std::vector<double>& x, double scale) {
    double n = 0;
    for (double v : x) n += v * v;
    for (double& v : x) v = v / std::sqrt(n) / scale;
  };
  double worst = 0;
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      std::vector<double> A(std::size_t(D) * D, 0.0), kh(D), u(D), z(D), w(D);
      for (int i = 0; i < D; ++i) A[i * D + i] = 1.0 / opt.lambda0;
      for (int t = 0; t < d.T; ++t) {
        const std::size_t o = d.off(b, t, h, D);
        for (int j = 0; j < D; ++j) kh[j] = core::phi(double(in.value(1, o + j)), elu1);
        if (opt.normalize_key()) unit(kh, 1.0);
        for (int j = 0; j < D; ++j) u[j] = in.has_u ? double(in.value(3, o + j)) : kh[j];
        if (opt.u_unit_scaled) unit(u, std::sqrt(double(D)));
        double uz = 0;
        for (int i = 0; i < D; ++i) {
          z[i] = 0;
          for (int j = 0; j < D; ++j) z[i] += A[i * D + j] * u[j];
          uz += u[i] * z[i];
        }
        const double delta = core::sm_delta(uz, opt.delta_floor);
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < D; ++j) A[i * D + j] -= z[i] * z[j] / delta;
        for (int i = 0; i < D; ++i) {
          w[i] = 0;
          for (int j = 0; j < D; ++j) w[i] += A[i * D + j] * kh[j];
        }
        if (opt.normalize_gate()) unit(w, 1.0);
        double num = 0, den = 0;
        for (int i = 0; i < D; ++i) {
          num += (a[o + i] - w[i]) * (a[o + i] - w[i]);
          den += w[i] * w[i];
        }
        const double e = std::sqrt(num / den);
        worst = std::isfinite(e) ? std::max(worst, e) : INFINITY;
      }
    }
  return worst;
#else
  (void)s, (void)opt, (void)kind, (void)C;
  return 0;
#endif
}

void run_case(const Case& c, std::uint64_t seed) {
  const Stream s0 = c.collinear_eps > 0 ? ts::make_collinear(c.B, c.T, c.H, c.D, c.collinear_eps, c.alternate, seed)
                                        : ts::make_stream(c.B, c.T, c.H, c.D, seed, c.fam, c.with_u);
  const std::vector<ChunkedKind> kinds = c.scan ? std::vector<ChunkedKind>{ChunkedKind::scan_fp32, ChunkedKind::scan_bf16}
                                                : std::vector<ChunkedKind>{ChunkedKind::fp32, ChunkedKind::bf16, ChunkedKind::tf32};
  for (ChunkedKind kind : kinds) {
    ++runs;
    const std::string tag = c.name + " " + impl::to_string(kind) + " C=" + std::to_string(c.C) + " B=" + std::to_string(c.B) +
                            " T=" + std::to_string(c.T) + " H=" + std::to_string(c.H) + " D=" + std::to_string(c.D);
    if (!c.refused.empty()) {
      // Options the implementation does not run: refused with a message naming them, no output.
      try {
        impl::run_chunked(s0, c.opt, kind, impl::Device::cuda, c.C);
        fail(tag + ": accepted, expected a refusal naming '" + c.refused + "'");
      } catch (const std::exception& e) {
        const bool right_type = c.refused_at_run ? dynamic_cast<const core::StreamRefused*>(&e) != nullptr
                                                 : dynamic_cast<const std::invalid_argument*>(&e) != nullptr;
        if (!right_type) fail(tag + ": expected " + (c.refused_at_run ? "core::StreamRefused" : "std::invalid_argument") + ", got: " + e.what());
        else if (std::string(e.what()).find(c.refused) == std::string::npos) fail(tag + ": refused without naming '" + c.refused + "': " + e.what());
        else std::printf("ok   %-62s refused as designed: %.200s\n", tag.c_str(), e.what());
      }
      continue;
    }
    if ((kind == ChunkedKind::bf16 || kind == ChunkedKind::tf32) && !c.opt.normalize_key()) {
      // Rejected by design (tests/gpu/test_chunked_twin.cpp, UnnormalisedKeysBreak{Bf16,Tf32}Operands).
      try {
        impl::run_chunked(s0, c.opt, kind, impl::Device::cuda, c.C);
        fail(tag + ": unnormalised keys accepted by " + impl::to_string(kind));
      } catch (const std::invalid_argument& e) {
        std::printf("ok   %-62s rejected as designed: %s\n", tag.c_str(), e.what());
      }
      continue;
    }
    try {
      const impl::Kind in_kind = impl::input_kind(kind);
      const Stream s = ts::rounded_for(s0, in_kind);
      const Outputs twin = impl::run_chunked(s, c.opt, kind, impl::Device::cpu, c.C);
      const Outputs ref = ts::reference_double(s, c.opt);
      const ts::Baselines base{accuracy::baselines(s, c.opt, kind)};
      const auto prec = accuracy::precision_of(kind);
      const auto vt = accuracy::check(twin, ref, base.ptrs(), prec);
      std::size_t nf_twin = 0;
      const double eo_twin = rel_fro(twin.o, ref.o, nf_twin);
      // Each schedule of the kernel (chunked_launch.hpp): v6's plain one, and at C = 32 the pipelined one,
      // which must give the plain one's bits (same operations per chunk, in the same order).
      Outputs plain;
      // The scan form has one schedule (its stages' own layouts): one run, no bit comparison.
      for (gpu::ChunkedLayout layout : {gpu::ChunkedLayout::plain, gpu::ChunkedLayout::pipelined}) {
        if (layout == gpu::ChunkedLayout::pipelined && (c.C != 32 || c.scan)) continue;
        if (layout == gpu::ChunkedLayout::pipelined) ++runs;
        use_layout(layout);
        const Outputs gpu = impl::run_chunked(s, c.opt, kind, impl::Device::cuda, c.C);
        use_layout(gpu::ChunkedLayout::automatic);
        const std::string ltag = c.scan ? tag : tag + (layout == gpu::ChunkedLayout::plain ? " plain" : " pipelined");
        const auto v = accuracy::check(gpu, ref, base.ptrs(), prec);
        std::size_t nf = 0;
        const double eo = rel_fro(gpu.o, ref.o, nf), eS = rel_fro(gpu.S, ref.S, nf), eA = rel_fro(gpu.A, ref.A, nf),
                     en = rel_fro(gpu.state_norm, ref.state_norm, nf);
        std::string same;
        bool layouts_same = true, norms_off_same = true;
        if (c.scan) {
          char g[64];
          std::snprintf(g, sizeof g, " | gates vs double recurrence %.2e", scan_gate_error(s, c.opt, kind, c.C));
          same = g;
          // chunked-scan-bf16's float steps keep a chunk's w rows in a buffer of their own or over its u rows
          // (the launcher's choice by occupancy): both forced must give the automatic run's bits.
          if (kind == ChunkedKind::scan_bf16) {
            for (gpu::ScanStepsLayout sl : {gpu::ScanStepsLayout::w_own, gpu::ScanStepsLayout::w_over_u}) {
              use_steps_layout(sl);
              const Outputs other = impl::run_chunked(s, c.opt, kind, impl::Device::cuda, c.C);
              use_steps_layout(gpu::ScanStepsLayout::automatic);
              layouts_same = layouts_same && ts::same_bits(other, gpu);
            }
            same += std::string(" | steps' w layouts same bits: ") + (layouts_same ? "yes" : "NO");
          }
          // Without the norms (a null state_norm: o and S only) the readout skips the norm's fma: o, S and A
          // must keep the automatic run's bits, and the norms' buffer its NaN poison (nothing written).
          use_scan_norms(false);
          const Outputs bare = impl::run_chunked(s, c.opt, kind, impl::Device::cuda, c.C);
          use_scan_norms(true);
          const bool unwritten = std::all_of(bare.state_norm.begin(), bare.state_norm.end(), [](double x) { return std::isnan(x); });
          norms_off_same = ts::same_bits(bare.o, gpu.o) && ts::same_bits(bare.S, gpu.S) && ts::same_bits(bare.A, gpu.A) && unwritten;
          same += std::string(" | without norms same bits: ") + (norms_off_same ? "yes" : "NO");
        } else if (layout == gpu::ChunkedLayout::plain) {
          plain = gpu;
        } else {
          same = std::string(" | bits equal to plain: ") + (ts::same_bits(gpu, plain) ? "yes" : "NO");
        }
        std::printf("%-4s %-72s rel err o %.2e S %.2e A %.2e norm %.2e (twin o %.2e) | kernel: %s | twin ratio %.3g%s\n",
                    v.pass && nf == 0 ? "ok" : "FAIL", ltag.c_str(), eo, eS, eA, en, eo_twin, v.summary().c_str(), vt.max_group_ratio,
                    same.c_str());
        if (c.drift) {
          const Outputs fused = impl::run(s, c.opt, in_kind, impl::Device::cuda);
          std::size_t nf2 = 0;
          std::printf("     drift %-66s chunked o %.2e S %.2e | fused %s o %.2e S %.2e\n", ltag.c_str(), eo, eS,
                      impl::to_string(in_kind).c_str(), rel_fro(fused.o, ref.o, nf2), rel_fro(fused.S, ref.S, nf2));
        }
        if (nf) fail(ltag + ": " + std::to_string(nf) + " non-finite (unwritten or overflowed) elements");
        if (!v.pass) fail(ltag + ": kernel outside the error model");
        if (layout == gpu::ChunkedLayout::pipelined && !ts::same_bits(gpu, plain)) fail(ltag + ": the pipelined schedule differs from the plain one in some bit");
        if (!layouts_same) fail(ltag + ": the float steps' two w layouts differ in some bit");
        if (!norms_off_same) fail(ltag + ": the run without norms differs in o, S or A, or wrote a norm");
      }
      if (!vt.pass) fail(tag + ": the CPU twin outside the error model: " + vt.summary());
    } catch (const std::exception& e) {
      use_layout(gpu::ChunkedLayout::automatic);
      use_steps_layout(gpu::ScanStepsLayout::automatic);
      use_scan_norms(true);
      fail(tag + ": " + e.what());
    }
  }
}

// The twin's tf32 rounding (gpu::round_tf32) against the device's conversion
// on edge cases (ties both signs, subnormals, binade tops, overflow, Inf) and a
// sweep of bit patterns; NaN inputs need only stay non-finite (documented in tf32.hpp).
void check_tf32_rounding() {
#if defined(VLA_HAVE_CUDA)
  std::vector<std::uint32_t> bits{0x00000000u, 0x80000000u, 0x3f800000u, 0x3f801000u, 0xbf801000u, 0x3f800fffu, 0x3f801001u,
                                  0x3f803000u, 0x3ffff000u, 0x00000001u, 0x00001000u, 0x80001000u, 0x00000fffu, 0x007ff000u,
                                  0x7f7fe000u, 0x7f7fefffu, 0x7f7ff000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u};
  for (std::uint32_t u = 0; u < (1u << 20); ++u) bits.push_back(u * 4099u + (u >> 7));  // spread over all patterns
  std::vector<float> x;
  for (std::uint32_t b : bits) x.push_back(core::bits_float(b));
  const std::vector<float> dev = gpu::device_round_tf32(x);
  int bad = 0, checked = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float host = gpu::round_tf32(x[i]);
    ++checked;
    if (std::isnan(x[i]) ? std::isfinite(dev[i]) : core::float_bits(host) != core::float_bits(dev[i])) {
      if (bad++ < 5) std::printf("FAIL tf32 rounding of 0x%08x: device 0x%08x, twin 0x%08x\n", core::float_bits(x[i]), core::float_bits(dev[i]), core::float_bits(host));
    }
  }
  ++runs;
  if (bad) fail("tf32 rounding: " + std::to_string(bad) + " of " + std::to_string(checked) + " values differ from the device");
  else std::printf("ok   tf32 rounding: twin equals the device's cvt.rna.tf32.f32 on %d values\n", checked);
#endif
}

// The segment starts' inverses (scan_seg_inverse: gpu/cuda/scan_sweep_inverse.cuh, docs/CHUNKED.md 8.37) against
// ref::sweep_inverse, the same algorithm in double on the CPU, on the M the kernels formed. Each is within the
// forward error model 4 D u kappa_F(M) of M^{-1} (tests/chunked/test_sweep_inverse.cpp measures the reference),
// so the two differ by at most twice that: ||X - X_ref||_F <= 8 D u kappa_F(M) ||X_ref||_F, u = 2^-53, kappa_F from
// M and X_ref (a NaN fails). The kernel's X must also be exactly symmetric (its lower triangle mirrored). Printed:
// how many entries equal the reference's (+0 = -0), and how many bit for bit. Gaussian and
// near-collinear keys, lambda0 down to 1e-3, D = 16, 32, 64, four segments a head (256 steps at B H = 3).
void check_segment_inverses() {
#if defined(VLA_HAVE_CUDA)
  struct Shape {
    const char* name;
    int D;
    double lambda0, eps;  // eps > 0: keys within eps of one direction (ts::make_collinear)
  };
  const Shape shapes[] = {{"gaussian", 16, 1.0, 0}, {"gaussian", 32, 1.0, 0}, {"gaussian", 64, 1.0, 0},
                          {"gaussian", 64, 1e-3, 0}, {"collinear", 64, 1e-3, 1e-3}, {"collinear", 32, 1e-2, 1e-2}};
  const int B = 1, H = 3, T = 900, C = 32;
  std::uint64_t seed = 777;
  auto bits = [](double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  for (const Shape& sh : shapes) {
    Options opt = preset_options(Preset::paper);
    opt.lambda0 = sh.lambda0;
    const Stream s = sh.eps > 0 ? ts::make_collinear(B, T, H, sh.D, sh.eps, false, ++seed) : ts::make_stream(B, T, H, sh.D, ++seed);
    const gpu::ScanSegmentStarts st = gpu::run_cuda_scan_segment_starts(gpu::prepare_inputs(s, false), opt, C);
    const int D = sh.D, NS = st.segments;
    const std::size_t P = std::size_t(gpu::packed_size(D));
    double worst = 0;
    long asymmetric = 0, same = 0, equal = 0, total = 0;
    for (int bh = 0; bh < B * H; ++bh)
      for (int seg = 0; seg < NS; ++seg) {
        Eigen::MatrixXd M(D, D), X(D, D);
        const double* m = st.M.data() + (std::size_t(bh) * (NS + 1) + seg) * P;
        for (int r = 0; r < D; ++r)
          for (int c = 0; c <= r; ++c) M(r, c) = M(c, r) = m[gpu::packed_index(r, c)];
        const double* x = st.A.data() + (std::size_t(bh) * NS + seg) * D * D;
        for (int r = 0; r < D; ++r)
          for (int c = 0; c < D; ++c) X(r, c) = x[r * D + c];
        const Eigen::MatrixXd R = ref::sweep_inverse<double>(M).X;
        const double model = 8.0 * D * std::ldexp(1.0, -53) * M.norm() * R.norm();
        const double ratio = (X - R).norm() / R.norm() / model;
        if (!(ratio <= worst)) worst = ratio;  // a NaN stays
        for (int r = 0; r < D; ++r)
          for (int c = 0; c < D; ++c) {
            asymmetric += bits(X(r, c)) != bits(X(c, r));
            same += bits(X(r, c)) == bits(R(r, c));
            equal += X(r, c) == R(r, c);  // +0 and -0 alike
            ++total;
          }
      }
    char what[160];
    std::snprintf(what, sizeof what, "segment inverses, %s keys, D=%d lambda0=%g, %d heads x %d segments", sh.name, D, sh.lambda0, B * H, NS);
    ++runs;
    if (!(worst <= 1.0) || asymmetric || NS < 2)
      fail(std::string(what) + ": error / model " + std::to_string(worst) + ", asymmetric entries " + std::to_string(asymmetric) +
           (NS < 2 ? ", fewer than two segments" : ""));
    else
      std::printf("ok   %s: |X - ref::sweep_inverse|_F at most %.3g of 8 D u kappa_F; symmetric; %ld of %ld entries equal, %ld bit for bit\n",
                  what, worst, equal, total, same);
  }
#endif
}

// Causality under overflow (docs/CHUNKED.md, section 6; CPU twin:
// ChunkedTwin.CausalUnderOverflow): with v overflowing at step t* + 1 inside the
// second chunk, the kernel's o and ||S_t|| for t < t* are finite and, judged on
// the first t* steps, inside the error model; the steps after the overflow are
// not finite (the probe bites). Before the causal masked products the earlier
// steps of the chunk came out NaN. Printed: whether they equal the kernel's run
// on the first t* steps bit for bit (the kernel's sums do not depend on later
// steps' values).
void check_causal(const std::vector<ChunkedKind>& kinds) {
  const Options paper = preset_options(Preset::paper);
  for (ChunkedKind kind : kinds)
    for (int C : {32, 64})
      for (gpu::ChunkedLayout layout : {gpu::ChunkedLayout::plain, gpu::ChunkedLayout::pipelined}) {
      if (layout == gpu::ChunkedLayout::pipelined && (C != 32 || impl::is_scan(kind))) continue;
      ++runs;
      const int t_star = C + 11, T = 2 * C + 8;
      const std::string tag = "causal " + impl::to_string(kind) + " C=" + std::to_string(C) + " T=" + std::to_string(T) +
                              " overflow at t=" + std::to_string(t_star + 1) +
                              (layout == gpu::ChunkedLayout::plain ? " plain" : " pipelined");
      use_layout(layout);
      try {
        const Stream s = ts::rounded_for(ts::make_late_overflow(1, T, 2, 64, t_star, 71 + C), impl::input_kind(kind));
        const Stream sp = gpu::prefix_stream(s, t_star);
        const Outputs full = impl::run_chunked(s, paper, kind, impl::Device::cuda, C);
        const Outputs prefix = impl::run_chunked(sp, paper, kind, impl::Device::cuda, C);
        const ts::CausalCheck c = ts::causal_check(full, prefix, t_star);
        const ts::Baselines base{accuracy::baselines(sp, paper, kind)};
        const auto v = accuracy::check(ts::before_overflow(full, prefix, t_star), ts::reference_double(sp, paper), base.ptrs(),
                                       accuracy::precision_of(kind));
        const bool ok = v.pass && c.nonfinite_before == 0 && c.nonfinite_after > 0;
        std::printf("%-4s %-62s %s (bit for bit: %s) | before the overflow: %s\n", ok ? "ok" : "FAIL", tag.c_str(),
                    c.summary().c_str(), c.bitwise() ? "yes" : "no", v.summary().c_str());
        if (!ok) fail(tag + ": " + c.summary() + "; " + v.summary());
      } catch (const std::exception& e) {
        fail(tag + ": " + e.what());
      }
      use_layout(gpu::ChunkedLayout::automatic);
    }
}

std::vector<Case> cases_for(bool quick) {
  std::vector<Case> cs;
  const Options paper = preset_options(Preset::paper), v3 = preset_options(Preset::vla_v3);
  Options ident = paper;
  ident.feature_map = FeatureMap::identity;
  if (quick) {
    for (int C : {32, 64}) {
      cs.push_back({"paper", 2, C + 1, 3, 64, C, paper});
      cs.push_back({"vla-v3+u", 1, 45, 2, 32, C, v3, ts::Family::gaussian, true});
      cs.push_back({"identity", 1, 9, 2, 16, C, ident});
    }
    // More blocks than SMs: the launch without prefetch (and, u = k, the C = 32 plan without U).
    cs.push_back({"paper-waves", 2, 33, 70, 64, 32, paper});
    return cs;
  }
  for (int C : {32, 64}) {
    for (int D : {16, 32, 64})
      for (int T : {1, C - 1, C, C + 1, 1000}) cs.push_back({"paper", 2, T, 3, D, C, paper});
    cs.push_back({"vla-v3", 2, 1000, 3, 64, C, v3});
    cs.push_back({"vla-v3+u", 2, 300, 3, 64, C, v3, ts::Family::gaussian, true});
    cs.push_back({"identity", 2, 300, 3, 64, C, ident});
    cs.push_back({"heavy", 2, 300, 3, 64, C, paper, ts::Family::heavy});
  }
  // More blocks than SMs (B H = 140 > 132 on the H200): the launch without
  // prefetch, with U (vla-v3 rescales u) and without it (u = k, C = 32: two blocks per SM).
  for (int C : {32, 64}) {
    cs.push_back({"paper-waves", 2, 2 * C + 5, 70, 64, C, paper});
    cs.push_back({"vla-v3-waves", 2, 2 * C + 5, 70, 64, C, v3});
  }
  // (normalize=gate: unit gates on raw keys make the recurrence itself grow
  // exponentially, so only a short run is an accuracy check.)
  for (Normalize nz : {Normalize::key, Normalize::gate, Normalize::none}) {
    Options o = paper;
    o.normalize = nz;
    cs.push_back({"normalize-" + to_string(nz), 2, nz == Normalize::gate ? 12 : 100, 3, 32, 32, o});
  }
  Options o = paper;
  o.readout = Readout::raw;
  cs.push_back({"raw", 2, 200, 3, 32, 32, o});
  o = paper;
  o.delta_floor = 1.6;
  cs.push_back({"active-delta-floor", 2, 200, 3, 32, 32, o});
  o = v3;
  o.ridge_every = 7;
  o.ridge = 0.05;
  cs.push_back({"ridge-every-7", 2, 200, 3, 64, 64, o});
  // Near-collinear keys (the triangular solves' adversary) and long-run drift next to the fused kernel.
  for (double eps : {1e-1, 1e-2, 1e-3}) {
    cs.push_back({"collinear-paper eps=" + std::to_string(eps), 1, 1000, 2, 64, 64, paper, ts::Family::gaussian, false, eps});
    cs.push_back({"collinear-identity-alt eps=" + std::to_string(eps), 1, 1000, 2, 64, 64, ident, ts::Family::gaussian, false, eps, true});
  }
  for (int C : {32, 64}) {
    Case d{"drift-paper", 1, 4096, 4, 64, C, paper};
    d.drift = true;
    cs.push_back(d);
    d.name = "drift-vla-v3";
    d.opt = v3;
    cs.push_back(d);
  }
  return cs;
}

// A segment start beyond double (docs/CHUNKED.md 8.27; the twin's test is
// ChunkedTwinFindings.ScanFormsRefuseASegmentStartWhoseFactorHasNoCorrectDigit): keys equal in double
// (collinear up to 1e-30), u = k^, lambda0 = 1e-16, T = L + 1, so that segment 1 starts from
// M = 1e-16 I + L k^ k^T (condition ~5e18, past 1 / (17 u) = 5.3e14): refused after the run, naming the bound.
Case start_beyond_double() {
  Options o = preset_options(Preset::paper);
  o.lambda0 = 1e-16;
  // One head's segment, whose length is the same at T = L + 1 (ref::scan_segment_steps).
  Case z{"scan-start-beyond-double", 1, ref::scan_segment_steps(1, 1) + 1, 1, 16, 32, o, ts::Family::gaussian, false, 1e-30};
  z.refused = "condition number is at least";
  z.refused_at_run = true;
  return z;
}

// The scan kinds' cases: the awkward lengths around one and two chunks, every
// D, heads past the SM count, the presets (vla-v3 without its ridge, which the
// form refuses), given and unit-scaled u, the normalize options, the raw readout,
// an acting den floor, near-collinear keys, long-run drift; and the refusals.
std::vector<Case> scan_cases_for(bool quick) {
  std::vector<Case> cs;
  const Options paper = preset_options(Preset::paper);
  Options v3 = preset_options(Preset::vla_v3);
  v3.ridge_every = 0;  // the ridge is refused (below); the rest of vla-v3 runs
  Options ident = paper;
  ident.feature_map = FeatureMap::identity;
  Options unit_u = paper;
  unit_u.u_unit_scaled = true;
  Options ridge = preset_options(Preset::vla_v3);
  auto add = [&](Case c) {
    c.scan = true;
    cs.push_back(c);
  };
  if (quick) {
    for (int C : {32, 64}) {
      add({"scan-paper", 2, C + 1, 3, 64, C, paper});
      add({"scan-vla-v3-noridge+u", 1, 45, 2, 32, C, v3, ts::Family::gaussian, true});
      add({"scan-identity", 1, 9, 2, 16, C, ident});
    }
    add({"scan-paper-waves", 2, 33, 70, 64, 32, paper});
    Case r{"scan-ridge-refused", 1, 40, 2, 32, 32, ridge};
    r.refused = "--ridge-every";
    add(r);
    add(start_beyond_double());
    return cs;
  }
  for (int C : {32, 64}) {
    for (int D : {16, 32, 64})
      for (int T : {1, 2, C - 1, C, C + 1, 2 * C - 1, 2 * C, 2 * C + 1, 1000}) add({"scan-paper", 2, T, 3, D, C, paper});
    add({"scan-paper", 1, 4096, 2, 64, C, paper});
    add({"scan-vla-v3-noridge", 2, 1000, 3, 64, C, v3});
    add({"scan-vla-v3-noridge+u", 2, 300, 3, 64, C, v3, ts::Family::gaussian, true});
    add({"scan-paper+u", 2, 300, 3, 32, C, paper, ts::Family::gaussian, true});
    add({"scan-unit-scaled-u", 2, 300, 3, 64, C, unit_u});
    add({"scan-identity", 2, 300, 3, 64, C, ident});
    add({"scan-heavy", 2, 300, 3, 64, C, paper, ts::Family::heavy});
    // B H = 141 and 5: not multiples of anything the stages tile by; 141 > 132 SMs.
    add({"scan-waves", 3, 2 * C + 5, 47, 64, C, paper});
    add({"scan-v3-odd-heads", 1, 3 * C - 7, 5, 32, C, v3});
  }
  for (Normalize nz : {Normalize::key, Normalize::gate, Normalize::none}) {
    Options o = paper;
    o.normalize = nz;
    add({"scan-normalize-" + to_string(nz), 2, nz == Normalize::gate ? 12 : 100, 3, 32, 32, o});
  }
  Options o = paper;
  o.readout = Readout::raw;
  add({"scan-raw", 2, 200, 3, 32, 32, o});
  o = paper;
  o.den_floor = 3.0;  // n_t . phi(q_t) grows from ~D at t = 0: the floor acts on the first steps
  add({"scan-den-floor", 2, 200, 3, 32, 32, o});
  o = paper;
  o.delta_floor = 1.0;  // the largest floor the form runs (delta >= 1 in exact arithmetic)
  add({"scan-delta-floor-1", 2, 200, 3, 32, 64, o});
  for (double eps : {1e-1, 1e-2, 1e-3}) {
    add({"scan-collinear-paper eps=" + std::to_string(eps), 1, 1000, 2, 64, 64, paper, ts::Family::gaussian, false, eps});
    add({"scan-collinear-identity-alt eps=" + std::to_string(eps), 1, 1000, 2, 64, 32, ident, ts::Family::gaussian, false, eps, true});
  }
  for (int C : {32, 64}) {
    Case d{"scan-drift-paper", 1, 4096, 4, 64, C, paper};
    d.drift = true;
    add(d);
    d.name = "scan-drift-vla-v3-noridge";
    d.opt = v3;
    add(d);
  }
  Case r{"scan-ridge-refused", 1, 100, 2, 32, 32, ridge};
  r.refused = "--ridge-every";
  add(r);
  o = paper;
  o.delta_floor = 1.6;
  r = Case{"scan-delta-floor-refused", 1, 100, 2, 32, 32, o};
  r.refused = "--delta-floor";
  add(r);
  add(start_beyond_double());
  return cs;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int shard = 0, shards = 1;
  std::string kinds = "all";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--shard") && i + 1 < argc && std::sscanf(argv[i + 1], "%d/%d", &shard, &shards) == 2 &&
               shards >= 1 && shard >= 0 && shard < shards) {
      ++i;
    } else if (!std::strcmp(argv[i], "--kinds") && i + 1 < argc &&
               (!std::strcmp(argv[i + 1], "all") || !std::strcmp(argv[i + 1], "carried") || !std::strcmp(argv[i + 1], "scan"))) {
      kinds = argv[++i];
    } else {
      std::fprintf(stderr, "test_gpu_chunked_cuda: bad argument '%s' (expected --quick, --shard I/N, --kinds all|carried|scan)\n", argv[i]);
      return 2;
    }
  }
  if (!impl::cuda_available()) {
    std::printf("test_gpu_chunked_cuda: no CUDA device visible (or built without CUDA): chunked kernel tests not run\n");
    return 0;
  }
  const bool carried = kinds != "scan", scan = kinds != "carried";
  if (carried && shard == 0) check_tf32_rounding();
  // The full run (the sanitizers run --quick: same code paths, other values).
  if (carried && shard == 0 && !quick) check_causal({ChunkedKind::fp32, ChunkedKind::bf16, ChunkedKind::tf32});
  if (scan && shard == (shards > 1 ? 1 : 0) && !quick) check_causal({ChunkedKind::scan_fp32, ChunkedKind::scan_bf16});
  if (scan && shard == (shards > 2 ? 2 : 0)) check_segment_inverses();
  std::vector<Case> cases;
  if (carried) cases = cases_for(quick);
  std::uint64_t seed = 4242;
  int index = 0;
  for (const Case& c : cases) {
    ++seed;
    if (index++ % shards == shard) run_case(c, seed);
  }
  if (scan) {
    seed = 9191;
    for (const Case& c : scan_cases_for(quick)) {
      ++seed;
      if (index++ % shards == shard) run_case(c, seed);
    }
  }
  std::printf("%s: %d of %d chunked kernel runs failed\n", failures ? "FAILED" : "PASSED", failures, runs);
  return failures ? 1 : 0;
}
