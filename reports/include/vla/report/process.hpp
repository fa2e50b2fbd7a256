// Running a helper program (gnuplot, git, nvidia-smi) and capturing its output.
#pragma once

#include <string>
#include <vector>

namespace vla::report {

struct ProcessResult {
  int status = -1;     // exit status, -1 when it could not be started or was killed
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched on the PATH) with the arguments quoted for the shell.
ProcessResult run_process(const std::vector<std::string>& argv);

// Single-quotes a word for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace vla::report
