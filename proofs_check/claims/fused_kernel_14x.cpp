// fused-kernel-14x [2.4]: "the fused single-launch kernel (all T steps in one
// launch) is 14x faster than a sequential Python loop".
//
// Settled only by a GPU measurement. The check reads the newest committed logs of
// scripts/gpu_report.sh (reports/gpu/: bench.csv for our fused kernels,
// torch.csv for the PyTorch per-step loop) and compares, at every configuration
// measured by both, the loop's time with the fused float32 kernel's (like for
// like; bf16 is reported too). "14x faster" is read as "at least about 14x":
// a configuration agrees when the speed-up rounds to 14 or more (>= 13.5).
#include <map>
#include <sstream>

#include "common.hpp"
#include "vla/claims/gpu_logs.hpp"

namespace vla::claims {
namespace {

std::string key(const CsvRow& r) { return r.at("B") + "," + r.at("H") + "," + r.at("T") + "," + r.at("D"); }

std::string gpu_line(const std::string& env) {
  std::istringstream in(env);
  std::string line;
  while (std::getline(in, line))
    if (line.find("NVIDIA") != std::string::npos || line.find("GPU") != std::string::npos) return line;
  return "(env.txt names no GPU)";
}

void run(const RunContext& ctx, ClaimResult& r) {
  const auto logs = find_gpu_logs(ctx.repo_root);
  const std::string settle = "run scripts/gpu_report.sh on a machine with a CUDA GPU, nvcc and PyTorch, and commit its "
                             "logs (bench.csv, torch.csv, env.txt) under reports/gpu/";
  r.verdict = Verdict::inconclusive;
  if (!logs || logs->torch.empty()) {
    r.summary = "no GPU benchmark with the Python-loop baseline is committed";
    r.conditions = {"What would settle it: " + settle + "."};
    return;
  }
  std::map<std::string, double> loop;
  for (const auto& t : logs->torch)
    if (t.at("baseline") == "torch_loop_fp32" && !t.at("median_ms").empty()) loop[key(t)] = std::stod(t.at("median_ms"));
  Json rows = Json::array();
  std::size_t agree = 0, total = 0;
  double lo = 1e300, hi = 0;
  for (const auto& b : logs->bench) {
    if (b.at("median_ms").empty() || !loop.count(key(b))) continue;
    const std::string kind = b.at("kind");
    if (kind != "fp32" && kind != "bf16") continue;
    const double speedup = loop[key(b)] / std::stod(b.at("median_ms"));
    rows.push_back({{"B", b.at("B")}, {"H", b.at("H")}, {"T", b.at("T")}, {"D", b.at("D")}, {"kernel", kind},
                    {"fused ms", std::stod(b.at("median_ms"))}, {"PyTorch loop ms", loop[key(b)]}, {"speed-up", speedup}});
    if (kind != "fp32") continue;
    ++total;
    agree += speedup >= 13.5;
    lo = std::min(lo, speedup);
    hi = std::max(hi, speedup);
  }
  r.evidence["logs"] = logs->dir;
  r.evidence["GPU"] = gpu_line(logs->env);
  r.evidence["per configuration"] = rows;
  if (total == 0) {
    r.summary = "the committed logs have no configuration measured by both the fused kernel and the loop";
    r.conditions = {"What would settle it: " + settle + "."};
    return;
  }
  r.verdict = decide_sweep(agree, total);
  r.summary = "fused float32 kernel vs PyTorch per-step loop: " + sci(lo, 3) + "x .. " + sci(hi, 3) + "x (" +
              std::to_string(agree) + " of " + std::to_string(total) + " configurations at least 14x)";
  r.conditions = {"Measured on " + gpu_line(logs->env) + " (" + logs->dir + "); our CUDA kernel, not the paper's Triton one.",
                  "The loop baseline is PyTorch float32, one step per iteration, timed on a short run and extrapolated per "
                  "step to T (bench/gpu/torch_baselines.py).",
                  "Timings depend on the GPU and on the loop's implementation; the factor is not a property of the maths."};
}

}  // namespace

ClaimDef claim_fused_kernel_14x() {
  return {"fused-kernel-14x", "2.4",
          "The fused kernel runs all T steps in one GPU launch and is 14x faster than a sequential Python implementation.",
          run};
}

}  // namespace vla::claims
