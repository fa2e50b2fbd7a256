// What every command does with the files it is asked to write and the options it
// is given: an output never replaces an input (--force or not), two outputs never
// name one file, every output is checked before the work and written all or none,
// and an option that would be ignored, or a value out of its range, is refused
// with exit 2 before any work.
#include <fstream>
#include <iterator>

#include "run_vla.hpp"
#include "streams.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::cli::test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class Outputs : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    io::save_stream(path("in.safetensors"), random_stream(Dims{1, 3, 1, 16, 16}, false, 2), io::DType::F32, {}, false);
    input_bytes_ = slurp(path("in.safetensors"));
  }
  // Exit 2, the message names the problem, and the folder holds what it held before.
  void expect_refused(const std::string& args, const std::string& piece) {
    const std::size_t before = entries();
    const Result r = run_vla(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(piece), std::string::npos) << "expected '" << piece << "' in:\n" << r.output;
    EXPECT_EQ(entries(), before) << args << ": a file was left behind";
    EXPECT_EQ(slurp(path("in.safetensors")), input_bytes_) << args << ": the input was changed";
  }
  std::string q(const std::string& name) const { return "'" + path(name) + "'"; }
  std::string input_bytes_;
};

TEST_F(Outputs, AnOutputNeverReplacesAnInputEvenWithForce) {
  expect_refused("run --impl fp32 --device cpu --input " + q("in.safetensors") + " --output " + q("in.safetensors") + " --force",
                 "is the --input file");
  // The same file under another spelling, and through a symbolic link.
  fs::create_symlink(path("in.safetensors"), path("link.safetensors"));
  expect_refused("run --impl fp32 --device cpu --input " + q("in.safetensors") + " --output '" + dir_.string() + "/./link.safetensors' --force",
                 "is the --input file");
  ASSERT_EQ(run_vla("run --impl fp32 --device cpu --input " + q("in.safetensors") + " --output " + q("cand.safetensors")).code, 0);
  const std::string cand = slurp(path("cand.safetensors"));
  expect_refused("check --dtype fp32 --input " + q("in.safetensors") + " --candidate " + q("cand.safetensors") + " --json " +
                     q("cand.safetensors") + " --force",
                 "is the --candidate file");
  EXPECT_EQ(slurp(path("cand.safetensors")), cand);
  expect_refused("bench --impl fp32 --device cpu --repetitions 1 --min-time 0.01 --input " + q("in.safetensors") + " --md " +
                     q("in.safetensors") + " --force",
                 "is the --input file");
}

TEST_F(Outputs, TwoOutputsNamingOneFileAreRefusedBeforeTheWork) {
  const std::string same = " --json " + q("r.json") + " --md '" + dir_.string() + "/./r.json'";
  expect_refused("bench --shape 1,4,1,16 --impl fp32 --device cpu --repetitions 1 --min-time 0.01" + same, "name the same file");
  expect_refused("gate --quick --device cpu --impl fp32 --case gaussian/paper/B1T1H1D16 --fuzz-cases 0" + same, "name the same file");
  expect_refused("claims --quick --only constant-memory" + same + " --force", "name the same file");
  expect_refused("gate --quick --device cpu --impl fp32 --json " + q("r.json") + " --write-baseline " + q("r.json"), "name the same file");
}

// A later output that cannot be written (its folder is missing) is found before the work; one that fails at the end
// (a folder where the file should go, made during the run, is not something a test can time) leaves no earlier file.
TEST_F(Outputs, EveryOutputIsCheckedBeforeTheWork) {
  const std::string missing = q("no-such-folder/x.md");
  expect_refused("bench --shape 1,4,1,16 --impl fp32 --device cpu --repetitions 1 --min-time 0.01 --json " + q("b.json") + " --md " + missing,
                 "does not exist");
  expect_refused("gate --quick --device cpu --impl fp32 --case gaussian/paper/B1T1H1D16 --fuzz-cases 0 --junit " + q("g.xml") +
                     " --json " + missing,
                 "does not exist");
  expect_refused("gate --quick --device cpu --impl fp32 --json " + q("g.json") + " --write-baseline " + missing, "does not exist");
  fs::create_directory(path("folder"));
  expect_refused("gate --quick --device cpu --impl fp32 --json " + q("g.json") + " --write-baseline " + q("folder") + " --force", "is a folder");
  // A malformed baseline is reported before the battery runs, not after it.
  { std::ofstream(path("bad.json")) << "{ not json"; }
  const Result r = run_vla("gate --quick --device cpu --impl fp32 --baseline " + q("bad.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("malformed JSON"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cases"), std::string::npos) << "the battery ran before the baseline was read:\n" << r.output;
}

// A baseline holds the whole battery's statistics with the default fuzz budget: a filtered run cannot write one.
TEST_F(Outputs, AFilteredGateRunCannotWriteTheBaseline) {
  const std::string w = " --write-baseline " + q("base.json");
  expect_refused("gate --quick --device cpu --case gaussian/paper/B1T1H1D16" + w, "--case does not apply with --write-baseline");
  expect_refused("gate --quick --device cpu --fuzz-cases 3" + w, "--fuzz-cases does not apply with --write-baseline");
  expect_refused("gate --quick --device cpu --fuzz-seed 9" + w, "--fuzz-seed does not apply with --write-baseline");
  expect_refused("gate --quick --mutation" + w, "--mutation does not apply with --write-baseline");
}

TEST_F(Outputs, FuzzRefusesOptionsItWouldIgnore) {
  fs::create_directory(path("empty"));
  expect_refused("fuzz --replay " + q("empty"), "holds no case file");
  expect_refused("fuzz --replay " + q("empty") + " --seconds 5", "--seconds does not apply with --replay");
  expect_refused("fuzz --replay " + q("empty") + " --corpus " + q("c"), "--corpus does not apply with --replay");
  expect_refused("fuzz --merge " + q("empty") + " --corpus " + q("m") + " --replay " + q("empty"), "--replay does not apply with --merge");
  expect_refused("fuzz --merge " + q("empty") + " --corpus " + q("m") + " --cases 3", "--cases does not apply with --merge");
  expect_refused("fuzz --case-seed 7 --cases 3", "--cases does not apply with --case-seed");
  expect_refused("fuzz --cases 3 --seconds 2", "two budgets");
  expect_refused("fuzz --cases -3", "--cases: must be a number >= 1");
  expect_refused("fuzz --seed -1 --cases 1", "--seed: must be a number >= 0");
  expect_refused("fuzz --shrink-budget -1 --cases 1", "--shrink-budget: must be a number >= 0");
  { std::ofstream(path("afile")) << "x"; }
  expect_refused("fuzz --impl fp32 --device cpu --cases 1 --corpus " + q("afile"), "is a file, not a folder");
}

TEST_F(Outputs, OptionsWithoutEffectOrOutOfRangeAreRefused) {
  const std::string run = "run --input " + q("in.safetensors") + " --output " + q("o.safetensors");
  expect_refused(run + " --ridge 1", "--ridge 1 has no effect");
  expect_refused(run + " --ridge-every 5", "--ridge-every 5 has no effect");
  const Result full = run_vla(run + " --preset vla-v3 --ridge-every 0 --ridge 0.001");  // both stated, as spec_arguments writes them
  EXPECT_EQ(full.code, 0) << full.output;
  expect_refused("gate --quick --fuzz-cases -5", "--fuzz-cases: must be a number >= 0");
  expect_refused("report --jobs 0", "--jobs: must be a number >= 1");
  expect_refused("report --sections ,", "an empty section name");
  { std::ofstream(path("cachefile")) << "x"; }
  expect_refused("report --tiny --cache-dir " + q("cachefile") + " --out " + q("r"), "is a file, not a folder");
  expect_refused("bogus", "unknown command 'bogus'");
}

}  // namespace
}  // namespace vla::cli::test
