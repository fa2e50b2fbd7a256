// Where and with what the report was made: machine, GPU, versions, date, command.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vla::report {

// Strings only (they are shown verbatim).
nlohmann::json machine_info();                       // cpu, cores, memory, os, kernel
nlohmann::json gpu_info(bool cuda_in_use);           // name, driver (via nvidia-smi) or "none"
nlohmann::json version_info();                       // vla-verify, git commit, compiler, libraries, gnuplot
std::string utc_now_iso8601();
std::string invoking_command();                      // argv of this process, shell-quoted

}  // namespace vla::report
