// `vla bench` end to end: the timings it reports are consistent with each other
// and with the stream, bad requests are refused before any timing with nothing
// written, and existing files are kept without --force.
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_vla.hpp"
#include "streams.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::cli::test {
namespace {

class Bench : public CliTest {
 protected:
  // Short measurements: these tests check what is reported, not the speed.
  static constexpr const char* kQuick = " --repetitions 2 --min-time 0.01";
  void expect_bad(const std::string& args, const std::string& piece) {
    const std::size_t before = entries();
    const Result r = run_vla("bench " + args + " --json '" + path("b.json") + "' --md '" + path("b.md") + "'");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(piece), std::string::npos) << "expected '" << piece << "' in:\n" << r.output;
    EXPECT_EQ(entries(), before) << "a report was written for a refused request";
  }
  nlohmann::json read_json(const std::string& name) {
    std::ifstream f(path(name));
    return nlohmann::json::parse(f);
  }
};

TEST_F(Bench, ReportsEveryImplementationInOrderWithConsistentTimes) {
  const Result r = run_vla("bench --shape 2,40,3,16 --impl reference-double,fp32,chunked-scan-fp32 --chunk 32 --device cpu" +
                           std::string(kQuick) + " --json '" + path("b.json") + "' --md '" + path("b.md") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json j = read_json("b.json");
  EXPECT_EQ(j["command"], "bench");
  EXPECT_EQ(j["dims"]["B"], 2);
  EXPECT_EQ(j["dims"]["T"], 40);
  EXPECT_EQ(j["dims"]["H"], 3);
  EXPECT_EQ(j["dims"]["Dk"], 16);
  EXPECT_EQ(j["plan"]["repetitions"], 2);
  const auto& res = j["results"];
  ASSERT_EQ(res.size(), 3u);
  const char* order[] = {"reference-double", "fp32", "chunked-scan-fp32"};
  const double first = res[0]["median_s"].get<double>();
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& x = res[i];
    EXPECT_EQ(x["impl"], order[i]);
    EXPECT_EQ(x["device"], "cpu");
    ASSERT_EQ(x["seconds"].size(), 2u);
    const double med = x["median_s"], lo = x["min_s"], hi = x["max_s"];
    EXPECT_GT(lo, 0.0);
    EXPECT_LE(lo, med);
    EXPECT_LE(med, hi);
    EXPECT_GE(x["calls"].get<long long>(), 2);
    EXPECT_NEAR(x["us_per_step"].get<double>(), med / 40 * 1e6, 1e-9 * med / 40 * 1e6);
    EXPECT_NEAR(x["head_steps_per_s"].get<double>(), 2.0 * 3 * 40 / med, 1e-9 * 2.0 * 3 * 40 / med);
    EXPECT_NEAR(x["speedup_vs_first"].get<double>(), first / med, 1e-12 * first / med);
  }
  EXPECT_EQ(res[2]["chunk"], 32);
  std::ifstream md(path("b.md"));
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const char* impl : {"| reference-double | cpu |", "| fp32 | cpu |", "| chunked-scan-fp32 (C=32) | cpu |"})
    EXPECT_NE(text.find(impl), std::string::npos) << impl << " missing from:\n" << text;
}

TEST_F(Bench, TimesAStreamFromAFile) {
  io::save_stream(path("in.safetensors"), random_stream(Dims{1, 24, 2, 32, 32}, true, 7), io::DType::F32, {}, false);
  const Result r = run_vla("bench --input '" + path("in.safetensors") + "' --impl bf16 --device cpu" + std::string(kQuick) + " --json '" +
                           path("b.json") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json j = read_json("b.json");
  EXPECT_EQ(j["input"], path("in.safetensors"));
  EXPECT_EQ(j["dims"]["T"], 24);
  EXPECT_EQ(j["results"][0]["impl"], "bf16");
}

// --check judges each kernel's output with the gate's error model: a planted
// defect (one of the gate's mutants, timed like any implementation) fails it, and
// the run still writes every result before it exits 1.
TEST_F(Bench, CheckJudgesEachKernelAndExitsOneOnAFailure) {
  const Result r = run_vla("bench --check --shape 1,48,2,16 --impl fp32,fp32/fma-off,mutant:exp-taylor,reference-double" +
                           std::string(kQuick) + " --json '" + path("b.json") + "' --md '" + path("b.md") + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("failed the error model"), std::string::npos) << r.output;
  const nlohmann::json j = read_json("b.json");
  const auto& res = j["results"];
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[0]["error_model"]["pass"], true);
  EXPECT_EQ(res[0]["error_model"]["policy"], "fp32");
  EXPECT_LE(res[0]["error_model"]["worst_error_over_tolerance"].get<double>(), 1.0);
  EXPECT_EQ(res[1]["impl"], "fp32/fma-off");
  EXPECT_EQ(res[1]["error_model"]["pass"], true);
  EXPECT_EQ(res[2]["impl"], "mutant:exp-taylor");
  EXPECT_EQ(res[2]["error_model"]["pass"], false);
  EXPECT_GT(res[2]["error_model"]["failures"].get<long long>(), 0);
  EXPECT_FALSE(res[3].contains("error_model")) << "the reference is what the others are judged against";
  std::ifstream md(path("b.md"));
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| mutant:exp-taylor | cpu |"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL (worst error/tolerance"), std::string::npos) << text;
}

TEST_F(Bench, RefusesBadRequestsBeforeTiming) {
  expect_bad("--impl fp32,nope", "unknown implementation 'nope'");
  expect_bad("--impl honest,fp32/reversed", "'fp32/reversed' is listed twice (also through a group)");
  expect_bad("--impl fp32,fp32", "'fp32' is listed twice");
  expect_bad("--shape 1,8,two,16", "'two' is not an integer");
  expect_bad("--shape 1,8,16", "expected four integers B,T,H,D");
  expect_bad("--shape 1,8,1,12 --impl fp32 --device cpu", "--impl fp32 does not run this stream");
  expect_bad("--shape 1,8,1,128 --impl chunked-scan-fp32 --device cpu", "chunk sizes 32, 64");
  expect_bad("--impl fp32 --chunk 32", "--chunk applies to the chunked implementations only");
  expect_bad("--impl fp32 --bits 64", "--bits applies to --impl reference");
  expect_bad("--repetitions 0", "--repetitions must be between 1 and 1000");
  expect_bad("--min-time 0", "--min-time must be a number of seconds in (0, 60]");
  expect_bad("--lambda0 0", "lambda0");
  expect_bad("--check --impl reference-double", "--impl lists references only");
  expect_bad("--input '" + path("missing.safetensors") + "'", "missing.safetensors");
}

TEST_F(Bench, KeepsExistingReportsWithoutForce) {
  { std::ofstream(path("b.json")) << "precious"; }
  const std::string args = "bench --shape 1,8,1,16 --impl fp32 --device cpu" + std::string(kQuick) + " --json '" + path("b.json") + "'";
  const Result r = run_vla(args);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already exists; pass --force"), std::string::npos) << r.output;
  std::ifstream f(path("b.json"));
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), "precious");
  const Result forced = run_vla(args + " --force");
  ASSERT_EQ(forced.code, 0) << forced.output;
  EXPECT_EQ(read_json("b.json")["results"][0]["impl"], "fp32");
}

}  // namespace
}  // namespace vla::cli::test
