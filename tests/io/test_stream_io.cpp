// Streams and outputs as files: names, ranks and shapes are checked with
// messages naming the tensor; dtypes are reported; saving round-trips.
#include <gtest/gtest.h>

#include "tempdir.hpp"
#include "vla/io/stream_io.hpp"

namespace vla::io {
namespace {

Tensor filled(std::string name, std::vector<std::uint64_t> shape, DType d = DType::F64) {
  std::uint64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = 0.25 * double(i + 1);
  return Tensor{std::move(name), d, std::move(shape), std::move(v)};
}

File stream_file(std::vector<Tensor> ts) { return File{std::move(ts), {}}; }

void expect_error(const File& f, const std::string& piece) {
  try {
    stream_from_file(f, "in.safetensors");
    FAIL() << "accepted; expected an error containing: " << piece;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in.safetensors"), std::string::npos) << e.what();
  }
}

TEST(StreamIo, ReadsShapesValuesAndDtypes) {
  const File f = stream_file({filled("q", {2, 3, 4, 5}, DType::BF16), filled("k", {2, 3, 4, 5}), filled("v", {2, 3, 4, 7}, DType::F32),
                              filled("u", {2, 3, 4, 5})});
  const StreamFile s = stream_from_file(f, "x");
  EXPECT_EQ(s.stream.dims, (Dims{2, 3, 4, 5, 7}));
  EXPECT_EQ(s.stream.q, f.find("q")->values);
  EXPECT_EQ(s.stream.v, f.find("v")->values);
  EXPECT_TRUE(s.stream.has_u());
  EXPECT_EQ(s.dtypes.at("q"), DType::BF16);
  EXPECT_EQ(s.dtypes.at("v"), DType::F32);
  EXPECT_EQ(s.dtypes.at("u"), DType::F64);
  EXPECT_EQ(s.min_significand_bits(), 8);
}

TEST(StreamIo, UIsOptional) {
  const StreamFile s = stream_from_file(stream_file({filled("q", {1, 2, 1, 3}), filled("k", {1, 2, 1, 3}), filled("v", {1, 2, 1, 3})}), "x");
  EXPECT_FALSE(s.stream.has_u());
  EXPECT_EQ(s.dtypes.count("u"), 0u);
  EXPECT_EQ(s.min_significand_bits(), 53);
}

TEST(StreamIo, ShapeErrorsNameTheTensor) {
  const auto q = filled("q", {1, 2, 1, 3}), k = filled("k", {1, 2, 1, 3}), v = filled("v", {1, 2, 1, 4});
  expect_error(stream_file({k, v}), "missing tensor 'q'");
  expect_error(stream_file({q, v}), "missing tensor 'k'");
  expect_error(stream_file({q, k}), "missing tensor 'v'");
  expect_error(stream_file({q, k, v, filled("w", {1})}), "unexpected tensor 'w'");
  expect_error(stream_file({filled("q", {2, 1, 3}), k, v}), "tensor 'q' has rank 3 (shape [2, 1, 3]), expected rank 4");
  expect_error(stream_file({q, filled("k", {1, 2, 1, 3, 1}), v}), "tensor 'k' has rank 5");
  expect_error(stream_file({q, filled("k", {1, 2, 1, 4}), v}), "tensor 'k' has shape [1, 2, 1, 4] but 'q' has [1, 2, 1, 3]");
  expect_error(stream_file({q, k, v, filled("u", {1, 3, 1, 3})}), "tensor 'u' has shape [1, 3, 1, 3]");
  expect_error(stream_file({q, k, filled("v", {1, 2, 2, 3})}), "tensor 'v' has shape [1, 2, 2, 3] but 'q' has [1, 2, 1, 3] (B, T and H must match)");
  expect_error(stream_file({filled("q", {1, 0, 1, 3}), filled("k", {1, 0, 1, 3}), v}), "tensor 'q' has shape [1, 0, 1, 3]: dimension T is 0");
  expect_error(stream_file({q, k, filled("v", {1, 2, 1, 0})}), "dimension D is 0");
}

using StreamFiles = test::TempDirTest;

TEST_F(StreamFiles, SaveAndLoadRoundTrip) {
  Stream s;
  s.dims = {1, 2, 2, 3, 2};
  for (std::size_t i = 0; i < s.dims.qk_size(); ++i) {
    s.q.push_back(0.5 * double(i));
    s.k.push_back(-1.0 + double(i));
    s.u.push_back(2.0);
  }
  for (std::size_t i = 0; i < s.dims.v_size(); ++i) s.v.push_back(0.125 * double(i));
  const auto p = dir_ / "s.safetensors";
  save_stream(p, s, DType::BF16, {{"seed", "7"}}, false);
  const StreamFile back = load_stream(p);
  EXPECT_EQ(back.stream.dims, s.dims);
  EXPECT_EQ(back.stream.q, s.q);  // all values are bf16-representable
  EXPECT_EQ(back.stream.k, s.k);
  EXPECT_EQ(back.stream.v, s.v);
  EXPECT_EQ(back.stream.u, s.u);
  EXPECT_EQ(back.dtypes.at("k"), DType::BF16);
  EXPECT_EQ(back.metadata.at("seed"), "7");
  EXPECT_THROW(save_stream(p, s, DType::F64, {}, false), std::invalid_argument);
}

TEST_F(StreamFiles, OutputsHaveTheSpecShapes) {
  Outputs o;
  o.allocate(Dims{2, 3, 4, 5, 6}, true);
  o.o[7] = 1.5;
  o.S.back() = -2.0;
  const auto p = dir_ / "o.safetensors";
  save_outputs(p, o, {{"certified_bits", "230"}}, DType::F64, false);
  const File f = read_safetensors(p);
  EXPECT_EQ(f.find("o")->shape, (std::vector<std::uint64_t>{2, 3, 4, 6}));
  EXPECT_EQ(f.find("S")->shape, (std::vector<std::uint64_t>{2, 4, 6, 5}));
  EXPECT_EQ(f.find("A")->shape, (std::vector<std::uint64_t>{2, 4, 5, 5}));
  EXPECT_EQ(f.find("state_norm")->shape, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(f.find("o")->values, o.o);
  EXPECT_EQ(f.find("S")->values, o.S);
  EXPECT_EQ(f.metadata.at("certified_bits"), "230");

  Outputs baseline;
  baseline.allocate(Dims{1, 1, 1, 2, 2}, false);
  save_outputs(dir_ / "b.safetensors", baseline, {}, DType::F32, false);
  const File g = read_safetensors(dir_ / "b.safetensors");
  EXPECT_EQ(g.find("A"), nullptr);
  EXPECT_EQ(g.find("o")->dtype, DType::F32);
}

}  // namespace
}  // namespace vla::io
