// vla gate: the CI correctness gate. Runs the kernels (CUDA when present, else
// their CPU twins) on the fixed battery and a fuzz budget, judges every output
// with the error model, writes JUnit XML / JSON / Markdown, and optionally
// compares the accuracy statistics with a stored baseline. --mutation proves
// that the gate bites: every planted defect must fail, every honest variant pass.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "external_kernel.hpp"
#include "output_path.hpp"
#include "registry.hpp"
#include "vla/gate/external.hpp"
#include "vla/gate/gate.hpp"
#include "vla/gate/report.hpp"

namespace vla::cli {
namespace {

namespace fs = std::filesystem;

struct GateArgs {
  bool quick = false, mutation = false, all_cases = false, force = false, skip_missing = false;
  std::string impl = "production", device, junit, json, md, baseline, write_baseline, only_case;
  // A kernel outside this repository (gate/external.hpp): exported cases and its output files, or run by a
  // command or a server (ext; ext.dtype is --dtype, which --export-cases and --external take too).
  std::string export_cases, external, cases;
  ExternalKernelOptions ext;
  int fuzz_cases = -1;
  std::uint64_t fuzz_seed = 1;
  CLI::Option *o_impl = nullptr, *o_fuzz_cases = nullptr, *o_fuzz_seed = nullptr, *o_quick = nullptr, *o_device = nullptr, *o_case = nullptr;
};

// --export-cases: the battery as input files for a harness outside this repository.
int export_cases(const GateArgs& a) {
  if (a.ext.dtype.empty()) throw InputError("--export-cases needs --dtype (fp32, bf16, bf16-state or tf32): the inputs are written in its input type");
  const gate::Policy policy = gate::parse_policy(a.ext.dtype);
  std::cout << fmt::format("vla gate: exporting the {} battery for {} to {}\n", a.quick ? "quick" : "full", a.ext.dtype, a.export_cases) << std::flush;
  const gate::ExportedCases ex = gate::export_battery(
      a.export_cases, a.quick, policy,
      [](int i, int n) {
        if (i % 25 == 0 || i == n) std::cerr << fmt::format("vla gate: {} of {} cases\n", i, n) << std::flush;
      },
      std::max(a.fuzz_cases, 0), a.fuzz_seed);
  std::cout << fmt::format("  wrote {} cases and manifest.json to {} (inputs in {}; cases the error model cannot judge at this precision "
                           "are listed there as not exported)\n  next: run the kernel on each case, write its outputs under the same "
                           "file names, then: vla gate --external OUTPUTS --cases {}\n",
                           ex.file_by_hash.size(), a.export_cases, policy.input() == impl::Kind::fp32 ? "float32" : "bf16",
                           a.export_cases);
  return kExitOk;
}

int run(const GateArgs& a) {
  const bool ext = !a.external.empty();
  auto refuse_with = [&](const char* mode, std::initializer_list<std::pair<bool, const char*>> others) {
    for (auto [given, name] : others)
      if (given) throw InputError(std::string(name) + " does not apply with " + mode);
  };
  a.ext.check(false);  // --external-timeout's value, and only with a command or server
  if (a.o_case->count() > 0 && a.only_case.empty()) throw InputError("--case '': give a battery case's id (the JSON report lists them)");
  if (a.all_cases && !a.mutation) throw InputError("--all-cases applies with --mutation only (a gate run judges every case anyway)");
  if (!a.export_cases.empty()) {
    refuse_with("--export-cases", {{ext, "--external"}, {a.ext.given(), a.ext.flag().c_str()}, {!a.cases.empty(), "--cases"}, {a.mutation, "--mutation"}, {a.o_impl->count() > 0, "--impl"},
                                   {!a.junit.empty() || !a.json.empty() || !a.md.empty(), "a report file"},
                                   {!a.baseline.empty() || !a.write_baseline.empty(), "a baseline"}, {a.o_device->count() > 0, "--device"}, {!a.only_case.empty(), "--case"}, {a.skip_missing, "--skip-missing"}});
    return export_cases(a);
  }
  const bool cmd = a.ext.given();
  if (cmd) {
    if (ext) throw InputError("--external, --external-cmd and --external-serve are three ways to gate one kernel: give one");
    refuse_with(a.ext.flag().c_str(), {{a.mutation, "--mutation"}, {a.o_impl->count() > 0, "--impl"}, {a.o_device->count() > 0, "--device"},
                                      {!a.cases.empty(), "--cases"}, {a.skip_missing, "--skip-missing (the kernel skips a stream itself)"}});
  } else if (ext) {
    if (a.cases.empty()) throw InputError("--external needs --cases (the folder written by --export-cases)");
    refuse_with("--external", {{a.mutation, "--mutation"}, {a.o_impl->count() > 0, "--impl"}, {a.o_fuzz_cases->count() > 0, "--fuzz-cases (the exported ones are judged: --export-cases --fuzz-cases N)"},
                               {a.o_fuzz_seed->count() > 0, "--fuzz-seed"}, {a.o_device->count() > 0, "--device"}});
    std::error_code ec;
    if (!fs::is_directory(a.external, ec)) throw InputError("--external " + a.external + " is not a folder");
  }
  if (!ext && !cmd) {
    if (!a.cases.empty()) throw InputError("--cases applies with --external only");
    if (!a.ext.dtype.empty()) throw InputError("--dtype applies with --export-cases, --external, --external-cmd or --external-serve only");
    if (a.skip_missing) throw InputError("--skip-missing applies with --external only");
  }
  // A baseline holds the statistics of the whole battery with the default fuzz budget: a filtered run's would be
  // stored as if they were those, and a later full run compared with them.
  if (!a.write_baseline.empty())
    refuse_with("--write-baseline", {{!a.only_case.empty(), "--case"}, {a.o_fuzz_cases->count() > 0, "--fuzz-cases"},
                                     {a.o_fuzz_seed->count() > 0, "--fuzz-seed"}, {a.mutation, "--mutation"}});
  OutputFiles files(a.force);
  files.output("--junit", a.junit);
  files.output("--json", a.json);
  files.output("--md", a.md);
  files.output("--write-baseline", a.write_baseline);
  if (!a.baseline.empty() && !(!a.write_baseline.empty() && same_file(a.baseline, a.write_baseline)))
    files.input("--baseline", a.baseline);  // refreshing the baseline it was compared with is allowed (--force)
  files.check();
  if (!a.baseline.empty() && !fs::exists(a.baseline)) throw InputError("--baseline " + a.baseline + " does not exist");
  if (!a.write_baseline.empty()) gate::check_baseline_to_update(a.write_baseline);
  if (a.mutation && a.o_impl->count() > 0) throw InputError("--mutation runs the mutants and honest variants; it takes no --impl");

  gate::GateConfig cfg;
  cfg.quick = a.quick;
  std::optional<gate::ExportedCases> exported;
  if (ext) {
    exported = gate::read_exported(a.cases);
    if (a.o_quick->count() > 0 && a.quick != exported->quick)
      throw InputError("--quick: the cases in " + a.cases + " are the " + (exported->quick ? "quick" : "full") + " battery");
    cfg.quick = exported->quick;
  }
  impl::Device dev = impl::Device::cpu;
  if (!a.device.empty()) dev = impl::parse_device(a.device);
  else if (!a.mutation && impl::cuda_available()) dev = impl::Device::cuda;
  if (dev == impl::Device::cuda && !impl::cuda_available()) throw InputError("--device cuda: no CUDA device is available in this build");
  if (a.mutation && dev == impl::Device::cuda) throw InputError("--mutation runs the CPU twins' variants: use --device cpu");
  cfg.device = impl::to_string(dev);
  if (ext) {
    cfg.device = "external";
    cfg.candidates = {gate::external_candidate(*exported, a.external, gate::parse_policy(a.ext.dtype.empty() ? exported->dtype : a.ext.dtype), a.skip_missing)};
    cfg.fuzz_cases = exported->fuzz_cases;  // the fuzz cases exported with the battery (--export-cases --fuzz-cases N)
    cfg.fuzz_seed = exported->fuzz_seed;
  } else if (cmd) {
    cfg.device = "external";
    cfg.candidates = {a.ext.candidate()};
    cfg.fuzz_cases = a.fuzz_cases >= 0 ? a.fuzz_cases : (a.quick ? 100 : 1000);
  } else {
    cfg.candidates = a.mutation ? gate::find_candidates("mutants,honest", dev) : gate::find_candidates(a.impl, dev);
    cfg.fuzz_cases = a.fuzz_cases >= 0 ? a.fuzz_cases : (a.quick ? 100 : 1000);
    for (std::size_t i = 0; i < cfg.candidates.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (cfg.candidates[i].name == cfg.candidates[k].name)
          throw InputError("--impl names " + cfg.candidates[i].name + " twice (directly or through a group)");
  }
  if (!a.only_case.empty()) cfg.fuzz_cases = 0;  // --case runs that battery case alone
  if (!ext) cfg.fuzz_seed = a.fuzz_seed;  // an export's fuzz cases keep the seed they were exported with
  cfg.only_case = a.only_case;
  if (!a.baseline.empty()) {  // before the run, not after it
    std::vector<std::string> production;
    for (const auto& c : cfg.candidates)
      if (c.role == gate::Role::production) production.push_back(c.name);
    gate::check_baseline(a.baseline, cfg.quick, cfg.device, production);
  }
  cfg.stop_at_first_failure = a.mutation && !a.all_cases;
  cfg.mutation_campaign = a.mutation;
  const std::string budget = !a.only_case.empty() ? "the battery case '" + a.only_case + "' alone"
                                                  : fmt::format("battery + {} fuzz cases (seed {})", cfg.fuzz_cases, cfg.fuzz_seed);

  if (ext)
    std::cout << fmt::format("vla gate: {} battery + {} exported fuzz cases, an external kernel's outputs in {} (cases in {}), judged as {}\n",
                             cfg.quick ? "quick" : "full", cfg.fuzz_cases, a.external, a.cases, cfg.candidates.front().policy.name())
              << std::flush;
  else if (cmd)
    std::cout << fmt::format("vla gate: {} mode, an external kernel {} `{}`, judged as {}; {}\n", cfg.quick ? "quick" : "full", a.ext.how(),
                             a.ext.command(), cfg.candidates.front().policy.name(), budget)
              << std::flush;
  else
    std::cout << fmt::format("vla gate: {} mode, device {}{}; {} implementation(s); {}\n", a.quick ? "quick" : "full", cfg.device,
                             dev == impl::Device::cpu ? " (CPU twins)" : "", cfg.candidates.size(), budget)
              << std::flush;
  // An external case replays with vla check on its two files (the gate cannot rerun that kernel).
  // A command-run kernel replays with the same command.
  auto replay_of = [&](const gate::CaseResult& r) {
    if (ext) return gate::external_replay(*exported, a.external, r.id);
    if (cmd) return a.ext.replay(r.replay);
    return r.replay;
  };
  constexpr int kShownFailures = 20;  // the console's; the reports list every failure
  int shown = 0;
  gate::GateReport rep = gate::run_gate(cfg, [&](const gate::CaseResult& r) {
    if (r.status != gate::Status::fail) return;
    const bool mutant = r.candidate.rfind("mutant:", 0) == 0;
    if (mutant) {
      std::cout << fmt::format("  rejected {} at {} {}\n", r.candidate, r.suite, r.id) << std::flush;
    } else if (shown++ < kShownFailures) {
      std::cout << fmt::format("  FAIL {} {} {}: {}\n    replay: {}\n", r.candidate, r.suite, r.id, r.message, replay_of(r)) << std::flush;
    }
  });
  if (!a.only_case.empty() && rep.results.empty()) throw InputError("--case '" + a.only_case + "' names no battery case of this mode");
  if (shown > kShownFailures)
    std::cout << fmt::format("  ... and {} more failures (every one, with its replay, in --json, --junit and --md)\n", shown - kShownFailures);
  if (ext || cmd)
    for (auto& r : rep.results) r.replay = replay_of(r);
  if (!a.baseline.empty()) gate::compare_with_baseline(rep, a.baseline);

  for (const auto& s : rep.summaries)
    std::cout << fmt::format("  {:<26} {:<10} {:>5} cases {:>5} pass {:>4} fail {:>4} outside domain {:>4} policy breakdown  worst err/tol {:.3g}\n",
                             s.name, s.role, s.cases, s.pass, s.fail, s.invalid, s.breakdown, s.worst_ratio_max);
  for (const auto& r : rep.regressions) std::cout << "  accuracy regression: " << r << "\n";
  const std::string ms = gate::mutation_summary(rep);
  std::cout << ms;
  if (a.mutation && a.all_cases) std::cout << "\n" << gate::campaign_table(rep) << "\n";
  if (!a.junit.empty()) files.set("--junit", gate::junit_xml(rep));
  if (!a.json.empty()) files.set("--json", gate::json_report(rep));
  if (!a.md.empty()) files.set("--md", gate::markdown_summary(rep));
  // A failing run's statistics are no baseline: a later run would be held to them.
  const bool baseline_written = !a.write_baseline.empty() && rep.passed();
  if (baseline_written) files.set("--write-baseline", gate::baseline_text(rep, a.write_baseline));
  else files.drop("--write-baseline");
  files.write();
  if (baseline_written)
    std::cout << "  wrote the accuracy baseline (" << (cfg.quick ? "quick" : "full") << " mode, " << cfg.device << ") to " << a.write_baseline << "\n";
  else if (!a.write_baseline.empty())
    std::cout << "  did not write the accuracy baseline " << a.write_baseline << ": the run failed, and a failing run's statistics are no baseline\n";
  // A candidate that every case skipped or found outside its domain has shown nothing: that is no pass.
  for (const auto& n : rep.judged_nothing())
    std::cout << "  " << n << " was judged on no case (every case outside its domain): nothing is shown\n";
  const bool ok = rep.passed();
  std::cout << fmt::format("vla gate: {} in {:.1f} s\n", ok ? "PASSED" : "FAILED", rep.seconds);
  return ok ? kExitOk : kExitFail;
}

Register reg{Command{
    "gate", "CI correctness gate: fixed battery + fuzz budget, judged by the error model; reports and accuracy baseline",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<GateArgs>();
      a->o_quick = sub.add_flag("--quick", a->quick, "The quick battery and fuzz budget (within 60 s on 2 cores)");
      a->o_impl = sub.add_option("--impl", a->impl,
                                 "Implementations, comma-separated: fp32, bf16, bf16-state, chunked-fp32, chunked-bf16, chunked-tf32, chunked-scan-fp32, chunked-scan-bf16, production, chunked, chunked-scan, honest, mutants, or a variant's name")
                      ->capture_default_str();
      a->o_device = sub.add_option("--device", a->device, "cpu or cuda (default: cuda when available)")->check(CLI::IsMember({"cpu", "cuda"}));
      sub.add_option("--junit", a->junit, "Write JUnit XML")->check(a_path());
      sub.add_option("--json", a->json, "Write the JSON report")->check(a_path());
      sub.add_option("--md", a->md, "Write a Markdown summary for a pull-request comment")->check(a_path());
      sub.add_option("--baseline", a->baseline, "Also fail when the accuracy statistics worsen against this stored baseline");
      sub.add_option("--write-baseline", a->write_baseline, "Store this run's accuracy statistics (refresh the baseline)")->check(a_path());
      sub.add_flag("--mutation", a->mutation, "Run every planted mutant (must fail) and honest variant (must pass); print the mutation score");
      sub.add_flag("--all-cases", a->all_cases, "With --mutation: judge every case (kill rates), not just until the first rejection");
      a->o_fuzz_cases = sub.add_option("--fuzz-cases", a->fuzz_cases, "Fuzz cases per precision policy (default 100 quick, 1000 full)")->check(at_least(0));
      a->o_fuzz_seed = sub.add_option("--fuzz-seed", a->fuzz_seed, "Seed of the fuzz budget")->capture_default_str()->check(at_least(0));
      sub.add_option("--export-cases", a->export_cases,
                     "Write the battery (--quick: the quick one) as input files and manifest.json into this new folder, for a kernel "
                     "outside this repository; needs --dtype");
      sub.add_option("--external", a->external,
                     "Judge an external kernel's outputs in this folder (one file per exported case, same names); needs --cases");
      sub.add_option("--cases", a->cases, "The folder --export-cases wrote (with --external)");
      sub.add_option("--dtype", a->ext.dtype, "The external kernel's precision policy (--export-cases, --external-cmd, --external-serve; with --external, default: the export's)")
          ->check(CLI::IsMember({"fp32", "bf16", "bf16-state", "tf32"}));
      add_external_kernel_options(sub, a->ext, "Gate", false);
      sub.add_flag("--skip-missing", a->skip_missing,
                   "With --external: a case without an output file is outside the kernel's domain instead of failing");
      a->o_case = sub.add_option("--case", a->only_case, "Run only the battery case with this id");
      sub.add_flag("--force", a->force, "Replace existing report files");
      return [a] { return run(*a); };
    }}};

}  // namespace
}  // namespace vla::cli
