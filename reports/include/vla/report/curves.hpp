// Per-step error curves and what the report does with them: relative errors,
// bits of error, median and worst over runs, log-spaced downsampling for plots,
// and the first step where a curve leaves its envelope.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vla/core/stream.hpp"

namespace vla::report {

// Per step t (0-based) of head (b, h): the row error max_i |o_cand - o_ref| /
// max_i |o_ref| over the Dv elements (the error model's measure of a row).
// A non-finite candidate row gives +inf.
std::vector<double> step_rel_error(const Outputs& cand, const Outputs& ref, int b, int h);

// The floating-point format a value was stored in, for ulp distances.
enum class Format { f32, bf16 };

// Distance in units in the last place between x (representable in fmt) and the
// exact y rounded to fmt: the number of representable values between them.
double ulps_between(double x, double y, Format fmt);

// Bits of error as Herbie reports them: per element log2(1 + ulps), averaged
// over the Dv elements of each step. NaN/Inf in the candidate counts as the
// format's full width (32 or 16 bits).
std::vector<double> step_bits_error(const Outputs& cand, const Outputs& ref, int b, int h, Format fmt);

// Median and maximum across curves, step by step (curves of equal length).
struct Spread {
  std::vector<double> median, worst;
};
Spread spread(const std::vector<std::vector<double>>& curves);

// The first 0-based index t with err[t] > env[t] (NaN error counts as outside),
// or -1 when the curve stays inside. Steps where env is NaN are skipped.
long first_exit(const std::vector<double>& err, const std::vector<double>& env);

// Log-spaced downsampling of a per-step curve (step t+1 at index t) for a plot
// on a log axis: bins of equal width in log10(step), `per_decade` per decade;
// each bin keeps its maximum (kind = max), median (median) or last value (last)
// at the bin's last step. Every step is kept when there are few.
enum class Reduce { max, median, last };
struct XY {
  std::vector<double> x, y;
};
XY log_downsample(const std::vector<double>& v, int per_decade, Reduce kind);

// Steps 1, 2, 4, ... up to T (and T itself): checkpoints for quantities that are
// costly to take at every step.
std::vector<int> doubling_steps(int T);

double median_of(std::vector<double> v);
double quantile_of(std::vector<double> v, double q);

}  // namespace vla::report
