#include "vla/gate/judge.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "vla/core/bf16.hpp"
#include "vla/gpu/error_baselines.hpp"
#include "vla/gpu/inputs.hpp"
#include "vla/reference/models.hpp"

namespace vla::gate {

namespace {
double round_one(double x, impl::Kind kind) {
  return kind == impl::Kind::fp32 ? double(static_cast<float>(x)) : double(core::round_bf16_from_double(x));
}
}  // namespace

Stream round_inputs(const Stream& s, impl::Kind kind) {
  Stream r = s;
  for (auto* x : {&r.q, &r.k, &r.v, &r.u})
    for (auto& e : *x) e = round_one(e, kind);
  return r;
}

bool needs_rounding(const Stream& s, impl::Kind kind) {
  for (const auto* x : {&s.q, &s.k, &s.v, &s.u})
    for (double e : *x)
      if (round_one(e, kind) != e && e == e) return true;
  return false;
}

std::string to_string(Status s) { return s == Status::pass ? "pass" : s == Status::fail ? "fail" : "invalid"; }

namespace {

// invalid_reason, given the stream already rounded to the policy's input type.
std::string invalid_reason(const Stream& raw, const Stream& rounded, const Options& opt, impl::Kind kind) {
  const std::string type = kind == impl::Kind::fp32 ? "float32" : "bf16";
  try {
    validate_stream(raw, opt);
  } catch (const std::invalid_argument& err) {
    return err.what();
  }
  try {
    validate_stream(rounded, opt);  // e.g. a value beyond the type's range
  } catch (const std::invalid_argument& err) {
    return "once rounded to " + type + ": " + err.what();
  }
  try {
    gpu::check_rounded_keys(gpu::prepare_inputs(rounded, kind != impl::Kind::fp32), opt);  // features that vanish at this precision
  } catch (const std::invalid_argument& err) {
    return err.what();
  }
  return "";
}

}  // namespace

std::string invalid_reason(const Stream& raw, const Options& opt, const Policy& policy) {
  return invalid_reason(raw, round_inputs(raw, policy.input()), opt, policy.input());
}

Expected expect(const Stream& raw, const Options& opt, const Policy& policy) {
  Expected e;
  e.policy = policy;
  e.opt = opt;
  e.input = round_inputs(raw, policy.input());
  e.reason = invalid_reason(raw, e.input, opt, policy.input());
  if (!e.reason.empty()) {
    e.valid = false;
    return e;
  }
  e.ref = ref::to_outputs(ref::run_model<double>(e.input, opt));
  e.base = policy.baselines(e.input, opt);
  e.gain = accuracy::readout_gain(e.input, opt);
  e.terms = accuracy::readout_terms(e.input, opt);
  return e;
}

Judgement judge(const Outputs& cand, const Expected& e) {
  Judgement j;
  if (!e.valid) {
    j.reason = e.reason;
    return j;
  }
  std::vector<const Outputs*> bases = e.base_ptrs();
  const accuracy::Precision prec = e.policy.precision();
  j.verdict = accuracy::check(cand, e.ref, bases, prec, {}, e.gain, e.terms);
  if (!j.verdict.pass) {
    if (e.more.empty()) e.more = e.policy.more_baselines(e.input, e.opt);
    for (const auto& b : e.more) bases.push_back(&b);
    j.verdict = accuracy::check(cand, e.ref, bases, prec, {}, e.gain, e.terms);
    j.escalated = true;
  }
  j.status = j.verdict.pass ? Status::pass : Status::fail;
  // Over the judged rows only: those before the policy breaks down (the
  // earliest such step of any head, docs/ERROR_MODEL.md).
  const Dims& d = e.ref.dims;
  const int dv = d.Dv, judged_T = j.verdict.first_beyond_step >= 0 ? j.verdict.first_beyond_step : d.T;
  for (std::size_t row = 0; dv > 0 && row < e.ref.o.size() / dv; ++row) {
    if (static_cast<int>((row / d.H) % d.T) >= judged_T) continue;
    double err = 0, mag = 0;
    for (int i = 0; i < dv; ++i) {
      err = std::max(err, std::fabs(cand.o[row * dv + i] - e.ref.o[row * dv + i]));
      mag = std::max(mag, std::fabs(e.ref.o[row * dv + i]));
    }
    // Relative to the row's largest value, or to float's smallest normal number
    // for rows below it (where a stored value is rounded to a fixed grid).
    mag = std::max(mag, 0x1p-126);
    if (std::isfinite(err) && std::isfinite(mag)) j.o_rel_error = std::max(j.o_rel_error, err / mag);
  }
  return j;
}

Judgement run_and_judge(const Candidate& c, const Expected& e) {
  if (!e.valid) return judge(Outputs{}, e);
  Outputs out;
  try {
    out = c.run(e.input, e.opt);
  } catch (const std::exception& err) {
    Judgement j;
    j.status = Status::fail;
    j.verdict.pass = false;
    j.reason = std::string(c.name) + " threw on a valid stream: " + err.what();
    return j;
  }
  if (!(out.dims == e.ref.dims)) {
    Judgement j;
    j.status = Status::fail;
    j.verdict.pass = false;
    j.reason = c.name + " returned outputs of the wrong shape";
    return j;
  }
  return judge(out, e);
}

}  // namespace vla::gate
