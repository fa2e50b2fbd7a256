// Invariants of the recurrence that the spec (docs/SPEC.md) implies, on every
// generated family:
//   * ||k^_t|| = ||a^_t|| = 1 when normalised, to (gamma_Dk / 2 + 3 u) at any precision
//     (one sum of squares, one square root, one division per entry), plus
//     Dk eta / ||phi(k)||^2 in double when the squares underflow (eta = 2^-1074);
//   * the write identity S_t k^_t = (1 - c_t) S_{t-1} k^_t + c_t v_t, c_t = a^_t . k^_t
//     (exact in real arithmetic; per row the computed sides differ by at most
//     gamma_{Dk+2} (|v_i| + ||S_{t-1,i}|| + ||S_{t,i}|| + |r_i|), plus (2 Dk + 6) 2^-1074
//     in double for subnormal results);
//   * causality: o_t does not depend on inputs after t (bitwise);
//   * heads and batch entries are independent (bitwise);
//   * k^ is invariant to positive scaling of phi(k) (bitwise for powers of two,
//     to the rounding of the scaled input otherwise); S and A then do not change
//     and the ratio readout scales by 1/alpha;
//   * the double reference agrees with the 256-bit one within the running error
//     bound of measures.hpp (double_vs_mpfr);
//   * bad input: NaN and Inf anywhere are rejected naming the tensor, -0 is a
//     valid input equal to +0.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>

#include "prop_support.hpp"
#include "vla/properties/adversarial.hpp"
#include "vla/properties/counterexample.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/reference/certify.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/trace.hpp"

using namespace vla;
using namespace vla::props;
using vla::props::test::kBits;

namespace {

// ||k^|| = 1 to gamma_Dk / 2 + 3 u, plus, when the squares of phi(k) underflow
// (||phi(k)||^2 below 2^-1022), an absolute Dk eta on that sum: Dk eta / ||phi||^2.
double unit_tol(int dk, double u, double phi2) {
  const double eta = u < 1e-20 ? 0.0 : std::ldexp(1.0, -1074);  // only double underflows here
  return gamma_n(dk, u) / 2 + 3 * u + dk * eta / phi2;
}

template <class TraceVec>
void check_unit_and_write(const Case& c, const TraceVec& tr, double u) {
  const Stream& s = c.stream;
  const int dk = s.dims.Dk, dv = s.dims.Dv;
  ref::MpfrPrecision p(2 * kBits);  // the measure adds no error of its own
  Mat<Mpfr> S_prev = Mat<Mpfr>::Zero(dv, dk);
  for (const auto& st : tr) {
    const Vec<Mpfr> kh = st.k_hat.template cast<Mpfr>(), a = st.a_hat.template cast<Mpfr>();
    const Mat<Mpfr> S = st.S.template cast<Mpfr>();
    Mpfr phi2 = 0;
    for (int j = 0; j < dk; ++j) {
      const Mpfr f = core::phi(Mpfr(s.k[s.dims.off(0, st.t, 0, dk) + j]), c.feature_map == FeatureMap::elu1);
      phi2 += f * f;
    }
    RC_ASSERT(double(abs(kh.norm() - Mpfr(1))) <= unit_tol(dk, u, double(phi2)));
    RC_ASSERT(double(abs(a.norm() - Mpfr(1))) <= unit_tol(dk, u, INFINITY));
    const Mpfr cc = Mpfr(st.c);
    for (int i = 0; i < dv; ++i) {
      const Mpfr v = Mpfr(s.v[s.dims.off(0, st.t, 0, dv) + i]);
      const Mpfr lhs = S.row(i).dot(kh);
      const Mpfr rhs = (Mpfr(1) - cc) * S_prev.row(i).dot(kh) + cc * v;
      const Mpfr r = v - S_prev.row(i).dot(kh);
      // Relative rounding, plus in double an absolute 2^-1074 for each of the
      // 2 Dk + 6 operations whose result may be subnormal.
      const double eta = u < 1e-20 ? 0.0 : std::ldexp(1.0, -1074);
      const double bound = gamma_n(dk + 2, u) * double(abs(v) + S_prev.row(i).norm() + S.row(i).norm() + abs(r)) +
                           (2 * dk + 6) * eta;
      RC_ASSERT(double(abs(lhs - rhs)) <= bound);
    }
    S_prev = S;
  }
}

// Bitwise equality (NaN payloads included): the same computation must give the same bits.
bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}
// Equal values, -0 == +0, NaN == NaN.
bool same_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

ref::TraceOptions with_S() {
  ref::TraceOptions t;
  t.with_S = true;
  t.with_A = false;
  return t;
}

}  // namespace

VLA_PROP(Invariants, UnitVectorsAndWriteIdentityAt256Bits, 150, ()) {
  GenLimits lim;
  lim.max_T = 16;
  const Case c = *gen_any_case(lim);
  check_unit_and_write(c, ref::trace_head_mpfr(c.stream, c.options(), with_S(), kBits), unit_roundoff_bits(kBits));
}

VLA_PROP(Invariants, UnitVectorsAndWriteIdentityAtDouble, 300, ()) {
  GenLimits lim;
  lim.max_T = 24;
  lim.max_Dk = 8;
  const Case c = *gen_any_case(lim);
  check_unit_and_write(c, ref::trace_head<double>(c.stream, c.options(), with_S()), unit_roundoff_bits(53));
}

// Changing every input from step t0 on leaves o_t, ||S_t|| for t < t0 bitwise unchanged.
VLA_PROP(Invariants, Causality, 200, ()) {
  GenLimits lim;
  lim.min_T = 2;
  lim.max_T = 20;
  lim.max_B = 2;
  lim.max_H = 2;
  const Case c = *gen_any_case(lim);
  const Dims& d = c.stream.dims;
  const int t0 = *rc::gen::inRange(1, d.T);
  const Stream other = make_stream(c.family, d, *rc::gen::arbitrary<std::uint32_t>(), MakeOptions{c.feature_map, c.stream.has_u()});
  Stream s2 = c.stream;
  for (int b = 0; b < d.B; ++b)
    for (int t = t0; t < d.T; ++t)
      for (int h = 0; h < d.H; ++h) {
        for (int j = 0; j < d.Dk; ++j) {
          const std::size_t o = d.off(b, t, h, d.Dk) + j;
          s2.q[o] = other.q[o];
          s2.k[o] = other.k[o];
          if (s2.has_u()) s2.u[o] = other.u[o];
        }
        for (int i = 0; i < d.Dv; ++i) s2.v[d.off(b, t, h, d.Dv) + i] = other.v[d.off(b, t, h, d.Dv) + i];
      }
  const auto r1 = ref::run_model<double>(c.stream, c.options()), r2 = ref::run_model<double>(s2, c.options());
  for (int b = 0; b < d.B; ++b)
    for (int t = 0; t < t0; ++t)
      for (int h = 0; h < d.H; ++h) {
        for (int i = 0; i < d.Dv; ++i) RC_ASSERT(same_bits(r1.o[d.off(b, t, h, d.Dv) + i], r2.o[d.off(b, t, h, d.Dv) + i]));
        const std::size_t on = (std::size_t(b) * d.T + t) * d.H + h;
        RC_ASSERT(same_bits(r1.state_norm[on], r2.state_norm[on]));
      }
}

// Running a batch gives, bitwise, what each (b, h) gives alone.
VLA_PROP(Invariants, HeadsAndBatchEntriesAreIndependent, 150, ()) {
  GenLimits lim;
  lim.max_T = 12;
  lim.max_B = 3;
  lim.max_H = 3;
  const Case c = *gen_any_case(lim);
  const Dims& d = c.stream.dims;
  const auto all = ref::run_model<double>(c.stream, c.options());
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      const auto one = ref::run_model<double>(ref::slice_head(c.stream, b, h), c.options());
      for (int t = 0; t < d.T; ++t)
        for (int i = 0; i < d.Dv; ++i) RC_ASSERT(same_bits(all.o[d.off(b, t, h, d.Dv) + i], one.o[std::size_t(t) * d.Dv + i]));
      const std::size_t bh = std::size_t(b) * d.H + h, ns = std::size_t(d.Dv) * d.Dk, na = std::size_t(d.Dk) * d.Dk;
      for (std::size_t e = 0; e < ns; ++e) RC_ASSERT(same_bits(all.S[bh * ns + e], one.S[e]));
      for (std::size_t e = 0; e < na; ++e) RC_ASSERT(same_bits(all.A[bh * na + e], one.A[e]));
    }
}

// k^ = phi(k)/||phi(k)|| ignores the scale of phi(k). Identity map with a power
// of two alpha: k^, S, A and ||S|| bitwise equal, o scaled by 1/alpha exactly
// (n_t scales by alpha). Any alpha, either map (k' built so that phi(k') =
// alpha phi(k), rounded to double): k^ equal at 256 bits within the rounding of
// k', 4 u_double per entry.
VLA_PROP(Invariants, KeyIsInvariantToScalingItsFeatures, 150, ()) {
  GenLimits lim;
  lim.max_T = 10;
  lim.draw_u = false;
  Case c = *gen_any_case(lim);
  const Dims& d = c.stream.dims;
  const int e = *rc::gen::inRange(-20, 21);
  const double alpha2 = std::ldexp(1.0, e);
  if (c.feature_map == FeatureMap::identity && c.family != Family::scale_extremes && c.family != Family::subnormal) {
    Stream s2 = c.stream;
    for (auto& x : s2.k) x *= alpha2;
    const auto r1 = ref::run_model<double>(c.stream, c.options()), r2 = ref::run_model<double>(s2, c.options());
    RC_ASSERT(same_bits(r1.S, r2.S));
    RC_ASSERT(same_bits(r1.A, r2.A));
    RC_ASSERT(same_bits(r1.state_norm, r2.state_norm));
    for (std::size_t i = 0; i < r1.o.size(); ++i) RC_ASSERT(same_value({r2.o[i]}, {r1.o[i] / alpha2}));
  }
  // General alpha through the feature map. Rounding k' changes each feature
  // f_j = alpha phi(k_j) by at most 4 u relative (product, phi, phi^{-1}), plus
  // u |log f_j| through log/exp when f_j <= 1 (elu1's exp branch); normalising
  // at most doubles the largest relative change.
  const double alpha = std::pow(10.0, *rc::gen::inRange(-300, 301) / 100.0);
  Stream s3 = c.stream;
  const bool elu1 = c.feature_map == FeatureMap::elu1;
  std::vector<double> worst_rel(d.T, 4.0);
  for (std::size_t idx = 0; idx < s3.k.size(); ++idx) {
    double& x = s3.k[idx];
    const double f = core::phi(x, elu1) * alpha;
    if (elu1 && !(f > 0)) continue;  // phi(x) underflowed to 0: alpha * 0 = 0 already
    x = phi_inverse(f, c.feature_map);
    const int t = static_cast<int>((idx / d.Dk / d.H) % d.T);
    if (elu1 && f <= 1) worst_rel[t] = std::max(worst_rel[t], 4.0 + std::fabs(std::log(f)));
  }
  RC_PRE(std::all_of(s3.k.begin(), s3.k.end(), [](double x) { return std::isfinite(x); }));
  // Scaling a tiny feature vector down may underflow its squared norm to 0: then
  // validate_stream rejects it (finding 2 of docs/FINDINGS.md), not our question here.
  RC_PRE([&] {
    try {
      validate_stream(s3, c.options());
      return true;
    } catch (const std::invalid_argument&) {
      return false;
    }
  }());
  const auto t1 = ref::trace_head_mpfr(c.stream, c.options(), ref::TraceOptions{}, kBits);
  const auto t3 = ref::trace_head_mpfr(s3, c.options(), ref::TraceOptions{}, kBits);
  ref::MpfrPrecision p(kBits);
  for (int t = 0; t < d.T; ++t)
    RC_ASSERT(double((t1[t].k_hat - t3[t].k_hat).cwiseAbs().maxCoeff()) <= 2 * worst_rel[t] * unit_roundoff_bits(53));
}

// The double reference against the 256-bit one: every error below twice its
// first-order bound (double_vs_mpfr), wherever the bound is small enough for a
// first-order model: err = bound + O(bound^2 / scale), so the factor 2 covers the
// second-order term while bound <= scale / 2, the limit sherman_morrison_checks
// uses too (otherwise tagged, not asserted).
VLA_PROP(Invariants, DoubleAgreesWithMpfrWithinTheErrorModel, 200, ()) {
  GenLimits lim;
  lim.max_T = 16;
  lim.max_Dk = 6;
  const Case c = *gen_any_case(lim);
  const Options opt = c.options();
  // Each quantity is checked where its bound is small enough for a first-order
  // model (at most half the quantity's scale), and tagged otherwise.
  bool all_in_range = true;
  auto in_range = [&](double bound, double scale) {
    const bool ok = bound <= 0.5 * scale;
    all_in_range = all_in_range && ok;
    return ok;
  };
  for (const auto& pc : double_vs_mpfr(c.stream, opt, 0, 0, kBits)) {
    if (!in_range(pc.bound_A, pc.scale_A)) break;  // everything downstream depends on A
    RC_ASSERT(pc.err_A <= 2 * pc.bound_A);
    if (!in_range(pc.bound_S, pc.scale_S)) break;
    RC_ASSERT(pc.err_S <= 2 * pc.bound_S);
    RC_ASSERT(pc.err_N <= 2 * pc.bound_N);
    if (in_range(pc.bound_O, pc.scale_O)) RC_ASSERT(pc.err_O <= 2 * pc.bound_O);
  }
  RC_CLASSIFY(!all_in_range, "bound too large for a first-order model");
}

// The reference agrees with itself across precisions to its certified bits: at
// each of its scalars (double, binary128, MPFR at 96 bits), the bits that the
// certifier vouches for (certify.hpp, measured per group as it measures them)
// are correct against a run at 4 x the working precision + 512 bits, the truth
// of tests/reference. The certificate is checked in whole bits, as
// tests/reference/test_certify.cpp checks it: correct >= floor(certified).
// The certifier's first checking run starts above the working precision plus the
// inputs' dynamic range log2(max |x| / min |x|) over non-zero entries, so a tiny
// input cannot be absorbed by a huge one identically in the working run and both
// checking runs (which then agreed on a wrong result and certified it: found by
// this property, kept as Certify.NoLongerOverclaimsWhenTheInputsSpanManyBits
// below; docs/FINDINGS.md).
double dynamic_range_bits(const Stream& s) {
  double lo = INFINITY, hi = 0;
  for (const auto* x : {&s.q, &s.k, &s.v, &s.u})
    for (double e : *x)
      if (e != 0 && std::isfinite(e)) lo = std::min(lo, std::fabs(e)), hi = std::max(hi, std::fabs(e));
  return hi > 0 ? std::log2(hi) - std::log2(lo) : 0.0;  // hi / lo can overflow
}

VLA_PROP(Invariants, ReferenceAgreesAcrossPrecisionsToItsCertifiedBits, 60, ()) {
  GenLimits lim;
  lim.max_T = 12;
  lim.max_Dk = 5;
  lim.max_B = 2;
  lim.max_H = 2;
  const Case c = *gen_any_case(lim);
  const Options opt = c.options();
  for (ref::ScalarKind k : {ref::ScalarKind::f64, ref::ScalarKind::f128, ref::ScalarKind::mpfr}) {
    ref::CertifyRequest rq;
    rq.scalar = k;
    rq.bits = 96;
    const ref::Certified cert = ref::run_certified(c.stream, opt, rq);
    RC_ASSERT(double(cert.check_bits.at(0)) > dynamic_range_bits(c.stream));
    const auto truth = ref::run_mpfr(c.stream, opt, 4L * cert.working_bits + 512);
    const double cap = cert.working_bits;
    const double correct = k == ref::ScalarKind::f64    ? correct_bits(ref::run_model<double>(c.stream, opt), truth, cap)
                           : k == ref::ScalarKind::f128 ? correct_bits(ref::run_model<ref::Float128>(c.stream, opt), truth, cap)
                                                        : correct_bits(ref::run_mpfr(c.stream, opt, rq.bits), truth, cap);
    if (correct < std::floor(cert.certified_bits))
      RC_FAIL(ref::to_string(k) + ": certified " + test::num(cert.certified_bits) + " bits (worst " + cert.worst + "), " +
              test::num(correct) + " correct");
    RC_CLASSIFY(k == ref::ScalarKind::f64 && cert.certified_bits < 40, "double certifies fewer than 40 bits");
  }
}

// The certifier's former limit, found by the property above (shrunk, scale_extremes):
// Dk = Dv = 1, elu1, keys 0 (phi = 1, so k^ = a^ = 1 and S_t = S_{t-1} + (v_t - S_{t-1})),
// v = (0, -2.4e24, -7.9e-31). Exactly S_2 = v_2 = -7.9e-31; in double,
// v_2 - S_1 = 2.4e24 absorbs v_2 and S_2 = 0. Checking runs at 117 and 181 bits
// absorbed it too (log2(2.4e24 / 7.9e-31) ~ 181 bits), agreed on 0, and the
// certificate said 53 bits where none was correct. Now the checking runs start
// above 53 + 181 bits, see the loss, and the certificate is honest.
TEST(Certify, NoLongerOverclaimsWhenTheInputsSpanManyBits) {
  Stream s;
  s.dims = Dims{1, 3, 1, 1, 1};
  s.q = {0, 0, 0};
  s.k = {0, 0, 0};
  s.v = {0, -2.4178522908572372e+24, -7.8886088699564262e-31};
  const Options opt;
  ref::CertifyRequest rq;
  rq.scalar = ref::ScalarKind::f64;
  const ref::Certified cert = ref::run_certified(s, opt, rq);
  const auto truth = ref::run_mpfr(s, opt, 4L * 53 + 512);
  const double correct = correct_bits(ref::run_model<double>(s, opt), truth, 53);
  std::cout << "certified " << cert.certified_bits << " bits (checking runs at " << cert.check_bits.at(0) << ", "
            << cert.check_bits.at(1) << "), correct " << correct << ", inputs span " << dynamic_range_bits(s) << " bits\n";
  EXPECT_GT(cert.check_bits.at(0), dynamic_range_bits(s) + 53);
  EXPECT_GE(correct, std::floor(cert.certified_bits)) << "the certificate claims bits the result does not have";
  EXPECT_LT(cert.certified_bits, 53.0) << "the absorbed value must cost certified bits";
}

// NaN or Inf in any tensor: std::invalid_argument naming the tensor; -0 is valid
// and gives the same outputs as +0.
VLA_PROP(Invariants, BadInputIsRejectedByName, 300, ()) {
  GenLimits lim;
  lim.max_T = 6;
  const PoisonedCase pc = *gen_poisoned(lim);
  const Options opt = pc.clean.options();
  if (pc.kind == Poison::neg_zero) {
    Stream plus = pc.poisoned;
    const std::string t = pc.tensor;
    (t == "q" ? plus.q : t == "k" ? plus.k : t == "v" ? plus.v : plus.u)[pc.index] = 0.0;
    // -0 must behave exactly like +0: both rejected with the same message (a key
    // made zero by it), or both accepted with the same outputs.
    std::string err_minus, err_plus;
    try { validate_stream(pc.poisoned, opt); } catch (const std::invalid_argument& e) { err_minus = e.what(); }
    try { validate_stream(plus, opt); } catch (const std::invalid_argument& e) { err_plus = e.what(); }
    RC_ASSERT(err_minus == err_plus);
    if (!err_plus.empty()) return;
    const auto a = ref::run_model<double>(pc.poisoned, opt), b = ref::run_model<double>(plus, opt);
    // Where the ratio readout's denominator is exactly 0, o is undefined (x/0;
    // docs/FINDINGS.md, implementation finding 1) and the sign of a zero term
    // decides between +inf and -inf: there only the non-finiteness must agree.
    for (std::size_t i = 0; i < a.o.size(); ++i) {
      const bool agree = std::isfinite(a.o[i]) ? same_value({a.o[i]}, {b.o[i]}) : !std::isfinite(b.o[i]);
      RC_ASSERT(agree);
    }
    RC_ASSERT(same_value(a.S, b.S));
    return;
  }
  try {
    validate_stream(pc.poisoned, opt);
    RC_FAIL("accepted a non-finite value");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    RC_ASSERT(msg.find(std::string("'") + pc.tensor + "'") != std::string::npos);
    RC_ASSERT(msg.find("non-finite") != std::string::npos);
  }
}

// Where the double reference gives non-finite values on input that
// validate_stream accepts: S, A and ||S|| are always finite; o is finite unless
// the ratio readout's denominator n_t . phi(q_t), evaluated as the reference does
// (left-to-right fma), is 0. That happens (a) with the identity feature map
// whenever q_t is orthogonal to n_t (q = 0 included): 0/0 at any precision, a gap
// in the spec's validation, and (b) under elu1 in double when every q_t,j <
// -745, where exp underflows to 0 (finite at higher precision). Reported in
// docs/FINDINGS.md; vla-v3's den_floor avoids both.
VLA_PROP(Invariants, NonFiniteOutputsOnlyFromAZeroReadoutDenominator, 300, ()) {
  GenLimits lim;
  lim.max_T = 10;
  lim.max_B = 2;
  const Case c = *gen_any_case(lim);
  const Options opt = c.options();
  const Dims& d = c.stream.dims;
  const auto r = ref::run_model<double>(c.stream, opt);
  for (double x : r.S) RC_ASSERT(std::isfinite(x));
  for (double x : r.A) RC_ASSERT(std::isfinite(x));
  for (double x : r.state_norm) RC_ASSERT(std::isfinite(x));
  const bool elu1 = opt.feature_map == FeatureMap::elu1;
  bool any_zero_den = false;
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      std::vector<double> nsum(d.Dk, 0.0), phiq(d.Dk);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk);
        for (int j = 0; j < d.Dk; ++j) {
          nsum[j] = nsum[j] + core::phi(c.stream.k[ok + j], elu1);
          phiq[j] = core::phi(c.stream.q[ok + j], elu1);
        }
        const double den = core::SequentialPolicy<double>::dot(nsum.data(), phiq.data(), d.Dk);
        any_zero_den |= den == 0;
        for (int i = 0; i < d.Dv; ++i) RC_ASSERT(std::isfinite(r.o[d.off(b, t, h, d.Dv) + i]) || den == 0);
      }
    }
  RC_CLASSIFY(any_zero_den, "zero readout denominator");
}

// ---- The double reference's loss of accuracy (docs/FINDINGS.md) -----------------

// Found by the adversary with objective_reference_bits_lost: with lambda0 = 1e-8
// (the low end of the lambda_extremes family and of issue 4's range), unit keys,
// ||v_t|| <= 1, T = 32, Dk = 4, Dv = 2, elu1, paper options, the double reference
// keeps fewer correct bits than float has (24) on some output, i.e. it could not
// tell a float result from the exact one there. Replayed: recomputed by the
// certifier (checking runs at >= 117 and 181 bits), with the margin. Most of the
// loss is the conditioning of A_t (cond_2(A_t) ~ 2^28 here; random streams under
// the same bounds lose up to ~29.5 bits, docs/FINDINGS.md), the rest cancellation
// in the readout row the search picked. double_vs_mpfr's first-order bound does
// not apply here (it exceeds 1e-3 of the quantities from the first step).
TEST(ReferenceAccuracy, DoubleKeepsFewerBitsThanFloatAtTinyLambda) {
  const auto path = counterexample_dir() / "reference_double_accuracy_tiny_lambda.safetensors";
  auto certified = [](const Stream& s, const Options& opt) {
    ref::CertifyRequest req;
    req.scalar = ref::ScalarKind::f64;
    return ref::run_certified(s, opt, req);
  };
  if (test::write_counterexamples()) {
    AdversaryBounds b;
    b.T = 32;
    b.Dk = 4;
    b.Dv = 2;
    b.V = 1.0;
    b.opt.lambda0 = 1e-8;
    b.seed = 1;
    const AdversarialResult r = adversarial_search(b, objective_reference_bits_lost());
    Counterexample cx;
    cx.claim = "double-reference-accuracy";
    cx.c = r.adv_case;
    cx.opt = r.adv_case.options();
    cx.found_by = "adversarial_search(objective_reference_bits_lost(), seed 1, 24 + 24 candidates per step) "
                  "(test ReferenceAccuracy.DoubleKeepsFewerBitsThanFloatAtTinyLambda)";
    cx.note = "lambda0 = 1e-8, unit keys, ||v_t|| <= 1, T = 32: the double reference keeps fewer than 24 correct bits";
    const ref::Certified cert = certified(cx.c.stream, cx.opt);
    cx.extra["certified_bits_double"] = test::num(cert.certified_bits);
    cx.extra["worst_element"] = cert.worst;
    save_counterexample(path, cx, true);
  }
  const Counterexample cx = load_counterexample(path);
  const Stream& s = cx.c.stream;
  ASSERT_EQ(cx.opt.lambda0, 1e-8);
  // Within the stated bounds.
  for (int t = 0; t < s.dims.T; ++t) {
    double v2 = 0;
    for (int i = 0; i < s.dims.Dv; ++i) v2 += s.v[std::size_t(t) * s.dims.Dv + i] * s.v[std::size_t(t) * s.dims.Dv + i];
    EXPECT_LE(std::sqrt(v2), 1.0 + 1e-15);
  }
  const ref::Certified cert = certified(s, cx.opt);
  std::cout << "committed case: the double reference keeps " << cert.certified_bits << " bits (float has 24; margin "
            << 24 - cert.certified_bits << " bits), worst element " << cert.worst << "\n";
  EXPECT_LT(cert.certified_bits, 24.0);
  // The conditioning behind it, for the record (docs/FINDINGS.md): cond_2(A_t) along the stream.
  ref::TraceOptions topt;
  double log2_kappa = 0;
  for (const auto& st : ref::trace_head_mpfr(s, cx.opt, topt, kBits)) {
    ref::MpfrPrecision p(kBits);
    log2_kappa = std::max(log2_kappa, std::log2(double(max_eig_sym<Mpfr>(st.A) / min_eig_sym<Mpfr>(st.A))));
  }
  std::cout << "largest log2 cond_2(A_t): " << log2_kappa << "\n";
}
