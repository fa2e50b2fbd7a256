#include "external_kernel.hpp"

#include <cmath>

#include <fmt/format.h>

#include "registry.hpp"
#include "vla/gate/external.hpp"

namespace vla::cli {

void ExternalKernelOptions::check(bool dtype_alone) const {
  if (!(timeout >= 0) || !std::isfinite(timeout)) throw InputError("--external-timeout must be a number of seconds >= 0");
  if (!given()) {
    if (timeout > 0) throw InputError("--external-timeout applies with --external-cmd or --external-serve only");
    if (dtype_alone && !dtype.empty()) throw InputError(dtype_flag + " applies with --external-cmd or --external-serve only");
    return;
  }
  if (!cmd.empty() && !serve.empty()) throw InputError("--external-cmd and --external-serve: give one");
  if (dtype.empty()) throw InputError(flag() + " needs " + dtype_flag + ": the kernel's precision policy");
}

gate::Candidate ExternalKernelOptions::candidate() const {
  const gate::Policy policy = gate::parse_policy(dtype);
  return serve.empty() ? gate::command_candidate(cmd, policy, timeout) : gate::server_candidate(serve, policy, timeout);
}

std::string ExternalKernelOptions::replay(const std::string& r) const {
  return gate::command_replay(r, flag(), command(), dtype) + (timeout > 0 ? fmt::format(" --external-timeout {}", timeout) : "");
}

void add_external_kernel_options(CLI::App& sub, ExternalKernelOptions& o, const std::string& what, bool add_dtype,
                                 const std::vector<std::string>& dtypes) {
  sub.add_option("--external-cmd", o.cmd,
                 what + " a kernel outside this repository, run by this shell command once per stream: {input} (a stream file), "
                        "{output} (the file it writes), {options} (the options as vla run arguments); exit 77 skips a stream; needs " +
                     o.dtype_flag);
  sub.add_option("--external-serve", o.serve,
                 what + " a kernel served by this shell command, started once: it reads 'INPUT<TAB>OUTPUT<TAB>OPTIONS' lines and "
                        "answers 'ok', 'skip REASON' or 'error MESSAGE' (docs/GATE.md); needs " +
                     o.dtype_flag);
  sub.add_option("--external-timeout", o.timeout, "Seconds a stream may take in that kernel before it fails (0: no limit)");
  if (add_dtype) sub.add_option(o.dtype_flag, o.dtype, "That kernel's precision policy")->check(CLI::IsMember(dtypes));
}

}  // namespace vla::cli
