// The committed GPU benchmark logs (reports/gpu/, written by
// scripts/gpu_report.sh on a GPU machine): bench.csv (our fused kernels, from
// bench/gpu/bench_gpu.cu), torch.csv (the PyTorch per-step loop and SDPA
// softmax baselines, bench/gpu/torch_baselines.py) and env.txt.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vla::claims {

using CsvRow = std::map<std::string, std::string>;

// RFC 4180-style: comma-separated, optional double quotes ("" inside quotes).
// The first line names the columns. Throws std::invalid_argument on a row whose
// field count differs from the header's.
std::vector<CsvRow> parse_csv(const std::string& text);

struct GpuLogs {
  std::string dir;                 // the folder the logs were read from
  std::string env;                 // env.txt (GPU, driver, versions)
  std::vector<CsvRow> bench, torch;
};

// The newest (last in name order) folder under <repo_root>/reports/gpu holding
// bench.csv; nullopt when there is none.
std::optional<GpuLogs> find_gpu_logs(const std::string& repo_root);

// The sequence length at which softmax attention (SDPA) becomes slower than a
// kernel whose time is per_step_ms * T: SDPA is interpolated log-log between
// its measured points (T, ms), and extrapolated with its last slope when it is
// still faster at the largest point (note says so). nullopt when SDPA is slower
// already at its smallest point or its last slope is not above 1 (no crossing).
std::optional<double> crossover_length(double per_step_ms, std::vector<std::pair<double, double>> sdpa, std::string* note);

}  // namespace vla::claims
