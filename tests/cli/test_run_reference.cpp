// `vla run` with the certified reference: the done-criterion (>= 200
// certified bits at --bits 256 on a random stream), the metadata, presets and
// overrides, --force, and --require-bits refusing to write.
#include <fstream>

#include "run_vla.hpp"
#include "streams.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::cli::test {
namespace {

class RunReference : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    s_ = random_stream(Dims{2, 12, 2, 6, 5}, true, 42);
    io::save_stream(path("in.safetensors"), s_, io::DType::F64, {}, false);
  }
  Result run(const std::string& extra, const std::string& out = "out.safetensors") {
    return run_vla("run --input '" + path("in.safetensors") + "' --output '" + path(out) + "' " + extra);
  }
  Stream s_;
};

TEST_F(RunReference, Bits256CertifiesAtLeast200BitsAndRecordsProvenance) {
  const Result r = run("--bits 256");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("working precision"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("certified"), std::string::npos) << r.output;
  const io::File f = io::read_safetensors(path("out.safetensors"));
  const auto& m = f.metadata;
  EXPECT_GE(std::stod(m.at("certified_bits")), 200.0) << r.output;
  EXPECT_GE(std::stoi(m.at("working_bits")), 256);
  for (const char* key : {"tool", "impl", "device", "scalar", "bits", "certification", "input", "input_dtypes", "preset", "spec",
                          "spec.lambda0", "spec.feature_map", "spec.readout", "spec.normalize", "spec.model", "spec.u_unit_scaled",
                          "spec.delta_floor", "spec.ridge_every", "spec.ridge", "spec.den_floor"}) {
    EXPECT_EQ(m.count(key), 1u) << "metadata lacks " << key;
  }
  EXPECT_EQ(m.at("impl"), "reference");
  EXPECT_EQ(m.at("device"), "cpu");
  EXPECT_EQ(m.at("input"), path("in.safetensors"));
  EXPECT_EQ(f.find("o")->shape, (std::vector<std::uint64_t>{2, 12, 2, 5}));
  EXPECT_EQ(f.find("S")->shape, (std::vector<std::uint64_t>{2, 2, 5, 6}));
  EXPECT_EQ(f.find("A")->shape, (std::vector<std::uint64_t>{2, 2, 6, 6}));
  EXPECT_EQ(f.find("state_norm")->shape, (std::vector<std::uint64_t>{2, 12, 2}));
  for (double x : f.find("o")->values) ASSERT_TRUE(std::isfinite(x));
}

TEST_F(RunReference, ExplicitOptionsOverrideThePreset) {
  const Result r = run("--scalar double --preset vla-v3 --lambda0 3 --ridge-every 5 --u-unit-scaled=false");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto m = io::read_safetensors(path("out.safetensors")).metadata;
  EXPECT_EQ(m.at("preset"), "vla-v3");
  EXPECT_EQ(std::stod(m.at("spec.lambda0")), 3.0);
  EXPECT_EQ(std::stoi(m.at("spec.ridge_every")), 5);
  EXPECT_EQ(std::stoi(m.at("spec.u_unit_scaled")), 0);
  EXPECT_EQ(std::stod(m.at("spec.delta_floor")), 1e-4);  // kept from the preset
  EXPECT_EQ(std::stod(m.at("spec.den_floor")), 1e-6);
  EXPECT_EQ(m.at("scalar"), "double");
}

TEST_F(RunReference, ForceReplacesAnExistingOutput) {
  { std::ofstream(path("out.safetensors")) << "old"; }
  const Result r = run("--scalar double --force");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(io::read_safetensors(path("out.safetensors")).find("o")->values.size(), s_.dims.v_size());
}

TEST_F(RunReference, UnmetRequiredBitsExitsOneWithoutOutput) {
  // 64 working bits cannot vouch for 200 correct bits.
  const Result r = run("--bits 64 --require-bits 200");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("fewer than --require-bits"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("out.safetensors")));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(RunReference, BaselinesRun) {
  for (const char* b : {"linear", "deltanet", "softmax"}) {
    const std::string out = std::string("b-") + b + ".safetensors";
    const Result r = run(std::string("--scalar double --baseline ") + b, out);
    ASSERT_EQ(r.code, 0) << b << "\n" << r.output;
    EXPECT_EQ(io::read_safetensors(path(out)).metadata.at("spec.model"), b);
  }
}

}  // namespace
}  // namespace vla::cli::test
