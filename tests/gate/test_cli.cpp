// `vla check`, `vla gate` and `vla fuzz` end to end, through the built binary.
// vla check gets the mutation treatment too: each mutant's outputs, written to
// a file, are rejected (exit 1); each honest variant's are accepted (exit 0).
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_vla.hpp"
#include "vla/gate/battery.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/properties/generators.hpp"

using namespace vla;
using vla::cli::test::CliTest;
using vla::cli::test::run_vla;
namespace fs = std::filesystem;

namespace {

class GateCli : public CliTest {
 protected:
  // A stream file and the candidate file of `c` run on it.
  void write_case(const Stream& s, const Options& opt, const gate::Candidate& c, const std::string& in, const std::string& cand) {
    io::save_stream(path(in), s, io::DType::F64, {}, false);
    const Outputs out = c.run(gate::round_inputs(s, c.policy.input()), opt);
    io::save_outputs(path(cand), out, {}, io::DType::F64, false);
  }
  static std::string dtype(const gate::Candidate& c) { return c.policy.name(); }
};

}  // namespace

TEST_F(GateCli, CheckPassesHonestOutputsAndReportsTheWorstElement) {
  const Stream s = props::make_stream(props::Family::gaussian, Dims{2, 30, 2, 16, 16}, 1);
  write_case(s, Options{}, gate::production(impl::Kind::bf16, impl::Device::cpu), "in.safetensors", "cand.safetensors");
  const auto r = run_vla("check --input " + path("in.safetensors") + " --candidate " + path("cand.safetensors") + " --dtype bf16 --json " +
                         path("v.json"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rounded once to bf16"), std::string::npos) << r.output;  // F64 inputs, bf16 candidate: said so
  EXPECT_NE(r.output.find("ulp"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("error/tolerance"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("v.json")));
}

TEST_F(GateCli, CheckFailsAPlantedErrorAndNaNAndNamesTheStep) {
  const Stream s = gate::round_inputs(props::make_stream(props::Family::gaussian, Dims{1, 40, 1, 16, 16}, 2), impl::Kind::fp32);
  io::save_stream(path("in.safetensors"), s, io::DType::F32, {}, false);
  Outputs out = impl::run(s, Options{}, impl::Kind::fp32, impl::Device::cpu);
  out.o[out.dims.off(0, 33, 0, 16) + 4] *= 1.001;
  io::save_outputs(path("c1.safetensors"), out, {}, io::DType::F32, false);
  auto r = run_vla("check --input " + path("in.safetensors") + " --candidate " + path("c1.safetensors") + " --dtype fp32");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("first failing step: t=33"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("o[b=0, t=33, h=0, i=4]"), std::string::npos) << r.output;
  out = impl::run(s, Options{}, impl::Kind::fp32, impl::Device::cpu);
  out.state_norm[12] = std::nan("");
  io::save_outputs(path("c2.safetensors"), out, {}, io::DType::F32, false);
  r = run_vla("check --input " + path("in.safetensors") + " --candidate " + path("c2.safetensors") + " --dtype fp32 --json " +
              path("c2.json"));
  EXPECT_EQ(r.code, 1) << r.output;
  std::ifstream f(path("c2.json"));
  const auto worst = nlohmann::json::parse(f)["worst"];
  EXPECT_EQ(worst["candidate"], "nan") << worst;  // named, not null (absent)
}

TEST_F(GateCli, CheckBadInputExitsTwo) {
  const Stream s = props::make_stream(props::Family::gaussian, Dims{1, 5, 2, 16, 16}, 3);
  io::save_stream(path("in.safetensors"), s, io::DType::F32, {}, false);
  const Outputs out = impl::run(gate::round_inputs(s, impl::Kind::fp32), Options{}, impl::Kind::fp32, impl::Device::cpu);
  const std::string base = "check --input " + path("in.safetensors") + " --dtype fp32 --candidate ";
  auto expect2 = [&](const std::string& args, const std::string& says) {
    const auto r = run_vla(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << "\n" << r.output;
  };
  // Missing o, an unknown tensor, a wrong shape, a malformed file, a missing file.
  io::write_safetensors(path("no_o.safetensors"), {io::Tensor{"S", io::DType::F32, {1, 2, 16, 16}, out.S}}, {}, false);
  expect2(base + path("no_o.safetensors"), "missing tensor 'o'");
  auto ts = io::output_tensors(out, io::DType::F32);
  ts.push_back(io::Tensor{"S_final", io::DType::F32, {1}, {0.0}});
  io::write_safetensors(path("extra.safetensors"), ts, {}, false);
  expect2(base + path("extra.safetensors"), "unexpected tensor 'S_final'");
  io::write_safetensors(path("shape.safetensors"), {io::Tensor{"o", io::DType::F32, {1, 5, 16, 2}, out.o}}, {}, false);
  expect2(base + path("shape.safetensors"), "tensor 'o' has shape [1, 5, 16, 2], expected [1, 5, 2, 16]");
  std::ofstream(path("junk.safetensors")) << "not a safetensors file";
  expect2(base + path("junk.safetensors"), "junk.safetensors");
  expect2(base + path("absent.safetensors"), "absent.safetensors");
  // NaN in the inputs; a bad option.
  Stream bad = s;
  bad.k[7] = std::nan("");
  io::save_stream(path("nan.safetensors"), bad, io::DType::F64, {}, false);
  io::save_outputs(path("c.safetensors"), out, {}, io::DType::F32, false);
  expect2("check --input " + path("nan.safetensors") + " --dtype fp32 --candidate " + path("c.safetensors"), "tensor 'k'");
  expect2(base + path("c.safetensors") + " --lambda0 -1", "lambda0");
  expect2("check --input " + path("in.safetensors") + " --dtype fp16 --candidate " + path("c.safetensors"), "fp16");
}

// vla check, like the gate, rejects every planted defect and accepts every
// honest variant: candidates written to files, judged by the binary. Each
// mutant is run on the first case of the quick gate (battery, then its fuzz
// budget) that the library rejects it on, so the test shows that the file path
// gives the same verdicts.
TEST_F(GateCli, CheckRejectsEveryMutantAndAcceptsEveryHonestVariantFromFiles) {
  const auto cases = gate::battery(true);
  int killed = 0;
  for (const auto& m : gate::mutants()) {
    Stream hit;
    Options opt;
    std::string id;
    for (const auto& bc : cases)
      if (gate::run_and_judge(m, gate::expect(bc.stream, bc.opt, m.policy)).status == gate::Status::fail) {
        hit = bc.stream, opt = bc.opt, id = bc.id;
        break;
      }
    for (std::uint64_t j = 0; id.empty() && j < 100; ++j) {
      const gate::FuzzCase fc = gate::make_fuzz_case(gate::case_seed(1, j), m.policy.input(), gate::FuzzLimits{});
      if (gate::run_and_judge(m, gate::expect(fc.stream, fc.opt, m.policy)).status == gate::Status::fail)
        hit = fc.stream, opt = fc.opt, id = "fuzz " + std::to_string(j);
    }
    ASSERT_FALSE(id.empty()) << m.name << " is rejected by no case of the quick gate";
    const std::string in = "in_" + std::to_string(killed) + ".safetensors", cand = "cand_" + std::to_string(killed) + ".safetensors";
    write_case(hit, opt, m, in, cand);
    const auto r = run_vla("check --input " + path(in) + " --candidate " + path(cand) + " --dtype " + dtype(m) + " " +
                           gate::spec_arguments(opt));
    EXPECT_EQ(r.code, 1) << m.name << " on " << id << "\n" << r.output;
    killed += r.code == 1;
  }
  std::printf("vla check rejected %d of %zu mutants from files\n", killed, gate::mutants().size());
  EXPECT_EQ(killed, static_cast<int>(gate::mutants().size()));
  const Stream s = props::make_stream(props::Family::student_t, Dims{2, 70, 3, 16, 16}, 9);
  const Options opt = preset_options(Preset::vla_v3);
  int i = 0;
  for (const auto& h : gate::honest_variants()) {
    const std::string in = "h_in_" + std::to_string(i) + ".safetensors", cand = "h_cand_" + std::to_string(i++) + ".safetensors";
    write_case(s, opt, h, in, cand);
    const auto r = run_vla("check --input " + path(in) + " --candidate " + path(cand) + " --dtype " + dtype(h) + " --preset vla-v3");
    EXPECT_EQ(r.code, 0) << h.name << "\n" << r.output;
  }
}

// `--dtype tf32` judges a tf32 tensor-core implementation by its own model: the
// chunked-tf32 twin's outputs, from files, pass at tf32 and fail at fp32's
// precision on the same stream (the library-level twin of this is
// Policy.ChunkedTf32IsJudgedAtTf32Precision).
TEST_F(GateCli, CheckJudgesATf32ImplementationByItsOwnPolicy) {
  const Stream s = props::make_stream(props::Family::gaussian, Dims{1, 70, 2, 32, 32}, 6);
  const Options opt = preset_options(Preset::vla_v3);
  write_case(s, opt, gate::chunked_production(impl::ChunkedKind::tf32, impl::Device::cpu), "in.safetensors", "cand.safetensors");
  const std::string base = "check --input " + path("in.safetensors") + " --candidate " + path("cand.safetensors") + " --preset vla-v3";
  const auto own = run_vla(base + " --dtype tf32");
  EXPECT_EQ(own.code, 0) << own.output;
  const auto wrong = run_vla(base + " --dtype fp32");
  EXPECT_EQ(wrong.code, 1) << wrong.output;
}

TEST_F(GateCli, GateQuickWritesReportsAndRefusesToOverwrite) {
  const std::string files = " --junit " + path("j.xml") + " --json " + path("r.json") + " --md " + path("r.md");
  auto r = run_vla("gate --quick --device cpu --fuzz-cases 20" + files);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
  for (const char* f : {"j.xml", "r.json", "r.md"}) EXPECT_TRUE(fs::exists(path(f))) << f;
  r = run_vla("gate --quick --device cpu --fuzz-cases 1 --junit " + path("j.xml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already exists"), std::string::npos);
  r = run_vla("gate --quick --device cpu --impl mutant:S-transposed --fuzz-cases 0");
  EXPECT_EQ(r.code, 1) << r.output;
  r = run_vla("gate --quick --impl nonsense");
  EXPECT_EQ(r.code, 2) << r.output;
  r = run_vla("gate --quick --device cpu --case 'gaussian/paper/B1T1H1D16' --fuzz-cases 0");
  EXPECT_EQ(r.code, 0) << r.output;
  r = run_vla("gate --quick --device cpu --case 'no/such/case'");
  EXPECT_EQ(r.code, 2) << r.output;
}

// What a CI job reads from a run: the JSON's per-case time, the replay's device, a count of failures beyond the
// console's twenty, a run judged on nothing failing; options that would be ignored or double-count are refused.
TEST_F(GateCli, GateTellsEverythingAndRefusesWhatItWouldIgnore) {
  auto r = run_vla("gate --quick --device cpu --impl fp32 --fuzz-cases 2 --json " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json j;
  {
    std::ifstream f(path("r.json"));
    j = nlohmann::json::parse(f);
  }
  double total = 0;
  for (const auto& c : j["results"]) total += c["seconds"].get<double>();
  EXPECT_GT(total, 1e-3) << "the cases' times add up to nothing";
  EXPECT_NE(j["results"][0]["replay"].get<std::string>().find(" --device cpu"), std::string::npos) << j["results"][0]["replay"];
  // A kernel that fails every case: the console lists twenty and says how many more there are.
  r = run_vla("gate --quick --fuzz-cases 5 --external-cmd 'exit 3 # {input} {output}' --dtype fp32");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("more failures (every one, with its replay, in --json, --junit and --md)"), std::string::npos) << r.output;
  // A battery case outside the only implementation's domain (the scan forms take no D = 128): judged on nothing.
  r = run_vla("gate --quick --device cpu --impl chunked-scan-fp32 --case 'student_t/vla-v3/B1T21H1D128'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("was judged on no case"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the battery case 'student_t/vla-v3/B1T21H1D128' alone"), std::string::npos) << r.output;
  // A failing run writes its reports but no baseline.
  r = run_vla("gate --quick --external-cmd 'exit 3 # {input} {output}' --dtype fp32 --write-baseline " + path("b.json") +
              " --json " + path("f.json"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("did not write the accuracy baseline"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("b.json")));
  EXPECT_TRUE(fs::exists(path("f.json")));
  EXPECT_EQ(run_vla("gate --quick --device cpu --impl fp32,fp32").code, 2);
  EXPECT_EQ(run_vla("gate --quick --device cpu --impl production,fp32").code, 2);
  EXPECT_EQ(run_vla("gate --quick --device cpu --case ''").code, 2);
  EXPECT_EQ(run_vla("gate --quick --device cpu --all-cases").code, 2);
}

TEST_F(GateCli, FuzzFindsShrinksSavesReplaysShardsAndMerges) {
  auto r = run_vla("fuzz --device cpu --impl fp32 --cases 40 --seed 5");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cases/s"), std::string::npos) << r.output;
  // A mutant: failures are shrunk, saved with their replay command, and replay fails again.
  for (int s = 0; s < 2; ++s) {
    r = run_vla("fuzz --impl mutant:query-lag --cases 6 --shard " + std::to_string(s) + "/2 --corpus " + path("c" + std::to_string(s)));
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("shrunk"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("replay: vla fuzz --replay"), std::string::npos) << r.output;
  }
  r = run_vla("fuzz --replay " + path("c0"));
  EXPECT_EQ(r.code, 1) << r.output;
  r = run_vla("fuzz --replay " + path("c0") + " --impl fp32");  // the production twin passes the same cases
  EXPECT_EQ(r.code, 0) << r.output;
  r = run_vla("fuzz --merge " + path("c0") + " " + path("c1") + " " + path("c0") + " --corpus " + path("m"));
  EXPECT_EQ(r.code, 0) << r.output;
  std::size_t n0 = 0, nm = 0;
  for (const auto& d : {"c0", "c1"})
    for (const auto& e : fs::directory_iterator(path(d))) n0 += e.path().extension() == ".safetensors";
  for (const auto& e : fs::directory_iterator(path("m"))) nm += e.path().extension() == ".safetensors";
  EXPECT_LE(nm, n0);
  EXPECT_GE(nm, 1u);
  EXPECT_NE(r.output.find("duplicates skipped"), std::string::npos) << r.output;
  r = run_vla("fuzz --shard 3/2");
  EXPECT_EQ(r.code, 2) << r.output;
}

// What vla fuzz keeps is replayable as it was judged, and a bad file is named before anything is judged or written.
TEST_F(GateCli, FuzzReplaysCarryTheDeviceAndBadFilesAreNamedBeforeAnyWork) {
  auto r = run_vla("fuzz --impl mutant:query-lag --cases 2 --shrink-budget 5 --device cpu --corpus " + path("c"));
  ASSERT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(" --device cpu\n"), std::string::npos) << "a saved replay names the device:\n" << r.output;
  r = run_vla("fuzz --impl mutant:query-lag --case-seed 0x1 --device cpu");
  EXPECT_NE(r.output.find("--device cpu"), std::string::npos) << r.output;
  EXPECT_EQ(run_vla("fuzz --case-seed -1 --device cpu").code, 2);  // not wrapped to 2^64 - 1

  // A folder of one good case and one whose spec is invalid: the replay names the bad file and judges nothing.
  const auto good = gate::case_files(path("c"));
  ASSERT_FALSE(good.empty());
  fs::create_directory(path("mix"));
  fs::copy_file(good[0], path("mix") + "/0good.safetensors");
  io::StreamFile f = io::load_stream(good[0]);
  f.metadata["spec.lambda0"] = "-1";
  io::save_stream(path("mix") + "/1bad.safetensors", f.stream, io::DType::F64, f.metadata, false);
  r = run_vla("fuzz --replay " + path("mix"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("1bad.safetensors"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("0good.safetensors"), std::string::npos) << "judged before the bad file was found:\n" << r.output;
  // The same folder merged: refused, and no corpus folder is made.
  r = run_vla("fuzz --merge " + path("mix") + " --corpus " + path("m"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("1bad.safetensors"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("m")));
}
