// `vla report`: the numerical-stability report (reports/).
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "external_kernel.hpp"
#include "registry.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/report.hpp"

namespace {

// --sections' names; an empty name (",", "drift,,jacobian") is refused, not read as "every section".
std::vector<std::string> split_sections(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw vla::cli::InputError("--sections '" + s + "': an empty section name");
    out.push_back(item);
  }
  if (out.empty() || s.back() == ',') throw vla::cli::InputError("--sections '" + s + "': an empty section name");
  return out;
}

std::string section_names() {
  std::string list = "summary";
  for (const auto& st : vla::report::stages()) list += ", " + st.id;
  return list;
}

struct ReportArgs {
  vla::report::Config cfg;
  std::string out = "reports/out", cache, sections;
  vla::cli::ExternalKernelOptions ext;  // a kernel outside this repository, drawn in the drift section
  bool quick = false, tiny = false, no_progress = false;
};

// --cache-dir and --sections, before any work.
void check_args(const ReportArgs& a, const CLI::Option* o_sections) {
  std::error_code ec;
  if (!a.cache.empty() && std::filesystem::exists(a.cache, ec) && !std::filesystem::is_directory(a.cache, ec))
    throw vla::cli::InputError("--cache-dir " + a.cache + " is a file, not a folder");
  if (o_sections->count() > 0 && a.sections.empty()) throw vla::cli::InputError("--sections needs at least one section name");
}

// The external kernel of --external-cmd / --external-serve, as the report runs it
// (the gate's runners: gate/external.hpp).
std::optional<vla::report::ExternalKernel> external_of(const ReportArgs& a) {
  a.ext.check();
  if (!a.ext.given()) return std::nullopt;
  const vla::gate::Candidate c = a.ext.candidate();
  return vla::report::ExternalKernel{a.ext.command(), vla::impl::parse_kind(a.ext.dtype),
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
                          auto* o_sections = sub.add_option("--sections", a->sections,
                                                            "Comma-separated sections (" + section_names() + "); default all");
                          sub.add_option("--jobs", a->cfg.jobs, "Worker threads (default: all hardware threads)")->check(vla::cli::at_least(1));
                          sub.add_flag("--no-progress", a->no_progress, "No progress bar");
                          a->ext.dtype_flag = "--external-dtype";
                          vla::cli::add_external_kernel_options(sub, a->ext, "Also draw the drift of", true, {"fp32", "bf16", "bf16-state"});
                          return [a, o_sections]() -> int {
                            using namespace vla::report;
                            check_args(*a, o_sections);
                            Config cfg = a->cfg;
                            cfg.out = a->out;
                            cfg.cache_dir = a->cache;
                            cfg.profile = a->tiny ? Profile::tiny : a->quick ? Profile::quick : Profile::full;
                            if (!a->sections.empty()) cfg.sections = split_sections(a->sections);
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
