// What the checks measure, as functions the tests can run on planted inputs
// (tests/claims): each is defined in the claim file that uses it (claims/*.cpp).
// Functions returning a difference compute it at the calling thread's MPFR
// precision (ref::MpfrPrecision), so a caller can judge exactness by precision
// scaling (decide.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vla/claims/fit.hpp"
#include "vla/claims/hp.hpp"
#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::claims::measure {

// la-norm-growth, prop1-bounded-state: the power-law fit of ||S_T||_F over the
// T grid (geometric mean over the streams, each run once at double).
PowerFit state_norm_growth(const std::vector<Stream>& streams, const Options& opt, const std::vector<double>& grid);

// (sherman-morrison-exact uses the properties' sherman_morrison_checks.)

// penalty-contracts-written. `final_A` maps the penalty directions u_1..u_T (rows)
// to the model's A_T; the probe writes e_0 `mass` times, then directions in
// span(e_1, e_2), then e_3 `mass` times (Dk = 6; e_4, e_5 untouched).
struct PenaltyProbe {
  double old_vs_recent = 0;  // |e_0^T A e_0 - e_3^T A e_3|
  double old_vs_free = 0;    // |e_0^T A e_0 - 1/lambda0|
  double untouched = 0;      // ||A x - x/lambda0|| for a unit x in span(e_4, e_5)
  double reorder = 0;        // ||A_T - A_T(reversed or shuffled writes)||_F
  double rq_old = 0, rq_recent = 0;
};
using FinalA = std::function<hp::Mat<hp::Mp>(const std::vector<std::vector<double>>& u)>;
PenaltyProbe penalty_probe(const FinalA& final_A, double lambda0);
FinalA vla_final_A(double lambda0);  // the spec's recurrence

// recursion-is-argmin: relative differences between the recursion's S_t and the
// objective's minimisers, max over t.
struct ArgminDiffs {
  double paper = 0;     // (2.1): sum ||v - S k^||^2 + tr(S M_t S^T)
  double ridge = 0;     // sum ||v - S k^||^2 + lambda0 ||S||_F^2
  double proximal = 0;  // eta_t ||v_t - S k^_t||^2 + tr((S - S_{t-1}) M_t (S - S_{t-1})^T)
};
ArgminDiffs argmin_diffs(const Stream& s, const Options& opt);
// |C_01 C_12 C_20 / (C_10 C_21 C_02) - 1| for the first three keys of `keys`.
double cycle_deviation(const Stream& keys, const Options& opt);

// prop1-bounded-state: the gate-steering stream (Dk = 2, Dv = 1, |v_t| = V): k^_t
// proportional to M_{t-1} g_t, g_t = cos(theta) k0 +- sin(theta) kp. (The null-key
// construction is the properties' p1_sqrt_growth_construction.)
Stream steering_stream(int T, double lambda0, double theta, double V, FeatureMap fm);
// min over t of (||S_t||_F^2 - ||S_{t-1}||_F^2) / V^2 at the calling precision.
double min_square_increment(const Stream& s, const Options& opt, double V);

// prop2-unit-jacobian: the operator of every step, at the calling precision.
struct JacobianStats {
  double max_dev_from_1 = 0, max_dev_formula = 0, max_norm = 0, min_c = 2;
  int kantorovich_violations = 0;
};
JacobianStats jacobian_stats(const Stream& s, const Options& opt);
double unit_rank1_norm(double c);  // sqrt((3 - 2c + sqrt(5 - 4c)) / 2)

// unnormalized-growth (normalize = none), d_h = Dk, Dv = 1, gaussian raw keys
// times `scale`, computed at 256 bits, norms by double SVD of the rounded operators.
struct UnnormStats {
  double max_step = 0, first_step = 0, product = 0;
  double max_formula_dev = 0;  // relative, per-step norm vs the rank-one formula
  double lambda0_A = 0;        // lambda0 ||A_T||_2
  long bound_violations = 0;
};
UnnormStats unnormalized_stats(int dh, double lambda0, double scale, int steps, std::uint64_t seed);
// ||J_T ... J_1 - lambda0 A_T||_F / ||lambda0 A_T||_F at the calling precision.
double telescoping_residual(int dh, double lambda0, double scale, int steps, std::uint64_t seed);
// The same stream with penalty directions u_t of its own (unit, i.i.d. gaussian directions: the paper's learned
// directions, independent of the keys): ||J_1||, max_t ||J_t|| and ||J_T ... J_1||.
UnnormStats unnormalized_stats_own_u(int dh, double lambda0, double scale, int steps, std::uint64_t seed);

// capacity-exact-recall: max_i ||S_n k^_i - v_i|| / ||v_i|| after the stream.
double recall_error(const Stream& s, const Options& opt);
// max_t ||S_t k^_t - ((1 - c_t) S_{t-1} k^_t + c_t v_t)||.
double write_identity(const Stream& s, const Options& opt);
// Unit basis keys e_0..e_{n-1} (identity features), gaussian values.
Stream basis_key_stream(int n, int dk, int dv, std::uint64_t seed);

// state-norm-ratio: ||S_T^linear||_F / ||S_T^VLA||_F at the stream's end.
double norm_ratio(const Stream& s, double lambda0);

}  // namespace vla::claims::measure
