// Where the cluster kernel's steps go (issue 3; reports/gpu/FLOOR.md, "Kernel v5:
// where the step goes", "Kernel v6", "Kernel v7"). Instantiates the cluster kernel
// (gpu/cuda/cluster_kernel.cuh) in the layouts v5 (FusedTraitsCluster<D, 2, false>:
// warp 0 of the A block forms the gate), v6c (the gate warp, the feature warp and
// its copies; shipped before v8), v7s (v6c + the S blocks' feature warps), v7t (v6c + the A
// block's trees through shared memory; D = 64 fp32 only), v7 (both) and v8 (v7s with
// the A block's paper-preset loops; shipped; FLOOR.md, "Kernel v8"), v9a and v9 (v8 with
// one or two gate warps off the A warps' per-step barrier; FLOOR.md, "Kernel v9"), times
// them side by side on the same inputs (each twice, interleaved) and checks each
// against v5 word for word (o, S, A, ||S_t||_F); fp32 at each D asked for, bf16 at
// D = 64. At each D in fp32 it also runs probes of its own (the kernel's third
// template parameter; the shipped kernel's probe records nothing): per-step clocks
// (clock64, lane 0 of every warp of the first head's three blocks) at the marks
// of ClusterMark: which block sets the pace, how long the A block's barrier waits,
// how long the S blocks wait for a_t, what the chunk boundaries cost. Each probe
// mark costs ~200 cycles, so probed segments are shares, not latencies.
// Paper preset, B = 1, H = 16, inputs uniform in [-1, 1] (bf16: the same values
// rounded); times are the median of 5 launches after a warm-up (CUDA events).
//   bench_cluster_roles [--d 32,64,128] [--t T_time] [--tp T_probe] [--csv F] [--no-bf16] [--no-probes]
//   bench_cluster_roles --only v6c|v7s|v7|v8|v9a|v9 [--t T]   (one launch at D = 64 fp32, for Nsight Compute)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../../gpu/cuda/fused_kernel.cuh"
#include "bench_util.cuh"

using namespace vla;
using gpu::detail::ClusterMark;
using gpu::detail::kMarks;

namespace {

constexpr int kBlocks = 3;  // the first head's cluster: the A block and 2 S blocks
__device__ unsigned long long* g_stamps;  // [kBlocks][warps][T][kMarks] clock64
__device__ unsigned long long* g_edges;   // [kBlocks][warps][2 edges][clock64, globaltimer]
__device__ int g_T;
__device__ int g_warps;

// A probe: ON records clocks, PUSH chooses how a_t travels.
template <bool ON, int PUSH>
struct Probe {
  static constexpr int kPush = PUSH;
  __device__ static void mark(int m, int t) {
    if constexpr (ON) {
      if (blockIdx.x >= kBlocks || (threadIdx.x & 31)) return;
      unsigned long long c;
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
      g_stamps[((std::size_t(blockIdx.x) * g_warps + threadIdx.x / 32) * g_T + t) * kMarks + m] = c;
    }
  }
  __device__ static void edge(int e) {
    if constexpr (ON) {
      if (blockIdx.x >= kBlocks || (threadIdx.x & 31)) return;
      unsigned long long c, g;
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
      unsigned long long* at = g_edges + ((std::size_t(blockIdx.x) * g_warps + threadIdx.x / 32) * 2 + e) * 2;
      at[0] = c;
      at[1] = g;
    }
  }
};

using bench::fill_f32;
using bench::median_launch_ms;

// One problem's buffers (B = 1, H heads, T steps, head dimension D; Prec's input
// and output types: fp32, or bf16 with the same values rounded).
template <class Prec>
struct Problem {
  using In = typename Prec::In;
  using Out = typename Prec::Out;
  int H, T, D;
  In *q, *k, *v;
  Out* o;
  float *S, *A, *norm;
  gpu::FusedParams p;
  Problem(int H_, int T_, int D_) : H(H_), T(T_), D(D_) {
    const std::size_t n = std::size_t(H) * T * D;
    for (In** b : {&q, &k, &v}) VLA_CUDA_CHECK(cudaMalloc(b, n * sizeof(In)));
    VLA_CUDA_CHECK(cudaMalloc(&o, n * sizeof(Out)));
    std::uint32_t salt = 1;
    for (In* b : {q, k, v}) {
      if constexpr (Prec::bf16_io) bench::fill_bf16<<<512, 256>>>(b, n, salt++);
      else fill_f32<<<512, 256>>>(b, n, salt++);
    }
    VLA_CUDA_CHECK(cudaMalloc(&S, std::size_t(H) * D * D * 4));
    VLA_CUDA_CHECK(cudaMalloc(&A, std::size_t(H) * D * D * 4));
    VLA_CUDA_CHECK(cudaMalloc(&norm, std::size_t(H) * T * 4));
    p = gpu::make_params(Options{}, Dims{1, T, H, D, D}, false);
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.S = S;
    p.A = A;
    p.state_norm = norm;
  }
  ~Problem() {
    for (void* b : {(void*)q, (void*)k, (void*)v, (void*)o, (void*)S, (void*)A, (void*)norm}) cudaFree(b);
  }
  // The outputs' bits: o, S, A, ||S_t||_F (o's words widened to 32 bits).
  std::vector<std::uint32_t> outputs() const {
    std::vector<std::uint32_t> r;
    auto add = [&](const void* d, std::size_t n, std::size_t bytes) {
      std::vector<unsigned char> h(n * bytes);
      VLA_CUDA_CHECK(cudaMemcpy(h.data(), d, n * bytes, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t w = 0;
        std::memcpy(&w, h.data() + i * bytes, bytes);
        r.push_back(w);
      }
    };
    add(o, std::size_t(H) * T * D, sizeof(Out));
    add(S, std::size_t(H) * D * D, 4);
    add(A, std::size_t(H) * D * D, 4);
    add(norm, std::size_t(H) * T, 4);
    return r;
  }
};

template <class Tr, class P, class Prec>
void launch(const Problem<Prec>& pr) {
  const auto kernel = gpu::detail::vla_fused_cluster_kernel<Tr, Prec, P>;
  VLA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, gpu::detail::cluster_smem_bytes<Tr, Prec>()));
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = gpu::detail::cluster_config<Tr, Prec>(pr.H, nullptr, attr);
  VLA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, pr.p));
  VLA_CUDA_CHECK(cudaGetLastError());
}

// Median of 5 launches after a warm-up, in us per step.
template <class Tr, class P, class Prec>
double us_per_step(const Problem<Prec>& pr) {
  return median_launch_ms([&] { launch<Tr, P>(pr); }) * 1e3 / pr.T;
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return x.empty() ? NAN : s / x.size();
}
double median(std::vector<double> x) {
  if (x.empty()) return NAN;
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// Runs the probed kernel once (after a warm-up) and prints where its steps go.
template <class Tr, int PUSH>
void probe(const Problem<gpu::PrecFp32>& pr, const char* name, FILE* csv) {
  // W: warps per block (stamps); WC: warps holding rows (the S blocks' only ones);
  // PW: the A block's warp that forms and pushes a_t (v5: 0, v6: the gate warp);
  // WB: the A block's warps in its per-step barrier (the feature warp, where there
  // is one, is the last warp: not in it, and it marks no steps).
  // v9 (FREE_GATES): the gate warps WC .. WC + NGW - 1 take the steps in turn (warp
  // PW + t % NGW has step t) and are not in the barrier; WG: the A block's warps
  // with per-step marks.
  constexpr int NGW = Tr::FREE_GATES > 1 ? Tr::FREE_GATES : 1;
  const int T = pr.T, W = Tr::BLOCK / 32, WC = Tr::NT / 32, PW = Tr::GATE_WARP ? WC : 0,
            WB = WC + (Tr::GATE_WARP && !Tr::FREE_GATES ? 1 : 0), WG = WC + Tr::GATE_WARPS;
  auto pusher_of = [&](int t) { return PW + (Tr::FREE_GATES ? t % NGW : 0); };
  auto has_step = [&](int b, int w, int t) { return !(Tr::FREE_GATES && b == 0 && w >= WC) || (w - WC) == t % NGW; };
  const std::size_t ns = std::size_t(kBlocks) * W * T * kMarks, ne = std::size_t(kBlocks) * W * 4;
  unsigned long long *ds, *de;
  VLA_CUDA_CHECK(cudaMalloc(&ds, ns * 8));
  VLA_CUDA_CHECK(cudaMalloc(&de, ne * 8));
  VLA_CUDA_CHECK(cudaMemset(ds, 0, ns * 8));
  VLA_CUDA_CHECK(cudaMemcpyToSymbol(g_stamps, &ds, sizeof ds));
  VLA_CUDA_CHECK(cudaMemcpyToSymbol(g_edges, &de, sizeof de));
  VLA_CUDA_CHECK(cudaMemcpyToSymbol(g_T, &T, sizeof T));
  VLA_CUDA_CHECK(cudaMemcpyToSymbol(g_warps, &W, sizeof W));
  const double us = us_per_step<Tr, Probe<true, PUSH>>(pr);  // the last of its launches leaves the stamps
  std::vector<unsigned long long> st(ns), ed(ne);
  VLA_CUDA_CHECK(cudaMemcpy(st.data(), ds, ns * 8, cudaMemcpyDeviceToHost));
  VLA_CUDA_CHECK(cudaMemcpy(ed.data(), de, ne * 8, cudaMemcpyDeviceToHost));
  VLA_CUDA_CHECK(cudaFree(ds));
  VLA_CUDA_CHECK(cudaFree(de));
  auto S = [&](int blk, int w, int t, int m) { return double(st[((std::size_t(blk) * W + w) * T + t) * kMarks + m]); };
  auto E = [&](int blk, int w, int e, int k) { return double(ed[((std::size_t(blk) * W + w) * 2 + e) * 2 + k]); };
  // Clock rate from the A block's warp 0 (edges 0 and 1), and each block's clock
  // offset from the A block's at the cluster's first barrier (released together).
  const double ghz = (E(0, 0, 1, 0) - E(0, 0, 0, 0)) / (E(0, 0, 1, 1) - E(0, 0, 0, 1));
  double off[kBlocks];
  for (int b = 0; b < kBlocks; ++b) off[b] = E(b, 0, 0, 0) - E(0, 0, 0, 0);
  const int t_lo = 2 * gpu::detail::kChunk, t_hi = T - 2 * gpu::detail::kChunk;
  auto boundary = [](int t) { return ((t + 1) & (gpu::detail::kChunk - 1)) == 0; };
  std::printf("\n### D = %d, %s (%s): %.4f us/step (probed, T = %d), clock %.3f GHz, %.0f cycles/step\n", Tr::D, name,
              Tr::FREE_GATES ? "v9, v8 with free gate warps"
              : Tr::PAPER_LOOP ? "v8, v7s and the A block's paper-preset loops"
              : Tr::S_FEATURES && Tr::SMEM_TREES ? "v7, S blocks' feature warps, A block's trees through shared memory"
              : Tr::S_FEATURES ? "v7s, S blocks' feature warps"
              : Tr::FEATURE_COPIES ? "v6c, gate and feature warps, copies on the feature warp"
              : Tr::FEATURE_WARP ? "v6, gate and feature warps"
              : Tr::GATE_WARP    ? "v6a, gate warp"
                                 : "v5",
              us, T, ghz, us * 1e3 * ghz);
  // Per block, warps 0 and 1: the segments between marks (cycles), steps away from
  // and at chunk boundaries (t + 1 a multiple of kChunk), steps t_lo .. t_hi.
  static const char* const seg_a[] = {"top->reduced", "reduced->synced", "synced->formed", "formed->pushed", "pushed->end", "end->next top", "period"};
  static const char* const seg_s[] = {"top->reduced", "reduced->a_t in", "a_t in->updated", "-", "updated->end", "end->next top", "period"};
  std::printf("| block | warp | steps | %s | %s | %s | %s | %s | %s | %s |\n", seg_a[0], seg_a[1], seg_a[2], seg_a[3], seg_a[4], seg_a[5],
              seg_a[6]);
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int b = 0; b < kBlocks; ++b)
    for (int w = 0; w < (b == 0 ? WG : WC); ++w) {
      if (w > 1 && w < WC - 1) continue;  // warps 0, 1 and the last holding rows; the A block's extra warps
      const int step = b == 0 && w >= WC && Tr::FREE_GATES ? NGW : 1;  // v9's gate warps: their period is NGW steps
      for (int bd = 0; bd < 2; ++bd) {
        std::vector<double> seg[7];
        for (int t = t_lo; t < t_hi; ++t) {
          if (boundary(t) != bool(bd) || !has_step(b, w, t)) continue;
          const double m[kMarks] = {S(b, w, t, 0), S(b, w, t, 1), S(b, w, t, 2), S(b, w, t, 3), S(b, w, t, 4), S(b, w, t, 5), S(b, w, t, 6)};
          const double next = S(b, w, t + step, ClusterMark::kMarkTop);
          seg[0].push_back(m[1] - m[0]);
          seg[1].push_back(m[2] - m[1]);
          seg[2].push_back(m[3] - m[2]);
          seg[3].push_back(b == 0 ? m[4] - m[3] : 0.0);
          seg[4].push_back(m[6] - (b == 0 ? m[4] : m[3]));
          seg[5].push_back(next - m[6]);
          seg[6].push_back(next - m[0]);
        }
        std::printf("| %s | %d%s | %s |", b == 0 ? "A" : (b == 1 ? "S1" : "S2"), w, b == 0 && w >= PW && w < WG && Tr::GATE_WARP ? " (gate)" : "", bd ? "boundary" : "other");
        for (auto& x : seg) std::printf(" %.0f (%.0f) |", mean(x), median(x));
        std::printf("\n");
      }
    }
  std::printf("(S blocks' columns: %s, %s, %s, %s, %s, %s, %s; mean (median) cycles)\n", seg_s[0], seg_s[1], seg_s[2], seg_s[3], seg_s[4], seg_s[5],
              seg_s[6]);
  // The A block's barrier: latest arrival (kMarkReduced over warps) to earliest
  // and latest release (kMarkSynced), and which warp arrives last.
  {
    std::vector<double> lag_first, lag_last, w0_wait, spread;
    std::vector<int> last_count(WB, 0);
    for (int t = t_lo; t < t_hi; ++t) {
      if (boundary(t - 1)) continue;  // a boundary's barriers precede this step's top
      double arr_max = -1e300, arr_min = 1e300, rel_min = 1e300, rel_max = -1e300;
      int last = 0;
      for (int w = 0; w < WB; ++w) {
        const double a = S(0, w, t, ClusterMark::kMarkReduced), r = S(0, w, t, ClusterMark::kMarkSynced);
        if (a > arr_max) arr_max = a, last = w;
        arr_min = std::min(arr_min, a);
        rel_min = std::min(rel_min, r);
        rel_max = std::max(rel_max, r);
      }
      ++last_count[last];
      lag_first.push_back(rel_min - arr_max);
      lag_last.push_back(rel_max - arr_max);
      spread.push_back(arr_max - arr_min);
      w0_wait.push_back(S(0, 0, t, ClusterMark::kMarkSynced) - S(0, 0, t, ClusterMark::kMarkReduced));
    }
    std::printf("A block's per-step barrier (non-boundary steps): arrivals spread %.0f (%.0f) cycles; last arrival -> first release %.0f (%.0f), -> last release %.0f (%.0f); warp 0 waits %.0f (%.0f); last to arrive:",
                mean(spread), median(spread), mean(lag_first), median(lag_first), mean(lag_last), median(lag_last), mean(w0_wait), median(w0_wait));
    for (int w = 0; w < WB; ++w) std::printf(" w%d %d", w, last_count[w]);
    std::printf("\n");
  }
  // Pace: how far the A block's push of a_t (warp PW, kMarkPushed) precedes each S
  // block's arrival at its wait for a_t (kMarkReduced, warp 0), on the A block's clock.
  for (int b = 1; b < kBlocks; ++b) {
    std::vector<double> lead, wait;
    int waited = 0, n = 0;
    for (int t = t_lo; t < t_hi; ++t) {
      lead.push_back((S(b, 0, t, ClusterMark::kMarkReduced) - off[b]) - S(0, pusher_of(t), t, ClusterMark::kMarkPushed));
      const double wt = S(b, 0, t, ClusterMark::kMarkSynced) - S(b, 0, t, ClusterMark::kMarkReduced);
      wait.push_back(wt);
      waited += wt > 100;
      ++n;
    }
    std::printf("S%d: arrives at its wait for a_t %.0f (%.0f) cycles after A pushed it (A-clock, offset %.0f); waits %.0f (%.0f) cycles; >100 cycles in %d of %d steps\n", b,
                mean(lead), median(lead), off[b], mean(wait), median(wait), waited, n);
  }
  // Period over the whole probed window per block (warp 0).
  for (int b = 0; b < kBlocks; ++b)
    std::printf("block %d: %.1f cycles/step over steps %d..%d\n", b, (S(b, 0, t_hi, 0) - S(b, 0, t_lo, 0)) / (t_hi - t_lo), t_lo, t_hi);
  if (csv)  // steps 256 .. 319 of every warp, relative to the A block's warp 0 top of step 256
    for (int b = 0; b < kBlocks; ++b)
      for (int w = 0; w < (b == 0 ? WG : WC); ++w)
        for (int t = 256; t < std::min(T, 320); ++t) {
          if (!has_step(b, w, t)) continue;
          std::fprintf(csv, "%d,%s,%d,%d,%d", Tr::D, name, b, w, t);
          for (int m = 0; m < kMarks; ++m) {
            const double v = S(b, w, t, m);
            std::fprintf(csv, ",%.0f", v == 0 ? NAN : v - off[b] - S(0, 0, 256, 0));
          }
          std::fprintf(csv, "\n");
        }
  std::fflush(stdout);
}
// The variants side by side on the same inputs (each timed twice, interleaved),
// their outputs against v5's word for word, and (fp32, `probes`) the per-role clocks.
template <int D>
using V5 = gpu::FusedTraitsCluster<D, 2, false>;
template <int D>
using V6c = gpu::FusedTraitsCluster<D, 2, true, true, true>;
template <int D>
using V7s = gpu::FusedTraitsCluster<D, 2, true, true, true, true>;  // + the S blocks' feature warps
template <int D>
using V7t = gpu::FusedTraitsCluster<D, 2, true, true, true, false, true>;  // v6c + the A block's trees through shared memory
template <int D>
using V7 = gpu::FusedTraitsCluster<D, 2, true, true, true, true, true>;  // both
template <int D>
using V8 = gpu::FusedTraitsCluster<D, 2, true, true, true, true, false, true>;  // v7s + the A block's paper-preset loops (shipped)
template <int D>
using V9a = gpu::FusedTraitsCluster<D, 2, true, true, true, true, false, true, 1>;  // v8, its gate warp off the per-step barrier
template <int D>
using V9 = gpu::FusedTraitsCluster<D, 2, true, true, true, true, false, true, 2>;  // v8 with two free gate warps, the steps in turn
template <class Tr, int D>
constexpr bool kIs = std::is_same_v<gpu::FusedTraitsClusterShipped<D>, Tr>;
template <class Prec, int D>
void run(int t_time, int t_probe, FILE* csv, bool probes) {
  static_assert(kIs<V6c<D>, D> || kIs<V7s<D>, D> || kIs<V7<D>, D> || kIs<V8<D>, D> || kIs<V9a<D>, D> || kIs<V9<D>, D>);
  using gpu::detail::ClusterNoProbe;
  using gpu::detail::kPushAtStep;
  constexpr bool kT = D == 64 && !Prec::bf16_io;  // v7t at D = 64 fp32 only
  const char* prec = Prec::bf16_io ? "bf16" : "fp32";
  const char* shipped = kIs<V9<D>, D> ? "v9" : kIs<V9a<D>, D> ? "v9a" : kIs<V8<D>, D> ? "v8" : kIs<V7<D>, D> ? "v7" : kIs<V7s<D>, D> ? "v7s" : "v6c";
  std::printf("\n## D = %d, %s (B = 1, H = 16, 3 blocks per head: v5 %d threads per block, v6c to v9a %d, v9 %d; this build ships %s)\n\n", D, prec,
              V5<D>::BLOCK, V7<D>::BLOCK, V9<D>::BLOCK, shipped);
  {
    Problem<Prec> pr(16, t_time, D);
    std::printf("| variant (T = %d, median of 5) | us/step |\n|---|---|\n", t_time);
    const double t5 = us_per_step<V5<D>, ClusterNoProbe>(pr);
    std::printf("| v5 | %.4f |\n", t5);
    std::fflush(stdout);
    const auto ref = pr.outputs();
    std::size_t bad = 0;
    auto compare = [&](const char* what) {
      const auto x = pr.outputs();
      std::size_t diff = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) diff += ref[i] != x[i];
      bad += diff;
      std::printf("%s against v5: %zu of %zu output words differ (o, S, A, ||S_t||_F)%s\n", what, diff, ref.size(),
                  diff == 0 ? ": bit-identical" : ": NOT bit-identical");
      return diff;
    };
    double t6[2], t7s[2], t7[2], t8[2], t9a[2], t9[2], t7t = NAN;
    std::size_t d6 = 0, d7s = 0, d7 = 0, d7t = 0, d8 = 0, d9a = 0, d9 = 0;
    // One variant: timed, its row printed, its bits compared with v5's.
    auto variant = [&](double (*us)(const Problem<Prec>&), const char* what, const char* label, const char* again, std::size_t& d) {
      const double t = us(pr);
      std::printf("| %s (%s)%s | %.4f |\n", what, label, again, t);
      d += compare(what);
      return t;
    };
    for (int r = 0; r < 2; ++r) {
      const char* again = r ? " again" : "";
      t6[r] = variant(us_per_step<V6c<D>, ClusterNoProbe, Prec>, "v6c", "v6 with the copies on the feature warp", again, d6);
      t7s[r] = variant(us_per_step<V7s<D>, ClusterNoProbe, Prec>, "v7s", "v6c + the S blocks' feature warps", again, d7s);
      if constexpr (kT)
        if (r == 0) t7t = variant(us_per_step<V7t<D>, ClusterNoProbe, Prec>, "v7t", "v6c + the A block's trees through shared memory", "", d7t);
      t7[r] = variant(us_per_step<V7<D>, ClusterNoProbe, Prec>, "v7", "v7s + the A block's trees through shared memory", again, d7);
      t8[r] = variant(us_per_step<V8<D>, ClusterNoProbe, Prec>, "v8", "v7s + the A block's paper-preset loops", again, d8);
      t9a[r] = variant(us_per_step<V9a<D>, ClusterNoProbe, Prec>, "v9a", "v8, the gate warp off the per-step barrier", again, d9a);
      t9[r] = variant(us_per_step<V9<D>, ClusterNoProbe, Prec>, "v9", "v8, two free gate warps taking the steps in turn", again, d9);
      std::fflush(stdout);
    }
    std::printf("| v5 again | %.4f |\n", us_per_step<V5<D>, ClusterNoProbe>(pr));
    std::printf("bits: %s\n", bad == 0 ? "every variant equals v5" : "MISMATCH");
    // One line per shape for the call's rule (the faster of each variant's two timings).
    std::printf("RESULT D=%d %s v5=%.4f v6c=%.4f v7s=%.4f v7t=%.4f v7=%.4f v8=%.4f v9a=%.4f v9=%.4f bits v6c=%s v7s=%s v7t=%s v7=%s v8=%s v9a=%s v9=%s\n",
                D, prec, t5, std::min(t6[0], t6[1]), std::min(t7s[0], t7s[1]), t7t, std::min(t7[0], t7[1]), std::min(t8[0], t8[1]),
                std::min(t9a[0], t9a[1]), std::min(t9[0], t9[1]), d6 ? "DIFF" : "ok", d7s ? "DIFF" : "ok", kT ? (d7t ? "DIFF" : "ok") : "-",
                d7 ? "DIFF" : "ok", d8 ? "DIFF" : "ok", d9a ? "DIFF" : "ok", d9 ? "DIFF" : "ok");
    std::fflush(stdout);
  }
  if constexpr (!Prec::bf16_io)
    if (probes) {
      Problem<Prec> pr(16, t_probe, D);
      probe<V6c<D>, kPushAtStep>(pr, "push at the step", csv);
      probe<V7s<D>, kPushAtStep>(pr, "push at the step", csv);
      probe<V7<D>, kPushAtStep>(pr, "push at the step", csv);
      probe<V8<D>, kPushAtStep>(pr, "push at the step", csv);
      probe<V9<D>, kPushAtStep>(pr, "two free gate warps", csv);
    }
}

std::vector<int> parse_ints(const char* s) {
  std::vector<int> r;
  for (const char* p = s; *p;) {
    char* end;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v <= 0) return {};
    r.push_back(int(v));
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return {};
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ds = {64};
  int t_time = 16384, t_probe = 2048;
  const char* csv_path = nullptr;
  const char* only = nullptr;
  bool bf16 = true, probes = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--d") && i + 1 < argc) ds = parse_ints(argv[++i]);
    else if (!std::strcmp(argv[i], "--t") && i + 1 < argc) t_time = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--tp") && i + 1 < argc) t_probe = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--no-bf16")) bf16 = false;
    else if (!std::strcmp(argv[i], "--no-probes")) probes = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_cluster_roles [--d 32,64,128] [--t T_time] [--tp T_probe >= 320] [--csv steps.csv] [--no-bf16] [--no-probes]\n"
                   "       bench_cluster_roles --only v6c|v7s|v7|v8|v9a|v9 [--t T]   (one launch at D = 64 fp32, for a profiler)\n");
      return 2;
    }
  }
  if (ds.empty() || t_time < 64 || t_probe < 320) {
    std::fprintf(stderr, "bench_cluster_roles: bad arguments\n");
    return 2;
  }
  try {
    if (only) {  // one launch of one variant (ncu: the cluster kernel alone)
      Problem<gpu::PrecFp32> pr(16, t_time, 64);
      using gpu::detail::ClusterNoProbe;
      if (!std::strcmp(only, "v6c")) launch<V6c<64>, ClusterNoProbe>(pr);
      else if (!std::strcmp(only, "v7s")) launch<V7s<64>, ClusterNoProbe>(pr);
      else if (!std::strcmp(only, "v7")) launch<V7<64>, ClusterNoProbe>(pr);
      else if (!std::strcmp(only, "v8")) launch<V8<64>, ClusterNoProbe>(pr);
      else if (!std::strcmp(only, "v9a")) launch<V9a<64>, ClusterNoProbe>(pr);
      else if (!std::strcmp(only, "v9")) launch<V9<64>, ClusterNoProbe>(pr);
      else throw std::invalid_argument(std::string("unknown variant ") + only);
      VLA_CUDA_CHECK(cudaDeviceSynchronize());
      std::printf("bench_cluster_roles: one launch of %s at D = 64, T = %d\n", only, t_time);
      return 0;
    }
    FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "D,variant,block,warp,step,top,reduced,synced,formed,pushed,boundary,end\n");
    cudaDeviceProp prop{};
    VLA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    VLA_CUDA_CHECK(cudaDriverGetVersion(&drv));
    VLA_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    std::printf("# bench_cluster_roles: %s, driver API %d, runtime %d\n", prop.name, drv, rt);
    for (int d : ds) {
      if (d == 32) run<gpu::PrecFp32, 32>(t_time, t_probe, csv, probes);
      else if (d == 64) run<gpu::PrecFp32, 64>(t_time, t_probe, csv, probes);
      else if (d == 128) run<gpu::PrecFp32, 128>(t_time, t_probe, csv, probes);
      else std::fprintf(stderr, "bench_cluster_roles: D = %d skipped (32, 64, 128)\n", d);
    }
    if (bf16) run<gpu::PrecBf16, 64>(t_time, t_probe, csv, false);
    if (csv) std::fclose(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster_roles: %s\n", e.what());
    return 1;
  }
  return 0;
}
