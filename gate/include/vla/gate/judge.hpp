// Judging one candidate run against the reference with the error model
// (gpu/include/vla/gpu/error_model.hpp, docs/ERROR_MODEL.md).
//
// The reference and the error model's baseline depend only on the stream, the
// options and the precision policy, not on the candidate: `expect` computes them
// once so that many candidates (the mutants, the honest variants) share them.
// The policy is the candidate's own (Candidate::policy): a fused kind's, or a
// chunked kind's such as chunked-tf32 (policy.hpp).
#pragma once

#include <string>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/policy.hpp"
#include "vla/gpu/error_model.hpp"

namespace vla::gate {

// The stream as implementation `kind` consumes it: every value rounded once to
// float (fp32) or directly to bf16 (bf16, bf16-state). The reference is fed this.
Stream round_inputs(const Stream& s, impl::Kind kind);
// True when some input of `s` is not exactly representable in kind's input type
// (a tool must then say that it rounded the inputs).
bool needs_rounding(const Stream& s, impl::Kind kind);

struct Expected {
  Policy policy;       // the precision policy the candidates are judged by
  Stream input;        // rounded inputs
  Options opt;
  Outputs ref;         // the recurrence in double on `input`
  std::vector<Outputs> base;  // the error model's baselines on `input` (docs/ERROR_MODEL.md)
  std::vector<double> gain;   // accuracy::readout_gain on `input`: the o rows' floor at the readout terms' scale
  accuracy::ReadoutTerms terms;  // accuracy::readout_terms on `input`: the o rows' range tests
  mutable std::vector<Outputs> more;  // the escalation's extra samples, made on the first failure
  bool valid = true;   // false: the stream is outside the spec's domain at this precision
  std::string reason;  // why not valid (e.g. a key whose features round to zero)
  // The baselines as accuracy::check takes them.
  std::vector<const Outputs*> base_ptrs() const {
    std::vector<const Outputs*> p;
    for (const auto& b : base) p.push_back(&b);
    return p;
  }
};

// Why the stream cannot be judged at this policy's precision (empty: it can):
// bad values, a value beyond the input type's range once rounded, a key whose
// features vanish at this precision. expect's validation, without the runs.
std::string invalid_reason(const Stream& raw, const Options& opt, const Policy& policy);

// Rounds, validates (never throws for bad values: sets valid = false), runs the
// reference and the baseline.
Expected expect(const Stream& raw, const Options& opt, const Policy& policy);

enum class Status { pass, fail, invalid };
std::string to_string(Status);

struct Judgement {
  Status status = Status::invalid;
  accuracy::Verdict verdict;  // pass / fail
  std::string reason;         // invalid: why; a candidate that threw: its message (then status fail)
  double o_rel_error = 0;     // max over judged o rows (before any breakdown) of max_i |cand - ref| / max(max_i |ref|, 2^-126)
  bool escalated = false;     // the first check failed and the verdict is the second look's (docs/ERROR_MODEL.md)
};

// A failing first check gets a second look with accuracy::kEscalationSamples
// more Monte Carlo baselines (made once per Expected); that verdict stands.
Judgement judge(const Outputs& cand, const Expected& e);
// Runs the candidate on e.input and judges it. A candidate that throws on a
// valid stream fails (its message goes to `reason`).
Judgement run_and_judge(const Candidate& c, const Expected& e);

}  // namespace vla::gate
