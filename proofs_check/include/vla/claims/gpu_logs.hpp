// The committed GPU benchmark report (reports/gpu/*.md, written by
// scripts/gpu_report.sh through bench/gpu/make_report.py on a GPU machine): its
// benchmark table times our fused kernels (bench/gpu/bench_gpu.cu), the PyTorch
// per-step loop and causal SDPA softmax attention (bench/gpu/torch_baselines.py).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vla::claims {

struct BenchRow {
  int B = 0, H = 0, T = 0, D = 0;
  std::optional<double> fp32_ms, bf16_ms;  // our fused kernels
  std::optional<double> loop_ms;           // PyTorch float32 loop, one step per iteration (extrapolated to T)
  std::optional<double> sdpa_ms;           // torch scaled_dot_product_attention, causal, bf16
};

// The rows of the fused-kernel benchmark table: the Markdown table whose header
// starts "| B | H | T | D | fp32 | bf16 |"; columns are found by their header
// ("fp32", "bf16", "torch loop (extrap.)", "SDPA bf16"); "-" and "skipped" cells are
// absent values. Throws std::invalid_argument naming a malformed row.
std::vector<BenchRow> parse_benchmark_table(const std::string& markdown);

struct GpuReport {
  std::string file;  // relative to the repository root
  std::string gpu;   // e.g. "NVIDIA H200" (the first line naming NVIDIA in the report)
  std::vector<BenchRow> rows;
};

// The newest reports/gpu/*.md under repo_root that holds the benchmark table:
// the latest "date (UTC): YYYY-MM-DD HH:MM:SS" it records (undated reports
// count as oldest), then the last in name order; nullopt when there is none.
std::optional<GpuReport> find_gpu_report(const std::string& repo_root);

// The sequence length at which softmax attention becomes slower than a kernel
// whose time is per_step_ms * T: softmax is interpolated log-log between its
// measured points (T, ms), and extrapolated with its last slope when it is still
// faster at the largest point (note says which). nullopt when softmax is slower
// already at its smallest point or its last slope is not above 1 (no crossing).
std::optional<double> crossover_length(double per_step_ms, std::vector<std::pair<double, double>> sdpa, std::string* note);

}  // namespace vla::claims
