// The two GPU claims read the committed GPU report: planted reports whose answer
// is known (a 20x and a 5x loop; a softmax crossing at 43k and at 500 tokens),
// no report at all, and the committed one.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "vla/claims/claim.hpp"
#include "vla/claims/gpu_logs.hpp"

namespace vla::claims {
namespace {

namespace fs = std::filesystem;

struct TempRepo {
  fs::path root;
  TempRepo() {
    static int n = 0;
    root = fs::temp_directory_path() / ("vla_claims_gpu_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(root / "reports" / "gpu");
  }
  ~TempRepo() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void report(const std::string& rows, const std::string& name = "2026-01-01-test.md", const std::string& date = "") const {
    std::ofstream(root / "reports" / "gpu" / name)
        << "# report\n" << (date.empty() ? "" : "date (UTC): " + date + "\n") << "NVIDIA Test GPU, 1.0, 1 MiB\n\n## Benchmark\n\n"
        << "| B | H | T | D | fp32 | bf16 | bf16-state | us/step (bf16) | torch loop (extrap.) | loop / bf16 | SDPA bf16 | SDPA / bf16 |\n"
        << "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        << rows << "\nafter the table\n";
  }
};

Verdict run_claim(const std::string& id, const fs::path& root, ClaimResult* out = nullptr) {
  RunContext ctx;
  ctx.repo_root = root.string();
  ClaimResult r;
  find_claim(id).run(ctx, r);
  if (out) *out = r;
  return r.verdict;
}

std::string row(int B, int H, int T, int D, const std::string& fp32, const std::string& loop, const std::string& sdpa) {
  return "| " + std::to_string(B) + " | " + std::to_string(H) + " | " + std::to_string(T) + " | " + std::to_string(D) + " | " +
         fp32 + " | " + fp32 + " | - | - | " + loop + " | - | " + sdpa + " | - |\n";
}

TEST(GpuLogs, TableParsing) {
  const auto rows = parse_benchmark_table(
      "text\n| B | H | T | D | fp32 | bf16 | bf16-state | us/step (bf16) | torch loop (extrap.) | loop / bf16 | SDPA bf16 | SDPA / bf16 |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
      "| 1 | 16 | 4096 | 64 | 8.625 | 8.090 | 10.143 | 1.975 | 1887.1 | 233x | 0.131 | 0.02x |\n"
      "| 8 | 128 | 65536 | 128 | skipped | 1879.415 | 2930.077 | 28.678 | 25509.9 | 14x | 1885.246 | 1.00x |\n"
      "| 1 | 16 | 43008 | 64 | - | - | - | - | - | - | 8.209 | - |\n\nSkipped: ...\n| B | H | T | D | kernel |\n");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].T, 4096);
  EXPECT_DOUBLE_EQ(*rows[0].fp32_ms, 8.625);
  EXPECT_DOUBLE_EQ(*rows[0].loop_ms, 1887.1);
  EXPECT_DOUBLE_EQ(*rows[0].sdpa_ms, 0.131);
  EXPECT_FALSE(rows[1].fp32_ms);
  EXPECT_DOUBLE_EQ(*rows[1].bf16_ms, 1879.415);
  EXPECT_FALSE(rows[2].loop_ms);
  EXPECT_THROW(parse_benchmark_table("| B | H | T | D | fp32 | bf16 |\n|---|\n| 1 | 2 | x | 4 | 5 | 6 |\n"), std::invalid_argument);
  EXPECT_THROW(parse_benchmark_table("| B | H | T | D | fp32 | bf16 |\n| 1 | 2 | 3 |\n"), std::invalid_argument);
}

TEST(GpuLogs, CrossoverOfAPlantedQuadraticSoftmax) {
  // Softmax m(T) = c T^2, ours p T: they cross at T = p / c.
  const double p = 0.01, c = p / 43000.0;
  std::vector<std::pair<double, double>> sdpa;
  for (double T : {4096.0, 16384.0, 65536.0}) sdpa.push_back({T, c * T * T});
  std::string note;
  const auto x = crossover_length(p, sdpa, &note);
  ASSERT_TRUE(x);
  EXPECT_NEAR(*x, 43000.0, 1e-6 * 43000.0);
  // Softmax still faster at every point: extrapolated with its last slope.
  sdpa.pop_back();
  const auto y = crossover_length(p, sdpa, &note);
  ASSERT_TRUE(y);
  EXPECT_NEAR(*y, 43000.0, 1e-6 * 43000.0);
  EXPECT_NE(note.find("extrapolated"), std::string::npos);
  // Softmax slower from the start: no crossing to report.
  EXPECT_FALSE(crossover_length(1e-9, sdpa, &note));
}

// A later kernel's report may carry a suffix that sorts before an earlier run's
// plain name: the recorded run date decides, undated reports count as oldest.
TEST(GpuLogs, TheNewestReportIsTheLatestRecordedRun) {
  TempRepo repo;
  repo.report(row(1, 16, 4096, 64, "1.0", "20.0", "-"), "2026-12-01-h200.md", "2026-12-01 05:58:17");
  repo.report(row(1, 16, 4096, 64, "2.0", "20.0", "-"), "2026-12-01-h200-v5.md", "2026-12-01 09:10:00");
  repo.report(row(1, 16, 4096, 64, "3.0", "20.0", "-"), "2026-12-02-undated.md");
  auto rep = find_gpu_report(repo.root.string());
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->file, "reports/gpu/2026-12-01-h200-v5.md");
  ASSERT_EQ(rep->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rep->rows[0].fp32_ms, 2.0);
  // Same date: name order decides.
  repo.report(row(1, 16, 4096, 64, "4.0", "20.0", "-"), "2026-12-01-h200-v6.md", "2026-12-01 09:10:00");
  rep = find_gpu_report(repo.root.string());
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->file, "reports/gpu/2026-12-01-h200-v6.md");
}

TEST(GpuClaims, NoReportIsInconclusive) {
  TempRepo repo;
  ClaimResult r;
  EXPECT_EQ(run_claim("fused-kernel-14x", repo.root, &r), Verdict::inconclusive);
  EXPECT_NE(r.conditions.at(0).find("gpu_report.sh"), std::string::npos);
  EXPECT_EQ(run_claim("softmax-crossover-43k", repo.root), Verdict::inconclusive);
}

TEST(GpuClaims, FusedSpeedupPlantedBothWays) {
  TempRepo fast, slow;
  fast.report(row(1, 16, 4096, 64, "1.0", "20.0", "-"));
  slow.report(row(1, 16, 4096, 64, "1.0", "5.0", "-"));
  EXPECT_EQ(run_claim("fused-kernel-14x", fast.root), Verdict::holds);
  EXPECT_EQ(run_claim("fused-kernel-14x", slow.root), Verdict::refuted);
}

TEST(GpuClaims, CrossoverPlantedBothWays) {
  // Our kernel: 0.01 ms per step. Softmax c T^2 with the crossing placed at 43k
  // (agrees) or at 500 tokens (does not).
  for (double at : {43000.0, 500.0}) {
    TempRepo repo;
    std::string rows;
    const double c = 0.01 / at;
    for (int T : {256, 1024, 4096, 16384, 65536}) {
      char sd[64];
      std::snprintf(sd, sizeof sd, "%.9g", c * T * T);
      rows += row(1, 16, T, 64, T == 65536 ? "655.36" : "-", "-", sd);
    }
    repo.report(rows);
    EXPECT_EQ(run_claim("softmax-crossover-43k", repo.root), at == 43000.0 ? Verdict::holds : Verdict::refuted) << at;
  }
}

TEST(GpuClaims, TheCommittedReportIsRead) {
  // The source tree carries GPU reports with the benchmark table (reports/gpu/, committed), so the claim is settled
  // from the newest of them: a broken reader or parser fails here rather than leaving the claim inconclusive.
  RunContext ctx;  // repo_root: the source tree
  const auto rep = find_gpu_report(ctx.root());
  ASSERT_TRUE(rep.has_value()) << "no report with a benchmark table under " << ctx.root() << "/reports/gpu";
  EXPECT_FALSE(rep->rows.empty());
  EXPECT_NE(rep->gpu.find("NVIDIA"), std::string::npos) << rep->gpu;
  ClaimResult r;
  find_claim("fused-kernel-14x").run(ctx, r);
  ASSERT_TRUE(r.evidence.contains("report")) << r.evidence.dump();
  EXPECT_NE(r.verdict, Verdict::inconclusive);
  EXPECT_FALSE(r.evidence["per configuration"].empty());
}

}  // namespace
}  // namespace vla::claims
