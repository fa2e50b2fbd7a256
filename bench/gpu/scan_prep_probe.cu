// Probe of the scan form's gate stage (stage 1, gpu/cuda/scan_gate.cu), built
// against any tree's scan_gate.cu, so that two builds can be compared bit for
// bit and timed in one device call:
//   --bits  a battery of shapes and options (D 16, 32, 64; C 32, 64; bf16 and
//           float inputs; u none, given, unit-scaled; normalize none; identity
//           map; raw readout; awkward T; inputs near float overflow): per case
//           one FNV-1a hash of each buffer stage 1 writes (k^, phi(q), a^, den,
//           A, the M buffer, the normaliser prefix n_c, u), from NaN-poisoned
//           buffers. Equal lines = equal bits.
//   --time  B = 1, H = 16, T = 16,384 and B = 8, H = 128, T = 4,096 (bf16, D = 64,
//           C = 32, u = k^): each kernel alone and the whole stage (ms,
//           bench::median_launch_ms), the stage with its side kernels on a side
//           stream where this tree's GateParams has one.
//   --ncu   scan_prep alone, twice (for ncu --launch-skip 1 --launch-count 1).
// Standalone (includes the kernels' source): copy this file into the checkout
// to build from ($tree/bench/gpu/), then from $tree:
//   nvcc -std=c++20 -O3 -arch=sm_90 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
//     -I$tree/gpu/cuda -I$tree/gpu/include -I$tree/core/include -I$tree/reference/include \
//     bench/gpu/scan_prep_probe.cu -o scan_prep_probe
// (reports/gpu/2026-12-04-h200-scan-prep.md ran it with its own median of 21 launches.)
#include "scan_gate.cu"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bench_util.cuh"
#include "vla/core/bf16.hpp"

using namespace vla::gpu;
using namespace vla::gpu::scan;

namespace {

struct Case {
  int B, T, H, D, C;
  bool bf16;
  int umode;  // 0: u = k^, 1: u given, 2: u = k^ unit-scaled, 3: u given and unit-scaled
  bool elu1 = true, nkey = true, ngate = true, ratio = true;
  float scale = 1.0f;  // inputs' scale (1e19: squares overflow float)
  const char* name = "base";
};

// The side stream of this tree's GateParams, where it has one.
template <class G>
bool set_side(G& g, cudaStream_t s, cudaEvent_t f, cudaEvent_t j) {
  if constexpr (requires { g.side; }) {
    g.side = s, g.fork = f, g.join = j;
    return true;
  } else {
    return false;
  }
}

std::uint64_t fnv(const void* dev, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  VLA_CUDA_CHECK(cudaMemcpy(h.data(), dev, bytes, cudaMemcpyDeviceToHost));
  std::uint64_t x = 1469598103934665603ull;
  for (unsigned char c : h) x = (x ^ c) * 1099511628211ull;
  return x;
}

void* dalloc(std::size_t bytes) {
  void* p = nullptr;
  VLA_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  VLA_CUDA_CHECK(cudaMemset(p, 0xff, bytes ? bytes : 1));  // NaN bytes
  return p;
}

// One case's device buffers and parameters.
struct Run {
  Case k;
  GateParams g;
  std::vector<void*> bufs;
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  Run(const Case& c, std::uint32_t seed) : k(c) {
    const std::size_t n = std::size_t(c.B) * c.T * c.H * c.D, el = c.bf16 ? 2 : 4;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-2.0f, 2.0f);
    auto input = [&]() {
      std::vector<unsigned char> h(n * el);
      for (std::size_t i = 0; i < n; ++i) {
        const float v = uni(rng) * c.scale;
        if (c.bf16) {
          const std::uint16_t b = vla::core::bf16_bits_rne(v);
          std::memcpy(&h[2 * i], &b, 2);
        } else {
          std::memcpy(&h[4 * i], &v, 4);
        }
      }
      void* d = dalloc(n * el);
      VLA_CUDA_CHECK(cudaMemcpy(d, h.data(), n * el, cudaMemcpyHostToDevice));
      bufs.push_back(d);
      return d;
    };
    g.B = c.B, g.T = c.T, g.H = c.H, g.D = c.D, g.C = c.C, g.bf16_io = c.bf16;
    g.q = input(), g.k = input(), g.u = c.umode & 1 ? input() : nullptr;
    g.elu1 = c.elu1, g.normalize_key = c.nkey, g.normalize_gate = c.ngate, g.ratio = c.ratio, g.u_unit_scaled = c.umode >= 2;
    g.lambda0 = 0.5;
    auto out = [&](std::size_t bytes) {
      void* d = dalloc(bytes);
      bufs.push_back(d);
      return static_cast<float*>(d);
    };
    g.A = out(std::size_t(c.B) * c.H * c.D * c.D * 4);
    g.out.khat = out(n * 4), g.out.phiq = out(n * 4), g.out.gate = out(n * 4);
    g.out.den = c.ratio ? out(std::size_t(c.B) * c.T * c.H * 4) : nullptr;
    g.scratch = out(gate_scratch_bytes(c.B, c.T, c.H, c.D, c.C, g.u || g.u_unit_scaled));
  }
  ~Run() {
    for (void* p : bufs) cudaFree(p);
    if (side) cudaStreamDestroy(side), cudaEventDestroy(fork), cudaEventDestroy(join);
  }
  bool use_side() {
    if (!side) {
      VLA_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
      VLA_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
      VLA_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    }
    return set_side(g, side, fork, join);
  }
  void no_side() { set_side(g, nullptr, nullptr, nullptr); }
  void hashes() {
    const Case& c = k;
    const std::size_t n = std::size_t(c.B) * c.T * c.H * c.D, BH = std::size_t(c.B) * c.H;
    const bool usep = g.u || g.u_unit_scaled;
    const ScratchLayout l = scratch_layout(c.B, c.T, c.H, c.D, c.C, usep);
    const std::size_t mbytes = BH * (n_segments(c.T, c.C) + 1) * packed_size(c.D) * 8, nbytes = BH * n_chunks(c.T, c.C) * c.D * 4;
    auto* base = static_cast<unsigned char*>(g.scratch);
    std::printf("%-10s bf16=%d D=%2d C=%2d B=%d T=%5d H=%d u=%d | khat %016llx phiq %016llx gate %016llx den %016llx A %016llx M %016llx n %016llx u %016llx\n",
                c.name, int(c.bf16), c.D, c.C, c.B, c.T, c.H, c.umode, (unsigned long long)fnv(g.out.khat, n * 4),
                (unsigned long long)fnv(g.out.phiq, n * 4), (unsigned long long)fnv(g.out.gate, n * 4),
                (unsigned long long)(c.ratio ? fnv(g.out.den, std::size_t(c.B) * c.T * c.H * 4) : 0),
                (unsigned long long)fnv(g.A, BH * c.D * c.D * 4), (unsigned long long)fnv(base + l.m, mbytes),
                (unsigned long long)fnv(base + l.nsum, nbytes), (unsigned long long)(usep ? fnv(base + l.u, n * 4) : 0));
  }
};

void bits() {
  std::vector<Case> cases;
  std::uint32_t seed = 1;
  for (int D : {16, 32, 64})
    for (int C : {32, 64})
      for (bool bf16 : {true, false}) {
        const Case b{2, 1100, 3, D, C, bf16, 0};
        cases.push_back(b);
        for (int um : {1, 2, 3}) {
          Case x = b;
          x.umode = um, x.name = "u";
          cases.push_back(x);
        }
        Case x = b;
        x.nkey = x.ngate = false, x.name = "norm-none";
        cases.push_back(x);
        x = b, x.elu1 = false, x.name = "identity";
        cases.push_back(x);
        x = b, x.ratio = false, x.name = "raw";
        cases.push_back(x);
        x = b, x.scale = 1e19f, x.T = 600, x.name = "huge";
        cases.push_back(x);
        for (int T : {1, 31, 33, 4096 + 17}) {
          x = b, x.T = T, x.B = 1, x.name = "T";
          cases.push_back(x);
        }
      }
  for (const Case& c : cases) {
    Run r(c, seed++);
    r.use_side();
    launch_gate(r.g, nullptr);
    VLA_CUDA_CHECK(cudaDeviceSynchronize());
    r.hashes();
  }
  std::printf("bits: %zu cases\n", cases.size());
}

void times() {
  std::printf("| B | H | T | scan_prep | scan_prefix | scan_gate | scan_final_A | scan_den | stage, serial | stage, side stream |\n"
              "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Case c : {Case{1, 16384, 16, 64, 32, true, 0}, Case{8, 4096, 128, 64, 32, true, 0}}) {
    Run r(c, 7);
    r.no_side();
    launch_gate(r.g, nullptr);
    auto part = [&](unsigned kernels) {
      r.g.kernels = kernels;
      return vla::bench::median_launch_ms([&] { launch_gate(r.g, nullptr); });
    };
    std::printf("| %d | %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |", c.B, c.H, c.T, part(1), part(2), part(4), part(8), part(16), part(31));
    if (r.use_side()) std::printf(" %.4f |\n", part(31));
    else std::printf(" (none) |\n");
    r.g.kernels = 31;
  }
}

void ncu() {
  Run r(Case{1, 16384, 16, 64, 32, true, 0}, 7);
  r.no_side();
  r.g.kernels = 1;
  for (int i = 0; i < 2; ++i) launch_gate(r.g, nullptr);
  VLA_CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("ncu: scan_prep launched twice\n");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--bits")) bits();
      else if (!std::strcmp(argv[i], "--time")) times();
      else if (!std::strcmp(argv[i], "--ncu")) ncu();
      else {
        std::fprintf(stderr, "scan_prep_probe: unknown argument '%s'\n", argv[i]);
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_prep_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
