// vla fuzz: random and adversarial streams, each judged against the reference
// with the error model; every failure shrunk and kept (a safetensors case plus
// the command that replays it). --shard I/N splits a campaign into disjoint
// seed sets (one process per CI job, core or GPU); --merge joins their corpora.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "external_kernel.hpp"
#include "registry.hpp"
#include "vla/gate/domain.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/spec_args.hpp"

namespace vla::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct FuzzArgs {
  double seconds = 10;
  long cases = 0;
  std::uint64_t seed = 1;
  std::string impl = "production", device, corpus, replay, shard = "0/1", case_seed;
  ExternalKernelOptions ext;  // a kernel outside this repository (--external-cmd / --external-serve)
  std::vector<std::string> merge;
  int max_T = 64, shrink_budget = 200;
  std::vector<int> dims = {16};
  double adversarial = 0.0625;
  CLI::Option *o_impl = nullptr, *o_seconds = nullptr, *o_device = nullptr, *o_cases = nullptr, *o_seed = nullptr, *o_shard = nullptr;
  // The options of a fuzzing run, which --replay and --merge do not take.
  std::vector<CLI::Option*> campaign;
};

// --replay and --merge do other work than a campaign: an option of the campaign given with them would be
// silently ignored (a CI job replaying nothing while it believes it fuzzes), so it is refused.
void refuse_campaign_options(const FuzzArgs& a, const std::string& mode, std::initializer_list<CLI::Option*> also) {
  for (const CLI::Option* o : a.campaign)
    if (o->count() > 0) throw InputError(o->get_name() + " does not apply with " + mode);
  for (const CLI::Option* o : also)
    if (o->count() > 0) throw InputError(o->get_name() + " does not apply with " + mode);
}

// The corpus folder: created if missing; a file of that name is refused before any work.
void prepare_corpus(const std::string& corpus) {
  std::error_code ec;
  if (fs::exists(corpus, ec) && !fs::is_directory(corpus, ec)) throw InputError("--corpus " + corpus + " is a file, not a folder");
  fs::create_directories(corpus, ec);
  if (ec) throw InputError("--corpus " + corpus + ": cannot create the folder (" + ec.message() + ")");
}

// The candidates named by --impl, or the kernel outside this repository.
std::vector<gate::Candidate> candidates_of(const FuzzArgs& a, const std::string& names, impl::Device dev) {
  if (!a.ext.given()) return gate::find_candidates(names, dev);
  return {a.ext.candidate()};
}

// What a replay needs beyond the case to rerun it as it was judged: the device (a CPU twin's failure must not be
// replayed on the CUDA kernel of a GPU host), or the kernel outside this repository with its policy.
std::string replay_options(const FuzzArgs& a, impl::Device dev) {
  return a.ext.given() ? a.ext.replay("") : " --device " + impl::to_string(dev);
}

void check_external(const FuzzArgs& a) {
  a.ext.check();
  if (!a.ext.given()) return;
  if (a.o_impl->count() > 0) throw InputError("--impl does not apply with " + a.ext.flag() + " (the command is the implementation)");
  if (a.o_device->count() > 0) throw InputError("--device does not apply with " + a.ext.flag() + " (the command chooses its device)");
}

std::uint64_t parse_u64(const std::string& s, const char* opt) {
  try {
    std::size_t n = 0;
    if (s.empty() || s[0] == '-' || s[0] == '+') throw std::invalid_argument("signed");  // stoull would wrap "-1" to 2^64 - 1
    const unsigned long long v = std::stoull(s, &n, 0);
    if (n != s.size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw InputError(std::string(opt) + " '" + s + "' is not an unsigned integer (decimal or 0x hex)");
  }
}

std::pair<int, int> parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) throw InputError("--shard '" + s + "' must be I/N (e.g. 0/4)");
  const auto i = parse_u64(s.substr(0, slash), "--shard"), n = parse_u64(s.substr(slash + 1), "--shard");
  if (n < 1 || n > 1000000 || i >= n) throw InputError("--shard '" + s + "': need 0 <= I < N <= 1000000");
  return {int(i), int(n)};
}

impl::Device device_of(const FuzzArgs& a) {
  impl::Device dev = impl::Device::cpu;
  if (!a.device.empty()) dev = impl::parse_device(a.device);
  else if (impl::cuda_available() && a.impl.find(':') == std::string::npos && a.impl.find('/') == std::string::npos) dev = impl::Device::cuda;
  if (dev == impl::Device::cuda && !impl::cuda_available()) throw InputError("--device cuda: no CUDA device is available in this build");
  return dev;
}

void print_verdict(const std::string& what, const gate::Judgement& j) {
  std::cout << fmt::format("  {}: {}\n", what, j.status == gate::Status::invalid ? "input outside the domain: " + j.reason
                                                                               : (j.reason.empty() ? j.verdict.summary() : j.reason));
}

// A case file read back; any error names the file (the spec's checks, e.g. lambda0, do not know it).
gate::StoredCase load_named(const fs::path& f) {
  try {
    return gate::load_case(f);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw InputError(what.find(f.string()) == std::string::npos ? f.string() + ": " + what : what);
  }
}

// Judging nothing is no pass (as vla gate's "judged on no case"): a kernel that skipped every stream, or streams all
// outside the domain, show nothing.
int nothing_judged(const std::string& what) {
  std::cout << what << ": every judgement was outside the domain (skipped or refused): nothing is shown\n";
  return kExitFail;
}

int merge(const FuzzArgs& a, CLI::Option* o_replay) {
  if (a.corpus.empty()) throw InputError("--merge needs --corpus OUT, the folder that receives the merged cases");
  refuse_campaign_options(a, "--merge", {o_replay, a.o_impl, a.o_device});
  if (a.ext.given()) throw InputError(a.ext.flag() + " does not apply with --merge");
  std::vector<fs::path> files;
  for (const auto& d : a.merge)
    for (const auto& f : gate::case_files(d)) files.push_back(f);  // checks each folder exists first
  // Every case read before the corpus is touched: a bad file leaves no half-merged corpus.
  std::vector<gate::StoredCase> cases;
  for (const auto& f : files) cases.push_back(load_named(f));
  prepare_corpus(a.corpus);
  int added = 0, dup = 0;
  for (const auto& c : cases) (gate::copy_case(a.corpus, c).existed ? dup : added) += 1;
  std::cout << fmt::format("vla fuzz --merge: {} cases read from {} folder(s); {} added to {}, {} duplicates skipped\n", files.size(),
                           a.merge.size(), added, a.corpus, dup);
  return kExitOk;
}

int replay(const FuzzArgs& a, CLI::Option* o_corpus) {
  refuse_campaign_options(a, "--replay", {o_corpus});
  const impl::Device dev = device_of(a);
  const std::vector<fs::path> files = gate::case_files(a.replay);
  // Judging nothing is no pass (as vla gate's "judged on no case").
  if (files.empty()) throw InputError("--replay " + a.replay + " holds no case file (*.safetensors, as vla fuzz --corpus saves them)");
  // Every case and its implementations resolved before any verdict: a bad file is named, not found half-way.
  std::vector<std::pair<gate::StoredCase, std::vector<gate::Candidate>>> work;
  for (const auto& f : files) {
    gate::StoredCase c = load_named(f);
    const std::string names = a.o_impl->count() ? a.impl : c.impl;
    try {
      auto cands = candidates_of(a, names, dev);
      work.emplace_back(std::move(c), std::move(cands));
    } catch (const std::exception& e) {
      throw InputError(f.string() + ": " + e.what());
    }
  }
  int fails = 0, n = 0, invalid = 0;
  for (const auto& [c, cands] : work) {
    const fs::path& f = c.file;
    for (const auto& cand : cands) {
      const gate::Judgement j = gate::judge_in_domain(cand, gate::expect(c.stream, c.opt, cand.policy));
      ++n;
      fails += j.status == gate::Status::fail;
      invalid += j.status == gate::Status::invalid;
      print_verdict(fmt::format("{} on {} ({}, B={} T={} H={} D={})", cand.name, f.filename().string(), c.origin, c.stream.dims.B,
                                c.stream.dims.T, c.stream.dims.H, c.stream.dims.Dk),
                    j);
    }
  }
  std::cout << fmt::format("vla fuzz --replay: {} of {} judgements fail\n", fails, n);
  if (!fails && invalid == n) return nothing_judged("vla fuzz --replay");
  return fails ? kExitFail : kExitOk;
}

int run(const FuzzArgs& a, CLI::Option* o_corpus, CLI::Option* o_replay) {
  check_external(a);
  if (!a.merge.empty()) return merge(a, o_replay);
  if (!a.replay.empty()) return replay(a, o_corpus);
  // --case-seed names one case and --cases a count: a budget or seed set given beside them would be ignored.
  if (!a.case_seed.empty())
    for (CLI::Option* o : {a.o_seconds, a.o_cases, a.o_seed, a.o_shard})
      if (o->count() > 0) throw InputError(o->get_name() + " does not apply with --case-seed (one case, whose seed is given)");
  if (a.o_cases->count() > 0 && a.o_seconds->count() > 0) throw InputError("--cases and --seconds are two budgets: give one");
  if (!(a.seconds > 0) && a.cases <= 0 && a.case_seed.empty()) throw InputError("--seconds must be > 0 (or give --cases)");
  if (a.max_T < 1) throw InputError("--max-T must be >= 1");
  for (int d : a.dims)
    if (d != 16 && d != 32 && d != 64 && d != 128) throw InputError("--dims: the kernels' head dimensions are 16, 32, 64, 128 (got " + std::to_string(d) + ")");
  if (!(a.adversarial >= 0 && a.adversarial <= 1)) throw InputError("--adversarial must be in [0, 1]");
  const auto [shard, shards] = parse_shard(a.shard);
  const impl::Device dev = device_of(a);
  const std::vector<gate::Candidate> cands = candidates_of(a, a.impl, dev);
  std::vector<gate::Policy> policies;
  for (const auto& c : cands)
    if (std::find(policies.begin(), policies.end(), c.policy) == policies.end()) policies.push_back(c.policy);
  if (!a.corpus.empty()) prepare_corpus(a.corpus);
  gate::FuzzLimits lim;
  lim.max_T = a.max_T;
  lim.dims = a.dims;
  lim.adversarial = a.adversarial;

  // The limits shape the case a seed draws, so a printed replay carries them.
  const std::string limits = fmt::format(" --max-T {} --dims {} --adversarial {}", a.max_T, fmt::join(a.dims, ","), a.adversarial);
  const bool one = !a.case_seed.empty();
  const std::uint64_t single = one ? parse_u64(a.case_seed, "--case-seed") : 0;
  std::cout << (!a.ext.given() ? fmt::format("vla fuzz: {} implementation(s) on {}; ", cands.size(), impl::to_string(dev))
                               : fmt::format("vla fuzz: an external kernel {} `{}`, judged as {}; ", a.ext.how(), a.ext.command(), a.ext.dtype))
            << (one ? fmt::format("case seed 0x{:016x}\n", single)
                    : fmt::format("seed {}, shard {}/{}, T <= {}, D in {{{}}}, {} adversarial; {}\n", a.seed, shard, shards, a.max_T,
                                  fmt::join(a.dims, ","), a.adversarial,
                                  a.cases > 0 ? fmt::format("{} cases", a.cases) : fmt::format("{} s", a.seconds)))
            << std::flush;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  long streams = 0, judged = 0, invalid = 0, failures = 0, saved = 0;
  double shrink_s = 0;
  double last_progress = 0;  // a long campaign says where it is every 10 s (on stderr: the log on stdout stays the verdicts)
  for (std::uint64_t j = 0;; ++j) {
    if (one ? j >= 1 : (a.cases > 0 ? long(j) >= a.cases : elapsed() >= a.seconds)) break;
    if (const double now = elapsed(); now - last_progress >= 10) {
      last_progress = now;
      std::cerr << fmt::format("vla fuzz: {:.0f} s{}, {} cases, {} judged, {} failures\n", now,
                               a.cases > 0 ? "" : fmt::format(" of {}", a.seconds), a.cases > 0 ? fmt::format("{} of {}", j, a.cases) : std::to_string(j),
                               judged, failures)
                << std::flush;
    }
    const std::uint64_t seed = one ? single : gate::case_seed(a.seed, gate::shard_index(shard, shards, j));
    for (const gate::Policy& policy : policies) {
      const gate::FuzzCase fc = gate::make_fuzz_case(seed, policy.input(), lim);
      ++streams;
      const gate::Expected e = gate::expect(fc.stream, fc.opt, policy);
      for (const auto& c : cands) {
        if (!(c.policy == policy)) continue;
        ++judged;
        const gate::Judgement jd = gate::judge_in_domain(c, e);
        if (jd.status == gate::Status::invalid) ++invalid;
        if (one) print_verdict(fmt::format("{} ({}, B={} T={} H={} D={})", c.name, fc.origin, fc.stream.dims.B, fc.stream.dims.T,
                                           fc.stream.dims.H, fc.stream.dims.Dk),
                               jd);
        if (jd.status != gate::Status::fail) continue;
        ++failures;
        const auto ts = Clock::now();
        const gate::Shrunk sh = gate::shrink(c, fc.stream, fc.opt, a.shrink_budget);
        shrink_s += std::chrono::duration<double>(Clock::now() - ts).count();
        const Dims& d = sh.stream.dims;
        std::cout << fmt::format("  FAIL {} seed 0x{:016x} ({}): {}\n    shrunk in {} judgements to B={} T={} H={} D={}: {}\n", c.name, seed,
                                 fc.origin, jd.reason.empty() ? jd.verdict.summary() : jd.reason, sh.judgements, d.B, d.T, d.H, d.Dk,
                                 sh.judgement.reason.empty() ? sh.judgement.verdict.summary() : sh.judgement.reason);
        if (!a.corpus.empty()) {
          const gate::SavedCase s =
              gate::save_case(a.corpus, c, sh.stream, fc.opt, fc.origin, seed, sh.judgement.verdict.summary(), replay_options(a, dev));
          saved += !s.existed;
          std::cout << "    " << (s.existed ? "already in the corpus: " : "saved ") << s.file.string() << "\n    replay: " << s.replay << "\n";
        } else {
          const std::string impl_arg = a.ext.given() ? "" : " --impl " + c.name;  // the external kernel is named by its options
          std::cout << "    replay: vla fuzz" << impl_arg << fmt::format(" --case-seed 0x{:016x}", seed) << limits << replay_options(a, dev)
                    << "\n";
        }
        std::cout << std::flush;
      }
    }
  }
  const double t = elapsed();
  const double work = std::max(t - shrink_s, 1e-9);
  std::cout << fmt::format("vla fuzz: {} streams, {} cases judged ({} outside the domain) in {:.1f} s: {:.0f} cases/s ({:.0f} streams/s, "
                           "shrinking excluded); {} failures{}\n",
                           streams, judged, invalid, t, judged / work, streams / work, failures,
                           a.corpus.empty() ? "" : fmt::format(", {} new cases in {}", saved, a.corpus));
  if (!failures && invalid == judged) return nothing_judged("vla fuzz");
  return failures ? kExitFail : kExitOk;
}

Register reg{Command{
    "fuzz", "Fuzz the implementations against the reference; shrink and keep failures",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<FuzzArgs>();
      a->o_seconds = sub.add_option("--seconds", a->seconds, "Time budget")->capture_default_str();
      a->o_cases = sub.add_option("--cases", a->cases, "Stop after this many cases instead (per precision policy)")->check(at_least(1));
      a->o_seed = sub.add_option("--seed", a->seed, "Campaign seed")->capture_default_str()->check(at_least(0));
      a->o_impl = sub.add_option("--impl", a->impl, "Implementations (as for vla gate)")->capture_default_str();
      a->o_device = sub.add_option("--device", a->device, "cpu or cuda (default: cuda when available)")->check(CLI::IsMember({"cpu", "cuda"}));
      add_external_kernel_options(sub, a->ext, "Fuzz", true);
      auto* o_corpus = sub.add_option("--corpus", a->corpus, "Keep shrunk failures here (created if missing)")->check(a_path());
      auto* o_replay = sub.add_option("--replay", a->replay, "Re-judge stored cases (a file or a folder); takes --impl, --device, --external-*");
      a->o_shard = sub.add_option("--shard", a->shard, "I/N: run the I-th of N disjoint seed sets")->capture_default_str();
      sub.add_option("--merge", a->merge, "Merge these corpus folders into --corpus, without duplicates; takes no other option")->expected(1, -1);
      auto* o_case_seed = sub.add_option("--case-seed", a->case_seed, "Run the one case with this seed (as printed by a failure)");
      auto* o_max_t = sub.add_option("--max-T", a->max_T, "Longest stream")->capture_default_str();
      auto* o_dims = sub.add_option("--dims", a->dims, "Head dimensions to draw from")->capture_default_str()->delimiter(',');
      auto* o_adv = sub.add_option("--adversarial", a->adversarial, "Fraction of cases from the adversarial search")->capture_default_str();
      auto* o_shrink = sub.add_option("--shrink-budget", a->shrink_budget, "Judgements spent shrinking one failure (0: keep the case unshrunk)")
                           ->capture_default_str()
                           ->check(at_least(0));
      a->campaign = {a->o_seconds, a->o_cases, a->o_seed, a->o_shard, o_case_seed, o_max_t, o_dims, o_adv, o_shrink};
      return [a, o_corpus, o_replay] { return run(*a, o_corpus, o_replay); };
    }}};

}  // namespace
}  // namespace vla::cli
