// The double-precision reference runs the sections need, with the state taken
// at chosen steps (the reference's own per-step observer), and stream prefixes.
#pragma once

#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::report {

struct RefRun {
  Outputs out;
  // S_at[h][i]: S (Dv x Dk, row-major) of head h after step steps[i] (batch 0).
  std::vector<std::vector<std::vector<double>>> S_at;
  std::vector<std::vector<std::vector<double>>> A_at;  // same for A (VLA only)
};

// The recurrence at double precision (reference/run.hpp), batch entry 0.
RefRun run_reference(const Stream& s, const Options& opt, const std::vector<int>& steps);

// The first `T` steps of a stream / of per-step outputs (final S, A are not kept).
Stream prefix(const Stream& s, int T);
Outputs prefix_outputs(const Outputs& o, int T);

}  // namespace vla::report
