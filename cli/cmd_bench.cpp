// vla bench: how long a call of each implementation takes on one stream, side by
// side (the reference in double or certified, the fused kernels, the chunked
// forms; CUDA when present, else the CPU twins), as a table, JSON and Markdown.
//
// What is timed is the call `vla run` makes between reading the input and writing
// the output: for a CUDA kernel the device buffers, both copies and the launches;
// for a twin or the reference the host computation. The kernels' own time on the
// GPU (CUDA events, no copies) is bench_gpu's and bench_chunked's
// (scripts/gpu_report.sh, bench/gpu/run_chunked_report.sh).
//
// Order of work: options and output paths, the stream, one untimed call of every
// implementation (a refusal names the implementation before anything is timed),
// then the timing, then the files, each written whole.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_timing.hpp"
#include "external_kernel.hpp"
#include "output_path.hpp"
#include "registry.hpp"
#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/policy.hpp"
#include "vla/gate/report.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/io/version.hpp"
#include "vla/reference/certify.hpp"
#include "vla/reference/models.hpp"

namespace vla::cli {
namespace {

const std::vector<std::string> kImpls = {"reference",    "reference-double", "fp32",         "bf16",
                                         "bf16-state",   "chunked-fp32",     "chunked-bf16", "chunked-tf32",
                                         "chunked-scan-fp32", "chunked-scan-bf16"};

struct BenchArgs {
  std::string impls = "reference-double,fp32,bf16,bf16-state", device, input, shape = "1,1024,2,64", json, md;
  int chunk = 64, bits = 256, repetitions = 5;
  double min_time = 0.2;
  unsigned long long seed = 1;
  bool force = false, check = false;
  ExternalKernelOptions ext;  // a kernel outside this repository, timed beside ours
  gate::SpecArgs spec;
  CLI::Option *o_device = nullptr, *o_chunk = nullptr, *o_bits = nullptr, *o_shape = nullptr, *o_seed = nullptr;
};

bool given(const CLI::Option* o) { return o && o->count() > 0; }
bool is_chunked(const std::string& impl) { return impl.rfind("chunked-", 0) == 0; }
bool is_reference(const std::string& impl) { return impl.rfind("reference", 0) == 0; }

// The names as given, in order: ours (kImpls) and the gate's honest variants and
// mutants (a name, or the groups "honest" and "mutants": gate/candidate.hpp),
// which are CPU twins with another rounding or a planted defect.
std::vector<std::string> parse_impls(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    if (std::find(kImpls.begin(), kImpls.end(), name) == kImpls.end()) {
      try {
        (void)gate::find_candidates(name, impl::Device::cpu);
      } catch (const std::invalid_argument&) {
        std::string known;
        for (const auto& k : kImpls) known += (known.empty() ? "" : ", ") + k;
        throw InputError("--impl: unknown implementation '" + name + "' (known: " + known +
                         ", and the gate's variants: honest, mutants or one of their names)");
      }
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) throw InputError("--impl: '" + name + "' is listed twice");
    out.push_back(name);
  }
  if (out.empty()) throw InputError("--impl needs at least one implementation");
  return out;
}

// "B,T,H,D": four integers >= 1 (Dk = Dv = D).
Dims parse_shape(const std::string& text) {
  std::vector<long long> v;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ',');) {
    std::size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || x < 1 || x > (1 << 24))
      throw InputError("--shape " + text + ": '" + part + "' is not an integer between 1 and 16777216");
    v.push_back(x);
  }
  if (v.size() != 4 || text.back() == ',') throw InputError("--shape " + text + ": expected four integers B,T,H,D");
  // The inputs hold B T H D doubles per tensor: each factor fits, their product need not (it wrapped to an empty
  // stream and the run read past it). 2^28 elements (2 GiB a tensor) is far above any benchmark shape.
  const double elements = double(v[0]) * double(v[1]) * double(v[2]) * double(v[3]);
  if (elements > double(1 << 28))
    throw InputError(fmt::format("--shape {}: {:.3g} elements per tensor, more than the 2^28 (2 GiB of doubles) a benchmark stream may hold", text, elements));
  return Dims{int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[3])};
}

// Entries uniform in [-1, 1] from the seed: inputs that are not all zero and have
// no structure that a kernel could exploit.
Stream generated(const Dims& d, unsigned long long seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Stream s;
  s.dims = d;
  for (auto [x, n] : {std::pair{&s.q, d.qk_size()}, {&s.k, d.qk_size()}, {&s.v, d.v_size()}}) {
    x->resize(n);
    for (auto& e : *x) e = U(rng);
  }
  return s;
}

struct Entry {
  std::string impl, device;
  std::function<Outputs()> run;
  std::optional<gate::Policy> policy;  // the kernels': what --check judges them by
};

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string time_str(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

// The external kernel failed (exited non-zero, skipped the stream, wrote no or a wrong output, timed out): the
// kernel under test failed, so the run fails (exit 1) and says so; nothing is written.
int external_failed(const std::exception& ex) {
  std::cout << "vla bench: the external kernel failed on the benchmark stream: " << ex.what() << "\nvla bench: FAILED (nothing written)\n";
  return kExitFail;
}

int run(const BenchArgs& a) {
  a.ext.check();
  const bool external = a.ext.given();
  const std::vector<std::string> impls = parse_impls(a.impls);
  const bool any_chunked = std::any_of(impls.begin(), impls.end(), is_chunked);
  const bool any_kernel = std::any_of(impls.begin(), impls.end(), [](const std::string& i) { return !is_reference(i); });
  if (given(a.o_chunk) && !any_chunked) throw InputError("--chunk applies to the chunked implementations only");
  if (given(a.o_bits) && std::find(impls.begin(), impls.end(), "reference") == impls.end())
    throw InputError("--bits applies to --impl reference (the certified run) only");
  if (given(a.o_device) && !any_kernel) throw InputError("--device applies to the kernels; the reference runs on the CPU only");
  if (a.bits < ref::kMinBits || a.bits > ref::kMaxBits)
    throw InputError(fmt::format("--bits must be between {} and {} (got {})", ref::kMinBits, ref::kMaxBits, a.bits));
  if (a.repetitions < 1 || a.repetitions > 1000) throw InputError(fmt::format("--repetitions must be between 1 and 1000 (got {})", a.repetitions));
  if (!(a.min_time > 0) || !std::isfinite(a.min_time) || a.min_time > 60)
    throw InputError(fmt::format("--min-time must be a number of seconds in (0, 60] (got {})", a.min_time));
  if (!a.input.empty() && (given(a.o_shape) || given(a.o_seed))) throw InputError("--shape and --seed describe a generated stream; not with --input");
  const impl::Device dev = given(a.o_device) ? impl::parse_device(a.device)
                           : impl::cuda_available() ? impl::Device::cuda
                                                    : impl::Device::cpu;
  if (dev == impl::Device::cuda && !impl::cuda_available()) throw InputError("--device cuda: no CUDA device is available in this build");
  OutputFiles files(a.force);
  files.input("--input", a.input);
  files.output("--json", a.json);
  files.output("--md", a.md);
  files.check();
  const Options opt = gate::build_options(a.spec);

  Stream s;
  std::string source;
  if (!a.input.empty()) {
    s = io::load_stream(a.input).stream;
    source = a.input;
  } else {
    s = generated(parse_shape(a.shape), a.seed);
    source = fmt::format("generated: entries uniform in [-1, 1], seed {}", a.seed);
  }
  validate_stream(s, opt);
  check_ratio_readout_defined(s, opt);
  const Dims& d = s.dims;
  const std::string dims = fmt::format("B={} T={} H={} Dk={} Dv={}", d.B, d.T, d.H, d.Dk, d.Dv);
  std::cout << "vla bench: " << dims << " (" << source << ")\n  spec: preset=" << a.spec.preset << " " << describe(opt) << "\n";

  std::vector<Entry> entries;
  for (const auto& name : impls) {
    Entry e{name, is_reference(name) ? "cpu" : impl::to_string(dev), {}, {}};
    if (name == "reference") {
      ref::CertifyRequest req;
      req.bits = a.bits;
      e.run = [&s, opt, req] { return ref::run_certified(s, opt, req).out; };
    } else if (name == "reference-double") {
      e.run = [&s, opt] { return ref::to_outputs(ref::run_model<double>(s, opt)); };
    } else if (is_chunked(name)) {
      const impl::ChunkedKind ck = impl::parse_chunked_kind(name);
      if (const std::string why = impl::chunked_unsupported(d, opt, ck, a.chunk); !why.empty())
        throw InputError("--impl " + name + " --chunk " + std::to_string(a.chunk) + " does not run this stream: " + why);
      e.run = [&s, opt, ck, dev, C = a.chunk] { return impl::run_chunked(s, opt, ck, dev, C); };
      e.policy = gate::chunked_policy(ck);
    } else if (std::find(kImpls.begin(), kImpls.end(), name) != kImpls.end()) {
      const impl::Kind k = impl::parse_kind(name);
      e.run = [&s, opt, k, dev] { return impl::run(s, opt, k, dev); };
      e.policy = gate::Policy(k);
    } else {
      // A gate variant: a CPU twin that takes the stream rounded to its input
      // type, rounded here once, outside the timing.
      for (gate::Candidate& c : gate::find_candidates(name, impl::Device::cpu)) {
        if (c.outside)
          if (const std::string why = c.outside(s, opt); !why.empty()) throw InputError("--impl " + c.name + " does not run this stream: " + why);
        auto rounded = std::make_shared<Stream>(gate::round_inputs(s, c.policy.input()));
        entries.push_back(Entry{c.name, "cpu", [rounded, opt, run = c.run] { return run(*rounded, opt); }, c.policy});
      }
      continue;
    }
    entries.push_back(std::move(e));
  }

  if (external) {
    // Its time includes what reaching it costs: the stream written to a file, the process (started per call with
    // --external-cmd), the outputs read back; the what-is-timed line says so.
    const gate::Candidate c = a.ext.candidate();
    auto rounded = std::make_shared<Stream>(gate::round_inputs(s, c.policy.input()));
    entries.push_back(Entry{c.name, "external", [rounded, opt, run = c.run] { return run(*rounded, opt); }, c.policy});
  }
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (entries[i].impl == entries[j].impl) throw InputError("--impl: '" + entries[i].impl + "' is listed twice (also through a group)");

  // --check judges kernels against the reference; a list of references alone would pass it having judged nothing.
  if (a.check && std::none_of(entries.begin(), entries.end(), [](const Entry& e) { return e.policy.has_value(); }))
    throw InputError("--check judges kernels by the error model, and --impl lists references only (what kernels are judged against)");

  // One untimed call each: a refused shape or option stops here, naming the
  // implementation, and the first call's one-off costs (CUDA context, caches)
  // stay out of the timing. With --check its outputs are judged by the gate's
  // error model (as `vla check` does): a fast answer only counts if it is right.
  std::vector<std::string> verdicts(entries.size());
  std::vector<nlohmann::json> judged(entries.size());
  bool all_pass = true;
  std::map<std::string, gate::Expected> expected;  // by policy: kernels of one policy share the reference and baselines
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const auto t0 = std::chrono::steady_clock::now();
    Outputs out;
    try {
      out = e.run();
    } catch (const std::exception& ex) {
      if (e.device == "external") return external_failed(ex);  // the kernel under test failed: a finding, not our error
      if (dynamic_cast<const std::invalid_argument*>(&ex)) throw InputError("--impl " + e.impl + " does not run this stream: " + ex.what());
      throw;
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << fmt::format("vla bench: {} ({}) first call {}\n", e.impl, e.device, time_str(sec)) << std::flush;
    if (!a.check || !e.policy) continue;
    const std::string key = e.policy->name();
    if (!expected.count(key)) {
      std::cerr << "vla bench: the reference and the error model's baselines for " << key << "\n" << std::flush;
      expected.emplace(key, gate::expect(s, opt, *e.policy));
    }
    const gate::Expected& ex = expected.at(key);
    if (!ex.valid) throw InputError("--check: the stream cannot be judged at " + key + " precision: " + ex.reason);
    const accuracy::Verdict v = gate::judge(out, ex).verdict;
    all_pass = all_pass && v.pass;
    verdicts[i] = fmt::format("{} (worst error/tolerance {:.3g}{})", v.pass ? "pass" : "FAIL", v.worst.ratio,
                              v.pass ? "" : fmt::format(", {} of {} elements outside", v.failures, v.checked));
    judged[i] = {{"pass", v.pass},
                 {"checked", v.checked},
                 {"failures", v.failures},
                 {"worst_error_over_tolerance", std::isfinite(v.worst.ratio) ? v.worst.ratio : 1e308},
                 {"policy", key}};
    std::cerr << "vla bench: " << e.impl << " under the error model: " << verdicts[i] << "\n" << std::flush;
  }

  // Every timed call moves its o out to here, so that the compiler cannot drop the work.
  auto keep = std::make_shared<std::vector<double>>();
  std::vector<std::pair<std::string, std::function<void()>>> calls;
  for (const auto& e : entries) calls.emplace_back(e.impl, [run = e.run, keep] { *keep = run().o; });
  HostInfo host;
  const TimingPlan plan{a.repetitions, a.min_time};
  std::vector<Timed> timed;
  try {
    timed = time_calls(
      calls, plan,
      [](const Timed& t) {
        std::cerr << fmt::format("vla bench: {} median {} over {} measurements ({} calls)\n", t.name, time_str(t.median), t.seconds.size(),
                                 t.calls)
                  << std::flush;
      },
      host);
  } catch (const std::exception& ex) {
    // Only the external kernel can fail now: ours ran once above. A kernel that fails later than its first call
    // fails the bench as it would have failed the first call.
    if (!external) throw;
    return external_failed(ex);
  }

  const double steps = double(d.T), head_steps = double(d.B) * d.H * d.T;
  const double base = timed.front().median;
  nlohmann::json results = nlohmann::json::array();
  std::string table = "| impl | device | median per call | min | max | us per step | head-steps/s | speed vs " + timed.front().name + " |" +
                      std::string(a.check ? " error model |" : "") + "\n| --- | --- | --- | --- | --- | --- | --- | --- |" +
                      std::string(a.check ? " --- |" : "") + "\n";
  for (std::size_t i = 0; i < timed.size(); ++i) {
    const Timed& t = timed[i];
    const Entry& e = entries[i];
    nlohmann::json r = {{"impl", e.impl},
                        {"device", e.device},
                        {"median_s", t.median},
                        {"min_s", t.min},
                        {"max_s", t.max},
                        {"seconds", t.seconds},
                        {"calls", t.calls},
                        {"us_per_step", t.median / steps * 1e6},
                        {"head_steps_per_s", head_steps / t.median},
                        {"speedup_vs_first", base / t.median}};
    if (is_chunked(e.impl)) r["chunk"] = a.chunk;
    if (e.impl == "reference") r["bits"] = a.bits;
    if (a.check && e.policy) r["error_model"] = judged[i];
    results.push_back(r);
    table += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.3e} | {:.2f}x |{}\n", e.impl + (is_chunked(e.impl) ? fmt::format(" (C={})", a.chunk) : ""),
                         e.device, time_str(t.median), time_str(t.min), time_str(t.max), t.median / steps * 1e6, head_steps / t.median,
                         base / t.median, a.check ? " " + (e.policy ? verdicts[i] : std::string("-")) + " |" : "");
  }
  const std::string what =
      std::string("wall time of one call as `vla run` makes it (CUDA: device buffers, copies both ways and launches; CPU: the host "
                  "computation") +
      (external ? "; external: the stream written to a file, the kernel's process reached, its outputs read back" : "") +
      "), median of the repetitions' means, each repetition at least min_time seconds";
  std::cout << "\n" << table << "\n  " << what << "; host: " << host.cpus << " CPUs at " << fmt::format("{:.0f}", host.mhz) << " MHz"
            << (host.frequency_scaling ? " (frequency scaling on: expect noise)" : "") << "\n";

  const std::string date = utc_now();
  if (!a.json.empty()) {
    nlohmann::json j = {{"tool", io::tool_version()},
                        {"command", "bench"},
                        {"date_utc", date},
                        {"host", {{"cpus", host.cpus}, {"mhz", host.mhz}, {"load_avg", host.load_avg}, {"frequency_scaling", host.frequency_scaling}}},
                        {"cuda_available", impl::cuda_available()},
                        {"dims", {{"B", d.B}, {"T", d.T}, {"H", d.H}, {"Dk", d.Dk}, {"Dv", d.Dv}}},
                        {"input", source},
                        {"spec", describe(opt)},
                        {"spec_arguments", gate::spec_arguments(opt)},
                        {"plan", {{"repetitions", plan.repetitions}, {"min_time_s", plan.min_time}}},
                        {"what_is_timed", what},
                        {"results", results}};
    files.set("--json", j.dump(2) + "\n");
  }
  if (!a.md.empty()) {
    const std::string md = fmt::format("# vla bench, {}\n\n{} ({}); spec: {}\n\n{}\n{}; {} repetitions of at least {} s; host: {} CPUs at {:.0f} MHz; {}.\n",
                                       date, dims, source, describe(opt), table, what, plan.repetitions, plan.min_time, host.cpus, host.mhz,
                                       io::tool_version());
    files.set("--md", md);
  }
  files.write();
  for (const std::string& f : {a.json, a.md})
    if (!f.empty()) std::cout << "  wrote " << f << "\n";
  if (!all_pass) {
    std::cerr << "vla bench: an implementation failed the error model (--check): see the table\n";
    return kExitFail;
  }
  return kExitOk;
}

Register reg{Command{
    "bench", "Time implementations side by side on one stream (reference, fused kernels, chunked forms; CUDA when present, else the CPU twins)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<BenchArgs>();
      sub.add_option("--impl", a->impls,
                     "Implementations, comma-separated: reference (certified, --bits), reference-double, fp32, bf16, bf16-state, chunked-fp32, "
                     "chunked-bf16, chunked-tf32, chunked-scan-fp32, chunked-scan-bf16, or the gate's variants (honest, mutants, or a name "
                     "from vla gate --mutation: CPU twins); ratios are against the first")
          ->capture_default_str();
      a->o_device = sub.add_option("--device", a->device, "cpu or cuda for the kernels (default: cuda when available)")
                        ->check(CLI::IsMember({"cpu", "cuda"}));
      sub.add_option("--input", a->input, "A safetensors stream (q, k, v [B,T,H,D], optional u) instead of a generated one");
      a->o_shape = sub.add_option("--shape", a->shape, "B,T,H,D of the generated stream")->capture_default_str();
      a->o_seed = sub.add_option("--seed", a->seed, "Seed of the generated stream")->capture_default_str()->check(at_least(0));
      a->o_chunk = sub.add_option("--chunk", a->chunk, "Chunk size C of the chunked implementations (32 or 64)")->capture_default_str();
      a->o_bits = sub.add_option("--bits", a->bits, "Working precision of --impl reference (MPFR)")->capture_default_str();
      sub.add_option("--repetitions", a->repetitions, "Measurements per implementation")->capture_default_str();
      sub.add_option("--min-time", a->min_time, "Seconds each measurement runs at least (calls are repeated until then)")->capture_default_str();
      gate::add_spec_options(sub, a->spec);
      sub.add_option("--json", a->json, "Write the results as JSON")->check(a_path());
      sub.add_option("--md", a->md, "Write the table as Markdown")->check(a_path());
      sub.add_flag("--check", a->check,
                   "Also judge each kernel's output with the gate's error model (as vla check); exit 1 when one fails, after writing the results");
      a->ext.dtype_flag = "--external-dtype";
      add_external_kernel_options(sub, a->ext, "Also time", true);
      sub.add_flag("--force", a->force, "Replace existing --json / --md files");
      return [a] { return run(*a); };
    }}};

}  // namespace
}  // namespace vla::cli
