// The chunked form (reference/include/vla/reference/chunked.hpp, derivation in
// docs/CHUNKED.md) must equal the recurrent reference at high precision, for
// every chunk size, preset and option: this is where a wrong derivation is caught.
//
// Error model: both forms run at p = 256 bits. Each is a composition of O(T D^2)
// operations whose rounding errors are amplified by at most the conditioning of
// the Gram/triangular systems (kappa, bounded here by keeping keys generic and
// lambda0 = O(1)), so |chunked - recurrent| / scale <= c T D^2 kappa 2^-p. With
// T <= 50, D <= 6, kappa <= 1e3 that is below 2^-(p-32): we require >= p - 32
// agreeing bits, far beyond what any algebraic slip (an O(1) error) could meet.
#include <gtest/gtest.h>

#include "hp_compare.hpp"
#include "vla/reference/chunked.hpp"

namespace {
using hpc::agreeing_bits, hpc::mp, hpc::Prec, hpc::random_stream;

struct Case {
  const char* name;
  vla::Options opt;
  bool with_u;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"paper", vla::Options{}, false});
  c.push_back({"paper-with-u", vla::Options{}, true});
  c.push_back({"vla-v3", vla::preset_options(vla::Preset::vla_v3), false});
  c.push_back({"vla-v3-with-u", vla::preset_options(vla::Preset::vla_v3), true});
  vla::Options none;
  none.normalize = vla::Normalize::none;
  none.feature_map = vla::FeatureMap::identity;
  none.readout = vla::Readout::raw;
  c.push_back({"unnormalised-identity-raw", none, false});
  // delta_t >= 1 in exact arithmetic (A is SPD), so the vla-v3 floor of 1e-4 never
  // acts; a floor above 1 makes the clamp act and tests that the clamped LDL^T
  // pivots reproduce the clamped sequential update.
  vla::Options clamp;
  clamp.delta_floor = 1.6;
  c.push_back({"active-delta-floor", clamp, false});
  vla::Options ridge = vla::preset_options(vla::Preset::vla_v3);
  ridge.ridge_every = 7;  // ridge steps fall inside chunks, forcing chunk splits
  ridge.ridge = 0.05;
  c.push_back({"ridge-every-7", ridge, false});
  return c;
}
}  // namespace

TEST(ChunkedForm, EqualsRecurrentAtHighPrecisionForEveryChunkSize) {
  Prec prec;
  const vla::Dims d{2, 50, 2, 6, 5};
  int seed = 1;
  for (const auto& cs : cases()) {
    const vla::Stream s = random_stream(d, seed++, cs.with_u);
    const auto rec = vla::ref::run_recurrent<mp>(s, cs.opt);
    for (int C : {1, 2, 3, 5, 8, 16, 49, 64}) {
      hpc::expect_agreement(vla::ref::run_chunked<mp>(s, cs.opt, C), rec, std::string(cs.name) + " C=" + std::to_string(C));
    }
  }
}

// The comparison is sharp: a relative perturbation of 1e-6 in lambda0 (far
// smaller than any algebraic slip) leaves fewer than 40 agreeing bits.
TEST(ChunkedForm, ComparisonSeesAMicroPerturbation) {
  Prec prec;
  const vla::Dims d{1, 20, 1, 4, 4};
  const vla::Stream s = random_stream(d, 99, false);
  vla::Options a, b;
  b.lambda0 = 1.0 + 1e-6;
  const auto rec = vla::ref::run_recurrent<mp>(s, a);
  const auto ch = vla::ref::run_chunked<mp>(s, b, 4);
  EXPECT_LT(agreeing_bits(ch.o, rec.o), 40.0);
}

TEST(ChunkedForm, ChunkLengthsEndOnRidgeSteps) {
  using vla::ref::chunk_length;
  EXPECT_EQ(chunk_length(0, 100, 16, 0), 16);
  EXPECT_EQ(chunk_length(96, 100, 16, 0), 4);
  EXPECT_EQ(chunk_length(0, 100, 16, 20), 16);
  EXPECT_EQ(chunk_length(16, 100, 16, 20), 4);  // ends at step 20
  EXPECT_EQ(chunk_length(20, 100, 16, 20), 16);
  EXPECT_EQ(chunk_length(36, 100, 16, 20), 4);
  EXPECT_EQ(chunk_length(0, 5, 64, 7), 5);
}
