// `vla run` on a valid stream whose outputs overflow: the inputs are finite, so validate_stream accepts
// them, and the run writes what the implementation computed (exit 0). But it says so: a warning on
// stderr naming the count and the first non-finite value, and the same in the file's metadata. Without
// it the scan kinds' NaN on the subnormal fuzz stream (docs/FINDINGS.md item 9) left no trace.
#include "run_vla.hpp"
#include "streams.hpp"
#include "vla/io/safetensors.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::cli::test {
namespace {

class RunNonFinite : public CliTest {};

TEST_F(RunNonFinite, OverflowingOutputsAreReportedAndStillWritten) {
  // Identity features, raw readout: y_t = S_t q_t with |v| ~ 1e38 and |q| = 1e30 overflows float (the
  // fp32 kind), not double (the reference).
  Stream s = random_stream(Dims{1, 2, 1, 16, 16}, false, 5);
  for (double& x : s.q) x = 1e30;
  for (double& x : s.v) x *= 3e38;
  io::save_stream(path("in.safetensors"), s, io::DType::F32, {}, false);
  const std::string common = " --feature-map identity --readout raw --input '" + path("in.safetensors") + "' --output '";

  const Result r = run_vla("run --impl fp32 --device cpu" + common + path("fp32.safetensors") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: fp32 wrote "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("non-finite output value(s) from finite inputs; the first is o[b=0, t=0, h=0, d="), std::string::npos)
      << r.output;
  const io::File f = io::read_safetensors(path("fp32.safetensors"));
  ASSERT_TRUE(f.metadata.count("non_finite_outputs")) << "the file does not say its outputs overflowed";
  EXPECT_GT(std::stoul(f.metadata.at("non_finite_outputs")), 0u);
  EXPECT_EQ(f.metadata.at("first_non_finite").rfind("o[b=0, t=0, h=0, d=", 0), 0u) << f.metadata.at("first_non_finite");

  // The reference in double keeps the same stream finite: no warning, no key.
  const Result ok = run_vla("run --impl reference --scalar double" + common + path("ref.safetensors") + "'");
  ASSERT_EQ(ok.code, 0) << ok.output;
  EXPECT_EQ(ok.output.find("non-finite"), std::string::npos) << ok.output;
  EXPECT_FALSE(io::read_safetensors(path("ref.safetensors")).metadata.count("non_finite_outputs"));
}

}  // namespace
}  // namespace vla::cli::test
