// `vla run` on bad input: exit 2, a message naming the tensor/index/option, and
// no output file (nor temporary) left behind; existing files are never replaced
// without --force.
#include <fstream>

#include "run_vla.hpp"
#include "streams.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::cli::test {
namespace {

class RunErrors : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    good_ = random_stream(Dims{1, 4, 2, 3, 2}, false, 1);
    io::save_stream(path("in.safetensors"), good_, io::DType::F64, {}, false);
  }
  // Runs `vla run` and checks exit 2, the message, and that no new file appeared.
  void expect_bad(const std::string& args, const std::string& piece) {
    const std::size_t before = entries();
    const Result r = run_vla("run " + args + " --output '" + path("out.safetensors") + "'");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(piece), std::string::npos) << "expected '" << piece << "' in:\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("out.safetensors")));
    EXPECT_EQ(entries(), before) << "a temporary or partial file was left behind";
  }
  std::string in(const std::string& name = "in.safetensors") { return "--input '" + path(name) + "'"; }
  void save(const std::string& name, const std::vector<io::Tensor>& ts) { io::write_safetensors(path(name), ts, {}, false); }
  Stream good_;
};

TEST_F(RunErrors, MissingTensor) {
  auto ts = io::stream_tensors(good_, io::DType::F32);
  ts.pop_back();  // drop v
  save("x.safetensors", ts);
  expect_bad(in("x.safetensors"), "missing tensor 'v'");
}

TEST_F(RunErrors, WrongRank) {
  auto ts = io::stream_tensors(good_, io::DType::F64);
  ts[0].shape = {4, 2, 3};  // q as [T, H, D]
  save("x.safetensors", ts);
  expect_bad(in("x.safetensors"), "tensor 'q' has rank 3");
}

TEST_F(RunErrors, ShapeMismatch) {
  auto ts = io::stream_tensors(good_, io::DType::F64);
  ts[1].shape = {1, 4, 3, 2};  // k: same size, H and D swapped
  save("x.safetensors", ts);
  expect_bad(in("x.safetensors"), "tensor 'k' has shape [1, 4, 3, 2] but 'q' has [1, 4, 2, 3]");
}

TEST_F(RunErrors, NaNAndInfNameTheIndex) {
  Stream s = good_;
  s.v[good_.dims.off(0, 2, 1, good_.dims.Dv) + 1] = std::nan("");
  io::save_stream(path("nan.safetensors"), s, io::DType::F64, {}, false);
  expect_bad(in("nan.safetensors"), "tensor 'v' has a non-finite value (nan) at [b=0, t=2, h=1, d=1]");
  s = good_;
  s.q[good_.dims.off(0, 3, 0, good_.dims.Dk)] = -INFINITY;
  io::save_stream(path("inf.safetensors"), s, io::DType::BF16, {}, false);
  expect_bad(in("inf.safetensors"), "tensor 'q' has a non-finite value (-inf) at [b=0, t=3, h=0, d=0]");
}

TEST_F(RunErrors, ZeroKeyUnderTheIdentityFeatureMap) {
  Stream s = good_;
  for (int j = 0; j < s.dims.Dk; ++j) s.k[s.dims.off(0, 1, 1, s.dims.Dk) + j] = 0.0;
  io::save_stream(path("zk.safetensors"), s, io::DType::F64, {}, false);
  expect_bad(in("zk.safetensors") + " --feature-map identity", "tensor 'k' has a zero feature vector phi(k) at [b=0, t=1, h=1");
}

TEST_F(RunErrors, UndefinedRatioReadout) {
  Stream s = good_;
  for (int j = 0; j < s.dims.Dk; ++j) s.q[s.dims.off(0, 2, 0, s.dims.Dk) + j] = 0.0;  // n . q = 0 under identity
  io::save_stream(path("den.safetensors"), s, io::DType::F64, {}, false);
  expect_bad(in("den.safetensors") + " --feature-map identity", "ratio readout is undefined at [b=0, t=2, h=0");
  // With a raw readout the same stream is fine.
  const Result r = run_vla("run " + in("den.safetensors") + " --feature-map identity --readout raw --bits 64 --output '" +
                           path("raw.safetensors") + "'");
  EXPECT_EQ(r.code, 0) << r.output;
}

// A finite double beyond float's (bf16's) range rounds to inf in the kernels' input type: refused, not computed on.
TEST_F(RunErrors, ValuesBeyondTheKernelsTypeAreRefused) {
  Stream s = random_stream(Dims{1, 4, 1, 16, 16}, false, 2);  // a shape the kernels take
  s.v[1] = 1e300;
  io::save_stream(path("bigv.safetensors"), s, io::DType::F64, {}, false);
  for (const char* impl : {"fp32", "bf16", "bf16-state"})
    expect_bad(in("bigv.safetensors") + " --impl " + impl + " --device cpu", "tensor 'v' has a value beyond");
  expect_bad(in() + " --output ''", "--output: needs a path");
}

// vla check refuses, as vla run does, a stream whose ratio readout is undefined: no value of o there is right or wrong.
TEST_F(RunErrors, CheckRefusesAnUndefinedReadout) {
  Stream s = good_;
  for (int j = 0; j < s.dims.Dk; ++j) s.q[s.dims.off(0, 2, 0, s.dims.Dk) + j] = 0.0;
  io::save_stream(path("den.safetensors"), s, io::DType::F64, {}, false);
  const Result r = run_vla("check --input '" + path("den.safetensors") + "' --candidate '" + path("in.safetensors") +
                           "' --feature-map identity --dtype fp32");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("ratio readout is undefined"), std::string::npos) << r.output;
}

TEST_F(RunErrors, NonPositiveLambda0) {
  expect_bad(in() + " --lambda0 0", "lambda0 must be finite and > 0");
  expect_bad(in() + " --lambda0 -1", "lambda0 must be finite and > 0");
  expect_bad(in() + " --preset vla-v3 --lambda0 -0.5", "lambda0");
}

TEST_F(RunErrors, TruncatedAndMalformedFiles) {
  std::ifstream f(path("in.safetensors"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::ofstream(path("cut.safetensors"), std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  expect_bad(in("cut.safetensors"), "beyond");
  std::ofstream(path("cut8.safetensors"), std::ios::binary) << bytes.substr(0, 5);
  expect_bad(in("cut8.safetensors"), "truncated");
  std::string broken = bytes;
  broken[8] = '[';  // the header's opening brace
  std::ofstream(path("json.safetensors"), std::ios::binary) << broken;
  expect_bad(in("json.safetensors"), "not valid JSON");
  expect_bad(in("absent.safetensors"), "cannot open");
}

TEST_F(RunErrors, UnknownOrMisusedOptions) {
  expect_bad(in() + " --bogus 1", "--bogus");
  expect_bad(in() + " --impl fp64", "--impl");
  expect_bad(in() + " --feature-map relu", "--feature-map");
  expect_bad(in() + " --bits 1", "--bits must be between");
  expect_bad(in() + " --bits many", "--bits");
  expect_bad(in() + " --device cuda", "the reference runs on the CPU only");
  expect_bad(in() + " --impl fp32 --bits 64", "--bits applies to --impl reference only");
  expect_bad(in() + " --deltanet-beta 0.5", "apply to --baseline deltanet only");
  expect_bad("", "--input is required");
}

// An option the baseline never reads is refused by name, not recorded as if it
// acted; what a baseline does read is accepted, and the baseline runs.
TEST_F(RunErrors, OptionsABaselineDoesNotRead) {
  expect_bad(in() + " --baseline softmax --lambda0 2", "--lambda0 has no effect with --baseline softmax");
  expect_bad(in() + " --baseline linear --ridge-every 5 --ridge 0.1", "--ridge-every has no effect with --baseline linear");
  expect_bad(in() + " --baseline deltanet --u-unit-scaled", "--u-unit-scaled has no effect with --baseline deltanet");
  expect_bad(in() + " --baseline deltanet --preset vla-v3", "--preset vla-v3 has no effect with --baseline deltanet");
  expect_bad(in() + " --baseline linear --normalize key", "--normalize has no effect with --baseline linear");
  expect_bad(in() + " --baseline linear --normalize gate", "--normalize has no effect with --baseline linear");
  expect_bad(in() + " --baseline softmax --normalize both", "--normalize has no effect with --baseline softmax");
  // DeltaNet reads the key part of --normalize only: a value with a gate part is refused, naming the value and the
  // value that runs the same recurrence; the key-only values (key, none) are read and accepted below.
  expect_bad(in() + " --baseline deltanet --normalize gate", "--normalize gate: its gate part has no effect with --baseline deltanet");
  expect_bad(in() + " --baseline deltanet --normalize gate", "(--normalize none runs the same recurrence)");
  expect_bad(in() + " --baseline deltanet --normalize both", "--normalize both: its gate part has no effect with --baseline deltanet");
  expect_bad(in() + " --baseline deltanet --normalize both", "(--normalize key runs the same recurrence)");
  expect_bad(in() + " --baseline deltanet --deltanet-beta 0.5 --normalize gate", "--normalize gate: its gate part");
  expect_bad(in() + " --baseline softmax --feature-map identity", "--feature-map has no effect with --baseline softmax");
  expect_bad(in() + " --baseline softmax --readout raw", "--readout has no effect with --baseline softmax");
  for (const std::string args : {"--baseline linear --readout raw --feature-map identity", "--baseline deltanet --normalize none",
                                 "--baseline deltanet --normalize key", "--baseline deltanet", "--baseline softmax",
                                 "--baseline vla --lambda0 2", "--baseline vla --normalize gate"}) {
    const Result r = run_vla("run " + in() + " --scalar double " + args + " --output '" + path("b.safetensors") + "' --force");
    EXPECT_EQ(r.code, 0) << args << ":\n" << r.output;
  }
}

TEST_F(RunErrors, ExistingOutputIsNotReplacedWithoutForce) {
  { std::ofstream(path("out.safetensors")) << "precious"; }
  const Result r = run_vla("run " + in() + " --output '" + path("out.safetensors") + "'");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already exists; pass --force"), std::string::npos) << r.output;
  std::ifstream f(path("out.safetensors"));
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), "precious");
  EXPECT_EQ(entries(), 2u);
}

// The float implementations (CPU twins; head dimension 16 is one they support)
// run and write a complete output.
TEST_F(RunErrors, FloatImplementationsWriteCompleteOutputs) {
  const Stream s = random_stream(Dims{2, 5, 2, 16, 16}, true, 3);
  io::save_stream(path("sq.safetensors"), s, io::DType::F32, {}, false);
  for (const char* impl : {"fp32", "bf16", "bf16-state"}) {
    const std::string out = path(std::string("o-") + impl + ".safetensors");
    const Result r = run_vla("run " + in("sq.safetensors") + " --impl " + impl + " --device cpu --output '" + out + "'");
    ASSERT_EQ(r.code, 0) << r.output;
    const io::File f = io::read_safetensors(out);
    EXPECT_EQ(f.find("o")->values.size(), s.dims.v_size());
    EXPECT_EQ(f.find("S")->shape, (std::vector<std::uint64_t>{2, 2, 16, 16}));
    EXPECT_EQ(f.find("A")->shape, (std::vector<std::uint64_t>{2, 2, 16, 16}));
    EXPECT_EQ(f.find("state_norm")->values.size(), 2u * 5 * 2);
    for (double x : f.find("o")->values) ASSERT_TRUE(std::isfinite(x)) << impl;
    EXPECT_EQ(f.metadata.at("impl"), impl);
    EXPECT_EQ(f.metadata.at("device"), "cpu");
    EXPECT_EQ(f.metadata.at("input_dtypes"), "q=F32 k=F32 v=F32 u=F32");
  }
}

// The chunked implementations (CPU twins) run through `vla run` too: complete
// outputs, the chunk size recorded, and `vla check` passes them under the error
// model of the policy the gate judges each by (gate/src/candidates_chunked.cpp).
TEST_F(RunErrors, ChunkedImplementationsRunAndPassCheck) {
  const Stream s = random_stream(Dims{1, 70, 2, 16, 16}, false, 4);  // T = 70: two whole chunks of 32 and a short one
  io::save_stream(path("ch.safetensors"), s, io::DType::F32, {}, false);
  const std::pair<const char*, const char*> kinds[] = {{"chunked-fp32", "fp32"},      {"chunked-bf16", "bf16-state"},
                                                       {"chunked-tf32", "tf32"},      {"chunked-scan-fp32", "fp32"},
                                                       {"chunked-scan-bf16", "bf16"}};
  for (auto [impl, dtype] : kinds) {
    const std::string out = path(std::string("o-") + impl + ".safetensors");
    const Result r = run_vla("run " + in("ch.safetensors") + " --impl " + impl + " --chunk 32 --device cpu --output '" + out + "'");
    ASSERT_EQ(r.code, 0) << r.output;
    const io::File f = io::read_safetensors(out);
    EXPECT_EQ(f.find("o")->values.size(), s.dims.v_size()) << impl;
    EXPECT_EQ(f.find("state_norm")->values.size(), 70u * 2) << impl;
    EXPECT_EQ(f.metadata.at("impl"), impl);
    EXPECT_EQ(f.metadata.at("chunk"), "32");
    const Result c = run_vla("check " + in("ch.safetensors") + " --candidate '" + out + "' --dtype " + dtype);
    EXPECT_EQ(c.code, 0) << impl << "\n" << c.output;
  }
  expect_bad(in("ch.safetensors") + " --impl chunked-scan-fp32 --chunk 48", "supports D in {16, 32, 64} and chunk sizes 32, 64");
  expect_bad(in("ch.safetensors") + " --impl fp32 --chunk 32", "--chunk applies to the chunked implementations only");
}

// A stream the scan kinds cannot start a segment from (one key repeated, lambda0 = 1e-16, T = 513:
// segment 1 starts from M = 1e-16 I + 512 k^ k^T, far past double; docs/CHUNKED.md 8.27) is refused
// like bad input: exit 2, the bound in the message, no output; the recurrent kind runs it.
TEST_F(RunErrors, ScanKindsRefuseASegmentStartBeyondDouble) {
  Stream s = random_stream(Dims{1, 513, 1, 16, 16}, false, 6);
  for (std::size_t i = 0; i < s.k.size(); ++i) s.k[i] = 0.1 + 0.05 * double(i % 16);
  io::save_stream(path("rk.safetensors"), s, io::DType::F32, {}, false);
  for (const char* impl : {"chunked-scan-fp32", "chunked-scan-bf16"})
    expect_bad(in("rk.safetensors") + " --impl " + impl + " --chunk 32 --device cpu --lambda0 1e-16",
               "vla: refused: scan form (the twin): a segment starts from M = lambda0 I + sum u u^T whose condition number is at least");
  const Result r = run_vla("run " + in("rk.safetensors") + " --impl fp32 --device cpu --lambda0 1e-16 --output '" + path("f.safetensors") + "'");
  EXPECT_EQ(r.code, 0) << r.output;
}

// A shape an implementation does not support is refused like any bad input:
// exit 2 and no output (or, once supported, a complete output).
TEST_F(RunErrors, UnsupportedShapeIsRefusedCleanly) {
  for (const char* impl : {"fp32", "bf16", "bf16-state"}) {
    const std::string out = path(std::string("o-") + impl + ".safetensors");
    const Result r = run_vla("run " + in() + " --impl " + impl + " --device cpu --output '" + out + "'");  // Dk = 3, Dv = 2
    if (r.code == 0) {
      EXPECT_EQ(io::read_safetensors(out).find("o")->values.size(), good_.dims.v_size());
    } else {
      EXPECT_EQ(r.code, 2) << r.output;
      EXPECT_NE(r.output.find("Dk"), std::string::npos) << r.output;
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
}

// The default device is CUDA when present, else the CPU twin, and the run says
// which; asking for CUDA where there is none is bad input.
TEST_F(RunErrors, DeviceDefaultAndCudaRequest) {
  io::save_stream(path("sq.safetensors"), random_stream(Dims{1, 3, 1, 16, 16}, false, 5), io::DType::F64, {}, false);
  const Result r = run_vla("run " + in("sq.safetensors") + " --impl fp32 --output '" + path("d.safetensors") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string device = io::read_safetensors(path("d.safetensors")).metadata.at("device");
  EXPECT_NE(r.output.find("device " + device), std::string::npos) << r.output;
  if (device == "cpu") {
    expect_bad(in("sq.safetensors") + " --impl fp32 --device cuda", "--device cuda: no CUDA device");
  } else {
    EXPECT_EQ(device, "cuda");
  }
}

}  // namespace
}  // namespace vla::cli::test
