// vla check: judges the outputs of any implementation of the spec (ours, a
// Triton kernel, a PyTorch module) against the reference, given the inputs, with
// the error model of docs/ERROR_MODEL.md. Exit 0 pass, 1 fail, 2 bad input.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "output_path.hpp"
#include "registry.hpp"
#include "vla/gate/candidate_file.hpp"
#include "vla/gate/external.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/policy.hpp"
#include "vla/gate/report.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/io/version.hpp"

namespace vla::cli {
namespace {

struct CheckArgs {
  std::string input, candidate, dtype, json;
  bool force = false;
  gate::SpecArgs spec;
};

std::string where(const accuracy::Worst& w) {
  if (w.t < 0) return fmt::format("{}[b={}, h={}, i={}] (final)", w.quantity, w.b, w.h, w.index);
  if (w.quantity == "state_norm") return fmt::format("state_norm[b={}, t={}, h={}]", w.b, w.t, w.h);
  return fmt::format("{}[b={}, t={}, h={}, i={}]", w.quantity, w.b, w.t, w.h, w.index);
}

int run(const CheckArgs& a) {
  const Options opt = gate::build_options(a.spec);
  const gate::Policy policy = gate::parse_policy(a.dtype);  // tf32: the chunked-tf32 policy (docs/CHUNKED.md section 4)
  const impl::Kind kind = policy.input();
  OutputFiles files(a.force);
  files.input("--input", a.input);
  files.input("--candidate", a.candidate);
  files.output("--json", a.json);
  files.check();
  const io::StreamFile in = io::load_stream(a.input);
  validate_stream(in.stream, opt);
  check_ratio_readout_defined(in.stream, opt);  // as vla run: o is undefined there, so no candidate value is right or wrong
  const Dims& d = in.stream.dims;
  std::cout << fmt::format("vla check: input {}: B={} T={} H={} Dk={} Dv={}; candidate {} as {}\n", a.input, d.B, d.T, d.H, d.Dk, d.Dv,
                           a.candidate, a.dtype)
            << "  spec: " << describe(opt) << "\n";
  if (gate::needs_rounding(in.stream, kind))
    std::cout << "  note: the input holds values that " << a.dtype << " cannot represent; they are rounded once to "
              << (kind == impl::Kind::fp32 ? "float32" : "bf16") << " (what a " << a.dtype
              << " implementation consumes) and the reference is fed the rounded values\n";
  const gate::Expected e = gate::expect(in.stream, opt, policy);
  if (!e.valid) throw InputError("the input cannot be run at " + a.dtype + " precision: " + e.reason);
  const gate::CandidateFile cf = gate::load_candidate(a.candidate, d);
  std::string present = "o";
  for (const char* n : {"S", "A", "state_norm"})
    if (cf.dtypes.count(n)) present += std::string(", ") + n;
  std::cout << "  checking " << present << " against the reference (the recurrence in double on the rounded inputs)\n";

  const gate::Judgement j = gate::judge(cf.out, e);
  const accuracy::Verdict& v = j.verdict;
  const accuracy::Worst& w = v.worst;
  std::cout << fmt::format("  {}: {} of {} elements outside the error model\n", v.pass ? "PASS" : "FAIL", v.failures, v.checked);
  if (v.first_fail_step >= 0) std::cout << "  first failing step: t=" << v.first_fail_step << "\n";
  if (v.beyond > 0)
    std::cout << fmt::format("  note: {} elements not judged, the first at step t={}: the plain {} implementation itself loses every digit or "
                             "overflows there (from a breakdown on, or in a row that cancels below the rounding of its terms), so no {} "
                             "implementation can be judged on them; the candidate has {} non-finite values "
                             "among them\n",
                             v.beyond, v.first_beyond_step, a.dtype, a.dtype, v.beyond_nonfinite);
  std::cout << fmt::format("  worst element {}: candidate {:.9g}, reference {:.9g}; error {:.3g} ({:.3g} relative, {:.3g} ulp of {}); "
                           "tolerance {:.3g}; error/tolerance {:.3g}\n",
                           where(w), w.cand, w.ref, w.err, w.rel, w.ulps,
                           (w.quantity == "o" && kind != impl::Kind::fp32) ? "bf16" : "float32", w.tol, w.ratio);
  if (!a.json.empty()) {
    // JSON has no NaN or infinity (nlohmann writes null, which reads as "absent"): a non-finite value is named.
    auto num = [](double x) -> nlohmann::json {
      if (std::isfinite(x)) return x;
      return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
    };
    nlohmann::json out = {{"tool", io::tool_version()},
                          {"input", a.input},
                          {"candidate", a.candidate},
                          {"dtype", a.dtype},
                          {"spec", describe(opt)},
                          {"pass", v.pass},
                          {"checked", v.checked},
                          {"failures", v.failures},
                          {"first_fail_step", v.first_fail_step},
                          {"not_judged", {{"elements", v.beyond}, {"from_step", v.first_beyond_step}, {"non_finite", v.beyond_nonfinite}}},
                          {"worst", {{"where", where(w)}, {"candidate", num(w.cand)}, {"reference", num(w.ref)}, {"error", num(w.err)},
                                     {"relative", num(w.rel)}, {"ulps", num(w.ulps)}, {"tolerance", num(w.tol)},
                                     {"ratio", std::isfinite(w.ratio) ? w.ratio : 1e308}}}};
    files.set("--json", out.dump(2) + "\n");
    files.write();
  }
  return v.pass ? kExitOk : kExitFail;
}

Register reg{Command{
    "check", "Check any implementation's outputs (o, and S, A, state_norm when present) against the reference",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CheckArgs>();
      sub.add_option("--input", a->input, "The inputs the candidate was run on (q, k, v [B,T,H,D], optional u)")->required();
      sub.add_option("--candidate", a->candidate, "The candidate's outputs: o [B,T,H,Dv]; S, A, state_norm when present")->required();
      sub.add_option("--dtype", a->dtype, "The candidate's precision policy (tf32: float in and out, products on tf32 tensor cores)")->required()->check(CLI::IsMember({"fp32", "bf16", "bf16-state", "tf32"}));
      sub.add_option("--json", a->json, "Also write the verdict as JSON")->check(a_path());
      sub.add_flag("--force", a->force, "Replace an existing --json file");
      gate::add_spec_options(sub, a->spec);
      return [a] { return run(*a); };
    }}};

}  // namespace
}  // namespace vla::cli
