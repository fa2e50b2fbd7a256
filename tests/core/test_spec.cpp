#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

using namespace vla;

TEST(Spec, NamesRoundTrip) {
  for (auto f : {FeatureMap::elu1, FeatureMap::identity}) EXPECT_EQ(parse_feature_map(to_string(f)), f);
  for (auto r : {Readout::ratio, Readout::raw}) EXPECT_EQ(parse_readout(to_string(r)), r);
  for (auto n : {Normalize::both, Normalize::key, Normalize::gate, Normalize::none}) EXPECT_EQ(parse_normalize(to_string(n)), n);
  for (auto p : {Preset::paper, Preset::vla_v3}) EXPECT_EQ(parse_preset(to_string(p)), p);
  for (auto m : {Model::vla, Model::linear, Model::deltanet, Model::softmax}) EXPECT_EQ(parse_model(to_string(m)), m);
  EXPECT_THROW(parse_preset("v3"), std::invalid_argument);
}

TEST(Spec, PresetV3MatchesPublishedModule) {
  const Options o = preset_options(Preset::vla_v3);
  EXPECT_EQ(o.lambda0, 10.0);
  EXPECT_TRUE(o.u_unit_scaled);
  EXPECT_EQ(o.delta_floor, 1e-4);
  EXPECT_EQ(o.ridge_every, 20);
  EXPECT_EQ(o.ridge, 1e-3);
  EXPECT_EQ(o.den_floor, 1e-6);
}

TEST(Spec, RejectsNonPositiveLambda) {
  Options o;
  for (double l : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    o.lambda0 = l;
    EXPECT_THROW(validate(o), std::invalid_argument) << l;
  }
}

TEST(Spec, StreamValidationNamesTheProblem) {
  Stream s;
  s.dims = {1, 2, 1, 2, 2};
  s.q = {0, 0, 0, 0};
  s.k = {1, 1, 1, 1};
  s.v = {1, 2, 3, 4};
  Options o;
  EXPECT_NO_THROW(validate_stream(s, o));
  s.v[3] = std::numeric_limits<double>::quiet_NaN();
  try {
    validate_stream(s, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'v'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t=1"), std::string::npos);
  }
  s.v[3] = 0;
  o.feature_map = FeatureMap::identity;
  s.k = {1, 1, 0, 0};  // second key is zero under the identity map
  try {
    validate_stream(s, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("zero feature vector"), std::string::npos);
  }
  s.k = {1, 1, 1};
  EXPECT_THROW(validate_stream(s, o), std::invalid_argument);
}

TEST(Spec, TinyKeysAreNotZeroKeys) {
  Stream s;
  s.dims = {1, 1, 1, 2, 1};
  s.q = {1, 1};
  s.k = {1e-300, 0};  // its sum of squares underflows, but the key has a direction
  s.v = {1};
  Options o;
  o.feature_map = FeatureMap::identity;
  EXPECT_NO_THROW(validate_stream(s, o));
}

TEST(Spec, ZeroRatioDenominatorIsRejectedUnlessFloored) {
  Stream s;
  s.dims = {1, 2, 1, 2, 1};
  s.q = {1, 0, 0, 0};  // q_2 = 0: n_2 . q_2 = 0
  s.k = {1, 0, 0, 1};
  s.v = {1, 2};
  Options o;
  o.feature_map = FeatureMap::identity;
  EXPECT_NO_THROW(validate_stream(s, o));  // valid for the recurrence
  try {
    check_ratio_readout_defined(s, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ratio readout is undefined"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t=1"), std::string::npos);
  }
  o.den_floor = 1e-6;
  EXPECT_NO_THROW(check_ratio_readout_defined(s, o));
  o.den_floor = 0;
  o.readout = Readout::raw;
  EXPECT_NO_THROW(check_ratio_readout_defined(s, o));
}

// find_non_finite counts every non-finite output and names the first by tensor and index, in the
// order o, S, A, state_norm; finite outputs give nothing.
TEST(Spec, NonFiniteOutputsAreCountedAndTheFirstNamed) {
  Outputs out;
  out.allocate(Dims{2, 3, 2, 4, 5}, true);
  EXPECT_EQ(find_non_finite(out).count, 0u);
  EXPECT_EQ(find_non_finite(out).first, "");
  const Dims& d = out.dims;
  out.S[((1 * d.H + 0) * d.Dv + 4) * d.Dk + 2] = std::numeric_limits<double>::infinity();  // S[b=1, h=0, i=4, j=2]
  out.state_norm[(1 * d.T + 2) * d.H + 1] = std::nan("");                                   // state_norm[b=1, t=2, h=1]
  NonFiniteOutputs nf = find_non_finite(out);
  EXPECT_EQ(nf.count, 2u);
  EXPECT_EQ(nf.first, "S[b=1, h=0, i=4, j=2] = inf");
  out.o[d.off(0, 2, 1, d.Dv) + 3] = -std::numeric_limits<double>::infinity();  // o comes first
  nf = find_non_finite(out);
  EXPECT_EQ(nf.count, 3u);
  EXPECT_EQ(nf.first, "o[b=0, t=2, h=1, d=3] = -inf");
  out.o[d.off(0, 2, 1, d.Dv) + 3] = 0.0;
  out.S[((1 * d.H + 0) * d.Dv + 4) * d.Dk + 2] = 0.0;
  out.A[((0 * d.H + 1) * d.Dk + 3) * d.Dk + 0] = std::nan("");
  EXPECT_EQ(find_non_finite(out).first, "A[b=0, h=1, i=3, j=0] = nan");
}
