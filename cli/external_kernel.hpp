// The options by which gate, fuzz, report and bench reach a kernel outside this
// repository (gate/external.hpp): --external-cmd or --external-serve, its
// precision policy, --external-timeout. One set, so that the four commands
// check and name them alike.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "vla/gate/candidate.hpp"

namespace vla::cli {

struct ExternalKernelOptions {
  std::string cmd, serve, dtype;
  double timeout = 0;                 // seconds per stream; 0: none
  std::string dtype_flag = "--dtype";  // the option that names `dtype`

  bool given() const { return !cmd.empty() || !serve.empty(); }
  const std::string& command() const { return serve.empty() ? cmd : serve; }
  std::string flag() const { return serve.empty() ? "--external-cmd" : "--external-serve"; }
  std::string how() const { return serve.empty() ? "run as" : "served by"; }
  // InputError for contradictions; `dtype_alone`: a dtype without a kernel is one
  // (not where the command's dtype option has other uses, as vla gate's).
  void check(bool dtype_alone = true) const;
  // The kernel as a gate candidate (after check()).
  gate::Candidate candidate() const;
  // A printed replay that names "--impl external", made to rerun this kernel.
  std::string replay(const std::string& r) const;
};

// Adds --external-cmd, --external-serve, --external-timeout and, where add_dtype,
// o.dtype_flag restricted to `dtypes`. `what` begins the help lines ("Gate", "Fuzz", ...).
void add_external_kernel_options(CLI::App& sub, ExternalKernelOptions& o, const std::string& what, bool add_dtype,
                                 const std::vector<std::string>& dtypes = {"fp32", "bf16", "bf16-state", "tf32"});

}  // namespace vla::cli
