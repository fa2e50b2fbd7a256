// What the properties measure, written once for the property tests, the claims
// ledger and the reports: the recurrence Jacobian's spectral norm (Proposition 2),
// the Sherman-Morrison residual and its error model, and the state-norm plateau
// test (Proposition 1). Derivations: docs/FINDINGS.md.
//
// The templates are instantiated for double and vla::ref::Mpfr in the library
// (src/measures_*.cpp) only; Mpfr results are computed at the calling thread's
// precision (ref::MpfrPrecision).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "vla/core/recurrence.hpp"
#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/properties/generators.hpp"
#include "vla/reference/mpfr_eigen.hpp"
#include "vla/reference/run.hpp"
#include "vla/reference/scalars.hpp"

namespace vla::props {

using ref::Mpfr;
template <class T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// ---- Proposition 2: the recurrence Jacobian ---------------------------------
// S_t = S_{t-1} + (v_t - S_{t-1} k^_t) a^_t^T is affine in S_{t-1}; its linear
// part is the operator J_t : X -> X (I - k^_t a^_t^T) on Dv x Dk matrices with the
// Frobenius norm. jacobian_operator returns its (Dv Dk) x (Dv Dk) matrix acting on
// row-major vec(X); jacobian_spectral_norm its largest singular value (Eigen's
// JacobiSVD at T's precision). Valid for any vectors (normalised or not).
template <class T>
Mat<T> jacobian_operator(const Vec<T>& kh, const Vec<T>& a, int dv);
// P = I - kh a^T, the Dk x Dk factor of that operator (J_t X = X P): written once for
// the operator, the windows of gradient_flow.hpp and the adversary's objectives.
template <class T>
Mat<T> step_map(const Vec<T>& kh, const Vec<T>& a);
template <class T>
T jacobian_spectral_norm(const Vec<T>& kh, const Vec<T>& a, int dv = 1);

// The corrected statement (docs/FINDINGS.md, P2): for x, y in R^n with n >= 2,
// ||I - x y^T||_2^2 = (s + sqrt(s^2 - 4 d^2)) / 2, s = 2 - 2 y.x + |x|^2 |y|^2,
// d = 1 - y.x. For unit k^, a^ with c = a^.k^ in (0, 1]:
//   ||J_t||_2 = sqrt((3 - 2c + sqrt(5 - 4c)) / 2)  in [1, golden ratio),
// equal to 1 iff c = 1 (a^_t = k^_t). For n = 1 the norm is |1 - y x|.
template <class T>
T rank_one_update_norm(const T& ydotx, const T& x2y2, int n);
template <class T>
T jacobian_norm_of_cos(const T& c);
// Since A_t is SPD, c_t >= 2 sqrt(kappa) / (1 + kappa) with kappa = cond_2(A_t)
// (Kantorovich), so ||J_t||_2 <= jacobian_norm_of_cos(2 sqrt(kappa) / (1 + kappa)).
template <class T>
T jacobian_norm_bound_of_kappa(const T& kappa);

// The Jacobian obtained from the implementation itself: the step run (through
// core::vla_step at Mpfr) on S_{t-1} = E_ij with v_t = 0 maps E_ij to J_t E_ij,
// because the step is affine in S_{t-1} and k^_t, a^_t do not depend on it.
// A_prev is A_{t-1} (I / lambda0 for t = 0); t is 0-based. Current precision.
Mat<Mpfr> jacobian_operator_from_step(const Stream& s, const Options& opt, int b, int h, int t, const Mat<Mpfr>& A_prev);

// ---- Sherman-Morrison ------------------------------------------------------
// M_t = lambda0 I + sum_{s<=t} u_s u_s^T from the penalty directions the run
// actually used (the trace's u_t, after any u_unit_scaled).
template <class T>
Mat<T> penalty_matrix(const std::vector<Vec<T>>& us, double lambda0, int dk, int upto);

struct SmCheck {
  double residual = 0;       // ||A_t M_t - I||_F
  double bound = 0;          // the error model's bound on it (sm_residual_bound); inf once a ridge was added
  double kappa = 0;          // cond_2(M_t)
  double symmetry = 0;       // ||A_t - A_t^T||_F / ||A_t||_F
  double min_eig = 0;        // lambda_min((A_t + A_t^T)/2)
  double exact_min_eig = 0;  // 1 / lambda_max(M_t), the exact inverse's
  double loewner = 0;        // lambda_min of sym(A_{t-1} - A_t) (>= 0 in exact arithmetic)
  double loewner_bound = 0;  // how far below 0 rounding may take it (local step error)
};

// The error model (first order; docs/FINDINGS.md, SM). With n = Dk, unit roundoff
// u_r, g = gamma_{n+1} = (n+1) u_r / (1 - (n+1) u_r), a = sqrt(n) / lambda0 (>= ||A_s||_F,
// since A_s <= A_0 = I / lambda0) and w_s = ||u_s||, the step's local error is
//   e_s <= a (u_r + 5 g a w_s^2 (1 + a w_s^2)),
// it reaches A_t as A_t M_s E_s M_s A_t (the SM map's derivative telescopes), and
// ||A_t M_s||_2 <= sqrt(kappa(M_t)), so
//   ||A_t M_t - I||_F <= 2 sqrt(kappa(M_t)) sum_{s<=t} ||M_s||_2 e_s
// (the factor 2 covers second-order terms while the bound is below 1/2).
double sm_local_error(int dk, double lambda0, double w2, double unit_roundoff);
double sm_residual_bound(int dk, double lambda0, const std::vector<double>& w2, const std::vector<double>& mnorm,
                         double kappa_t, double unit_roundoff);

// Runs the trace (Mpfr at `bits`) and checks every step t: residual, SPD,
// symmetry and the Loewner order. The residual is computed at 2 bits + 64 from
// the traced A_t and the traced u's, so it adds no error of its own.
std::vector<SmCheck> sherman_morrison_checks(const Stream& s, const Options& opt, int b, int h, long bits);
// The same for the double reference (A_t in double, measured in Mpfr).
std::vector<SmCheck> sherman_morrison_checks_double(const Stream& s, const Options& opt, int b, int h);
// ||A_t M_t - I||_F for one A and its penalty directions, at T's precision.
template <class T>
T sherman_morrison_residual(const Mat<T>& A, const std::vector<Vec<T>>& us, double lambda0, int upto);

// ---- The reference against itself: double vs Mpfr -----------------------------
// A first-order running error bound for the double reference, evaluated along
// the exact (Mpfr) trajectory (docs/FINDINGS.md, "cross-precision"). With
// u = 2^-53, n = Dk, gamma_j = j u / (1 - j u), per step t:
//   dk  = (n/2 + 4) u + n eta / ||phi(k)||^2               k^ (phi, norm, division; underflowing squares)
//   eA  = ||A||_2 (R_t + ||A||_2 sum_s 2 ||u_s|| du_s)   A_t (Sherman-Morrison model
//                                                         + the rounded penalty u = k^)
//   dw  = eA + ||A||_2 dk + gamma_n ||A||_F             w = A_t k^
//   da  = 2 dw / ||w|| + (n/2 + 3) u                     a^ = w / ||w||
//   rho = gamma_{n+1} (||v|| + ||S_{t-1}||_F)            rounding of r = v - S k^
//   eS_t = sigma(c_t) eS_{t-1} + ||S_{t-1}||_F dk + rho + ||r|| da + u ||S_t||_F
//   eN  = eS_t + (gamma_{n Dv} / 2 + u) ||S_t||_F + sqrt((n Dv + 2) eta)   ||S_t||_F
//   dn_t = dn_{t-1} + 2 u |phi(k_t)| + u |n_t|             n_t = n_{t-1} + phi(k_t)
//   eO_i = (||dS_i|| |phi(q)| + gamma_n |S_i||phi(q)|) / den + |o_i| (dn |phi(q)| + gamma_n |n||phi(q)|) / den + u |o_i|
// plus, in every bound, an absolute (n + 4) eta per operation chain for underflow
// (eta = 2^-1074 >= the 2^-1075 by which a subnormal result errs absolutely); the
// measured errors must stay below twice these (first order).
struct PrecisionCheck {
  int t = 0;
  double err_S = 0, bound_S = 0;    // ||S~_t - S_t||_F
  double err_A = 0, bound_A = 0;    // ||A~_t - A_t||_F
  double err_N = 0, bound_N = 0;    // | ||S_t||_F~ - ||S_t||_F |
  double err_O = 0, bound_O = 0;    // max_i |o~_t,i - o_t,i|
  double scale_S = 0, scale_A = 0;  // ||S_t||_F, ||A_t||_F (exact)
  double scale_O = 0;               // max_i |o_t,i| (exact); bound_O is inf when the
                                    // readout denominator's bound reaches half of it
};
// Paper options only (normalize both, no stabiliser); std::invalid_argument otherwise.
std::vector<PrecisionCheck> double_vs_mpfr(const Stream& s, const Options& opt, int b, int h, long bits);

// ---- The double reference's loss of accuracy --------------------------------
// How many of double's 53 bits the double reference loses, measured as
// certify.hpp measures its certified bits: per group (the o row of the step,
// S_t, A_t, ||S_t||_F), err = max |x~ - x| over the group's elements and
// scale = max |x| (x exact, x~ double), lost = 53 - min(53, -log2(err / scale)),
// at least 0. A group whose exact value is 0 loses nothing when x~ = 0 too and
// everything otherwise; a non-finite x~ where x is finite loses everything.
struct BitsLost {
  double o = 0, S = 0, A = 0, state_norm = 0;
  double state() const;  // max(S, A, state_norm): what the recurrence carries forward
  double max() const;    // every group (certify.hpp's minimum, as bits lost)
};
double bits_lost(double rel);  // one group, from its err / scale (0: exact, inf: nothing left)

// The recurrence of one head (VLA) at `bits` (MPFR), advanced step by step
// beside a double run fed the same inputs, so that the adversary can score each
// candidate step by what the double step lost (objective_reference_bits_lost).
// compare() runs one step from the kept state without keeping it; keep() keeps
// the last step compared.
class ExactHead {
 public:
  ExactHead(int dk, int dv, const Options& opt, long bits);
  ~ExactHead();
  ExactHead(const ExactHead&) = delete;
  ExactHead& operator=(const ExactHead&) = delete;
  // q, k (dk), v (dv), u (dk or null): the step's double inputs, taken exactly.
  // dbl, o_dbl: the double run's state after the same step and its output row.
  BitsLost compare(const double* q, const double* k, const double* v, const double* u,
                   const core::HeadState<double>& dbl, const double* o_dbl, double state_norm_dbl);
  void keep();

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

// ---- The reference against itself across precisions ---------------------------
// The correct bits of a run x (any of the reference's scalars) against `exact` (a
// run at much higher precision), measured as certify.hpp measures certified bits:
// per group (each o row, each head's S and A, each ||S_t||_F element),
// -log2(max |x - exact| / max |exact|), the minimum over groups, at most `cap`
// (the working precision). Compared at exact's precision (nothing rounded).
template <class Scalar>
double correct_bits(const ref::Result<Scalar>& x, const ref::Result<Mpfr>& exact, double cap);

// ---- Proposition 1: plateau ------------------------------------------------
// Operational definition. With M(t) = max_{s<=t} ||S_s||_F, the growth exponent
// over the last doubling is beta = log2(M(T) / M(T/2)): a bounded state has
// beta -> 0, a state growing like t^p has beta = p (additive linear attention:
// p = 1; a random walk: p = 1/2). "Reaches a plateau by T" means beta <= 1/4,
// halfway (in exponent) between bounded and diffusive growth. Needs T >= 2.
struct PlateauTest {
  int T = 0;
  double max_half = 0;  // M(T/2)
  double max_full = 0;  // M(T)
  double beta = 0;      // growth exponent over the last doubling
  bool plateau = false;
  static constexpr double kBetaMax = 0.25;
};
PlateauTest state_norm_plateau_test(const std::vector<double>& state_norm);
// The same on ||S_t||_F / max_{s<=t} ||v_s||: with unbounded (e.g. heavy-tailed)
// values the state may follow the largest value so far, which is not the growth
// the proposition is about.
PlateauTest state_norm_plateau_test(const std::vector<double>& state_norm, const std::vector<double>& value_norm);
// beta over every doubling 1->2, 2->4, ..., for reports.
std::vector<double> growth_exponents(const std::vector<double>& state_norm);

// The refutation of Proposition 1 as a construction (docs/FINDINGS.md, P1):
// Dk = 2, Dv = 1, identity feature map, u = k^. Each key is the unit vector
// orthogonal to the current state S_{t-1} (e_1 while S = 0), so the residual is
// r_t = v_t, and v_t = +-V takes the sign of S_{t-1} . a^_t; then
//   ||S_t||^2 = ||S_{t-1}||^2 + 2 r_t (S_{t-1} . a^_t) + r_t^2 >= ||S_{t-1}||^2 + V^2,
// so ||S_T||_F >= V sqrt(T) although every ||v_t|| = V and every key is unit.
// Built with the MPFR step at `bits`; keys are then rounded to double (the
// replay measures the resulting tiny S_{t-1}.k^_t and accounts for it).
Case p1_sqrt_growth_construction(int T, double V, double lambda0, long bits = 256);

// ---- Small helpers ------------------------------------------------------------
// gamma_n = n u / (1 - n u) (Higham): the relative error bound of an n-term dot product.
double gamma_n(int n, double unit_roundoff);
double unit_roundoff_bits(long bits);  // 2^-bits
// Largest / smallest eigenvalue of a symmetric matrix (at T's precision).
template <class T>
T max_eig_sym(const Mat<T>& M);
template <class T>
T min_eig_sym(const Mat<T>& M);

#define VLA_PROPS_MEASURES_EXTERN(T)                                                              \
  extern template Mat<T> jacobian_operator<T>(const Vec<T>&, const Vec<T>&, int);                \
  extern template Mat<T> step_map<T>(const Vec<T>&, const Vec<T>&);                              \
  extern template T jacobian_spectral_norm<T>(const Vec<T>&, const Vec<T>&, int);                \
  extern template T rank_one_update_norm<T>(const T&, const T&, int);                            \
  extern template T jacobian_norm_of_cos<T>(const T&);                                           \
  extern template T jacobian_norm_bound_of_kappa<T>(const T&);                                   \
  extern template Mat<T> penalty_matrix<T>(const std::vector<Vec<T>>&, double, int, int);        \
  extern template T sherman_morrison_residual<T>(const Mat<T>&, const std::vector<Vec<T>>&, double, int); \
  extern template T max_eig_sym<T>(const Mat<T>&);                                               \
  extern template T min_eig_sym<T>(const Mat<T>&);
VLA_PROPS_MEASURES_EXTERN(double)
VLA_PROPS_MEASURES_EXTERN(Mpfr)
#undef VLA_PROPS_MEASURES_EXTERN
extern template double correct_bits<double>(const ref::Result<double>&, const ref::Result<Mpfr>&, double);
extern template double correct_bits<ref::Float128>(const ref::Result<ref::Float128>&, const ref::Result<Mpfr>&, double);
extern template double correct_bits<Mpfr>(const ref::Result<Mpfr>&, const ref::Result<Mpfr>&, double);

}  // namespace vla::props
