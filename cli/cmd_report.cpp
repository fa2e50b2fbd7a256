// `vla report`: the numerical-stability report (reports/).
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "registry.hpp"
#include "vla/gate/external.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/report.hpp"

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct ReportArgs {
  vla::report::Config cfg;
  std::string out = "reports/out", cache, sections;
  std::string external_cmd, external_serve, external_dtype;  // a kernel outside this repository, drawn in the drift section
  bool quick = false, tiny = false, no_progress = false;
};

// The external kernel of --external-cmd / --external-serve, as the report runs it
// (the gate's runners: gate/external.hpp).
std::optional<vla::report::ExternalKernel> external_of(const ReportArgs& a) {
  using vla::cli::InputError;
  const bool cmd = !a.external_cmd.empty(), serve = !a.external_serve.empty();
  if (!cmd && !serve) {
    if (!a.external_dtype.empty()) throw InputError("--external-dtype applies with --external-cmd or --external-serve only");
    return std::nullopt;
  }
  if (cmd && serve) throw InputError("--external-cmd and --external-serve: give one");
  if (a.external_dtype.empty()) throw InputError("--external-cmd / --external-serve need --external-dtype (fp32, bf16 or bf16-state)");
  const vla::gate::Policy policy = vla::gate::parse_policy(a.external_dtype);
  const vla::gate::Candidate c = cmd ? vla::gate::command_candidate(a.external_cmd, policy) : vla::gate::server_candidate(a.external_serve, policy);
  return vla::report::ExternalKernel{cmd ? a.external_cmd : a.external_serve, vla::impl::parse_kind(a.external_dtype),
                                     [c](const vla::Stream& s, const vla::Options& o) { return c.run(s, o); }};
}

vla::cli::Register reg{{"report",
                        "Numerical-stability report: kernel drift, state norm, Jacobians, Sherman-Morrison, recall "
                        "(writes index.html, report.md, report.json and the plots)",
                        [](CLI::App& sub) -> std::function<int()> {
                          auto a = std::make_shared<ReportArgs>();
                          sub.add_option("--out", a->out, "Output folder (replaced only if it holds a previous report)")
                              ->capture_default_str();
                          sub.add_flag("--quick", a->quick, "Reduced run (within a minute on two cores)");
                          sub.add_flag("--tiny", a->tiny, "Smallest run, for tests")->group("");
                          sub.add_flag("--fresh", a->cfg.fresh, "Ignore cached results of expensive stages");
                          sub.add_flag("--no-cache", a->cfg.no_cache, "Neither read nor write the cache");
                          sub.add_option("--cache-dir", a->cache,
                                         "Cache folder (default: $XDG_CACHE_HOME/vla-verify/report, else .cache next to --out)");
                          sub.add_option("--device", a->cfg.device, "Where the kernels run: auto, cpu (CPU twins), cuda")
                              ->capture_default_str();
                          sub.add_option("--sections", a->sections,
                                         "Comma-separated sections (drift, state-norm, jacobian, sherman-morrison, recall); default all");
                          sub.add_option("--jobs", a->cfg.jobs, "Worker threads (default: all hardware threads)");
                          sub.add_flag("--no-progress", a->no_progress, "No progress bar");
                          sub.add_option("--external-cmd", a->external_cmd,
                                         "Also draw the drift of a kernel outside this repository, run by this command once per "
                                         "stream ({input}, {output}, {options}: as vla gate --external-cmd)");
                          sub.add_option("--external-serve", a->external_serve,
                                         "Or served by this command, started once (the line protocol of vla gate --external-serve)");
                          sub.add_option("--external-dtype", a->external_dtype, "The external kernel's precision policy")
                              ->check(CLI::IsMember({"fp32", "bf16", "bf16-state"}));
                          return [a]() -> int {
                            using namespace vla::report;
                            Config cfg = a->cfg;
                            cfg.out = a->out;
                            cfg.cache_dir = a->cache;
                            cfg.profile = a->tiny ? Profile::tiny : a->quick ? Profile::quick : Profile::full;
                            cfg.sections = split_commas(a->sections);
                            if (a->no_progress) cfg.progress = 0;
                            cfg.external = external_of(*a);
                            try {
                              const Outcome o = run_report(cfg);
                              for (const auto& n : o.notes) std::cerr << "vla report: note: " << n << "\n";
                              std::printf("vla report: wrote %s/index.html, report.md, report.json and figures/ in %.0f s%s\n",
                                          o.out.string().c_str(), o.seconds,
                                          o.replaced_previous ? " (replaced the previous report)" : "");
                              // The external kernel was asked for: a report without its curves is a failure to say so.
                              if (cfg.external)
                                for (const auto& n : o.notes)
                                  if (n.rfind("drift:", 0) == 0) {
                                    std::cerr << "vla report: the external kernel's drift could not be drawn (see the note above)\n";
                                    return vla::cli::kExitFail;
                                  }
                              return vla::cli::kExitOk;
                            } catch (const Interrupted&) {
                              std::cerr << "vla report: interrupted; nothing was written (" << a->out
                                        << " is unchanged)\n";
                              return 130;
                            }
                          };
                        }}};

}  // namespace
