// Standalone GPU check and timing of stage 2 of the scan form, the state
// (gpu/cuda/scan_state.cu, interface gpu/cuda/scan_stages.cuh).
//
// Stage 2 is fed gates computed on the host: per head, core::vla_step in double
// (the recurrence itself) gives k^_t, a^_t, phi(q_t) and the ratio denominator
// den_t = n_t . phi(q_t); they are rounded to float and uploaded with v (float,
// or bf16 bit patterns). The reference is the recurrence's state given those
// same rounded gates, in double: S_t = S_{t-1} + (v_t - S_{t-1} k^_t) a^_t^T,
// o_t = S_t phi(q_t) / den_t (raw: S_t phi(q_t)), ||S_t||_F. Stage 2 computes the
// same values through the chunked (UT) form, so it differs by rounding only.
//
// Judgement: the error model's per-element inequality (docs/ERROR_MODEL.md,
// gpu/include/vla/gpu/error_model.hpp) with its constant K, with one baseline:
// the same recurrence in float (core::SequentialPolicy<float>: left-to-right FMA
// chains), i.e.
//   |cand - ref| <= u_out |ref| + K (b_g + gamma u s_g)
// with s_g, b_g per o row (running maximum of the baseline's relative row
// error), per state_norm step (likewise) and for the final S. This is a
// simplified model (one deterministic baseline instead of the plain run and
// three Monte Carlo runs): the full judgement happens when stage 2 runs inside
// the chunked-scan implementation under the suite's tests.
//
// Usage: scan_state_check [--quick | --timed | --parts | --small | --explore | --profile] [--pass v4|lanedot|dmma1|dmma2|dmma1w8|dmma2w8] [--fold]
//   (default: the correctness cases, then the timed shapes; --quick: the
//   correctness cases only; --timed: the timed shapes only (launch_state's
//   choices); --parts: five of those shapes (B=1 H=16 T=16,384 bf16 and fp32,
//   T=65,536, B=8 H=128 T=4,096, C=64), timed whole and kernel by kernel;
//   --small: a few short cases, for compute-sanitizer; --explore: the
//   pass's block shapes, ring depths and segment counts, timed; --profile: one
//   launch of the T = 16,384 shape, for ncu; --pass: the cases without a pass of
//   their own on the v4 pass, the v5 lane-dot pass or the v6 DMMA pass with 8
//   or 16 rows per block where built (D >= 32), launch_state's tile for that
//   pass where a case takes launch_state's; --timed times all four, in one process;
//   --fold: the readout folded into the v6 pass, StateConfig::fused_readout, in
//   place of the readout kernel, where the case runs v6)
// Exit 0 when every case passes, 1 otherwise.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "../../gpu/cuda/check.cuh"
#include "../../gpu/cuda/scan_state.cuh"
#include "vla/core/bf16.hpp"
#include "vla/core/recurrence.hpp"
#include "vla/gpu/error_model.hpp"

namespace {

using namespace vla;
namespace scan = vla::gpu::scan;

struct Case {
  int B, T, H, D, C;
  bool bf16, ratio;
  int rows, elems;    // the pass's thread tile (scan_state.cuh StateConfig; rows 0: launch_state's choice)
  int verify_heads;   // heads compared with the host reference (-1: all; 0: none, timing only)
  int reps;           // timed repeats (0: not timed)
  int group = 8;      // rows of a pass block
  int stages = 3;     // the pass's cp.async ring
  int segments = 1;   // pass segments (1: one launch; more: the overlapped schedule)
  int probe = 0;      // the pass's timing probes (scan_state.cuh StateConfig::probe; values not checked)
  int pass = -1;      // -1: launch_state's pass (rows 0) or v4 (a tile given); 4: v4; 5: v5, lanedot (rows 2 or 4; D >= 32); 6, 7: v6, DMMA with 8 or 16 rows per block, 4 warps (D >= 32); 8, 9: the same with 8 warps (D >= 64)
};

bool g_fold = false;  // --fold (anywhere): the v6 pass with the readout folded in (StateConfig::fused_readout) where launch_state has v6
int g_pass = -1;  // --pass v4|lanedot|dmma1|dmma2|dmma1w8|dmma2w8 (4 to 9): the cases without a pass of their own on that pass (lanedot and dmma where built, D >= 32)

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Uniform in [-1, 1) from a counter.
double unif(std::uint64_t seed, std::uint64_t i) {
  return static_cast<double>(splitmix(seed * 0x100000001b3ull + i) >> 11) * 0x1p-52 - 1.0;
}

// One head's gates, rounded to float: [T, D] each and den [T].
struct HeadGates {
  std::vector<float> kh, a, phiq, den;
};

HeadGates make_gates(int T, int D, std::uint64_t seed) {
  Options opt;  // the paper preset: elu1, ratio readout, both normalised, lambda0 = 1
  using P = core::SequentialPolicy<double>;
  core::HeadState<double> st;
  core::Workspace<double> w;
  st.reset(D, D, opt.lambda0);
  w.resize(D, D);
  std::vector<double> q(D), k(D), v(D), o(D);
  core::StepInfo<double> info;
  HeadGates g;
  g.kh.resize(static_cast<std::size_t>(T) * D);
  g.a.resize(g.kh.size());
  g.phiq.resize(g.kh.size());
  g.den.resize(T);
  for (int t = 0; t < T; ++t) {
    for (int j = 0; j < D; ++j) {
      const std::uint64_t i = static_cast<std::uint64_t>(t) * D + j;
      q[j] = 1.5 * unif(seed, 3 * i);
      k[j] = 1.5 * unif(seed, 3 * i + 1);
      v[j] = unif(seed, 3 * i + 2);
    }
    core::vla_step<P>(st, w, q.data(), k.data(), v.data(), nullptr, opt, o.data(), info);
    const double den = core::readout_den(P::dot(st.n.data(), w.phiq.data(), D), opt.den_floor);
    for (int j = 0; j < D; ++j) {
      const std::size_t e = static_cast<std::size_t>(t) * D + j;
      g.kh[e] = static_cast<float>(w.kh[j]);
      g.a[e] = static_cast<float>(w.a[j]);
      g.phiq[e] = static_cast<float>(w.phiq[j]);
    }
    g.den[t] = static_cast<float>(den);
  }
  return g;
}

// The recurrence's state given the rounded gates, in T's arithmetic (double: the
// reference; float: the baseline), for one head; v as [T, D].
template <class T_>
void run_state(const HeadGates& g, const std::vector<float>& v, int T, int D, bool ratio, std::vector<double>& o,
               std::vector<double>& norm, std::vector<double>& S) {
  using P = core::SequentialPolicy<T_>;
  std::vector<T_> s(static_cast<std::size_t>(D) * D, T_(0)), kh(D), a(D), pq(D), r(D), y(D), rn(D);
  o.assign(static_cast<std::size_t>(T) * D, 0.0);
  norm.assign(T, 0.0);
  for (int t = 0; t < T; ++t) {
    const std::size_t e0 = static_cast<std::size_t>(t) * D;
    for (int j = 0; j < D; ++j) {
      kh[j] = T_(g.kh[e0 + j]);
      a[j] = T_(g.a[e0 + j]);
      pq[j] = T_(g.phiq[e0 + j]);
    }
    core::matvec<P>(s.data(), kh.data(), r.data(), D, D);
    for (int i = 0; i < D; ++i) r[i] = T_(T_(v[e0 + i]) - r[i]);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) core::state_update(s[static_cast<std::size_t>(i) * D + j], r[i], a[j]);
    core::matvec<P>(s.data(), pq.data(), y.data(), D, D);
    for (int i = 0; i < D; ++i) o[e0 + i] = ratio ? double(T_(y[i] / T_(g.den[t]))) : double(y[i]);
    norm[t] = double(core::frobenius_norm<P>(s.data(), rn.data(), D, D));
  }
  S.assign(s.begin(), s.end());
}

struct Judge {
  double K = accuracy::ModelConstants{}.K;
  double u = 0x1p-24;   // float arithmetic and state
  double u_out = 0x1p-24;
  double worst_ratio = 0;  // max err / tol
  double rel_o = 0, rel_norm = 0, rel_S = 0;           // candidate: max relative errors (rows scaled by their max)
  double base_o = 0, base_norm = 0, base_S = 0;       // baseline's
  std::size_t failures = 0, nonfinite = 0;
  std::string first_failure;

  void element(double cand, double ref, double tol, const char* what, int t, int i) {
    if (!std::isfinite(cand)) {
      ++nonfinite;
      ++failures;
    } else if (std::fabs(cand - ref) > tol) {
      ++failures;
    } else {
      worst_ratio = std::max(worst_ratio, tol > 0 ? std::fabs(cand - ref) / tol : 0.0);
      return;
    }
    if (first_failure.empty()) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s t=%d i=%d cand=%.9g ref=%.9g tol=%.3g", what, t, i, cand, ref, tol);
      first_failure = buf;
    }
  }

  // o: [T, D] of one head (cand already as the candidate stored it).
  void head(const std::vector<double>& co, const std::vector<double>& cn, const std::vector<double>& cS,
            const std::vector<double>& ro, const std::vector<double>& rn, const std::vector<double>& rS,
            const std::vector<double>& bo, const std::vector<double>& bn, const std::vector<double>& bS, int T, int D) {
    double rho_o = 0, rho_n = 0;
    const double sqrt_d = std::sqrt(static_cast<double>(D));
    for (int t = 0; t < T; ++t) {
      const std::size_t e0 = static_cast<std::size_t>(t) * D;
      double m = 0, be = 0, ce = 0;
      for (int i = 0; i < D; ++i) {
        m = std::max(m, std::fabs(ro[e0 + i]));
        be = std::max(be, std::fabs(bo[e0 + i] - ro[e0 + i]));
        ce = std::max(ce, std::fabs(co[e0 + i] - ro[e0 + i]));
      }
      if (m > 0) {
        rho_o = std::max(rho_o, be / m);
        rel_o = std::max(rel_o, ce / m);
        base_o = std::max(base_o, be / m);
      }
      const double bg = m > 0 ? rho_o * m : be;
      for (int i = 0; i < D; ++i) {
        const double tol = u_out * std::fabs(ro[e0 + i]) + K * (bg + sqrt_d * u * m);
        element(co[e0 + i], ro[e0 + i], tol, "o", t, i);
      }
      const double nr = rn[t];
      const double bne = std::fabs(bn[t] - nr);
      if (nr > 0) {
        rho_n = std::max(rho_n, bne / nr);
        rel_norm = std::max(rel_norm, std::fabs(cn[t] - nr) / nr);
        base_norm = std::max(base_norm, bne / nr);
      }
      const double tol_n = 0x1p-24 * nr + K * ((nr > 0 ? rho_n * nr : bne) + D * u * nr);
      element(cn[t], nr, tol_n, "state_norm", t, -1);
    }
    double sm = 0, sb = 0, sc = 0;
    for (std::size_t e = 0; e < rS.size(); ++e) {
      sm = std::max(sm, std::fabs(rS[e]));
      sb = std::max(sb, std::fabs(bS[e] - rS[e]));
      sc = std::max(sc, std::fabs(cS[e] - rS[e]));
    }
    if (sm > 0) {
      rel_S = std::max(rel_S, sc / sm);
      base_S = std::max(base_S, sb / sm);
    }
    for (std::size_t e = 0; e < rS.size(); ++e)
      element(cS[e], rS[e], 0x1p-24 * std::fabs(rS[e]) + K * (sb + sqrt_d * u * sm), "S", -1, static_cast<int>(e));
  }
};

template <class T_>
struct DevBuf {
  T_* p = nullptr;
  explicit DevBuf(std::size_t n) { VLA_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T_))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

template <class F>
void parallel_for(int n, F f) {
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int w = 0; w < std::min(n, hw); ++w)
    th.emplace_back([&, w] {
      for (int i = w; i < n; i += std::min(n, hw)) f(i);
    });
  for (auto& x : th) x.join();
}

// The first n patterns of gates for (T, D), computed once for all the cases that use them.
const std::vector<HeadGates>& gates_for(int T, int D, int n) {
  static std::map<std::pair<int, int>, std::vector<HeadGates>> cache;
  std::vector<HeadGates>& v = cache[{T, D}];
  const int have = static_cast<int>(v.size());
  if (have < n) {
    v.resize(n);
    parallel_for(n - have, [&](int i) { v[have + i] = make_gates(T, D, 1000 + static_cast<std::uint64_t>(have + i)); });
  }
  return v;
}

bool run_case(const Case& cs) {
  const int B = cs.B, T = cs.T, H = cs.H, D = cs.D, BH = B * H;
  const std::size_t rows = static_cast<std::size_t>(B) * T * H;
  const std::size_t n = rows * D;
  const auto t_start = std::chrono::steady_clock::now();

  // Gates: distinct per head for small cases, else a few patterns shared by the heads (v is per head).
  const int n_pat = std::min(BH, cs.verify_heads < 0 ? BH : cs.verify_heads == 0 ? 1 : 4);
  const std::vector<HeadGates>& pat = gates_for(T, D, n_pat);

  std::vector<float> kh(n), a(n), pq(n), den(rows), vf(n);
  std::vector<std::uint16_t> vb(cs.bf16 ? n : 0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        const int bh = b * H + h;
        const HeadGates& g = pat[bh % n_pat];
        const std::size_t r = (static_cast<std::size_t>(b) * T + t) * H + h;
        std::memcpy(&kh[r * D], &g.kh[static_cast<std::size_t>(t) * D], D * sizeof(float));
        std::memcpy(&a[r * D], &g.a[static_cast<std::size_t>(t) * D], D * sizeof(float));
        std::memcpy(&pq[r * D], &g.phiq[static_cast<std::size_t>(t) * D], D * sizeof(float));
        den[r] = g.den[t];
        for (int j = 0; j < D; ++j) {
          const float x = static_cast<float>(unif(77 + bh, static_cast<std::uint64_t>(t) * D + j));
          if (cs.bf16) {
            vb[r * D + j] = core::bf16_bits_rne(x);
            vf[r * D + j] = core::bf16_bits_to_float(vb[r * D + j]);
          } else {
            vf[r * D + j] = x;
          }
        }
      }

  DevBuf<float> d_kh(n), d_a(n), d_pq(n), d_den(rows), d_S(static_cast<std::size_t>(BH) * D * D), d_norm(rows);
  DevBuf<float> d_vf(cs.bf16 ? 0 : n), d_of(cs.bf16 ? 0 : n);
  DevBuf<std::uint16_t> d_vb(cs.bf16 ? n : 0), d_ob(cs.bf16 ? n : 0);
  const std::size_t scratch = scan::state_scratch_bytes(B, T, H, D, cs.C);
  DevBuf<char> d_scr(scratch);
  VLA_CUDA_CHECK(cudaMemcpy(d_kh.p, kh.data(), n * 4, cudaMemcpyHostToDevice));
  VLA_CUDA_CHECK(cudaMemcpy(d_a.p, a.data(), n * 4, cudaMemcpyHostToDevice));
  VLA_CUDA_CHECK(cudaMemcpy(d_pq.p, pq.data(), n * 4, cudaMemcpyHostToDevice));
  VLA_CUDA_CHECK(cudaMemcpy(d_den.p, den.data(), rows * 4, cudaMemcpyHostToDevice));
  if (cs.bf16) {
    VLA_CUDA_CHECK(cudaMemcpy(d_vb.p, vb.data(), n * 2, cudaMemcpyHostToDevice));
  } else {
    VLA_CUDA_CHECK(cudaMemcpy(d_vf.p, vf.data(), n * 4, cudaMemcpyHostToDevice));
  }
  // Outputs start as NaN patterns so that an element never written cannot pass.
  VLA_CUDA_CHECK(cudaMemset(cs.bf16 ? static_cast<void*>(d_ob.p) : static_cast<void*>(d_of.p), 0xff, n * (cs.bf16 ? 2 : 4)));
  VLA_CUDA_CHECK(cudaMemset(d_S.p, 0xff, static_cast<std::size_t>(BH) * D * D * 4));
  VLA_CUDA_CHECK(cudaMemset(d_norm.p, 0xff, rows * 4));

  scan::StateParams p;
  p.B = B;
  p.T = T;
  p.H = H;
  p.D = D;
  p.C = cs.C;
  p.bf16_io = cs.bf16;
  p.v = cs.bf16 ? static_cast<const void*>(d_vb.p) : static_cast<const void*>(d_vf.p);
  p.in.khat = d_kh.p;
  p.in.phiq = d_pq.p;
  p.in.gate = d_a.p;
  p.in.den = cs.ratio ? d_den.p : nullptr;
  p.o = cs.bf16 ? static_cast<void*>(d_ob.p) : static_cast<void*>(d_of.p);
  p.S = d_S.p;
  p.state_norm = d_norm.p;
  p.scratch = d_scr.p;
  const int pass_v = g_pass >= 0 && cs.pass < 0 ? g_pass : cs.pass;  // a case's own pass is kept
  scan::StateConfig cfg;
  if (cs.rows == 0) {
    cfg = pass_v < 0 ? scan::state_config(B, H, D, cs.C) : scan::state_config_pass(B, H, D, cs.C, pass_v == 5);
  } else {
    cfg = scan::StateConfig{cs.rows, cs.elems, cs.group, cs.stages, cs.segments, cs.probe};
    if (pass_v == 5 && D >= 32 && cs.probe == 0) {
      cfg.lanedot = true;
      cfg.rows = cs.rows == 4 ? 4 : 2;
      cfg.elems = D / 32;
      cfg.group = 4 * cfg.rows;
    }
  }
  // v6 (DMMA) where built (D >= 32, no probes): 1 or 2 tiles of 8 rows per block.
  if (pass_v >= 6 && D >= 32 && cs.probe == 0) {
    cfg.lanedot = false;
    cfg.dmma = pass_v % 2 == 0 ? 1 : 2;
    cfg.dmma_warps = pass_v >= 8 && D >= 64 ? 8 : 4;
    if (cs.rows == 0) cfg.stages = 3;  // launch_state's ring for v6
  }
  if (g_fold && cfg.dmma != 0) {
    cfg.fused_readout = true;
    cfg.stages = cs.C == 32 ? 4 : 3;  // chunk c - 1 kept beside one loaded ahead
  }
  const int segments = scan::state_segments(T, cs.C, cfg);
  auto launch = [&](unsigned parts) { scan::launch_state_config(p, nullptr, cfg, parts); };
  const unsigned all_parts = scan::kPrep | scan::kPass | scan::kReadout;
  if (cs.rows == 0 && pass_v < 0 && !g_fold) {
    scan::launch_state(p, nullptr);  // the public entry point
  } else {
    launch(all_parts);
  }
  VLA_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<float> o_f(cs.bf16 ? 0 : n), S(static_cast<std::size_t>(BH) * D * D), nrm(rows);
  std::vector<std::uint16_t> o_b(cs.bf16 ? n : 0);
  if (cs.bf16) {
    VLA_CUDA_CHECK(cudaMemcpy(o_b.data(), d_ob.p, n * 2, cudaMemcpyDeviceToHost));
  } else {
    VLA_CUDA_CHECK(cudaMemcpy(o_f.data(), d_of.p, n * 4, cudaMemcpyDeviceToHost));
  }
  VLA_CUDA_CHECK(cudaMemcpy(S.data(), d_S.p, S.size() * 4, cudaMemcpyDeviceToHost));
  VLA_CUDA_CHECK(cudaMemcpy(nrm.data(), d_norm.p, rows * 4, cudaMemcpyDeviceToHost));

  // Determinism: a second run must give the same bits.
  bool same_bits = true;
  {
    launch(all_parts);
    VLA_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> nrm2(rows);
    VLA_CUDA_CHECK(cudaMemcpy(nrm2.data(), d_norm.p, rows * 4, cudaMemcpyDeviceToHost));
    same_bits = std::memcmp(nrm2.data(), nrm.data(), rows * 4) == 0;
  }

  // Timing: CUDA events, median of the repeats after two warm-up launches; the
  // whole stage, then each of its three kernels alone (the pass alone runs on the
  // R its previous launch left over Vt: same work, values not checked).
  double median_ms = 0, prep_ms = 0, pass_ms = 0, readout_ms = 0;
  if (cs.reps > 0) {
    cudaEvent_t e0, e1;
    VLA_CUDA_CHECK(cudaEventCreate(&e0));
    VLA_CUDA_CHECK(cudaEventCreate(&e1));
    auto time = [&](unsigned parts) {
      launch(parts);
      launch(parts);
      std::vector<float> ms(cs.reps);
      for (int r = 0; r < cs.reps; ++r) {
        VLA_CUDA_CHECK(cudaEventRecord(e0));
        launch(parts);
        VLA_CUDA_CHECK(cudaEventRecord(e1));
        VLA_CUDA_CHECK(cudaEventSynchronize(e1));
        VLA_CUDA_CHECK(cudaEventElapsedTime(&ms[r], e0, e1));
      }
      std::sort(ms.begin(), ms.end());
      return static_cast<double>(ms[ms.size() / 2]);
    };
    median_ms = time(all_parts);
    prep_ms = time(scan::kPrep);
    pass_ms = time(scan::kPass);
    readout_ms = time(scan::kReadout);
    VLA_CUDA_CHECK(cudaEventDestroy(e0));
    VLA_CUDA_CHECK(cudaEventDestroy(e1));
  }

  // Heads to verify: all, or the first, the last and ones in between.
  std::vector<int> heads;
  if (cs.verify_heads < 0 || cs.verify_heads >= BH) {
    for (int i = 0; i < BH; ++i) heads.push_back(i);
  } else {
    for (int i = 0; i < cs.verify_heads; ++i)
      heads.push_back(cs.verify_heads == 1 ? 0 : static_cast<int>(static_cast<long>(i) * (BH - 1) / (cs.verify_heads - 1)));
  }
  std::vector<Judge> judges(heads.size());
  parallel_for(static_cast<int>(heads.size()), [&](int k) {
    const int bh = heads[k], b = bh / H, h = bh % H;
    const HeadGates& g = pat[bh % n_pat];
    std::vector<float> v(static_cast<std::size_t>(T) * D);
    std::vector<double> co(v.size()), cn(T), cS(static_cast<std::size_t>(D) * D);
    for (int t = 0; t < T; ++t) {
      const std::size_t r = (static_cast<std::size_t>(b) * T + t) * H + h;
      for (int j = 0; j < D; ++j) {
        v[static_cast<std::size_t>(t) * D + j] = vf[r * D + j];
        co[static_cast<std::size_t>(t) * D + j] = cs.bf16 ? core::bf16_bits_to_float(o_b[r * D + j]) : o_f[r * D + j];
      }
      cn[t] = nrm[r];
    }
    for (std::size_t e = 0; e < cS.size(); ++e) cS[e] = S[static_cast<std::size_t>(bh) * D * D + e];
    std::vector<double> ro, rn, rS, bo, bn, bS;
    run_state<double>(g, v, T, D, cs.ratio, ro, rn, rS);
    run_state<float>(g, v, T, D, cs.ratio, bo, bn, bS);
    if (cs.bf16) {  // the baseline's o rounded to bf16 as the candidate's is
      for (auto& x : bo) x = core::round_bf16(static_cast<float>(x));
    }
    judges[k].u_out = cs.bf16 ? 0x1p-8 : 0x1p-24;
    judges[k].head(co, cn, cS, ro, rn, rS, bo, bn, bS, T, D);
  });
  Judge all;
  for (const auto& j : judges) {
    all.worst_ratio = std::max(all.worst_ratio, j.worst_ratio);
    all.rel_o = std::max(all.rel_o, j.rel_o);
    all.rel_norm = std::max(all.rel_norm, j.rel_norm);
    all.rel_S = std::max(all.rel_S, j.rel_S);
    all.base_o = std::max(all.base_o, j.base_o);
    all.base_norm = std::max(all.base_norm, j.base_norm);
    all.base_S = std::max(all.base_S, j.base_S);
    all.failures += j.failures;
    all.nonfinite += j.nonfinite;
    if (all.first_failure.empty()) all.first_failure = j.first_failure;
  }
  const bool pass = all.failures == 0 && same_bits;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf(
      "%s B=%d H=%d T=%d D=%d C=%d %s %s pass %s%s tile %dx%d/%d ring %d seg %d probe %d heads_checked=%zu | rel err o %.2e (float recurrence %.2e) "
      "norm %.2e (%.2e) S %.2e (%.2e) | worst err/tol %.3f failures %zu nonfinite %zu deterministic %s",
      pass ? "PASS" : "FAIL", B, H, T, D, cs.C, cs.bf16 ? "bf16" : "fp32", cs.ratio ? "ratio" : "raw", cfg.dmma ? (cfg.dmma == 1 ? (cfg.dmma_warps == 8 ? "v6/8w8" : "v6/8") : (cfg.dmma_warps == 8 ? "v6/16w8" : "v6/16")) : cfg.lanedot ? "v5" : "v4", cfg.fused_readout ? "+fold" : "", cfg.rows, cfg.elems, cfg.group, cfg.stages, segments, cfg.probe, heads.size(),
      all.rel_o, all.base_o, all.rel_norm, all.base_norm, all.rel_S, all.base_S, all.worst_ratio, all.failures, all.nonfinite,
      same_bits ? "yes" : "NO");
  if (cs.reps > 0) {
    const double flop = 8.0 * BH * static_cast<double>(T) * D * D;  // 4 D^2 FMA per step and head
    std::printf(" | median %.4f ms over %d (alone: prep %.4f, pass %.4f, readout %.4f) %.1f TFLOP/s of the 4 D^2 FMA/step", median_ms,
                cs.reps, prep_ms, pass_ms, readout_ms, flop / median_ms * 1e-9);
  }
  std::printf(" | %.1f s\n", secs);
  if (!all.first_failure.empty()) std::printf("  first failure: %s\n", all.first_failure.c_str());
  std::fflush(stdout);
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const bool quick = std::strcmp(mode, "--quick") == 0;
  const bool small = std::strcmp(mode, "--small") == 0;
  const bool timed_only = std::strcmp(mode, "--timed") == 0;
  const bool explore = std::strcmp(mode, "--explore") == 0;
  for (int i = 1; i < argc; ++i) g_fold = g_fold || std::strcmp(argv[i], "--fold") == 0;
  if (argc > 3 && std::strcmp(argv[2], "--pass") == 0) {
    if (std::strcmp(argv[3], "v4") == 0) g_pass = 4;
    else if (std::strcmp(argv[3], "lanedot") == 0) g_pass = 5;
    else if (std::strcmp(argv[3], "dmma1") == 0) g_pass = 6;
    else if (std::strcmp(argv[3], "dmma2") == 0) g_pass = 7;
    else if (std::strcmp(argv[3], "dmma1w8") == 0) g_pass = 8;
    else if (std::strcmp(argv[3], "dmma2w8") == 0) g_pass = 9;
    else {
      std::fprintf(stderr, "scan_state_check: --pass v4|lanedot|dmma1|dmma2|dmma1w8|dmma2w8\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  int dev = 0, drv = 0, rt = 0;
  VLA_CUDA_CHECK(cudaGetDevice(&dev));
  VLA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::printf("device %s, %d SMs, CUDA driver API %d, runtime %d\n", prop.name, prop.multiProcessorCount, drv, rt);
  // B, T, H, D, C, bf16, ratio, rows, elems, verify_heads, reps, group, stages, segments
  // (rows 0: launch_state's choice; segments > 1: the overlapped schedule)
  std::vector<Case> cases = {
      {2, 100, 3, 16, 32, false, true, 0, 0, -1, 0},  {1, 257, 2, 32, 64, true, true, 0, 0, -1, 0},
      {2, 1000, 2, 64, 64, false, false, 1, 4, -1, 0}, {2, 1000, 2, 64, 64, false, true, 2, 2, -1, 0},
      {2, 1000, 2, 64, 64, true, true, 4, 2, -1, 0},  {1, 777, 2, 64, 32, true, true, 1, 4, -1, 0},
      {1, 777, 2, 64, 32, true, true, 2, 2, -1, 0},  {1, 777, 2, 64, 32, false, true, 4, 2, -1, 0},
      {1, 300, 1, 128, 64, false, true, 0, 0, -1, 0}, {1, 300, 2, 128, 32, true, true, 0, 0, -1, 0},
      {1, 1, 1, 64, 64, false, true, 0, 0, -1, 0},    {1, 33, 1, 32, 32, false, true, 0, 0, -1, 0},
      {1, 5, 2, 16, 64, true, false, 0, 0, -1, 0},    {1, 4096, 2, 64, 64, false, true, 1, 4, -1, 0},
      {1, 4096, 2, 64, 32, false, true, 4, 2, -1, 0}, {1, 31, 2, 64, 32, false, true, 0, 0, -1, 0},
      {3, 95, 5, 32, 32, true, false, 0, 0, -1, 0},   {1, 129, 1, 16, 64, false, true, 0, 0, -1, 0},
      // v4: the new tiles, ring depths and the overlapped schedule (uneven segments, short last chunks)
      {2, 1000, 2, 64, 64, false, true, 1, 2, -1, 0, 8, 3, 5},  {1, 777, 2, 64, 32, true, true, 1, 2, -1, 0, 4, 2, 7},
      {1, 777, 2, 64, 32, true, true, 2, 2, -1, 0, 4, 4, 3},    {1, 777, 2, 64, 32, false, false, 2, 2, -1, 0, 8, 3, 25},
      {3, 95, 5, 32, 32, true, false, 1, 1, -1, 0, 8, 3, 2},    {1, 300, 2, 128, 32, true, true, 1, 4, -1, 0, 8, 3, 4},
      {1, 300, 2, 128, 64, false, true, 4, 4, -1, 0, 8, 2, 3},  {2, 100, 3, 16, 32, false, true, 1, 1, -1, 0, 8, 4, 4},
      {1, 1, 1, 64, 32, true, true, 1, 2, -1, 0, 8, 3, 4},      {1, 33, 1, 64, 32, false, true, 1, 2, -1, 0, 8, 3, 2},
      {1, 4096, 2, 64, 32, false, true, 1, 2, -1, 0, 8, 3, 1},  {1, 4096, 2, 64, 32, true, true, 1, 2, -1, 0, 8, 3, 16},
      {2, 2000, 3, 64, 64, true, true, 1, 4, -1, 0, 8, 4, 6},   {1, 513, 2, 16, 64, false, true, 4, 1, -1, 0, 8, 3, 3},
      // v5 (lanedot): 2 and 4 rows per thread at D = 32, 64, 128, C = 32 and 64, rings of 2-4, segments, short chunks
      {1, 777, 2, 64, 32, true, true, 4, 2, -1, 0, 16, 3, 1, 0, 5},  {2, 1000, 2, 64, 64, false, true, 2, 2, -1, 0, 8, 4, 5, 0, 5},
      {1, 300, 2, 128, 32, true, true, 2, 4, -1, 0, 8, 3, 4, 0, 5},  {1, 300, 2, 128, 64, false, false, 4, 4, -1, 0, 16, 2, 1, 0, 5},
      {3, 95, 5, 32, 32, true, false, 2, 1, -1, 0, 8, 2, 2, 0, 5},   {1, 257, 2, 32, 64, false, true, 4, 1, -1, 0, 16, 4, 3, 0, 5},
      {1, 1, 1, 64, 32, true, true, 2, 2, -1, 0, 8, 3, 1, 0, 5},     {1, 4096, 2, 64, 32, false, true, 4, 2, -1, 0, 16, 3, 16, 0, 5},
  };
  if (small) {
    cases = {{2, 100, 3, 16, 32, false, true, 0, 0, -1, 0},  {1, 200, 2, 64, 64, true, true, 1, 4, -1, 0},
             {1, 200, 1, 64, 64, false, false, 2, 2, -1, 0}, {1, 130, 1, 64, 32, true, true, 4, 2, -1, 0},
             {1, 130, 1, 128, 64, false, true, 0, 0, -1, 0},  {1, 70, 1, 32, 32, true, true, 0, 0, -1, 0},
             {1, 300, 2, 64, 32, true, true, 1, 2, -1, 0, 8, 3, 3}, {1, 200, 1, 64, 32, false, true, 1, 2, -1, 0, 4, 2, 4},
             {1, 150, 1, 16, 32, false, true, 1, 1, -1, 0, 8, 4, 3}};
  } else if (explore) {
    // The block shapes, ring depths and segment counts, B=1 H=16 D=64 bf16 unless said.
    cases.clear();
    for (const auto& x : std::vector<std::array<int, 5>>{{2, 2, 8, 2, 1}, {2, 2, 8, 3, 1}, {1, 2, 8, 2, 1}, {1, 2, 8, 3, 1},
                                                         {1, 2, 8, 4, 1}, {1, 2, 4, 3, 1}, {2, 2, 4, 3, 1}, {1, 4, 8, 3, 1},
                                                         {4, 2, 8, 2, 1}, {1, 2, 8, 3, 4}, {1, 2, 8, 3, 8}, {1, 2, 8, 3, 16},
                                                         {1, 2, 8, 3, 32}, {2, 2, 8, 3, 8}, {1, 2, 4, 3, 8}, {1, 4, 8, 3, 8}})
      cases.push_back({1, 16384, 16, 64, 32, true, true, x[0], x[1], 1, 10, x[2], x[3], x[4]});
    for (int seg : {1, 2, 4, 8}) cases.push_back({1, 4096, 16, 64, 32, true, true, 1, 2, 1, 20, 8, 3, seg});
    for (int seg : {8, 16, 32}) cases.push_back({1, 65536, 16, 64, 32, true, true, 1, 2, 1, 5, 8, 3, seg});
    for (const auto& x : std::vector<std::array<int, 5>>{{1, 2, 8, 3, 1}, {2, 2, 8, 3, 1}, {2, 2, 8, 2, 1}, {4, 2, 8, 2, 1}})
      cases.push_back({8, 4096, 128, 64, 32, true, true, x[0], x[1], 1, 5, x[2], x[3], x[4]});
  } else if (std::strcmp(mode, "--parts") == 0) {
    // launch_state's choices at the report's shapes, timed whole and kernel by kernel
    // (a short --timed: the prep and readout before/after, built against either
    // kernel file), a head of each checked.
    cases = {{1, 16384, 16, 64, 32, true, true, 0, 0, 1, 20}, {1, 16384, 16, 64, 32, false, true, 0, 0, 1, 20},
             {1, 65536, 16, 64, 32, true, true, 0, 0, 0, 10}, {8, 4096, 128, 64, 32, true, true, 0, 0, 1, 10},
             {1, 16384, 16, 64, 64, true, true, 0, 0, 1, 20}};
  } else if (std::strcmp(mode, "--profile") == 0) {
    // One launch_state of the T = 16,384 shape, unverified and untimed: for a profiler
    // (the pass is the third kernel launched).
    cases = {{1, 16384, 16, 64, 32, true, true, 0, 0, 0, 0}};
  } else if (!quick) {
    // The report's shapes with launch_state's choices (B=1 H=16 D=64 C=32 bf16 and fp32, B=8 H=128; C=64).
    const std::vector<Case> timed = {
        {1, 4096, 16, 64, 32, true, true, 0, 0, 1, 20},   {1, 4096, 16, 64, 32, false, true, 0, 0, 1, 20},
        {1, 16384, 16, 64, 32, true, true, 0, 0, 1, 20},  {1, 16384, 16, 64, 32, false, true, 0, 0, 1, 20},
        {1, 65536, 16, 64, 32, true, true, 0, 0, 0, 10},  {1, 65536, 16, 64, 32, false, true, 0, 0, 0, 10},
        {8, 4096, 128, 64, 32, true, true, 0, 0, 1, 10},  {8, 4096, 128, 64, 32, false, true, 0, 0, 0, 5},
        {1, 16384, 16, 64, 64, true, true, 0, 0, 0, 20},
        // The pass's time split (probes: without r's dot products, without the steps, without both) and the
        // overlapped schedule, at launch_state's tile for T = 16,384 (values not checked).
        {1, 16384, 16, 64, 32, true, true, 2, 2, 0, 20, 8, 2, 1, 1}, {1, 16384, 16, 64, 32, true, true, 2, 2, 0, 20, 8, 2, 1, 2},
        {1, 16384, 16, 64, 32, true, true, 2, 2, 0, 20, 8, 2, 1, 3}, {1, 16384, 16, 64, 32, true, true, 2, 2, 0, 20, 8, 2, 8, 0},
    };
    if (timed_only) cases.clear();
    // launch_state's shapes on each pass (v4 first, then v5 lanedot), then the probes.
    for (int pass : {4, 5, 6, 7, 8, 9})
      for (std::size_t i = 0; i < 9; ++i) {
        Case c = timed[i];
        c.pass = pass;
        cases.push_back(c);
      }
    cases.insert(cases.end(), timed.begin() + 9, timed.end());
    // v6 beside the prep and readout: the overlapped schedule with 2 and 8 pass segments.
    for (int seg : {2, 8}) cases.push_back({1, 16384, 16, 64, 32, true, true, 2, 2, 1, 20, 8, 3, seg, 0, 6});
    // D = 32 and 128 at T = 16,384 on v4 and v6 (launch_state's pass there since v6).
    for (int d : {32, 128})
      for (int pass : {4, 6}) {
        Case c{1, 16384, 16, d, 32, true, true, 0, 0, 1, 20};
        c.pass = pass;
        cases.push_back(c);
      }
    // v5's other ring depths and tiles than launch_state's (2 x 2 / 8 below 64 heads,
    // 4 x 2 / 16 from 64 on, ring 3), values not checked.
    for (int ring : {2, 4}) cases.push_back({1, 16384, 16, 64, 32, true, true, 2, 2, 0, 20, 8, ring, 1, 0, 5});
    cases.push_back({1, 16384, 16, 64, 32, true, true, 4, 2, 0, 20, 16, 2, 1, 0, 5});
    cases.push_back({1, 65536, 16, 64, 32, true, true, 2, 2, 0, 10, 8, 2, 1, 0, 5});
    cases.push_back({8, 4096, 128, 64, 32, true, true, 4, 2, 0, 10, 16, 2, 1, 0, 5});
    for (int ring : {2, 3}) cases.push_back({8, 4096, 128, 64, 32, true, true, 2, 2, 0, 10, 8, ring, 1, 0, 5});
  }
  int failed = 0;
  for (const Case& c : cases) {
    try {
      if (!run_case(c)) ++failed;
    } catch (const std::exception& e) {
      std::printf("FAIL B=%d H=%d T=%d D=%d C=%d: %s\n", c.B, c.H, c.T, c.D, c.C, e.what());
      ++failed;
    }
  }
  std::printf("%s: %d of %zu cases failed\n", failed ? "FAILED" : "ALL PASSED", failed, cases.size());
  return failed ? 1 : 0;
}
