// The fuzzer's parts: deterministic cases, disjoint shards, shrinking, the
// stored corpus (round trip, replay, deduplicated merge).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "vla/gate/fuzz.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/properties/generators.hpp"

using namespace vla;
using namespace vla::gate;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path p;
  TempDir() {
    std::string t = (fs::path(::testing::TempDir()) / "vla-gate-XXXXXX").string();
    p = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(p); }
};
const Candidate& mutant(const std::string& name) {
  for (const auto& m : mutants())
    if (m.name == name) return m;
  throw std::logic_error(name);
}
}  // namespace

TEST(Fuzz, CasesAreDeterministicAndWithinLimits) {
  FuzzLimits lim;
  std::set<std::string> origins;
  for (std::uint64_t j = 0; j < 300; ++j) {
    const std::uint64_t seed = case_seed(7, j);
    const FuzzCase a = make_fuzz_case(seed, impl::Kind::fp32, lim), b = make_fuzz_case(seed, impl::Kind::fp32, lim);
    EXPECT_EQ(a.stream.k, b.stream.k);
    EXPECT_EQ(a.origin, b.origin);
    EXPECT_LE(a.stream.dims.T, lim.max_T);
    EXPECT_EQ(a.stream.dims.Dk, 16);
    origins.insert(a.origin.substr(0, a.origin.find(':')));
  }
  EXPECT_EQ(origins, (std::set<std::string>{"random", "adversarial"}));
}

TEST(Fuzz, ShardsAreDisjointAndCoverTheCampaign) {
  std::set<std::uint64_t> all, joined;
  for (std::uint64_t i = 0; i < 400; ++i) all.insert(case_seed(3, i));
  for (int s = 0; s < 4; ++s)
    for (std::uint64_t j = 0; j < 100; ++j) EXPECT_TRUE(joined.insert(case_seed(3, shard_index(s, 4, j))).second);
  EXPECT_EQ(all, joined);
}

// A failure found on a big stream shrinks to a small one that still fails.
TEST(Fuzz, ShrinkKeepsTheFailureAndMakesItSmaller) {
  const Candidate& m = mutant("mutant:batch-stride");
  const Stream s = props::make_stream(props::Family::gaussian, Dims{3, 50, 3, 32, 32}, 5);
  const Options opt;
  ASSERT_EQ(run_and_judge(m, expect(s, opt, m.policy)).status, Status::fail);
  const Shrunk sh = shrink(m, s, opt);
  EXPECT_EQ(sh.judgement.status, Status::fail);
  EXPECT_EQ(run_and_judge(m, expect(sh.stream, opt, m.policy)).status, Status::fail);
  EXPECT_EQ(sh.stream.dims.B, 2);  // the defect needs two batch entries
  EXPECT_EQ(sh.stream.dims.H, 1);
  EXPECT_EQ(sh.stream.dims.Dk, 16);
  EXPECT_LT(sh.stream.dims.T, 50);
}

TEST(Fuzz, CorpusRoundTripReplayAndMerge) {
  TempDir a, b, out;
  const Candidate& m = mutant("mutant:query-lag");
  const Options opt = preset_options(Preset::vla_v3);
  const Stream s = props::make_stream(props::Family::student_t, Dims{1, 9, 2, 16, 16}, 6);
  const SavedCase c1 = save_case(a.p, m, s, opt, "random:student_t", 42, "FAIL");
  EXPECT_FALSE(c1.existed);
  EXPECT_TRUE(fs::exists(c1.file));
  EXPECT_TRUE(fs::exists(fs::path(c1.file).replace_extension(".cmd")));
  EXPECT_TRUE(save_case(a.p, m, s, opt, "random:student_t", 42, "FAIL").existed);  // same content: stored once
  const StoredCase back = load_case(c1.file);
  EXPECT_EQ(back.impl, m.name);
  EXPECT_EQ(back.stream.q, s.q);
  EXPECT_EQ(spec_arguments(back.opt), spec_arguments(opt));
  EXPECT_EQ(run_and_judge(m, expect(back.stream, back.opt, m.policy)).status, Status::fail);
  // b holds the same case and another one; the merge keeps two.
  save_case(b.p, m, s, opt, "random:student_t", 42, "FAIL");
  Stream s2 = s;
  s2.v[0] += 1;
  save_case(b.p, m, s2, opt, "random:student_t", 43, "FAIL");
  int added = 0, dup = 0;
  for (const auto& dir : {a.p, b.p})
    for (const auto& f : case_files(dir)) (copy_case(out.p, load_case(f)).existed ? dup : added) += 1;
  EXPECT_EQ(added, 2);
  EXPECT_EQ(dup, 1);
  EXPECT_EQ(case_files(out.p).size(), 2u);
}

// A file at a case's name that does not hold the case, or a .cmd without its case, is the user's: never taken for
// the case nor overwritten.
TEST(Fuzz, CorpusRefusesForeignFilesAtACasesName) {
  TempDir a, b;
  const Candidate& m = mutant("mutant:query-lag");
  const Options opt = preset_options(Preset::vla_v3);
  const Stream s = props::make_stream(props::Family::student_t, Dims{1, 9, 2, 16, 16}, 6);
  const SavedCase c = save_case(a.p, m, s, opt, "random:student_t", 42, "FAIL", " --device cpu");
  EXPECT_NE(c.replay.find(fs::absolute(c.file).lexically_normal().string() + " --device cpu"), std::string::npos) << c.replay;
  EXPECT_EQ(load_case(c.file).metadata.at("gate.replay_options"), " --device cpu");
  // An empty file under the case's name.
  std::ofstream(b.p / c.file.filename()).flush();
  EXPECT_THROW(save_case(b.p, m, s, opt, "random:student_t", 42, "FAIL"), std::invalid_argument);
  EXPECT_EQ(fs::file_size(b.p / c.file.filename()), 0u);
  // A .cmd of the user's without the case file.
  fs::remove(b.p / c.file.filename());
  const fs::path cmd = b.p / fs::path(c.file.filename()).replace_extension(".cmd");
  std::ofstream(cmd) << "mine\n";
  EXPECT_THROW(save_case(b.p, m, s, opt, "random:student_t", 42, "FAIL"), std::invalid_argument);
  EXPECT_FALSE(fs::exists(b.p / c.file.filename()));
  std::ifstream in(cmd);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "mine");
}
