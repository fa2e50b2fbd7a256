#include "vla/report/process.hpp"

#include <sys/wait.h>

#include <cstdio>

namespace vla::report {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult r;
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  cmd += " 2>&1";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
  const int st = ::pclose(f);
  r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace vla::report
