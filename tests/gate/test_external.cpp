// The gate for a kernel outside this repository, end to end through the binary:
// `vla gate --export-cases` writes the battery as input files, a harness (here:
// the CPU twins in-process, or a planted defect) writes outputs of the same
// names, and `vla gate --external` judges them with the error model.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "run_vla.hpp"
#include "vla/gate/battery.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/io/stream_io.hpp"

using namespace vla;
using vla::cli::test::CliTest;
using vla::cli::test::run_vla;
namespace fs = std::filesystem;

namespace {

// The first command a run printed as "replay: vla <start>...", without its "vla "
// (run_vla adds the binary), or "" when there is none.
std::string printed_replay(const std::string& output, const std::string& start) {
  const auto at = output.find("replay: vla " + start);
  if (at == std::string::npos) return "";
  const auto from = at + std::string("replay: vla ").size();
  return output.substr(from, output.find('\n', from) - from);
}

// The replay command of the first .cmd file of a corpus folder ("" when there is none).
std::string first_cmd_line(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cmd") {
      std::ifstream f(e.path());
      std::string line;
      std::getline(f, line);
      std::getline(f, line);
      return line;
    }
  return "";
}

class External : public CliTest {
 protected:
  nlohmann::json manifest() {
    std::ifstream f(path("cases") + "/manifest.json");
    return nlohmann::json::parse(f);
  }
  // The harness: candidate `c` run on every exported case, its outputs written under the case's name.
  void run_harness(const gate::Candidate& c, const std::string& outs) {
    fs::create_directory(path(outs));
    const nlohmann::json m = manifest();  // (a temporary's member in the range-for would dangle)
    for (const auto& e : m["cases"]) {
      const std::string file = e["file"];
      const io::StreamFile in = io::load_stream(path("cases") + "/" + file);
      const Options opt = gate::get_options(in.metadata, file);
      io::save_outputs(path(outs) + "/" + file, c.run(in.stream, opt), {}, io::DType::F32, false);
    }
    ASSERT_EQ(std::size_t(std::distance(fs::directory_iterator(path(outs)), fs::directory_iterator())), m["cases"].size());
  }
  std::string external(const std::string& outs, const std::string& more = "") {
    return "gate --external '" + path(outs) + "' --cases '" + path("cases") + "' " + more;
  }
};

TEST_F(External, ExportWritesEveryJudgeableCaseInTheInputTypeAndNeverOverwrites) {
  const auto r = run_vla("gate --export-cases '" + path("cases") + "' --dtype bf16 --quick");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json m = manifest();
  EXPECT_EQ(m["mode"], "quick");
  EXPECT_EQ(m["dtype"], "bf16");
  EXPECT_EQ(m["input_type"], "BF16");
  EXPECT_EQ(m["cases"].size() + m["not_exported"].size(), gate::battery(true).size());
  ASSERT_GT(m["cases"].size(), 20u);
  for (const auto& e : m["not_exported"]) EXPECT_FALSE(e["reason"].get<std::string>().empty()) << e.dump();
  for (const auto& e : m["cases"]) {
    const io::StreamFile in = io::load_stream(path("cases") + "/" + e["file"].get<std::string>());
    for (const auto& [name, type] : in.dtypes) EXPECT_EQ(type, io::DType::BF16) << e["file"] << " " << name;
    EXPECT_EQ(in.metadata.at("case.id"), e["id"]);
    EXPECT_EQ(gate::spec_arguments(gate::get_options(in.metadata, "case")), e["spec_arguments"]);
    EXPECT_EQ(in.stream.dims.T, e["dims"]["T"].get<int>());
  }
  // A second export into the same (now non-empty) folder is refused and changes nothing.
  const std::size_t before = std::distance(fs::directory_iterator(path("cases")), fs::directory_iterator());
  const auto again = run_vla("gate --export-cases '" + path("cases") + "' --dtype fp32 --quick");
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find("already exists and is not an empty folder"), std::string::npos) << again.output;
  EXPECT_EQ(manifest()["dtype"], "bf16");
  EXPECT_EQ(std::size_t(std::distance(fs::directory_iterator(path("cases")), fs::directory_iterator())), before);
  EXPECT_EQ(entries(), 1u) << "no partial folder left beside it";
  // A trailing separator names the same folder.
  ASSERT_EQ(run_vla("gate --export-cases '" + path("slash") + "/' --dtype fp32 --quick").code, 0);
  EXPECT_TRUE(fs::exists(path("slash") + "/manifest.json"));
  EXPECT_EQ(entries(), 2u);
}

TEST_F(External, HonestOutputsPassAPlantedDefectFailsWithAReplayThatFailsToo) {
  // The battery and 5 of the gate's fuzz cases (the streams run_gate draws from seed 1 for bf16).
  ASSERT_EQ(run_vla("gate --export-cases '" + path("cases") + "' --dtype bf16 --quick --fuzz-cases 5").code, 0);
  EXPECT_EQ(manifest()["fuzz_cases"], 5);
  run_harness(gate::production(impl::Kind::bf16, impl::Device::cpu), "honest");
  auto r = run_vla(external("honest", "--junit '" + path("j.xml") + "' --md '" + path("s.md") + "'"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+ 5 exported fuzz cases"), std::string::npos) << r.output;
  const std::string all = std::to_string(gate::battery(true).size() + 5) + " cases";
  EXPECT_NE(r.output.find(all), std::string::npos) << all << " expected (every exported fuzz case judged):\n" << r.output;
  EXPECT_TRUE(fs::exists(path("j.xml")));
  EXPECT_TRUE(fs::exists(path("s.md")));

  const auto mutants = gate::find_candidates("mutant:out-truncate", impl::Device::cpu);
  ASSERT_EQ(mutants.size(), 1u);
  run_harness(mutants.front(), "defect");
  r = run_vla(external("defect"));
  EXPECT_EQ(r.code, 1) << r.output;
  const std::string replay = printed_replay(r.output, "check --input");
  ASSERT_FALSE(replay.empty()) << r.output;
  const auto one = run_vla(replay);
  EXPECT_EQ(one.code, 1) << replay << "\n" << one.output;
}

// The fuzz cases of an export drawn from another seed than the default are judged as exported (the seed travels
// in the manifest; the judging run draws the same streams from it).
TEST_F(External, ExportedFuzzCasesOfAnySeedAreJudged) {
  ASSERT_EQ(run_vla("gate --export-cases '" + path("cases") + "' --dtype fp32 --quick --fuzz-cases 3 --fuzz-seed 7").code, 0);
  EXPECT_EQ(manifest()["fuzz_seed"], 7);
  run_harness(gate::production(impl::Kind::fp32, impl::Device::cpu), "honest");
  const auto r = run_vla(external("honest"));
  EXPECT_EQ(r.code, 0) << r.output;
  const std::string all = std::to_string(gate::battery(true).size() + 3) + " cases";
  EXPECT_NE(r.output.find(all), std::string::npos) << all << " expected:\n" << r.output;
  EXPECT_EQ(r.output.find("FAIL "), std::string::npos) << r.output;
}

// An external kernel keeps an accuracy baseline like ours: written from one run,
// a later run within kBaselineFactor of it passes, one whose statistics worsened
// beyond it fails (here the stored statistics are made tiny instead).
TEST_F(External, AccuracyBaselineIsWrittenAndGuarded) {
  ASSERT_EQ(run_vla("gate --export-cases '" + path("cases") + "' --dtype fp32 --quick").code, 0);
  run_harness(gate::production(impl::Kind::fp32, impl::Device::cpu), "outs");
  auto r = run_vla(external("outs", "--write-baseline '" + path("base.json") + "'"));
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json b;
  {
    std::ifstream f(path("base.json"));
    b = nlohmann::json::parse(f);
  }
  ASSERT_TRUE(b["modes"]["quick"]["external"].contains("external")) << b.dump(2);
  EXPECT_NE(b["refresh"].get<std::string>().find("--external"), std::string::npos);
  r = run_vla(external("outs", "--baseline '" + path("base.json") + "'"));
  EXPECT_EQ(r.code, 0) << r.output;
  for (auto& [stat, v] : b["modes"]["quick"]["external"]["external"].items())
    if (stat != "cases") v = 1e-12;
  std::ofstream(path("tight.json")) << b.dump(2);
  r = run_vla(external("outs", "--baseline '" + path("tight.json") + "'"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("accuracy regression: external:"), std::string::npos) << r.output;
}

TEST_F(External, AMissingOutputFailsUnlessSkippedAndBadUsageIsRefused) {
  ASSERT_EQ(run_vla("gate --export-cases '" + path("cases") + "' --dtype fp32 --quick").code, 0);
  run_harness(gate::production(impl::Kind::fp32, impl::Device::cpu), "outs");
  const std::string gone = manifest()["cases"][3]["file"];
  fs::remove(path("outs") + "/" + gone);
  auto r = run_vla(external("outs"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no output file"), std::string::npos) << r.output;
  r = run_vla(external("outs", "--skip-missing"));
  EXPECT_EQ(r.code, 0) << r.output;
  // The removed case joins those the error model cannot judge at this precision (not exported).
  const std::string outside = std::to_string(manifest()["not_exported"].size() + 1) + " outside domain";
  EXPECT_NE(r.output.find(outside), std::string::npos) << outside << " expected in:\n" << r.output;

  EXPECT_EQ(run_vla("gate --external '" + path("outs") + "'").code, 2);                            // no --cases
  EXPECT_EQ(run_vla("gate --export-cases '" + path("c2") + "' --quick").code, 2);                  // no --dtype
  EXPECT_EQ(run_vla(external("outs", "--impl fp32")).code, 2);                                      // --impl with --external
  EXPECT_EQ(run_vla(external("outs", "--fuzz-cases 5")).code, 2);                                   // it cannot run new streams
  r = run_vla(external("outs", "--dtype bf16"));                                                    // other inputs than the export's
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("consumes other inputs than the exported cases"), std::string::npos) << r.output;
  EXPECT_EQ(run_vla("gate --cases '" + path("cases") + "' --quick").code, 2);                       // --cases alone
}

// --external-cmd: the kernel as a command run once per stream (here `vla run`
// itself, honest at fp32, or its bf16 kernel claiming fp32 precision).
class ExternalCmd : public CliTest {
 protected:
  static std::string kernel(const char* impl) {
    return std::string("--external-cmd \"'") + VLA_BIN + "' run --input {input} --output {output} --impl " + impl +
           " --device cpu {options} > /dev/null\" --dtype fp32";
  }
};

TEST_F(ExternalCmd, GateAndFuzzReachTheCommandAndReplayIt) {
  auto r = run_vla("gate --quick --fuzz-cases 10 " + kernel("fp32") + " --junit '" + path("j.xml") + "'");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("an external kernel run as"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("j.xml")));

  r = run_vla("gate --quick --fuzz-cases 0 " + kernel("bf16"));
  EXPECT_EQ(r.code, 1) << r.output;
  const std::string replay = printed_replay(r.output, "gate --case");
  ASSERT_FALSE(replay.empty()) << r.output;
  EXPECT_NE(replay.find("--external-cmd"), std::string::npos) << replay;
  const auto one = run_vla(replay);
  EXPECT_EQ(one.code, 1) << replay << "\n" << one.output;
  EXPECT_NE(one.output.find("1 fail"), std::string::npos) << one.output;

  r = run_vla("fuzz --cases 20 " + kernel("fp32"));
  EXPECT_EQ(r.code, 0) << r.output;
  r = run_vla("fuzz --cases 2 --shrink-budget 20 --corpus '" + path("corpus") + "' " + kernel("bf16"));
  EXPECT_EQ(r.code, 1) << r.output;
  const std::string again = printed_replay(r.output, "fuzz --replay");
  ASSERT_FALSE(again.empty()) << r.output;
  const auto re = run_vla(again);
  EXPECT_EQ(re.code, 1) << again << "\n" << re.output;
  EXPECT_NE(re.output.find("1 of 1 judgements fail"), std::string::npos) << re.output;
  // The corpus's own .cmd file holds the same command (it held the bare --replay, refused for want of the kernel),
  // with the case's absolute path: it replays from any folder, also after a merge.
  const std::string line = first_cmd_line(path("corpus"));
  ASSERT_EQ(line.rfind("vla fuzz --replay /", 0), 0u) << line;
  EXPECT_NE(r.output.find("replay: " + line + "\n"), std::string::npos) << "not a printed replay: " << line << "\n" << r.output;
  const auto from_elsewhere = cli::test::run_shell("cd / && '" + std::string(VLA_BIN) + "'" + line.substr(3));
  EXPECT_EQ(from_elsewhere.code, 1) << line << "\n" << from_elsewhere.output;
  EXPECT_NE(from_elsewhere.output.find("1 of 1 judgements fail"), std::string::npos) << from_elsewhere.output;
  r = run_vla("fuzz --merge '" + path("corpus") + "' --corpus '" + path("merged") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string merged = first_cmd_line(path("merged"));
  EXPECT_NE(merged.find("--external-cmd"), std::string::npos) << merged;
  EXPECT_EQ(run_vla(merged.substr(4)).code, 1) << merged;
}

// vla bench times the command beside ours, and --check judges it in the same table.
TEST_F(ExternalCmd, BenchTimesAndChecksIt) {
  const std::string base = "bench --impl fp32 --shape 1,40,2,16 --repetitions 2 --min-time 0.01 --check ";
  auto with = [&](const char* impl, const std::string& json) {
    std::string k = kernel(impl);
    k.replace(k.find("--dtype"), 7, "--external-dtype");
    return base + k + " --json '" + path(json) + "'";
  };
  auto r = run_vla(with("fp32", "ok.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json j;
  {
    std::ifstream f(path("ok.json"));
    j = nlohmann::json::parse(f);
  }
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][1]["impl"], "external");
  EXPECT_GT(j["results"][1]["median_s"].get<double>(), 0.0);
  EXPECT_EQ(j["results"][1]["error_model"]["pass"], true);
  r = run_vla(with("bf16", "bad.json"));  // bf16 claiming fp32 precision
  EXPECT_EQ(r.code, 1) << r.output;
  std::ifstream f(path("bad.json"));
  EXPECT_EQ(nlohmann::json::parse(f)["results"][1]["error_model"]["pass"], false);
  // A kernel that fails (skips the stream, exits non-zero, answers nonsense) fails the bench and writes nothing.
  for (const std::string k : {"--external-cmd 'exit 77 # {input} {output}'", "--external-cmd 'exit 3 # {input} {output}'",
                              "--external-serve 'exit 0'"}) {
    r = run_vla(base + k + " --external-dtype fp32 --json '" + path("x.json") + "'");
    EXPECT_EQ(r.code, 1) << k << "\n" << r.output;
    EXPECT_NE(r.output.find("the external kernel failed on the benchmark stream"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("x.json")));
  }
  EXPECT_EQ(run_vla("bench --shape 65536,65536,65536,65536 --impl reference-double").code, 2);  // the product overflowed
  EXPECT_EQ(run_vla("bench --shape 1,8,1,16,").code, 2);
}

// A kernel that skips every stream has shown nothing: vla fuzz fails as vla gate does, in a campaign and a replay.
TEST_F(ExternalCmd, FuzzOfAKernelThatSkipsEverythingFails) {
  const auto r = run_vla("fuzz --impl mutant:query-lag --cases 2 --shrink-budget 5 --corpus '" + path("c") + "'");
  ASSERT_EQ(r.code, 1) << r.output;
  for (const std::string& args : std::vector<std::string>{"--cases 3 --external-cmd 'exit 77 # {input} {output}'",
                                 "--cases 2 --external-serve 'while read l; do echo skip not mine; done'",
                                 "--replay '" + path("c") + "' --external-cmd 'exit 77 # {input} {output}'"}) {
    const auto s = run_vla("fuzz " + args + " --dtype fp32");
    EXPECT_EQ(s.code, 1) << args << "\n" << s.output;
    EXPECT_NE(s.output.find("nothing is shown"), std::string::npos) << args << "\n" << s.output;
  }
}

TEST_F(ExternalCmd, SkipsFailuresAndBadUsage) {
  // Exit 77 on every stream: each case outside the domain, and a gate that judged nothing does not pass.
  auto r = run_vla("gate --quick --fuzz-cases 2 --external-cmd 'echo not mine: {input} {output} >&2; exit 77' --dtype bf16");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("was judged on no case"), std::string::npos) << r.output;
  // A command that fails names its exit status and its standard error.
  r = run_vla("gate --quick --fuzz-cases 0 --case 'gaussian/paper/B1T1H1D16' --external-cmd 'echo kernel crashed >&2; exit 3 # {input} {output}' --dtype fp32");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the command exited 3: kernel crashed"), std::string::npos) << r.output;
  // Exit 0 without an output file.
  r = run_vla("gate --quick --fuzz-cases 0 --case 'gaussian/paper/B1T1H1D16' --external-cmd 'true {input} {output}' --dtype fp32");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("wrote no output.safetensors"), std::string::npos) << r.output;
  // --external-timeout: a command past its time is killed and its case fails; the replay keeps the limit.
  const auto t0 = std::chrono::steady_clock::now();
  r = run_vla("gate --quick --fuzz-cases 0 --case 'gaussian/paper/B1T1H1D16' --external-timeout 1 --external-cmd 'sleep 60 # {input} {output}' --dtype fp32");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("ran past --external-timeout 1 s and was killed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--external-timeout 1\n"), std::string::npos) << "the replay keeps the limit:\n" << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  EXPECT_EQ(run_vla("gate --quick --external-timeout 1").code, 2);  // without an external kernel
  EXPECT_EQ(run_vla("gate --quick --external-cmd 'run-kernel {input}' --dtype fp32").code, 2);  // no {output}
  EXPECT_EQ(run_vla("gate --quick --external-cmd 'k {input} {output}'").code, 2);                // no --dtype
  EXPECT_EQ(run_vla("gate --quick --external-cmd 'k {input} {output}' --dtype fp32 --impl bf16").code, 2);
  EXPECT_EQ(run_vla("fuzz --cases 1 --external-cmd 'k {input} {output}'").code, 2);
  EXPECT_EQ(run_vla("fuzz --cases 1 --dtype fp32").code, 2);  // --dtype without a command
}

// --external-serve: the kernel as one long-lived process fed a line per stream
// (here a shell loop around `vla run`).
class ExternalServe : public CliTest {
 protected:
  // A server script in the test's folder; `impl` is the kernel vla run runs for it.
  std::string server(const char* impl) {
    std::ofstream(path("server.sh")) << "tab=$(printf '\\t')\n"
                                     << "while IFS=\"$tab\" read -r in out opts; do\n"
                                     << "  if '" << VLA_BIN << "' run --input \"$in\" --output \"$out\" --impl " << impl
                                     << " --device cpu $opts > /dev/null 2>&1; then echo ok; else echo \"skip vla run refused it\"; fi\n"
                                     << "done\n";
    return "--external-serve \"sh '" + path("server.sh") + "'\" --dtype fp32";
  }
};

TEST_F(ExternalServe, GateAndFuzzTalkToOneServer) {
  auto r = run_vla("gate --quick --fuzz-cases 10 " + server("fp32"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("served by"), std::string::npos) << r.output;
  r = run_vla("fuzz --cases 10 " + server("fp32"));
  EXPECT_EQ(r.code, 0) << r.output;
  r = run_vla("gate --quick --fuzz-cases 0 " + server("bf16"));  // bf16 claiming fp32 precision
  EXPECT_EQ(r.code, 1) << r.output;
  const std::string replay = printed_replay(r.output, "gate --case");
  ASSERT_FALSE(replay.empty()) << r.output;
  EXPECT_NE(replay.find("--external-serve"), std::string::npos) << replay;
  EXPECT_EQ(run_vla(replay).code, 1) << replay;
}

// The Python template users copy (examples/external_kernel_server.py: the spec in
// plain Python, standard library only) passes the quick gate and a fuzz budget on
// the streams it takes (it skips those too large for pure Python), in fp32 and bf16.
TEST_F(ExternalServe, ThePythonTemplatePassesTheGate) {
  const std::string serve = std::string("--external-serve \"python3 '") + VLA_SOURCE_DIR + "/examples/external_kernel_server.py'\"";
  for (const char* dtype : {"fp32", "bf16"}) {
    const auto r = run_vla("gate --quick --fuzz-cases 20 " + serve + " --dtype " + dtype);
    EXPECT_EQ(r.code, 0) << dtype << "\n" << r.output;
    // Most cases are judged, not skipped: the template implements every option of the spec.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"((\d+) cases\s+(\d+) pass)"))) << r.output;
    EXPECT_GT(2 * std::stoi(m[2]), std::stoi(m[1])) << "fewer than half the cases judged:\n" << r.output;
  }
}

TEST_F(ExternalServe, ALostOrConfusedServerFailsItsCases) {
  const std::string one = " --quick --fuzz-cases 0 --case 'gaussian/paper/B1T1H1D16' --dtype fp32";
  auto r = run_vla("gate" + one + " --external-serve 'read line; exit 5'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the server was lost: it closed its output without answering (it exited 5)"), std::string::npos) << r.output;
  r = run_vla("gate" + one + " --external-serve 'while read line; do echo maybe; done'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the server answered 'maybe'"), std::string::npos) << r.output;
  r = run_vla("gate" + one + " --external-serve 'while read line; do echo error out of memory; done'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the server reported: out of memory"), std::string::npos) << r.output;
  r = run_vla("gate --quick --fuzz-cases 3 --dtype fp32 --external-serve 'while read line; do echo skip not mine; done'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("was judged on no case"), std::string::npos) << r.output;
  // A server that stops answering is killed at --external-timeout, and the streams after it fail too.
  const auto t0 = std::chrono::steady_clock::now();
  r = run_vla("gate --quick --fuzz-cases 0 --dtype fp32 --external-timeout 1 --external-serve 'while read line; do sleep 60; done'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no answer within --external-timeout 1 s; it was killed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the server is no longer running"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  EXPECT_EQ(run_vla("gate --quick --external-serve 'x' --external-cmd 'k {input} {output}' --dtype fp32").code, 2);
}

// vla report --external-cmd: the external kernel's drift beside ours, never cached;
// a kernel that fails leaves the rest of the report written and exits 1.
class ExternalReport : public CliTest {
 protected:
  nlohmann::json section(const std::string& out, const std::string& id) {
    std::ifstream f(path(out) + "/report.json");
    const nlohmann::json r = nlohmann::json::parse(f);
    for (const auto& s : r["sections"])
      if (s["id"] == id) return s;
    return {};
  }
};

TEST_F(ExternalReport, DriftDrawsTheExternalKernelBesideOursAndNeverCachesIt) {
  const std::string kernel = std::string("--external-cmd \"'") + VLA_BIN +
                             "' run --input {input} --output {output} --impl bf16 --device cpu {options} > /dev/null\" --external-dtype bf16";
  const std::string args = "report --tiny --sections drift --no-progress --cache-dir '" + path("cache") + "' " + kernel + " --out ";
  auto r = run_vla(args + "'" + path("r1") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json d = section("r1", "drift");
  ASSERT_EQ(d["status"], "ok") << d.dump().substr(0, 400);
  for (const auto& fam : d["data"]["families"]) {
    nlohmann::json ours, theirs;
    for (const auto& k : fam["kinds"]) {
      if (k["kind"] == "bf16") ours = k;
      if (k["kind"] == "external") theirs = k;
    }
    ASSERT_FALSE(theirs.is_null()) << fam["family"];
    EXPECT_EQ(theirs["policy"], "bf16");
    // `vla run --impl bf16` is our bf16 kernel: the same curves, bit for bit.
    EXPECT_EQ(theirs["o_median"], ours["o_median"]) << fam["family"];
    EXPECT_EQ(theirs["s_worst"], ours["s_worst"]) << fam["family"];
  }
  r = run_vla(args + "'" + path("r2") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream f(path("r2") + "/report.json");
  EXPECT_EQ(nlohmann::json::parse(f)["meta"]["stage_timings"]["drift"]["cached"], false);
}

TEST_F(ExternalReport, AFailingKernelLeavesTheReportAndExitsOne) {
  const auto r = run_vla("report --tiny --sections drift,sherman-morrison --no-progress --no-cache --external-cmd 'echo no GPU >&2; exit 4 "
                         "# {input} {output}' --external-dtype fp32 --out '" + path("r") + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the command exited 4: no GPU"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("r") + "/index.html"));
  EXPECT_EQ(section("r", "drift")["status"], "unavailable");
  EXPECT_EQ(section("r", "sherman-morrison")["status"], "ok");
  EXPECT_EQ(run_vla("report --tiny --external-dtype fp32 --out '" + path("x") + "'").code, 2);
  EXPECT_EQ(run_vla("report --tiny --external-cmd 'k {input} {output}' --out '" + path("x") + "'").code, 2);
}

}  // namespace
