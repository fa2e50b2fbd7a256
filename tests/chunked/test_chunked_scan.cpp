// The chunk-parallel (scan) form (reference/include/vla/reference/chunked_scan.hpp,
// derivation in docs/CHUNKED.md section 8) must equal the recurrent reference at
// high precision, for every chunk size and every option it supports, with the
// gate stage at the state's precision and wider; and it must refuse what it
// cannot carry (ridge steps, a pivot floor above 1), naming the option.
//
// Error model: both forms run at p = 256 bits (the gate stage at p or at
// p_g = 332 bits). The recurrence and the state stage are as in
// test_chunked_vs_recurrent.cpp: O(T D^2) operations whose rounding is amplified
// by at most the conditioning of the triangular systems. The scan form adds the
// Cholesky solves with M_c = lambda0 I + sum_{s<c} u_s u_s^T, whose relative
// error is at most c D cond(M_c) 2^-p, and cond(M_c) <= 1 + sum |u_s|^2 / lambda0:
// here <= 1 + 50 * 40 = 2e3 (Gaussian u with D = 6, lambda0 = 1; unit or
// unit-scaled u give <= 51). With T <= 50, D <= 6 the whole bound
// c T D^2 kappa cond(M) 2^-p stays below 2^-(p-32) for kappa cond(M) <= 1e6: we
// require >= p - 32 agreeing bits, far beyond what an algebraic slip (an O(1)
// error, e.g. a missing Gram matrix) could meet. Segments (A_c carried from a
// factor of M_c through up to `segment` chunks by Woodbury downdates) add the
// carried form's error over at most T steps, c T D^2 cond(M) 2^-p again: the same
// bound holds.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "hp_compare.hpp"
#include "vla/claims/chunked.hpp"
#include "vla/reference/chunked_scan.hpp"

namespace {
using hpc::agreeing_bits, hpc::kBits, hpc::mp, hpc::Prec, hpc::random_stream;
// A gate stage wider than the state's 256 bits (100 decimal digits, 332 bits).
using wide = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>, boost::multiprecision::et_off>;

struct Case {
  std::string name;
  vla::Options opt;
  bool with_u;
};

std::vector<Case> scan_cases() {
  const vla::Options paper;
  vla::Options v3 = vla::preset_options(vla::Preset::vla_v3);
  v3.ridge_every = 0;  // the scan form's domain: vla-v3 without its ridge
  v3.ridge = 0;
  std::vector<Case> c{{"paper", paper, false}, {"paper-with-u", paper, true}, {"vla-v3-no-ridge", v3, false},
                      {"vla-v3-no-ridge-with-u", v3, true}};
  vla::Options o = paper;
  o.u_unit_scaled = true;
  c.push_back({"u-unit-scaled-with-u", o, true});
  for (vla::Normalize nz : {vla::Normalize::key, vla::Normalize::gate, vla::Normalize::none}) {
    o = paper;
    o.normalize = nz;
    c.push_back({"normalize-" + vla::to_string(nz), o, false});
  }
  o = paper;
  o.feature_map = vla::FeatureMap::identity;
  c.push_back({"identity", o, false});
  o.normalize = vla::Normalize::none;
  o.readout = vla::Readout::raw;
  c.push_back({"unnormalised-identity-raw", o, true});
  o = paper;
  o.readout = vla::Readout::raw;
  c.push_back({"raw", o, false});
  o = paper;
  o.den_floor = 6.0;  // acts on the early steps (n_t . phi(q_t) grows with t)
  c.push_back({"den-floor-acting", o, false});
  o = paper;
  o.delta_floor = 1.0;  // the largest floor the form runs: delta_t >= 1 in exact arithmetic
  c.push_back({"delta-floor-1", o, true});
  return c;
}

// Every case at every chunk size in `sizes`, gate stage in GateScalar in both of
// its forms (Woodbury chunks; per-step steps, the kernels' since 8.16), under both
// state policies (the chunk's state products summed in GateScalar, as the kernels'
// v6 pass; the per-step fmas, as v4); returns the fewest agreeing bits over cases,
// sizes, policies and outputs.
// `segments`: the segment lengths (chunks per factorisation of M_c) to run.
template <class GateScalar>
double scan_equals_recurrent(const vla::Dims& d, unsigned seed, std::initializer_list<int> sizes,
                             std::initializer_list<int> segments = {1}) {
  using vla::ref::ScanGateForm;
  using vla::ref::ScanStatePolicy;
  double fewest = kBits;
  for (const auto& cs : scan_cases()) {
    const vla::Stream s = random_stream(d, seed++, cs.with_u);
    const auto rec = vla::ref::run_recurrent<mp>(s, cs.opt);
    for (int C : sizes)
      for (int L : segments)
        for (ScanGateForm gf : {ScanGateForm::woodbury, ScanGateForm::per_step, ScanGateForm::lookahead})
          for (ScanStatePolicy st : {ScanStatePolicy::chunk_products, ScanStatePolicy::per_step, ScanStatePolicy::lookahead}) {
            // The state stage reads the gates only: each stage's forms are checked against the other's first
            // (every state policy with the Woodbury gates, every gate form with the chunk products).
            if (gf != ScanGateForm::woodbury && st != ScanStatePolicy::chunk_products) continue;
            fewest = std::min(fewest, hpc::expect_agreement(vla::ref::run_chunked_scan<mp, GateScalar>(s, cs.opt, C, L, st, gf), rec,
                                                            cs.name + " C=" + std::to_string(C) + " segment=" + std::to_string(L) +
                                                                (st == ScanStatePolicy::per_step    ? " per-step state"
                                                                 : st == ScanStatePolicy::lookahead ? " look-ahead state"
                                                                                                    : "") +
                                                                (gf == ScanGateForm::per_step    ? " per-step gates"
                                                                 : gf == ScanGateForm::lookahead ? " look-ahead gates"
                                                                                                 : "") +
                                                                (std::is_same_v<GateScalar, mp> ? "" : " (wide gate)")));
          }
  }
  return fewest;
}
}  // namespace

// T = 50 is a multiple of none of the chunk sizes but 1, 2, 5; C = 49 leaves a
// last chunk of one step, C = 64 a single partial chunk.
TEST(ChunkedScan, EqualsRecurrentAtHighPrecisionForEveryChunkSize) {
  Prec prec;
  const double fewest = scan_equals_recurrent<mp>(vla::Dims{1, 50, 2, 6, 5}, 101, {1, 2, 3, 5, 8, 16, 49, 64});
  std::printf("scan form vs recurrence at %d bits: at least %.1f agreeing bits over every case, size and output\n", kBits, fewest);
}

// The gate stage wider than the state (as the kernels' double gate beside a
// float state): the gates are rounded to the state's scalar once.
TEST(ChunkedScan, WiderGateScalarEqualsRecurrent) {
  Prec prec;
  const double fewest = scan_equals_recurrent<wide>(vla::Dims{1, 50, 1, 6, 5}, 201, {1, 3, 16, 64});
  std::printf("scan form (332-bit gate) vs recurrence at %d bits: at least %.1f agreeing bits\n", kBits, fewest);
}

// Segments: the gates of a segment's later chunks from the A_c carried from the
// factor at its first chunk (Woodbury downdates), for segments of 2 and 3 chunks,
// a few chunks, and longer than the stream (one factorisation, the carried form
// in the gate precision), at chunk sizes that leave partial last chunks and
// segments that end inside and at the stream's end.
TEST(ChunkedScan, SegmentedEqualsRecurrentAtHighPrecision) {
  Prec prec;
  const double fewest = scan_equals_recurrent<mp>(vla::Dims{1, 50, 2, 6, 5}, 301, {1, 3, 8, 16}, {2, 3, 5, 100});
  std::printf("segmented scan form vs recurrence at %d bits: at least %.1f agreeing bits\n", kBits, fewest);
}
TEST(ChunkedScan, SegmentedWiderGateScalarEqualsRecurrent) {
  Prec prec;
  const double fewest = scan_equals_recurrent<wide>(vla::Dims{1, 50, 1, 6, 5}, 401, {3, 16}, {2, 4});
  std::printf("segmented scan form (332-bit gate) vs recurrence at %d bits: at least %.1f agreeing bits\n", kBits, fewest);
}
// The kernels' segment is a function of the launch's shape only: 256 steps where B H ceil(T / 256) <= 1,024,
// else 512 (docs/CHUNKED.md 8.36).
TEST(ChunkedScan, KernelSegmentFollowsTheShape) {
#ifndef VLA_SCAN_SEGMENT_STEPS
  using vla::ref::scan_segment_steps, vla::ref::scan_segment_chunks;
  EXPECT_EQ(scan_segment_steps(16, 16384), 256);  // B = 1, H = 16, T = 16,384: 1,024 segments
  EXPECT_EQ(scan_segment_steps(17, 16384), 512);
  EXPECT_EQ(scan_segment_steps(16, 16385), 512);  // 16 x 65 segments
  EXPECT_EQ(scan_segment_steps(16, 65536), 512);
  EXPECT_EQ(scan_segment_steps(1024, 4096), 512);
  EXPECT_EQ(scan_segment_steps(1, 1), 256);
  EXPECT_EQ(scan_segment_chunks(32, 16, 16384), 8);
  EXPECT_EQ(scan_segment_chunks(64, 16, 65536), 8);
  EXPECT_EQ(scan_segment_chunks(1024, 1, 10), 1);
#endif
  const vla::Stream s = random_stream(vla::Dims{1, 10, 1, 4, 4}, 8, false);
  EXPECT_THROW(vla::ref::run_chunked_scan<double>(s, vla::Options{}, 4, 0), std::invalid_argument);
}

// The comparison is sharp for the scan form too: lambda0 perturbed by 1e-6.
TEST(ChunkedScan, ComparisonSeesAMicroPerturbation) {
  Prec prec;
  const vla::Stream s = random_stream(vla::Dims{1, 20, 1, 4, 4}, 99, false);
  vla::Options a, b;
  b.lambda0 = 1.0 + 1e-6;
  EXPECT_LT(agreeing_bits(vla::ref::run_chunked_scan<mp>(s, b, 4).o, vla::ref::run_recurrent<mp>(s, a).o), 40.0);
  EXPECT_LT(agreeing_bits(vla::ref::run_chunked_scan<mp>(s, b, 4, 3).o, vla::ref::run_recurrent<mp>(s, a).o), 40.0);
}

// Refusals: ridge steps and a pivot floor above 1 make A_t differ from the
// inverse of the prefix sum the form scans; the message names the option.
TEST(ChunkedScan, RefusesRidgeAndActingDeltaFloorNamingTheOption) {
  const vla::Stream s = random_stream(vla::Dims{1, 10, 1, 4, 4}, 7, false);
  struct Refusal {
    vla::Options opt;
    const char* option;
  };
  vla::Options clamp;
  clamp.delta_floor = 1.6;
  for (const Refusal& r : {Refusal{vla::preset_options(vla::Preset::vla_v3), "--ridge-every"}, Refusal{clamp, "--delta-floor"}}) {
    EXPECT_NE(vla::ref::scan_unsupported(r.opt).find(r.option), std::string::npos) << vla::ref::scan_unsupported(r.opt);
    try {
      vla::ref::run_chunked_scan<double>(s, r.opt, 4);
      ADD_FAILURE() << r.option << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.option), std::string::npos) << e.what();
    }
  }
  vla::Options lin;
  lin.model = vla::Model::linear;
  EXPECT_FALSE(vla::ref::scan_unsupported(lin).empty());
  EXPECT_THROW(vla::ref::run_chunked_scan<double>(s, vla::Options{}, 0), std::invalid_argument);
  EXPECT_TRUE(vla::ref::scan_unsupported(vla::Options{}).empty());
}

// proofs_check's check of the derivation (docs/CHUNKED.md, section 8): the gates
// from M_c alone equal the recurrence's at 128 and 256 bits (the difference
// scales with the unit roundoff), and the ridge control is seen.
TEST(ChunkedScan, DerivationCheckHolds) {
  vla::claims::ClaimResult r;
  vla::claims::RunContext ctx;
  vla::claims::claim_chunked_scan_derivation().run(ctx, r);
  EXPECT_EQ(r.verdict, vla::claims::Verdict::holds) << r.summary << "\n" << r.evidence.dump(1);
  EXPECT_TRUE(r.evidence["worst gate difference"]["exact (scales with unit roundoff)"].get<bool>()) << r.evidence.dump(1);
  EXPECT_FALSE(r.evidence["ridge control, gate difference"]["exact (scales with unit roundoff)"].get<bool>());
  std::printf("chunked-scan-derivation: %s\n  worst gate difference %s\n", r.summary.c_str(),
              r.evidence["worst gate difference"].dump().c_str());
}

// proofs_check's check of the state's affine form (docs/CHUNKED.md, section 2):
// each chunk's map S -> S P + Q and a Blelloch scan of the maps reproduce the
// recurrence's states at 128 and 256 bits, at both budgets; the maps on the
// wrong side do not.
TEST(ChunkedScan, AffineScanCheckHolds) {
  for (const auto budget : {vla::claims::Budget::quick, vla::claims::Budget::full}) {
    vla::claims::ClaimResult r;
    vla::claims::RunContext ctx;
    ctx.budget = budget;
    vla::claims::claim_chunk_affine_scan().run(ctx, r);
    EXPECT_EQ(r.verdict, vla::claims::Verdict::holds) << r.summary << "\n" << r.evidence.dump(1);
    EXPECT_TRUE(r.evidence["worst Blelloch scan"]["exact (scales with unit roundoff)"].get<bool>()) << r.evidence.dump(1);
    EXPECT_FALSE(r.evidence["control (wrong side), least difference"]["exact (scales with unit roundoff)"].get<bool>());
    std::printf("chunk-affine-scan (%s): %s\n  %s\n  worst scan %s\n  long streams %s\n", vla::claims::to_string(budget).c_str(),
                r.summary.c_str(), r.conditions.back().c_str(), r.evidence["worst Blelloch scan"].dump().c_str(),
                r.evidence["long streams, double: composite maps' spectral norms (reported)"].dump().c_str());
  }
}
