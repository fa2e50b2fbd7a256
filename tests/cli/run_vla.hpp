// Runs the built `vla` binary (path from the build: VLA_BIN) in a fresh folder.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace vla::cli::test {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// A shell command line, its standard error joined to its output.
inline Result run_shell(const std::string& line) {
  const std::string cmd = "(" + line + ") 2>&1";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

inline Result run_vla(const std::string& args) { return run_shell(std::string("'") + VLA_BIN + "' " + args); }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (std::filesystem::path(::testing::TempDir()) / "vla-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Nothing but the listed inputs may remain in the folder (no output, no temporary).
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }
  std::filesystem::path dir_;
};

}  // namespace vla::cli::test
