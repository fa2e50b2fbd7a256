// Times the fused kernels on the GPU: CUDA events around each launch after a
// warm-up launch, median of the repeats, inputs drawn uniformly from [-1, 1]
// (never all zero). Prints a Markdown table and writes CSV rows.
//   bench_gpu [--csv FILE] [--quick] [--max-gib G] [--max-seconds S] [--bh BxH,..] [--t T,..] [--d D,..]
//             [--layout auto|cluster|few|many]
// (--bh, --t, --d replace the default shape lists, e.g. --bh 1x16,1x128 --t 16384 --d 64,128;
// --layout forces the fused kernel's block layout, default: the launcher's choice; cluster: kernel v8's
// thread-block cluster per head, its wide build beyond the shipped one's wave at D = 32 and 64; the
// resources printed are those of B = H = 1's launch, i.e. the shipped build)
// Shapes: B*H in {16, 128, 1024} (B, H = 1x16, 1x128, 8x128), T in {4096,
// 16384, 65536}, D in {32, 64, 128}, the three precisions; a shape is skipped
// (and the table says why) when its buffers exceed --max-gib or its predicted
// time (from the same shape at a shorter T) exceeds --max-seconds.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../../gpu/cuda/check.cuh"
#include "bench_util.cuh"
#include "vla/core/bf16.hpp"
#include "vla/gpu/fused.hpp"

using namespace vla;
using vla::impl::Kind;

namespace {

using bench::fill_bf16;
using bench::fill_f32;

struct Buffers {
  void* in[3] = {nullptr, nullptr, nullptr};
  void* o = nullptr;
  float *S = nullptr, *A = nullptr, *norm = nullptr;
  ~Buffers() {
    for (void* p : {in[0], in[1], in[2], o, static_cast<void*>(S), static_cast<void*>(A), static_cast<void*>(norm)})
      if (p) cudaFree(p);
  }
};

double bytes_needed(int BH, int T, int D, Kind kind) {
  const double elem = kind == Kind::fp32 ? 4 : 2, n = double(BH) * T * D;
  return 4 * n * elem + 2.0 * BH * D * D * 4 + double(BH) * T * 4;
}

// FLOPs of one step of one head as the kernel does it, counting an FMA as 2
// (reports/gpu/FLOOR.md): four D x D matrix-vector products (A u, S k^, S phi(q),
// S.S row norms) and two rank-1 updates (A, S), plus O(D) vector work, ignored
// here. (The spec's fifth product, A_t k^, is not needed where the gate comes
// from z: every step of the paper preset benchmarked here.)
double flops_per_head_step(int D) { return 6.0 * 2.0 * D * D; }

const char* layout_name(gpu::FusedLayout l) {
  return l == gpu::FusedLayout::cluster ? "cluster"
       : l == gpu::FusedLayout::many_heads ? "many-heads" : l == gpu::FusedLayout::few_heads ? "few-heads" : "auto";
}

// "a,b,c" -> {a, b, c}; "1x16,8x128" -> {{1, 16}, {8, 128}}; empty on a malformed list.
std::vector<int> parse_ints(const char* s) {
  std::vector<int> out;
  for (const char* q = s; *q;) {
    char* end = nullptr;
    const long x = std::strtol(q, &end, 10);
    if (end == q || x < 1 || x > (1 << 30)) return {};
    out.push_back(static_cast<int>(x));
    q = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return {};
  }
  return out;
}
std::vector<std::pair<int, int>> parse_bh(const char* s) {
  std::vector<std::pair<int, int>> out;
  for (const char* q = s; *q;) {
    char* end = nullptr;
    const long b = std::strtol(q, &end, 10);
    if (end == q || *end != 'x' || b < 1) return {};
    q = end + 1;
    const long h = std::strtol(q, &end, 10);
    if (end == q || h < 1 || (*end != ',' && *end != '\0')) return {};
    out.push_back({static_cast<int>(b), static_cast<int>(h)});
    q = *end == ',' ? end + 1 : end;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  bool quick = false;
  double max_gib = 100, max_seconds = 12;
  std::vector<std::pair<int, int>> bh_arg;
  std::vector<int> t_arg, d_arg;
  gpu::FusedLayout layout = gpu::FusedLayout::automatic;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--bh") && i + 1 < argc) {
      if ((bh_arg = parse_bh(argv[++i])).empty()) {
        std::fprintf(stderr, "bench_gpu: --bh wants BxH[,BxH..] with positive integers, got '%s'\n", argv[i]);
        return 2;
      }
    } else if ((!std::strcmp(argv[i], "--t") || !std::strcmp(argv[i], "--d")) && i + 1 < argc) {
      auto& dst = argv[i][2] == 't' ? t_arg : d_arg;
      if ((dst = parse_ints(argv[i + 1])).empty()) {
        std::fprintf(stderr, "bench_gpu: %s wants a list of positive integers, got '%s'\n", argv[i], argv[i + 1]);
        return 2;
      }
      ++i;
    }
    else if (!std::strcmp(argv[i], "--layout") && i + 1 < argc) {
      const std::string l = argv[++i];
      if (l == "auto") layout = gpu::FusedLayout::automatic;
      else if (l == "few") layout = gpu::FusedLayout::few_heads;
      else if (l == "many") layout = gpu::FusedLayout::many_heads;
      else if (l == "cluster") layout = gpu::FusedLayout::cluster;
      else {
        std::fprintf(stderr, "bench_gpu: --layout wants auto, cluster, few or many, got '%s'\n", argv[i]);
        return 2;
      }
    }
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--max-gib") && i + 1 < argc) max_gib = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--max-seconds") && i + 1 < argc) max_seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "bench_gpu: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  try {
    int dev = 0;
    VLA_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    VLA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int clock_khz = 0;
    VLA_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    std::printf("device: %s, %d SMs, %.0f MHz max clock, %.1f GiB\n", prop.name, prop.multiProcessorCount, clock_khz / 1e3,
                prop.totalGlobalMem / 1073741824.0);

    const Kind kinds[] = {Kind::fp32, Kind::bf16, Kind::bf16_state};
    std::printf("\nkernel resources (threads/block, registers/thread, static smem, local bytes, blocks/SM; cluster: blocks per\n"
                "cluster, clusters per wave):\n");
    for (int D : {16, 32, 64, 128})
      for (Kind k : kinds)
        for (gpu::FusedLayout l : {gpu::FusedLayout::cluster, gpu::FusedLayout::few_heads, gpu::FusedLayout::many_heads}) {
          gpu::FusedParams p;
          p.B = p.H = 1;
          p.D = D;
          p.layout = l;
          const auto ki = gpu::fused_kernel_info(p, k);
          if (ki.layout != l) continue;  // one layout only (D = 128)
          std::printf("  D=%-3d %-10s %-10s %4d thr %3d reg %6d B smem %3d B local %d blocks/SM", D, impl::to_string(k).c_str(),
                      layout_name(l), ki.threads, ki.registers, ki.shared_bytes, ki.local_bytes, ki.blocks_per_sm);
          if (l == gpu::FusedLayout::cluster) std::printf(", %d blocks/cluster, %d clusters/wave", ki.cluster_blocks, ki.wave_clusters);
          std::printf("\n");
        }

    std::FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv_path && !csv) {
      std::fprintf(stderr, "bench_gpu: cannot write %s\n", csv_path);
      return 2;
    }
    if (csv) std::fprintf(csv, "B,H,T,D,kind,median_ms,us_per_step,tokens_per_s,gflops,reps,note,layout\n");

    std::vector<std::pair<int, int>> bhs = quick ? std::vector<std::pair<int, int>>{{1, 16}}
                                                 : std::vector<std::pair<int, int>>{{1, 16}, {1, 128}, {8, 128}};
    std::vector<int> Ts = quick ? std::vector<int>{4096} : std::vector<int>{4096, 16384, 65536};
    std::vector<int> Ds = quick ? std::vector<int>{64} : std::vector<int>{32, 64, 128};
    if (!bh_arg.empty()) bhs = bh_arg;
    if (!t_arg.empty()) Ts = t_arg;
    if (!d_arg.empty()) Ds = d_arg;
    std::map<std::tuple<int, int, int, int>, double> ms_at;  // (BH, T, D, kind) -> ms

    std::printf("\n| B | H | T | D | kernel | layout | median ms | us/step | tokens/s | GFLOP/s | reps |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (auto [B, H] : bhs)
      for (int D : Ds)
        for (int T : Ts)
          for (Kind kind : kinds) {
            const int BH = B * H;
            char note[160] = "";
            const double gib = bytes_needed(BH, T, D, kind) / 1073741824.0;
            double predicted = 0;
            for (int Tp : Ts)
              if (Tp < T && ms_at.count({BH, Tp, D, int(kind)})) predicted = ms_at[{BH, Tp, D, int(kind)}] * T / Tp / 1e3;
            if (gib > max_gib) std::snprintf(note, sizeof note, "skipped: %.0f GiB of buffers > %.0f", gib, max_gib);
            else if (predicted * 2 > max_seconds)
              std::snprintf(note, sizeof note, "skipped: predicted %.1f s per launch (from shorter T) x 2 > %.0f s budget", predicted, max_seconds);
            if (note[0]) {
              std::printf("| %d | %d | %d | %d | %s | - | - | - | - | - | - | %s\n", B, H, T, D, impl::to_string(kind).c_str(), note);
              if (csv) std::fprintf(csv, "%d,%d,%d,%d,%s,,,,,0,%s,\n", B, H, T, D, impl::to_string(kind).c_str(), note);
              continue;
            }
            Buffers buf;
            const std::size_t n = std::size_t(BH) * T * D, elem = kind == Kind::fp32 ? 4 : 2;
            for (int w = 0; w < 3; ++w) {
              VLA_CUDA_CHECK(cudaMalloc(&buf.in[w], n * elem));
              if (kind == Kind::fp32) fill_f32<<<1024, 256>>>(static_cast<float*>(buf.in[w]), n, 17u + w);
              else fill_bf16<<<1024, 256>>>(static_cast<std::uint16_t*>(buf.in[w]), n, 17u + w);
              VLA_CUDA_CHECK(cudaGetLastError());
            }
            VLA_CUDA_CHECK(cudaMalloc(&buf.o, n * elem));
            VLA_CUDA_CHECK(cudaMalloc(&buf.S, std::size_t(BH) * D * D * 4));
            VLA_CUDA_CHECK(cudaMalloc(&buf.A, std::size_t(BH) * D * D * 4));
            VLA_CUDA_CHECK(cudaMalloc(&buf.norm, std::size_t(BH) * T * 4));
            VLA_CUDA_CHECK(cudaDeviceSynchronize());
            Dims d{B, T, H, D, D};
            gpu::FusedParams p = gpu::make_params(preset_options(Preset::paper), d, false);
            p.q = buf.in[0];
            p.k = buf.in[1];
            p.v = buf.in[2];
            p.o = buf.o;
            p.S = buf.S;
            p.A = buf.A;
            p.state_norm = buf.norm;
            p.layout = layout;
            const char* lname = layout_name(gpu::fused_kernel_info(p, kind).layout);
            const int reps = predicted > 1.0 ? 3 : predicted > 0.2 ? 5 : 9;
            const double ms = bench::median_launch_ms([&] { gpu::launch_fused(p, kind, nullptr); }, reps);
            ms_at[{BH, T, D, int(kind)}] = ms;
            const double us_step = ms * 1e3 / T, tok = double(BH) * T / (ms / 1e3),
                         gflops = flops_per_head_step(D) * BH * T / (ms / 1e3) / 1e9;
            std::printf("| %d | %d | %d | %d | %s | %s | %.3f | %.4f | %.3g | %.0f | %d |\n", B, H, T, D, impl::to_string(kind).c_str(), lname,
                        ms, us_step, tok, gflops, reps);
            std::fflush(stdout);
            if (csv) std::fprintf(csv, "%d,%d,%d,%d,%s,%.6f,%.6f,%.6g,%.3f,%d,,%s\n", B, H, T, D, impl::to_string(kind).c_str(), ms, us_step,
                                  tok, gflops, reps, lname);
          }
    if (csv) std::fclose(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
