// The error model's baselines (docs/ERROR_MODEL.md, "Baselines"): what rounding
// at a precision policy costs on a given stream, measured by running the
// recurrence several times in Monte Carlo arithmetic at that policy's
// precision. Part of the error model (error_model.hpp), in its own file because
// it runs the recurrence while check() only compares numbers.
#pragma once

#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

namespace vla::accuracy {

// Samples of the Monte Carlo run: three, docs/ERROR_MODEL.md says why.
inline constexpr int kBaselineSamples = 3;

// The plain implementation of the policy (left-to-right dot products with
// fused multiply-adds, round to nearest, S and A stored as the policy stores
// them), then `samples` runs of the generic step (core::vla_step) in Monte Carlo
// arithmetic: every arithmetic result carries an independent random relative
// error of up to float's unit roundoff 2^-24 (the product and the sum of each
// fused multiply-add separately), falls on float's subnormal grid below 2^-126
// (rounded at random to a multiple of 2^-149) and overflows to Inf beyond
// FLT_MAX: the rounding errors of an arbitrary float implementation of the spec,
// with none of the lucky cancellations of one fixed order. The deterministic
// run covers what random rounding misses: round-to-nearest errors that add up
// with a bias over long streams. The policy's own rounding points are drawn
// too: S and A stored in bf16 (bf16-state) or tf32 are rounded stochastically
// to a neighbour on that grid, the draw a function of the value and the sample
// (docs/ERROR_MODEL.md, "Why the storage rounding is drawn"). o is left
// unrounded in every run (the model adds its storage rounding, u_out |ref|).
// `rounded` must hold the inputs the candidate consumed (rounded to its input
// type). Deterministic: sample k always uses the same random sequence.
std::vector<Outputs> baselines(const Stream& rounded, const Options& opt, impl::Kind kind, int samples = kBaselineSamples);

// Where the policy stores S and A rounded between steps: bf16 (bf16-state), or
// tf32 for a policy whose state enters tensor-core products as tf32 operands
// (chunked-tf32, vla/gpu/chunked.hpp). The Kind overloads pick none or bf16.
enum class StateRounding { none, bf16, tf32 };
std::vector<Outputs> baselines(const Stream& rounded, const Options& opt, StateRounding state, int samples);

// A second look before a failing verdict stands (docs/ERROR_MODEL.md,
// "Escalation"): Monte Carlo samples first .. first + count - 1, no plain run.
inline constexpr int kEscalationSamples = 16;
std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt, impl::Kind kind, int first,
                                    int count = kEscalationSamples);
std::vector<Outputs> more_baselines(const Stream& rounded, const Options& opt, StateRounding state, int first, int count);

}  // namespace vla::accuracy
