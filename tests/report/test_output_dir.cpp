// The output folder is all-or-nothing and never replaces what is not a report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "vla/report/output_dir.hpp"

namespace fs = std::filesystem;
using namespace vla::report;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("vla_report_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
std::size_t entries(const fs::path& p) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p)) ++n;
  return n;
}
}  // namespace

TEST(StagingDir, CommitCreatesTheFolder) {
  const fs::path root = fresh_dir("create");
  {
    StagingDir s(root / "out");
    EXPECT_FALSE(s.replaces_previous());
    std::ofstream(s.path() / "index.html") << "new";
    EXPECT_FALSE(fs::exists(root / "out"));  // nothing visible before commit
    s.commit();
  }
  EXPECT_TRUE(fs::exists(root / "out" / "index.html"));
  EXPECT_TRUE(is_report_folder(root / "out"));
  EXPECT_EQ(entries(root), 1u);  // no staging folder left
}

TEST(StagingDir, AbandonedRunLeavesThePreviousReportIntact) {
  const fs::path root = fresh_dir("abandon");
  {
    StagingDir s(root / "out");
    std::ofstream(s.path() / "index.html") << "old";
    s.commit();
  }
  {
    StagingDir s(root / "out");
    EXPECT_TRUE(s.replaces_previous());
    std::ofstream(s.path() / "index.html") << "half";
    // destroyed without commit: an exception or an interrupt unwound the run
  }
  std::ifstream f(root / "out" / "index.html");
  std::string content;
  f >> content;
  EXPECT_EQ(content, "old");
  EXPECT_EQ(entries(root), 1u);
}

TEST(StagingDir, ReplacesAPreviousReport) {
  const fs::path root = fresh_dir("replace");
  for (const char* v : {"first", "second"}) {
    StagingDir s(root / "out");
    std::ofstream(s.path() / "index.html") << v;
    s.commit();
  }
  std::ifstream f(root / "out" / "index.html");
  std::string content;
  f >> content;
  EXPECT_EQ(content, "second");
  EXPECT_EQ(entries(root), 1u);
}

TEST(StagingDir, RefusesAFolderThatIsNotAReport) {
  const fs::path root = fresh_dir("refuse");
  fs::create_directories(root / "mine");
  std::ofstream(root / "mine" / "thesis.tex") << "precious";
  EXPECT_THROW(StagingDir(root / "mine"), std::invalid_argument);
  std::ofstream(root / "file") << "x";
  EXPECT_THROW(StagingDir(root / "file"), std::invalid_argument);
  EXPECT_TRUE(fs::exists(root / "mine" / "thesis.tex"));
  EXPECT_EQ(entries(root), 2u);  // no staging folder created
  // An empty folder is fine.
  fs::create_directories(root / "empty");
  StagingDir s(root / "empty");
  s.commit();
  EXPECT_TRUE(is_report_folder(root / "empty"));
}

TEST(StagingDir, RemovesStagingFoldersOfKilledRuns) {
  const fs::path root = fresh_dir("stale");
  // A staging folder of a process that no longer exists (pid 999999999 is above pid_max).
  const fs::path stale = root / ".out.partial-999999999";
  fs::create_directories(stale);
  std::ofstream(stale / kMarkerFile) << "x";
  // Another program's folder with a similar name but no marker is left alone.
  const fs::path foreign = root / ".out.partial-999999998";
  fs::create_directories(foreign);
  StagingDir s(root / "out");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(foreign));
}

// A previous report's folder is replaced only while it holds nothing but what that report wrote (the marker lists it):
// a user's file there, present before the run or put there during it, is never deleted.
TEST(StagingDir, NeverDeletesFilesTheReportDidNotWrite) {
  const fs::path root = fresh_dir("foreign");
  {
    StagingDir s(root / "out");
    fs::create_directories(s.path() / "figures");
    std::ofstream(s.path() / "figures" / "drift.svg") << "plot";
    std::ofstream(s.path() / "index.html") << "first";
    s.commit();
  }
  {
    StagingDir s(root / "out");  // its own files, a subfolder included, are replaced
    EXPECT_TRUE(s.replaces_previous());
    std::ofstream(s.path() / "index.html") << "second";
    s.commit();
  }
  EXPECT_FALSE(fs::exists(root / "out" / "figures"));
  std::ofstream(root / "out" / "notes.txt") << "mine";
  try {
    StagingDir s(root / "out");
    ADD_FAILURE() << "a folder holding a user's file was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("notes.txt"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(root / "out" / "notes.txt"));
  EXPECT_EQ(entries(root), 1u);  // no staging folder left

  // A file put there while a run works: the run keeps its report beside the folder, the file stays.
  fs::remove(root / "out" / "notes.txt");
  StagingDir s(root / "out");
  std::ofstream(s.path() / "index.html") << "third";
  std::ofstream(root / "out" / "late.txt") << "mine";
  EXPECT_THROW(s.commit(), std::invalid_argument);
  EXPECT_TRUE(fs::exists(root / "out" / "late.txt"));
  const fs::path kept = root / ("out.new-" + std::to_string(::getpid()));
  EXPECT_TRUE(fs::exists(kept / "index.html"));
}

TEST(StagingDir, RefusesAnEmptyNameAndTheCurrentFolder) {
  const fs::path root = fresh_dir("cwd");
  EXPECT_THROW(StagingDir(""), std::invalid_argument);
  const fs::path here = fs::current_path();
  fs::current_path(root);
  EXPECT_THROW(StagingDir("."), std::invalid_argument);
  EXPECT_THROW(StagingDir(".."), std::invalid_argument);
  EXPECT_THROW(StagingDir{root}, std::invalid_argument);
  EXPECT_THROW(StagingDir{root.parent_path()}, std::invalid_argument);
  fs::current_path(here);
  EXPECT_EQ(entries(root), 0u);
}
