#include "vla/report/cache.hpp"
#include "vla/report/machine.hpp"

#include <gmp.h>
#include <mpfr.h>
#include <sys/utsname.h>

#include <Eigen/Core>
#include <boost/version.hpp>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "vla/report/plot.hpp"
#include "vla/report/process.hpp"

#ifndef VLA_PROJECT_VERSION
#define VLA_PROJECT_VERSION "unknown"
#endif
#ifndef VLA_SOURCE_DIR
#define VLA_SOURCE_DIR "."
#endif

namespace vla::report {

namespace {

std::string first_line_with(const std::string& file, const std::string& key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) {
      auto p = line.find_first_of(":=", key.size());
      std::string v = p == std::string::npos ? line : line.substr(p + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '"')) v.erase(v.begin());
      while (!v.empty() && (v.back() == ' ' || v.back() == '"')) v.pop_back();
      return v;
    }
  }
  return "unknown";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

nlohmann::json machine_info() {
  utsname u{};
  ::uname(&u);
  return {{"cpu", first_line_with("/proc/cpuinfo", "model name")},
          {"logical_cores", std::to_string(std::thread::hardware_concurrency())},
          {"memory", first_line_with("/proc/meminfo", "MemTotal")},
          {"os", first_line_with("/etc/os-release", "PRETTY_NAME")},
          {"kernel", std::string(u.sysname) + " " + u.release + " " + u.machine}};
}

nlohmann::json gpu_info(bool cuda_in_use) {
  if (!cuda_in_use) return {{"name", "none (CPU twins used)"}};
  const auto r = run_process({"nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader", "-i", "0"});
  if (r.status != 0) return {{"name", "CUDA device (nvidia-smi unavailable)"}};
  return {{"name", trim(r.output)}};
}

nlohmann::json version_info() {
  const auto git = run_process({"git", "-C", VLA_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  const auto dirty = run_process({"git", "-C", VLA_SOURCE_DIR, "status", "--porcelain", "--untracked-files=no"});
  std::string commit = git.status == 0 ? trim(git.output) : "unknown (not a git checkout)";
  if (git.status == 0 && dirty.status == 0 && !trim(dirty.output).empty()) commit += " (with local changes)";
  std::ostringstream eigen;
  eigen << EIGEN_WORLD_VERSION << '.' << EIGEN_MAJOR_VERSION << '.' << EIGEN_MINOR_VERSION;
  std::string boost = BOOST_LIB_VERSION;
  for (auto& c : boost)
    if (c == '_') c = '.';
  return {{"vla-verify", VLA_PROJECT_VERSION},
          // The source tree's commit when the report was made; the numbers are those of the executable (cached
          // results are keyed on its hash), which may have been built from another state of the tree.
          {"source_commit_at_report_time", commit},
          {"executable_hash (the cache key)", executable_id()},
          {"compiler", std::string("g++ ") + __VERSION__},
          {"boost", boost},
          {"eigen", eigen.str()},
          {"mpfr", mpfr_get_version()},
          {"gmp", gmp_version},
          {"gnuplot", gnuplot_available() ? gnuplot_version() : "not found"}};
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string invoking_command() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string cmd;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= all.size(); ++i) {
    if (i == all.size() || all[i] == '\0') {
      if (i > start) {
        const std::string arg = all.substr(start, i - start);
        const bool plain = arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:") ==
                           std::string::npos;
        cmd += (cmd.empty() ? "" : " ") + (plain ? arg : shell_quote(arg));
      }
      start = i + 1;
    }
  }
  return cmd;
}

}  // namespace vla::report
