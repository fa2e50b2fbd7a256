// Times the chunked kernel and the chunk-parallel scan form (chunked-scan-*,
// with its two stages timed apart: gate, state) next to the fused recurrent
// kernel in one run (CUDA events around each launch after a warm-up launch,
// median of the repeats, inputs uniform in [-1, 1], never all zero) and states
// each shape's floor: tensor-core FLOPs, bytes, and sequential chunk steps for
// the carried form; fp64 and fp32 operations and bytes for the scan form. SDPA
// (the softmax baseline) is timed by bench/gpu/sdpa_chunked_shapes.py in the
// same script run.
//   bench_chunked [--csv FILE] [--quick] [--scan-only] [--breakdown] | --profile | --fold-check | --steps-scaling | --focus [--chunk 32|64]
// (--breakdown: the gate stage's kernels and phases timed apart, then the rest;
// --profile: one launch of chunked-scan-bf16, C = 32, B = 1, H = 16, T = 16,384,
// untimed and unverified, for a profiler such as ncu; --fold-check: the state prep
// done by the steps kernel against the prep kernel, outputs bit for bit and timed;
// --steps-scaling: the steps kernel alone, both forms, against the number of heads;
// --focus: chunked-scan-bf16 at issue 8's target shapes, every kernel apart, at C = 32 or --chunk's.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../gpu/cuda/check.cuh"
#include "../../gpu/cuda/scan_gate.cuh"
#include "../../gpu/cuda/scan_state.cuh"
#include "bench_util.cuh"
#include "vla/core/bf16.hpp"
#include "vla/gpu/chunked_launch.hpp"
#include "vla/gpu/fused.hpp"
#include "vla/reference/scan_segment.hpp"

using namespace vla;

namespace {

using bench::fill_bf16;
using bench::fill_f32;
using bench::median_launch_ms;

struct Impl {
  std::string name;
  bool chunked, bf16;
  int C;  // chunked only
  impl::ChunkedKind kind = impl::ChunkedKind::fp32;  // chunked only
  gpu::ChunkedLayout layout = gpu::ChunkedLayout::plain;  // chunked only (pipelined: C = 32)
  bool scan = false;  // the scan form (kind scan_fp32 or scan_bf16)
};

// Multiply-adds of one chunk of one head: 15 products (docs/CHUNKED.md section 3
// plus the readout and Gram terms), each D x C x D, C x C x D or D x C x C.
double chunk_flops(int D, int C) {
  const double dcd = double(D) * C * D, ccd = double(C) * C * D;
  return 2.0 * (7 * dcd + 8 * ccd);  // P, AK, Rhs, SQ, SA, dA, dS | G, Y, ZY, T, AQ, RAQ, RR, AA
}

// Operations of one chunk of one head in the scan form, as the stages perform
// them (u = k^): stage 1 in fp64 multiply-adds (docs/CHUNKED.md 8.10: the Gram
// lower triangle; per segment of L = ref::scan_segment_chunks(C, B H, T) chunks one
// L D L^T of M_c and the solve of D + C columns, shared by its chunks; per chunk
// the product A_c K (C columns), G, L D L^T of I + G, Z, Y, the causal W and the
// carry of A), stage 2 in fp32 multiply-adds counted from the spec's operations
// (Ah^T K strict upper, K T^{-1} and V T^{-1}, S_c K~, the C rank-one updates,
// readouts and row norms).
double scan_gate_fma(int D, int C, long long BH, int T) {
  const double d = D, c = C, L = vla::ref::scan_segment_chunks(C, BH, T);
  return d * (d + 1) / 2 * c + (d * d * d / 6 + (d + c) * d * d) / L + c * d * d + c * (c + 1) / 2 * d + c * c * c / 6 +
         d * c * c / 2 + c * (c + 1) / 2 * d + d * c * (c + 1) / 2 + d * d * c;
}
double scan_state_fma(int D, int C) {
  const double d = D, c = C;
  return c * (c - 1) / 2 * d + 2 * d * c * (c - 1) / 2 + 4 * d * d * c;
}
// Bytes the scan form moves per chunk of one head beyond its inputs and outputs:
// the packed M buffer (one slot per segment of ref::scan_segment_chunks(C, B H, T)
// chunks) written by the Gram kernel, read and written by the scan, read by the
// gate kernel (doubles), and the features k^, phi(q), a^ written once and read
// once (floats).
double scan_buffer_bytes(int D, int C, long long BH, int T) {
  return 4.0 * D * (D + 1) / 2 * 8 / vla::ref::scan_segment_chunks(C, BH, T) + 2.0 * 3 * C * D * 4;
}

// The device I/O of one shape (D = 64): q, k, v and o of 4-byte elements (room
// for either input type), S, A, state_norm; p's pointers set by fill().
struct ShapeIO {
  int B, H, T, D = 64;
  std::size_t n;
  void *q, *k, *v, *o;
  float *S, *A, *norm;
  ShapeIO(int B_, int H_, int T_) : B(B_), H(H_), T(T_), n(std::size_t(B_) * T_ * H_ * 64) {
    for (void** x : {&q, &k, &v, &o}) VLA_CUDA_CHECK(cudaMalloc(x, n * 4));
    VLA_CUDA_CHECK(cudaMalloc(&S, std::size_t(B) * H * D * D * 4));
    VLA_CUDA_CHECK(cudaMalloc(&A, std::size_t(B) * H * D * D * 4));
    VLA_CUDA_CHECK(cudaMalloc(&norm, std::size_t(B) * T * H * 4));
  }
  ~ShapeIO() {
    for (void* x : {q, k, v, o, static_cast<void*>(S), static_cast<void*>(A), static_cast<void*>(norm)}) cudaFree(x);
  }
  // Inputs (uniform in [-1, 1), bf16 or float) and the parameters of the default options (paper preset).
  gpu::FusedParams fill(bool bf16) {
    std::uint32_t salt = 1;
    for (void* x : {q, k, v}) {
      if (bf16) fill_bf16<<<1024, 256>>>(static_cast<std::uint16_t*>(x), n, salt++);
      else fill_f32<<<1024, 256>>>(static_cast<float*>(x), n, salt++);
    }
    VLA_CUDA_CHECK(cudaGetLastError());
    gpu::FusedParams p = gpu::make_params(Options{}, Dims{B, T, H, D, D}, false);
    p.q = q, p.k = k, p.v = v, p.o = o, p.S = S, p.A = A, p.state_norm = norm;
    return p;
  }
};

// Where the scan form's gate stage spends its time: each of its kernels alone
// (the per-step form's, docs/CHUNKED.md 8.16; its steps kernel plain and with the
// look-ahead, 8.19), the whole stage in both and
// in the Woodbury form it replaced (scan_gate, 8.10-8.14), with that kernel's
// chunks stopped after each phase (GateParams probes: the segment's chunks still
// run in order); bf16 inputs, D = 64, after one full run has filled the buffers;
// median of 11 launches.
void gate_breakdown() {
  const int D = 64;
  struct Shape {
    int B, H, T;
  };
  std::printf("\nscan gate breakdown (ms; bf16, D = 64, u = k^):\n| B | H | T | C | scan_prep | scan_prefix | scan_seg_inverse |"
              " scan_steps (per step) | scan_steps (look-ahead) | scan_steps (look-ahead, float, one warp) | scan_final_A | scan_den |"
              " gate stage, per step | gate stage, look-ahead | gate stage, look-ahead in float | gate stage, Woodbury | scan_gate (Woodbury) |"
              " its phases cumulative: loads+(L D L^T(M), solves | A_c [U K]), G, L D L^T(I+G), Z, Y, W, a^ (all but the carry) |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Shape sh : {Shape{1, 16, 16384}, Shape{1, 16, 65536}, Shape{8, 128, 4096}})
    for (int C : {32, 64}) {
      ShapeIO io(sh.B, sh.H, sh.T);
      const gpu::FusedParams p = io.fill(true);
      {
        gpu::scan::Workspace ws(sh.B, sh.T, sh.H, D, C, false, p.ratio);
        gpu::scan::launch_scan(p, true, C, ws, nullptr);
        gpu::scan::GateParams g = gpu::scan::gate_params(p, true, C, ws);
        const cudaStream_t side = g.side;
        auto part = [&](unsigned kernels, int stop, ref::ScanGateForm form, bool steps_float = false, bool serial = false) {
          g.kernels = kernels;
          g.stop_after = stop;
          g.form = form;
          g.steps_float = steps_float;
          g.side = serial ? nullptr : side;  // serial: scan_den and scan_final_A after the steps, not beside them
          return median_launch_ms([&] { gpu::scan::launch_gate(g, nullptr); }, 11);
        };
        const auto ps = ref::ScanGateForm::per_step, la = ref::ScanGateForm::lookahead, wb = ref::ScanGateForm::woodbury;
        std::printf("| %d | %d | %d | %d | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g |", sh.B,
                    sh.H, sh.T, C, part(1, 0, ps), part(2, 0, ps), part(32, 0, ps), part(4, 0, ps), part(4, 0, la), part(4, 0, la, true),
                    part(8, 0, ps), part(16, 0, ps), part(0x3f, 0, ps), part(0x3f, 0, la), part(0x3f, 0, la, true), part(0x1f, 0, wb),
                    part(4, 0, wb));
        for (int stop = 1; stop <= 7; ++stop) std::printf(" %.4g", part(4, stop, wb));
        std::printf(" | serial side kernels: look-ahead %.4g, in float %.4g |\n", part(0x3f, 0, la, false, true), part(0x3f, 0, la, true, true));
      }
    }
}

// The scan form at issue 8's target shapes alone (chunked-scan-bf16, C = 32 or --chunk's, the
// build's segment length and kernels): the whole launch, with and without the norms,
// then every kernel of both stages timed apart, and the fused bf16 kernel where the
// target compares with it. Short enough to run once per experimental build. (Since
// the den split, docs/CHUNKED.md 8.34, the per-step gate has no side kernels: no
// scan_den, the final A from the steps; seg_inverse's time includes the n scan.)
void focus(int C) {
  const int D = 64;
  struct Shape {
    int B, H, T;
  };
  std::printf("\nscan focus (chunked-scan-bf16, C = %d, D = %d, segments of ref::scan_segment_steps(B H, T) steps; ms, medians of 21):\n"
              "| B | H | T | whole scan | whole, o and S only (no norms) | gate: prep | prefix | seg_inverse | steps | stage |"
              " state: prep | pass | readout | stage | fused bf16 | segment steps |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
              C, D);
  std::vector<std::string> pass_lines;  // the v6 pass alone in each of its built shapes, printed after the table
  for (const Shape sh : {Shape{1, 16, 16384}, Shape{1, 16, 65536}, Shape{8, 128, 4096}}) {
    ShapeIO io(sh.B, sh.H, sh.T);
    const gpu::FusedParams p = io.fill(true);
    gpu::scan::Workspace ws(sh.B, sh.T, sh.H, D, C, false, p.ratio);
    auto whole = [&] { gpu::scan::launch_scan(p, true, C, ws, nullptr); };
    // Warm-up, about half a second, so that the first column is not timed while the clocks ramp
    // up (the 2026-12-06 run's first column read 0.05-0.1 ms above the same launch timed later).
    for (int i = 0; i < std::max(3, 700 / sh.B / sh.H * 16384 / sh.T); ++i) whole();
    VLA_CUDA_CHECK(cudaDeviceSynchronize());
    const double ms = median_launch_ms(whole, 21);
    // The forward SDPA gives (o, and here the final S): a null state_norm skips the norms (scan_stages.cuh).
    gpu::FusedParams bare = p;
    bare.state_norm = nullptr;
    const double ms_bare = median_launch_ms([&] { gpu::scan::launch_scan(bare, true, C, ws, nullptr); }, 21);
    gpu::scan::GateParams g = gpu::scan::gate_params(p, true, C, ws);
    const gpu::scan::StateParams st = gpu::scan::state_params(p, true, C, ws);
    auto gate = [&](unsigned kernels) {
      g.kernels = kernels;
      return median_launch_ms([&] { gpu::scan::launch_gate(g, nullptr); }, 21);
    };
    const gpu::scan::StateConfig cfg = gpu::scan::state_config(sh.B, sh.H, D, C);
    auto state = [&](unsigned parts) {
      return median_launch_ms([&] { gpu::scan::launch_state_config(st, nullptr, cfg, parts); }, 21);
    };
    const double gp = gate(1), gx = gate(2), gi = gate(32), gs = gate(4), g_all = gate(0x3f);
    whole();  // the state's prep again (its pass overwrote Vt with R)
    const double sp = state(gpu::scan::kPrep), sx = state(gpu::scan::kPass), sr = state(gpu::scan::kReadout);
    const double s_all = state(gpu::scan::kPrep | gpu::scan::kPass | gpu::scan::kReadout);
    double fused = 0;
    // The fused bf16 kernel where issue 8 compares with it: T = 65,536 (the speed-up) and B H = 1,024 (throughput).
    if (sh.T == 65536 || sh.B * sh.H >= 1024) fused = median_launch_ms([&] { gpu::launch_fused(p, impl::Kind::bf16, nullptr); }, 3);
    std::printf("| %d | %d | %d | **%.4g** | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %d |\n", sh.B, sh.H,
                sh.T, ms, ms_bare, gp, gx, gi, gs, g_all, sp, sx, sr, s_all, fused, ref::scan_segment_steps(sh.B * sh.H, sh.T));
    // The v6 pass (state_config's at D = 64) in each of its built shapes, 8 or 16 rows a block (MT = 1, 2) and 4 or 8
    // warps: which one suits this C and shape (the launcher's choice was measured at C = 32).
    if (cfg.dmma != 0) {
      std::string line = "| B=" + std::to_string(sh.B) + " H=" + std::to_string(sh.H) + " T=" + std::to_string(sh.T) + " |";
      for (int mt : {1, 2})
        for (int nw : {4, 8}) {
          gpu::scan::StateConfig c2 = cfg;
          c2.dmma = mt;
          c2.dmma_warps = nw;
          whole();  // Vt again (the pass overwrites it with R)
          char cell[64];
          std::snprintf(cell, sizeof cell, " %.4g%s |", median_launch_ms([&] { gpu::scan::launch_state_config(st, nullptr, c2, gpu::scan::kPass); }, 11),
                        mt == cfg.dmma && nw == cfg.dmma_warps ? " (shipped)" : "");
          line += cell;
        }
      pass_lines.push_back(line);
    }
  }
  if (!pass_lines.empty()) {
    std::printf("\nthe v6 pass alone by block shape (C = %d; ms, medians of 11):\n| shape | 8 rows, 4 warps | 8 rows, 8 warps | 16 rows, 4 warps |"
                " 16 rows, 8 warps |\n|---|---|---|---|---|\n", C);
    for (const std::string& l : pass_lines) std::printf("%s\n", l.c_str());
  }
}

// What bounds the steps kernel (docs/CHUNKED.md 8.19): its time alone, both forms,
// as the heads (hence the blocks a SM: 32 segments a head at T = 16,384) grow; a
// lone block a SM gives the step's own latency, more blocks show how much of it
// the SM hides. Cycles per step = time x SM clock / steps a segment.
void steps_scaling(int clock_khz) {
  const int T = 16384, C = 32;
  std::printf("\nscan_steps alone against the number of heads (bf16, D = 64, u = k^, B = 1, T = %d, C = %d; blocks = 32 H):\n"
              "| H | blocks | plain ms | look-ahead ms | look-ahead in float (one warp) ms | plain cycles/step | look-ahead cycles/step |"
              " float cycles/step |\n|---|---|---|---|---|---|---|---|\n",
              T, C);
  for (int H : {1, 2, 4, 8, 12, 16, 24, 32}) {
    ShapeIO io(1, H, T);
    const gpu::FusedParams p = io.fill(true);
    gpu::scan::Workspace ws(1, T, H, 64, C, false, p.ratio);
    gpu::scan::launch_scan(p, true, C, ws, nullptr);
    gpu::scan::GateParams g = gpu::scan::gate_params(p, true, C, ws);
    g.kernels = 4u;
    double ms[3];
    int f = 0;
    for (auto form : {ref::ScanGateForm::per_step, ref::ScanGateForm::lookahead, ref::ScanGateForm::lookahead}) {
      g.form = form;
      g.steps_float = f == 2;
      ms[f++] = median_launch_ms([&] { gpu::scan::launch_gate(g, nullptr); }, 11);
    }
    const int steps = ref::scan_segment_chunks(C, H, T) * C;
    const int blocks = ((T + steps - 1) / steps) * H;
    std::printf("| %d | %d | %.4g | %.4g | %.4g | %.0f | %.0f | %.0f |\n", H, blocks, ms[0], ms[1], ms[2], ms[0] * clock_khz / steps,
                ms[1] * clock_khz / steps, ms[2] * clock_khz / steps);
  }
}

// The state prep folded into the steps kernel (docs/CHUNKED.md 8.18) against the
// two stages with the state stage's own prep kernel: every output bit for bit
// (o, S, ||S_t||, the gates, A) at a few shapes, then both timed in one process.
// Returns the number of shapes whose bits differ.
int fold_check() {
  const int C = 32;
  struct Shape {
    int B, H, T;
    bool bf16;
  };
  int differ = 0;
  std::printf("\nstate prep in the steps kernel (8.18) against the prep kernel (chunked-scan, C = 32, D = 64):\n");
  for (const Shape sh : {Shape{1, 3, 1000, true}, Shape{2, 2, 777, false}, Shape{1, 16, 4096, true}, Shape{1, 16, 16384, true},
                         Shape{1, 16, 16384, false}}) {
    ShapeIO io(sh.B, sh.H, sh.T);
    const gpu::FusedParams p = io.fill(sh.bf16);
    const gpu::scan::Workspace ws(sh.B, sh.T, sh.H, 64, C, false, p.ratio);
    const std::size_t n_o = io.n * (sh.bf16 ? 2 : 4), n_S = std::size_t(sh.B) * sh.H * 64 * 64, n_r = std::size_t(sh.B) * sh.T * sh.H;
    auto grab = [&] {
      VLA_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned char> out(n_o + 4 * (2 * n_S + n_r + io.n));
      unsigned char* at = out.data();
      VLA_CUDA_CHECK(cudaMemcpy(at, io.o, n_o, cudaMemcpyDeviceToHost));
      VLA_CUDA_CHECK(cudaMemcpy(at += n_o, io.S, 4 * n_S, cudaMemcpyDeviceToHost));
      VLA_CUDA_CHECK(cudaMemcpy(at += 4 * n_S, io.A, 4 * n_S, cudaMemcpyDeviceToHost));
      VLA_CUDA_CHECK(cudaMemcpy(at += 4 * n_S, io.norm, 4 * n_r, cudaMemcpyDeviceToHost));
      VLA_CUDA_CHECK(cudaMemcpy(at += 4 * n_r, ws.out.gate, 4 * io.n, cudaMemcpyDeviceToHost));
      return out;
    };
    auto folded = [&] {
      gpu::scan::launch_folded(gpu::scan::gate_params(p, sh.bf16, C, ws), gpu::scan::state_params(p, sh.bf16, C, ws), p.v, nullptr);
    };
    auto apart = [&] {
      gpu::scan::GateParams g = gpu::scan::gate_params(p, sh.bf16, C, ws);
      g.steps_float = false;  // the fold is built on the double steps kernel (launch_folded)
      gpu::scan::launch_gate(g, nullptr);
      gpu::scan::launch_state(gpu::scan::state_params(p, sh.bf16, C, ws), nullptr);
    };
    folded();
    const auto a = grab();
    apart();
    const auto b = grab();
    const bool same = a == b;
    differ += !same;
    std::printf("  B=%d H=%d T=%d %s: outputs %s", sh.B, sh.H, sh.T, sh.bf16 ? "bf16" : "fp32", same ? "bit for bit equal" : "DIFFER");
    if (sh.T >= 4096) std::printf("; folded %.4g ms, prep kernel %.4g ms", median_launch_ms(folded, 21), median_launch_ms(apart, 21));
    std::printf("\n");
  }
  return differ;
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  bool quick = false, scan_only = false, breakdown = false, profile = false, fold = false, scaling = false, focus_only = false;
  int focus_chunk = 32;
  bool chunk_given = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--scan-only")) scan_only = true;
    else if (!std::strcmp(argv[i], "--breakdown")) breakdown = true;
    else if (!std::strcmp(argv[i], "--profile")) profile = true;
    else if (!std::strcmp(argv[i], "--fold-check")) fold = true;
    else if (!std::strcmp(argv[i], "--steps-scaling")) scaling = true;
    else if (!std::strcmp(argv[i], "--focus")) focus_only = true;
    else if (!std::strcmp(argv[i], "--chunk") && i + 1 < argc) {
      focus_chunk = std::atoi(argv[++i]);
      chunk_given = true;
      if (focus_chunk != 32 && focus_chunk != 64) {
        std::fprintf(stderr, "bench_chunked: --chunk takes 32 or 64 (the scan form's chunk sizes), not '%s'\n", argv[i]);
        return 2;
      }
    }
    else {
      std::fprintf(stderr, "bench_chunked: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (chunk_given && !focus_only) {
    std::fprintf(stderr, "bench_chunked: --chunk applies to --focus only\n");
    return 2;
  }
  try {
    cudaDeviceProp prop{};
    VLA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("device: %s, %d SMs\n", prop.name, sms);
    if (fold) return fold_check() == 0 ? 0 : 1;
    if (focus_only) {
      focus(focus_chunk);
      return 0;
    }
    if (scaling) {
      int clock_khz = 0;
      VLA_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
      steps_scaling(clock_khz);
      return 0;
    }
    if (profile) {
      ShapeIO io(1, 16, 16384);
      const gpu::FusedParams p = io.fill(true);
      const gpu::scan::Workspace ws(1, 16384, 16, 64, 32, false, p.ratio);
      gpu::scan::launch_scan(p, true, 32, ws, nullptr);
      // Then the gate stage in the other per-step forms than the build's, so that a profiler sees
      // every steps kernel at this shape (plain and look-ahead, docs/CHUNKED.md 8.16, 8.19).
      for (auto form : {ref::ScanGateForm::per_step, ref::ScanGateForm::lookahead}) {
        gpu::scan::GateParams g = gpu::scan::gate_params(p, true, 32, ws);
        if (form == g.form && !g.steps_float) continue;
        g.form = form;
        g.steps_float = false;  // the double steps kernels (the build's bf16 launch may run the float one, 8.23)
        gpu::scan::launch_gate(g, nullptr);
      }
      VLA_CUDA_CHECK(cudaDeviceSynchronize());
      std::printf("profile: one launch_scan, chunked-scan-bf16 C=32 B=1 H=16 T=16384 D=64, and its gate stage with the other steps kernels\n");
      return 0;
    }
    std::printf("\nchunked kernel resources (threads, registers, dynamic smem, local bytes, blocks/SM):\n");
    for (impl::ChunkedKind kind : {impl::ChunkedKind::fp32, impl::ChunkedKind::bf16, impl::ChunkedKind::tf32})
      for (int C : {32, 64}) {
        const auto ki = gpu::chunked_kernel_info(kind, 64, C);
        std::printf("  D=64 C=%d %-13s %d thr %d reg %d B smem %d B local %d blocks/SM\n", C, impl::to_string(kind).c_str(),
                    ki.threads, ki.registers, ki.shared_bytes, ki.local_bytes, ki.blocks_per_sm);
        if (C == 32) {
          const auto kp = gpu::chunked_pipelined_info(kind, 64, C);
          std::printf("  D=64 C=%d %-13s pipelined: %d thr %d reg %d B smem %d B local %d blocks/SM\n", C, impl::to_string(kind).c_str(),
                      kp.threads, kp.registers, kp.shared_bytes, kp.local_bytes, kp.blocks_per_sm);
        }
      }
    if (breakdown) gate_breakdown();
    std::FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "impl,B,H,T,D,C,median_ms,tokens_per_s,us_per_chunk,reps,gate_ms,state_ms\n");

    const int D = 64;
    struct Shape {
      int B, H, T;
    };
    const std::vector<Shape> shapes = quick ? std::vector<Shape>{{1, 16, 4096}}
                                            : std::vector<Shape>{{1, 16, 4096}, {1, 16, 16384}, {1, 16, 65536}, {8, 128, 4096}};
    using CK = impl::ChunkedKind;
    // C = 32 in both schedules (v7 pipelined, v6 plain); C = 64 has the plain one only.
    constexpr auto PL = gpu::ChunkedLayout::pipelined;
    constexpr auto PN = gpu::ChunkedLayout::plain;
    std::vector<Impl> impls{{"chunked-scan-bf16 C=32", true, true, 32, CK::scan_bf16, PN, true},
                            {"chunked-scan-bf16 C=64", true, true, 64, CK::scan_bf16, PN, true},
                            {"chunked-scan-fp32 C=32", true, false, 32, CK::scan_fp32, PN, true},
                            {"chunked-scan-fp32 C=64", true, false, 64, CK::scan_fp32, PN, true},
                            {"fused bf16", false, true, 0},
                            {"fused fp32", false, false, 0}};
    const std::vector<Impl> carried{{"chunked-bf16 C=64", true, true, 64, CK::bf16},
                                  {"chunked-bf16 C=32 v6", true, true, 32, CK::bf16},
                                  {"chunked-bf16 C=32 v7 pipelined", true, true, 32, CK::bf16, PL},
                                  {"chunked-tf32 C=64", true, false, 64, CK::tf32},
                                  {"chunked-tf32 C=32 v6", true, false, 32, CK::tf32},
                                  {"chunked-tf32 C=32 v7 pipelined", true, false, 32, CK::tf32, PL},
                                  {"chunked-fp32 C=64", true, false, 64, CK::fp32},
                                  {"chunked-fp32 C=32 v6", true, false, 32, CK::fp32},
                                  {"chunked-fp32 C=32 v7 pipelined", true, false, 32, CK::fp32, PL}};
    if (!scan_only) impls.insert(impls.end() - 2, carried.begin(), carried.end());
    std::printf("\n| B | H | T | D | implementation | median ms | tokens/s | us per chunk step | reps | gate ms | state ms |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<std::string> floors;
    for (const Shape& sh : shapes) {
      ShapeIO io(sh.B, sh.H, sh.T);
      const std::size_t n = io.n;
      for (const Impl& im : impls) {
        const gpu::FusedParams p = io.fill(im.bf16);
        gpu::set_chunked_layout(im.layout);
        // The scan form: its workspace allocated once per shape, outside the timing.
        std::unique_ptr<gpu::scan::Workspace> ws;
        if (im.scan) ws = std::make_unique<gpu::scan::Workspace>(sh.B, sh.T, sh.H, D, im.C, false, p.ratio);
        auto launch = [&] {
          if (im.scan) gpu::scan::launch_scan(p, im.bf16, im.C, *ws, nullptr);
          else if (im.chunked) gpu::launch_chunked(p, im.kind, im.C, nullptr);
          else gpu::launch_fused(p, im.bf16 ? impl::Kind::bf16 : impl::Kind::fp32, nullptr);
        };
        // Long launches get fewer repeats (the fused kernel at T = 65536 runs ~0.14 s).
        const double probe = median_launch_ms(launch, 1);
        const int reps = probe > 100 ? 3 : probe > 10 ? 7 : 21;
        const double ms = median_launch_ms(launch, reps);
        double gate_ms = 0, state_ms = 0;
        if (im.scan) {
          gate_ms = median_launch_ms([&] { gpu::scan::launch_gate(gpu::scan::gate_params(p, im.bf16, im.C, *ws), nullptr); }, reps);
          state_ms = median_launch_ms([&] { gpu::scan::launch_state(gpu::scan::state_params(p, im.bf16, im.C, *ws), nullptr); }, reps);
        }
        const double tok = double(sh.B) * sh.H * sh.T / (ms * 1e-3);
        const int C = im.chunked ? im.C : 1;
        // Blocks per SM: the fused kernels and a chunked launch of one wave run one;
        // several waves of the chunked kernel as many as its plan allows.
        const int bps = im.chunked && !im.scan && sh.B * sh.H > sms
                            ? (im.layout == PL ? gpu::chunked_pipelined_info(im.kind, D, im.C) : gpu::chunked_kernel_info(im.kind, D, im.C))
                                  .blocks_per_sm
                            : 1;
        const double waves = std::ceil(double(sh.B) * sh.H / (double(sms) * bps));
        // The scan form's chunks run in parallel: no sequential chunk step (reported as 0).
        const double per_step_us = im.scan ? 0.0 : ms * 1e3 / (waves * std::ceil(double(sh.T) / C));
        std::printf("| %d | %d | %d | %d | %s | %.4g | %.3g | %.3g | %d | %.4g | %.4g |\n", sh.B, sh.H, sh.T, D, im.name.c_str(), ms, tok,
                    per_step_us, reps, gate_ms, state_ms);
        if (csv)
          std::fprintf(csv, "%s,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%d,%.6g,%.6g\n", im.name.c_str(), sh.B, sh.H, sh.T, D, C, ms, tok, per_step_us, reps,
                       gate_ms, state_ms);
        if (im.scan) {
          // Floor of the scan form: its fp64 multiply-adds at the datasheet's FP64 rate without tensor cores
          // (33.5 TFLOP/s; 67 with DMMA), its fp32 ones at 67 TFLOP/s (both leads, H200.md), and the bytes of its
          // inputs, outputs and buffers between kernels at the measured 4.3 TB/s (KINDS.md).
          const double chunks = std::ceil(double(sh.T) / im.C) * sh.B * sh.H;
          const double f64 = 2 * scan_gate_fma(D, im.C, sh.B * sh.H, sh.T) * chunks, f32 = 2 * scan_state_fma(D, im.C) * chunks;
          const double io = double(n) * (im.bf16 ? 2 : 4) * 4 + double(sh.B) * sh.T * sh.H * 4 * 2;
          const double bytes = io + scan_buffer_bytes(D, im.C, sh.B * sh.H, sh.T) * chunks;
          const double t64 = f64 / 33.5e12 * 1e3, t64tc = f64 / 67e12 * 1e3, t32 = f32 / 67e12 * 1e3, tb = bytes / 4.3e12 * 1e3,
                       tio = io / 4.3e12 * 1e3;
          const double fl = std::max({t64, t32, tb});
          char line[640];
          std::snprintf(line, sizeof line,
                        "B=%d H=%d T=%d %s: gate %.3g GFLOP fp64 -> %.3g ms at 33.5 TFLOP/s (%.3g with DMMA at 67); state %.3g GFLOP fp32 "
                        "-> %.3g ms at 67 TFLOP/s; %.3g MB (%.3g MB of it inputs/outputs) -> %.3g ms at 4.3 TB/s (%.3g ms for the I/O alone); "
                        "floor %.3g ms (the largest), achieved %.1f%% of it (gate %.4g ms, state %.4g ms measured)",
                        sh.B, sh.H, sh.T, im.name.c_str(), f64 / 1e9, t64, t64tc, f32 / 1e9, t32, bytes / 1e6, io / 1e6, tb, tio, fl,
                        100.0 * fl / ms, gate_ms, state_ms);
          floors.push_back(line);
        } else if (im.chunked && im.bf16) {
          // Floor: tensor-core FLOPs at the measured dense bf16 rate (790 TFLOP/s, KINDS.md), the same
          // on the SMs one block per head can use, bytes (q, k, v in, o out, bf16) at 4.3 TB/s.
          const double fl = chunk_flops(D, C) * std::ceil(double(sh.T) / C) * sh.B * sh.H;
          const double used = std::min<double>(sms, double(sh.B) * sh.H);
          const double t_fl = fl / 790e12 * 1e3, t_fl_used = t_fl * sms / used;
          const double bytes = 4.0 * n * 2, t_b = bytes / 4.3e12 * 1e3;
          char line[512];
          std::snprintf(line, sizeof line,
                        "B=%d H=%d T=%d %s: %.3g GFLOP on tensor cores -> %.3g ms at 790 TFLOP/s (%.3g ms on the %g SMs "
                        "one block per head uses); %.3g MB -> %.3g ms at 4.3 TB/s; %d sequential chunk steps per head "
                        "(%.3g us each measured); achieved %.1f%% of the FLOP floor on the used SMs",
                        sh.B, sh.H, sh.T, im.name.c_str(), fl / 1e9, t_fl, t_fl_used, used, bytes / 1e6, t_b, int(std::ceil(double(sh.T) / C)),
                        per_step_us, 100.0 * std::max(t_fl_used, t_b) / ms);
          floors.push_back(line);
        }
      }
    }
    std::printf("\nfloors:\n");
    for (const auto& f : floors) std::printf("  %s\n", f.c_str());
    if (csv) std::fclose(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_chunked: %s\n", e.what());
    return 1;
  }
  return 0;
}
