// Per-step trace of one (batch, head) of the VLA recurrence, for the properties,
// claims and reports: what the step computed, as Eigen objects of the scalar.
//
// It runs the one generic step (run_recurrent with an observer) on the selected
// head only, and records after every step t (0-based):
//   A_t (Dk x Dk), optionally S_t (Dv x Dk), k^_t, u_t (the penalty direction
//   actually used, after any u_unit_scaled), a^_t (w_t itself when the gate is
//   not normalised), c_t = a^_t . k^_t, ||S_t||_F and delta_t (after any floor).
// Jacobians are not computed here (the properties component derives them).
//
// Memory: a full trace holds T * Dk^2 scalars of A; use `stride` or with_A =
// false on long streams. Mpfr traces run at the calling thread's precision
// (MpfrPrecision) or at `bits` with trace_head_mpfr.
#pragma once

#include <Eigen/Core>
#include <boost/multiprecision/eigen.hpp>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/reference/mpfr_eigen.hpp"
#include "vla/reference/scalars.hpp"

namespace vla::ref {

template <class Scalar>
struct TraceStep {
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  int t = 0;     // 0-based step index
  Mat A;         // A_t (empty unless TraceOptions::with_A)
  Mat S;         // S_t (empty unless TraceOptions::with_S)
  Vec k_hat;     // k^_t
  Vec u;         // u_t as used
  Vec a_hat;     // a^_t
  Scalar c{};           // gate cosine c_t = a^_t . k^_t
  Scalar state_norm{};  // ||S_t||_F
  Scalar delta{};       // Sherman-Morrison denominator delta_t
};

struct TraceOptions {
  int b = 0, h = 0;     // the head to trace
  bool with_A = true;
  bool with_S = false;
  int stride = 1;       // record steps t with (t + 1) % stride == 0 (and the last)
};

// Validates stream, options and the head index (std::invalid_argument); VLA only.
template <class Scalar>
std::vector<TraceStep<Scalar>> trace_head(const Stream& s, const Options& opt, const TraceOptions& topt);
extern template std::vector<TraceStep<double>> trace_head<double>(const Stream&, const Options&, const TraceOptions&);
extern template std::vector<TraceStep<Float128>> trace_head<Float128>(const Stream&, const Options&, const TraceOptions&);
extern template std::vector<TraceStep<Mpfr>> trace_head<Mpfr>(const Stream&, const Options&, const TraceOptions&);

std::vector<TraceStep<Mpfr>> trace_head_mpfr(const Stream& s, const Options& opt, const TraceOptions& topt, long bits);

// The (b, h) stream alone, as a stream with B = H = 1.
Stream slice_head(const Stream& s, int b, int h);

}  // namespace vla::ref
