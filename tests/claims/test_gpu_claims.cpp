// The two GPU claims read committed benchmark logs: planted logs whose answer
// is known (a 20x and a 5x loop; a softmax crossing at 43k and at 500 tokens),
// and no logs at all.
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
    root = fs::temp_directory_path() / ("vla_claims_gpu_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(root / "reports" / "gpu" / "2026-01-01");
  }
  ~TempRepo() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(root / "reports" / "gpu" / "2026-01-01" / name) << text;
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

const char* kBenchHeader = "B,H,T,D,kind,median_ms,us_per_step,tokens_per_s,gflops,reps,note\n";
const char* kTorchHeader = "baseline,B,H,T,D,median_ms,ms_per_step,reps,note\n";

TEST(GpuLogs, CsvParsing) {
  const auto rows = parse_csv("a,b,c\n1,\"x, y\",\n2,\"say \"\"hi\"\"\",z\r\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("b"), "x, y");
  EXPECT_EQ(rows[0].at("c"), "");
  EXPECT_EQ(rows[1].at("b"), "say \"hi\"");
  EXPECT_THROW(parse_csv("a,b\n1,2,3\n"), std::invalid_argument);
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

TEST(GpuClaims, NoLogsIsInconclusive) {
  TempRepo repo;
  fs::remove_all(repo.root / "reports");
  ClaimResult r;
  EXPECT_EQ(run_claim("fused-kernel-14x", repo.root, &r), Verdict::inconclusive);
  EXPECT_NE(r.conditions.at(0).find("gpu_report.sh"), std::string::npos);
  EXPECT_EQ(run_claim("softmax-crossover-43k", repo.root), Verdict::inconclusive);
}

TEST(GpuClaims, FusedSpeedupPlantedBothWays) {
  TempRepo fast, slow;
  for (auto* r : {&fast, &slow}) r->write("bench.csv", std::string(kBenchHeader) + "1,16,4096,64,fp32,1.0,0.24,1,1,5,\n");
  fast.write("torch.csv", std::string(kTorchHeader) + "torch_loop_fp32,1,16,4096,64,20.0,0.005,3,\n");
  slow.write("torch.csv", std::string(kTorchHeader) + "torch_loop_fp32,1,16,4096,64,5.0,0.001,3,\n");
  EXPECT_EQ(run_claim("fused-kernel-14x", fast.root), Verdict::holds);
  EXPECT_EQ(run_claim("fused-kernel-14x", slow.root), Verdict::refuted);
}

TEST(GpuClaims, CrossoverPlantedBothWays) {
  // Our kernel: 0.01 ms per step (measured at T = 65536). Softmax c T^2 with the
  // crossing placed at 43k (agrees) or at 500 tokens (does not).
  for (double at : {43000.0, 500.0}) {
    TempRepo repo;
    repo.write("bench.csv", std::string(kBenchHeader) + "1,16,65536,64,bf16,655.36,10,1,1,5,\n");
    std::string torch = kTorchHeader;
    const double c = 0.01 / at;
    for (double T : {256.0, 1024.0, 4096.0, 16384.0, 65536.0})
      torch += "sdpa_causal_bf16,1,16," + std::to_string(int(T)) + ",64," + std::to_string(c * T * T) + ",0,3,\n";
    repo.write("torch.csv", torch);
    EXPECT_EQ(run_claim("softmax-crossover-43k", repo.root), at == 43000.0 ? Verdict::holds : Verdict::refuted) << at;
  }
}

}  // namespace
}  // namespace vla::claims
