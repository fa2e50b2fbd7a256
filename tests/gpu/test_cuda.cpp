// The fused CUDA kernels against their CPU twins and the double reference, in
// each block layout (impl::FusedLayout), and the launcher's choice of layout.
// Plain main (no GTest) so that it builds on the device machine with nvcc alone
// (gpu/standalone). Without a GPU it prints one line saying so and passes.
//   test_gpu_cuda [--quick] [--shard I/N]
//     --quick      small shapes only (for compute-sanitizer)
//     --shard I/N  only the I-th of N cost-balanced shares of the (case, kind) runs (to spread the CPU side over cores)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "streams.hpp"
#include "vla/gpu/error_model.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/gpu/fused_traits.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/gpu/plain.hpp"

using namespace vla;
using vla::impl::Kind;

namespace {

int failures = 0, cases = 0;

void fail(const std::string& what) {
  ++failures;
  std::printf("FAIL %s\n", what.c_str());
}

// Largest distance in ulps (of the element's storage type) and count of
// differing elements between two outputs.
struct Diff {
  double max_ulps = 0;
  std::size_t differing = 0, nonfinite = 0;
};
void diff_into(Diff& d, const std::vector<double>& a, const std::vector<double>& b, bool bf16) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) ++d.nonfinite;
    if (a[i] != b[i]) {
      ++d.differing;
      d.max_ulps = std::max(d.max_ulps, accuracy::ulps(a[i], b[i], bf16));
    }
  }
}
Diff diff(const Outputs& a, const Outputs& b, bool bf16_o) {
  Diff d;
  diff_into(d, a.o, b.o, bf16_o);
  diff_into(d, a.S, b.S, false);
  diff_into(d, a.A, b.A, false);
  diff_into(d, a.state_norm, b.state_norm, false);
  return d;
}

struct Case {
  std::string name;
  int B, T, H, D;
  Options opt;
  ts::Family fam = ts::Family::gaussian;
  bool with_u = false;
  // Run in the launcher's automatic choice and the forced cluster layout only (more heads than the
  // shipped cluster build's wave: at D = 32 and 64 both take the wide build, FusedTraitsClusterWide).
  bool wide = false;
  // Bitwise agreement with the twin is required when no expf is evaluated
  // (identity map, or elu1 on positive inputs): then every operation is
  // correctly rounded on both sides and the order is the same.
  bool bitwise() const { return opt.feature_map == FeatureMap::identity || fam == ts::Family::positive; }
};

// The block layouts a case runs in (impl::FusedLayout): the thread-block
// cluster of kernel v5 (impl::FusedLayout::cluster: A and S on different SMs), and
// the one-block layouts of v4b: both where D has two (fused_traits.hpp: the
// few-heads layout splits A and S over two thread sets, the many-heads one does
// not), one where the few-heads layout is unsplit already. The twin is the same
// for all (same NT and G, same reduction order).
std::vector<impl::FusedLayout> layouts_for(int D) {
  const bool split = D == 16 ? gpu::FusedTraits<16>::SPLIT : D == 32 ? gpu::FusedTraits<32>::SPLIT
                   : D == 64 ? gpu::FusedTraits<64>::SPLIT : gpu::FusedTraits<128>::SPLIT;
  if (!split) return {impl::FusedLayout::cluster, impl::FusedLayout::few_heads};
  return {impl::FusedLayout::cluster, impl::FusedLayout::few_heads, impl::FusedLayout::many_heads};
}

const char* layout_tag(impl::FusedLayout l) {
  return l == impl::FusedLayout::cluster      ? " cluster"
         : l == impl::FusedLayout::many_heads ? " many"
         : l == impl::FusedLayout::automatic  ? " auto"
                                              : " few";
}

constexpr Kind kKinds[] = {Kind::fp32, Kind::bf16, Kind::bf16_state};

// The case in the kinds whose bit (1 << index in kKinds) is set in `kinds`.
void run_case(const Case& c, std::uint64_t seed, unsigned kinds) {
  const Stream s0 = ts::make_stream(c.B, c.T, c.H, c.D, seed, c.fam, c.with_u);
  for (int ki = 0; ki < 3; ++ki) {
    if (!(kinds >> ki & 1u)) continue;
    const Kind kind = kKinds[ki];
    const std::string tag0 = c.name + " " + impl::to_string(kind) + " B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) +
                             " H=" + std::to_string(c.H) + " D=" + std::to_string(c.D);
    try {
      const Stream s = ts::rounded_for(s0, kind);
      const Outputs twin = impl::run(s, c.opt, kind, impl::Device::cpu);
      const ts::Baselines base = ts::baselines(s, c.opt, kind);
      const Outputs ref = ts::reference_double(s, c.opt);
      const auto prec = accuracy::precision_of(kind);
      const std::vector<impl::FusedLayout> layouts =
          c.wide ? std::vector<impl::FusedLayout>{impl::FusedLayout::automatic, impl::FusedLayout::cluster} : layouts_for(c.D);
      for (impl::FusedLayout layout : layouts) {
        ++cases;
        const std::string tag = tag0 + layout_tag(layout);
        try {
          const Outputs gpu = impl::run(s, c.opt, kind, impl::Device::cuda, layout);
          const Diff d = diff(gpu, twin, prec.bf16_out);
          const auto v = accuracy::check(gpu, ref, base.ptrs(), prec);
          std::printf("%-4s %-63s vs twin: %zu differ, max %.1f ulp | vs reference: %s\n",
                      v.pass && d.nonfinite == 0 && (!c.bitwise() || d.differing == 0) ? "ok" : "FAIL", tag.c_str(), d.differing,
                      d.max_ulps, v.summary().c_str());
          if (d.nonfinite) fail(tag + ": " + std::to_string(d.nonfinite) + " non-finite (unwritten or overflowed) elements");
          if (c.bitwise() && d.differing) fail(tag + ": kernel and twin differ without any expf in the computation");
          if (!v.pass) fail(tag + ": outside the error model");
        } catch (const std::exception& e) {
          fail(tag + ": " + e.what());
        }
      }
    } catch (const std::exception& e) {
      ++cases;
      fail(tag0 + ": " + e.what());
    }
  }
}

#if defined(VLA_HAVE_CUDA)
// The launcher's automatic choice: the cluster layout while B*H clusters run at
// once (B = H = 1 always does; at D = 32 and 64 one head more than the shipped
// build's wave takes the wide build, whose wave is larger; one head more than the
// last wave does not); beyond, at D = 32 and 64 the many-heads layout
// (measured faster there at every count of heads), and at 2^20 heads (never one
// wave) the many-heads one where D has two and it fits more blocks per SM, else
// few-heads.
void check_automatic_layout() {
  for (int D : {16, 32, 64, 128})
    for (Kind kind : {Kind::fp32, Kind::bf16, Kind::bf16_state}) {
      ++cases;
      gpu::FusedParams p;
      p.D = D;
      p.B = p.H = 1;
      const auto one = gpu::fused_kernel_info(p, kind);
      p.layout = impl::FusedLayout::few_heads;
      const auto few = gpu::fused_kernel_info(p, kind);
      p.layout = layouts_for(D).back();
      const auto many = gpu::fused_kernel_info(p, kind);
      p.layout = impl::FusedLayout::automatic;
      p.H = one.wave_clusters;
      const auto full = gpu::fused_kernel_info(p, kind);
      p.H = one.wave_clusters + 1;
      auto over = gpu::fused_kernel_info(p, kind);
      // The wide build (D = 32, 64): a larger wave; then its own wave's end.
      const bool wide_build = over.layout == impl::FusedLayout::cluster;
      const bool wide_ok = !wide_build || ((D == 32 || D == 64) && over.wave_clusters > one.wave_clusters);
      const int reach = wide_build ? over.wave_clusters : one.wave_clusters;
      if (wide_build) {
        p.H = reach;
        const auto last = gpu::fused_kernel_info(p, kind);
        p.H = reach + 1;
        over = gpu::fused_kernel_info(p, kind);
        if (last.layout != impl::FusedLayout::cluster) fail("automatic layout D=" + std::to_string(D) + ": not the cluster layout at the wide build's wave");
      }
      p.B = p.H = 1024;
      const auto huge = gpu::fused_kernel_info(p, kind);
      const bool many_first = D == 32 || D == 64;
      const auto expect = many_first || many.blocks_per_sm > few.blocks_per_sm ? impl::FusedLayout::many_heads : impl::FusedLayout::few_heads;
      const std::string tag = "automatic layout " + impl::to_string(kind) + " D=" + std::to_string(D);
      const bool ok = one.layout == impl::FusedLayout::cluster && one.wave_clusters >= 1 && one.cluster_blocks >= 2 && wide_ok &&
                      full.layout == impl::FusedLayout::cluster && over.layout != impl::FusedLayout::cluster &&
                      (!many_first || over.layout == impl::FusedLayout::many_heads) && huge.layout == expect;
      std::printf("%-4s %-63s cluster %d x %d threads, %d clusters/wave (%d registers; up to %d heads in one wave, wide build included); few-heads %d threads "
                  "%d blocks/SM, many-heads %d threads %d blocks/SM; B*H=2^20 runs %s\n",
                  ok ? "ok" : "FAIL", tag.c_str(), one.cluster_blocks, one.threads, one.wave_clusters, one.registers, reach, few.threads,
                  few.blocks_per_sm,
                  many.threads, many.blocks_per_sm, huge.layout == impl::FusedLayout::many_heads ? "many-heads" : "few-heads");
      if (!ok)
        fail(tag + ": not the cluster layout up to one wave of clusters (the wide build's at D = 32 and 64 only, with "
                   "a larger wave), then many-heads at D = 32 and 64 and, at B*H=2^20, the layout with more blocks per SM elsewhere");
    }
}
#endif

std::vector<Case> cases_for(bool quick) {
  std::vector<Case> cs;
  const Options paper = preset_options(Preset::paper), v3 = preset_options(Preset::vla_v3);
  Options identity = paper;
  identity.feature_map = FeatureMap::identity;
  // The gate from z (u = k^) next to its exceptions, bit for bit: vla-v3's ridge
  // steps (every 20) take the product; so does every step of a binding delta floor.
  Options identity_v3 = v3;
  identity_v3.feature_map = FeatureMap::identity;
  Options identity_floor = identity;
  identity_floor.delta_floor = 1.5;  // delta = 1 + k^.z <= 1 + 1/lambda0 = 2: binds once A has shrunk
  const int dims[] = {16, 32, 64, 128};
  if (quick) {
    for (int D : dims) {
      cs.push_back({"paper", 2, 67, 3, D, paper});
      cs.push_back({"vla-v3+u", 1, 41, 3, D, v3, ts::Family::gaussian, true});
      cs.push_back({"identity", 1, 9, 2, D, identity});
    }
    cs.push_back({"identity-v3", 1, 45, 3, 32, identity_v3});
    cs.push_back({"paper-wide", 2, 33, 70, 32, paper, ts::Family::gaussian, false, true});
    cs.push_back({"paper-wide", 2, 33, 45, 64, paper, ts::Family::gaussian, false, true});
    return cs;
  }
  // T in {1, 2, 63, 64, 65, 1000, 4096}; B*H = 15 or 7 (not a multiple of anything).
  for (int D : dims)
    for (int T : {1, 2, 63, 64, 65, 1000}) cs.push_back({"paper", 3, T, 5, D, paper});
  // T = 4096 with B*H = 7, at D = 128 with 3 heads: the host side of 7 heads at
  // D = 128 (twin, reference, baselines, one check per layout) outlasted its
  // shard's 330-360 s limit in the v4b and v5 runs, so the case never reported.
  for (int D : dims) cs.push_back({"paper", 1, 4096, D == 128 ? 3 : 7, D, paper});
  for (int D : dims) {
    cs.push_back({"vla-v3", 3, 1000, 5, D, v3});
    cs.push_back({"vla-v3", 1, 4096, 3, D, v3});
    cs.push_back({"vla-v3+u", 3, 65, 5, D, v3, ts::Family::gaussian, true});
    cs.push_back({"positive", 3, 300, 5, D, paper, ts::Family::positive});
    cs.push_back({"positive-v3+u", 2, 300, 3, D, v3, ts::Family::positive, true});
    cs.push_back({"identity", 3, 300, 5, D, identity});
    cs.push_back({"heavy", 2, 300, 3, D, paper, ts::Family::heavy});
    cs.push_back({"identity-v3", 2, 300, 3, D, identity_v3});
  }
  for (int D : {16, 64}) cs.push_back({"identity-floor", 2, 100, 3, D, identity_floor});
  // Beyond the shipped cluster build's wave, inside the wide build's (H200: D = 32 124 and 264, D = 64
  // 79 and 132): 140, 150 and 250 heads at D = 32, 90 and 120 at D = 64; identity: bit for bit with the twin.
  cs.push_back({"paper-wide", 2, 200, 70, 32, paper, ts::Family::gaussian, false, true});
  cs.push_back({"identity-wide", 3, 65, 50, 32, identity, ts::Family::gaussian, false, true});
  cs.push_back({"identity-wide", 5, 33, 50, 32, identity, ts::Family::gaussian, false, true});
  cs.push_back({"paper-wide", 2, 100, 45, 64, paper, ts::Family::gaussian, false, true});
  cs.push_back({"identity-wide", 3, 65, 40, 64, identity, ts::Family::gaussian, false, true});
  // Each remaining option on its own (D = 32): normalisation variants, raw readout.
  for (Normalize nz : {Normalize::key, Normalize::gate, Normalize::none}) {
    Options o = paper;
    o.normalize = nz;
    cs.push_back({"normalize-" + to_string(nz), 2, 50, 3, 32, o});
  }
  Options raw = paper;
  raw.readout = Readout::raw;
  cs.push_back({"raw", 2, 200, 3, 32, raw});
  return cs;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int shard = 0, shards = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--shard") && i + 1 < argc && std::sscanf(argv[i + 1], "%d/%d", &shard, &shards) == 2 &&
               shards >= 1 && shard >= 0 && shard < shards) {
      ++i;
    } else {
      std::fprintf(stderr, "test_gpu_cuda: bad argument '%s' (expected --quick, --shard I/N)\n", argv[i]);
      return 2;
    }
  }
  if (!impl::cuda_available()) {
    std::printf("test_gpu_cuda: no CUDA device visible (or built without CUDA): CUDA kernel tests not run\n");
    return 0;
  }
  // Shards balanced by cost (the host side, ~B H T D^2 per kind, dominates): the
  // units are (case, kind), so that no shard waits on a whole heavy case's three
  // kinds (D = 128, T = 1000, B H = 15: 2.3 times a sixteenth of the suite); units
  // by decreasing cost, each to the least loaded shard (ties: the lowest). Seeds
  // stay tied to the case's position in the list.
  const std::vector<Case> all = cases_for(quick);
  const int units = int(all.size()) * 3;
  std::vector<int> order(units);
  for (int u = 0; u < units; ++u) order[u] = u;
  auto cost = [&](int u) { const Case& c = all[u / 3]; return double(c.B) * c.H * c.T * c.D * c.D; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost(a) > cost(b); });
  std::vector<double> load(shards, 0.0);
  std::vector<unsigned> mine(all.size(), 0u);  // this shard's kinds of each case
  for (int u : order) {
    const int to = int(std::min_element(load.begin(), load.end()) - load.begin());
    if (to == shard) mine[u / 3] |= 1u << (u % 3);
    load[to] += cost(u);
  }
#if defined(VLA_HAVE_CUDA)
  if (shard == 0) check_automatic_layout();
#endif
  for (std::size_t i = 0; i < all.size(); ++i)
    if (mine[i]) run_case(all[i], 2025 + i, mine[i]);
  std::printf("%s: %d of %d kernel runs failed\n", failures ? "FAILED" : "PASSED", failures, cases);
  return failures ? 1 : 0;
}
