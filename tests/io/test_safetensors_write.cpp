// Writer: round trips per dtype, rounding, refusal cases, all-or-nothing files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "handmade.hpp"
#include "tempdir.hpp"
#include "vla/core/bf16.hpp"
#include "vla/io/atomic_file.hpp"
#include "vla/io/dtype_convert.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::io {
namespace {

Tensor make(std::string name, DType d, std::vector<std::uint64_t> shape, std::vector<double> v) {
  return Tensor{std::move(name), d, std::move(shape), std::move(v)};
}

TEST(SafetensorsWrite, BytesMatchTheFormatByHand) {
  const auto bytes = encode_safetensors({make("x", DType::F32, {1}, {-2.0})}, {});
  ASSERT_GE(bytes.size(), 12u);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(bytes[i]) << (8 * i);
  EXPECT_EQ(n % 8, 0u) << "data must start 8-byte aligned";
  ASSERT_EQ(bytes.size(), 8 + n + 4);
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + n);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1), R"({"x":{"data_offsets":[0,4],"dtype":"F32","shape":[1]}})");
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.end() - 4, bytes.end()), test::kF32_m2);
}

// Values exactly representable in each dtype survive exactly, with metadata.
TEST(SafetensorsWrite, RoundTripsEachDtypeExactly) {
  const std::vector<double> f64 = {1.0 / 3.0, -0.0, 1e-310, 1.7976931348623157e308, -5e-324, INFINITY};
  const std::vector<double> f32 = {double(1.0f / 3.0f), -0.0, double(1e-45f), 3.4028234663852886e38, -1.5, -INFINITY};
  const std::vector<double> bf = {1.0, -3.5, std::ldexp(1.0, -133), std::ldexp(255.0, 120), 0.0078125, INFINITY};
  const Metadata meta = {{"a", "1"}, {"unicode", "\xc3\xa9t\xc3\xa9"}};
  const auto bytes = encode_safetensors({make("f64", DType::F64, {2, 3}, f64), make("f32", DType::F32, {6}, f32),
                                         make("bf", DType::BF16, {3, 1, 2}, bf)},
                                        meta);
  const File f = parse_safetensors(bytes);
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.metadata, meta);
  for (const auto& [name, vals, dt] : {std::tuple{"f64", f64, DType::F64}, {"f32", f32, DType::F32}, {"bf", bf, DType::BF16}}) {
    const Tensor* t = f.find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->dtype, dt);
    ASSERT_EQ(t->values.size(), vals.size());
    for (std::size_t i = 0; i < vals.size(); ++i) {
      EXPECT_EQ(std::memcmp(&t->values[i], &vals[i], 8), 0) << name << "[" << i << "] = " << t->values[i] << " vs " << vals[i];
    }
  }
  EXPECT_EQ(f.find("f64")->shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_TRUE(std::isnan(parse_safetensors(encode_safetensors({make("n", DType::BF16, {1}, {NAN})}, {})).tensors[0].values[0]));
}

// Wider values are rounded to nearest even, once.
TEST(SafetensorsWrite, RoundsToTheDtype) {
  const double x = 0.1, tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  const File f = parse_safetensors(encode_safetensors({make("a", DType::F32, {1}, {x}), make("b", DType::BF16, {2}, {x, tie})}, {}));
  EXPECT_EQ(f.find("a")->values[0], double(0.1f));
  EXPECT_EQ(f.find("b")->values[0], bf16_bits_to_double(bf16_bits_from_double(x)));
  EXPECT_EQ(f.find("b")->values[1], 1.0 + std::ldexp(1.0, -7));
}

TEST(SafetensorsWrite, RefusesInconsistentTensors) {
  EXPECT_THROW(encode_safetensors({make("a", DType::F64, {2}, {1.0})}, {}), std::invalid_argument);
  EXPECT_THROW(encode_safetensors({make("a", DType::F64, {1}, {1.0}), make("a", DType::F64, {1}, {1.0})}, {}), std::invalid_argument);
  EXPECT_THROW(encode_safetensors({make("__metadata__", DType::F64, {1}, {1.0})}, {}), std::invalid_argument);
  EXPECT_THROW(encode_safetensors({make("a", DType::F16, {1}, {1.0})}, {}), std::invalid_argument);
  EXPECT_THROW(encode_safetensors({make("a\xff", DType::F64, {1}, {1.0})}, {}), std::invalid_argument);
}

using AtomicWrite = test::TempDirTest;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(AtomicWrite, NeverReplacesAnExistingFileUnlessAsked) {
  const auto p = dir_ / "out.safetensors";
  { std::ofstream(p) << "precious"; }
  const std::vector<Tensor> ts = {make("a", DType::F64, {1}, {1.0})};
  EXPECT_THROW(write_safetensors(p, ts, {}, false), std::invalid_argument);
  EXPECT_EQ(slurp(p), "precious");
  EXPECT_EQ(entries(), 1u) << "a temporary file was left behind";
  write_safetensors(p, ts, {}, true);
  EXPECT_EQ(read_safetensors(p).tensors[0].values, std::vector<double>{1.0});
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, WritesNewFilesAndLeavesNothingOnFailure) {
  const auto p = dir_ / "new.safetensors";
  write_file_atomically(p, std::vector<std::uint8_t>{1, 2, 3}, false);
  EXPECT_EQ(slurp(p), std::string("\x01\x02\x03"));
  EXPECT_THROW(write_file_atomically(dir_ / "missing" / "x", std::vector<std::uint8_t>{1}, false), std::invalid_argument);
  EXPECT_THROW(write_file_atomically(dir_, std::vector<std::uint8_t>{1}, true), std::invalid_argument);
  EXPECT_EQ(entries(), 1u);
}

// A set of files is written all or none: one that cannot be written leaves none of the others, new or replaced.
TEST_F(AtomicWrite, ASetOfFilesIsWrittenAllOrNone) {
  { std::ofstream(dir_ / "old.md") << "precious"; }
  const std::vector<std::uint8_t> a{1}, b{2};
  const std::vector<FileToWrite> bad = {{dir_ / "new.json", a}, {dir_ / "old.md", b}, {dir_ / "missing" / "x", b}};
  EXPECT_THROW(write_files_atomically(bad, true), std::invalid_argument);
  EXPECT_EQ(slurp(dir_ / "old.md"), "precious");
  EXPECT_EQ(entries(), 1u) << "a file of the set or a temporary was left behind";
  // Without overwrite, an existing file of the set stops the whole set before anything is written.
  const std::vector<FileToWrite> clash = {{dir_ / "new.json", a}, {dir_ / "old.md", b}};
  EXPECT_THROW(write_files_atomically(clash, false), std::invalid_argument);
  EXPECT_EQ(entries(), 1u);
  write_files_atomically(clash, true);
  EXPECT_EQ(slurp(dir_ / "new.json"), std::string("\x01"));
  EXPECT_EQ(slurp(dir_ / "old.md"), std::string("\x02"));
  EXPECT_EQ(entries(), 2u);
}

}  // namespace
}  // namespace vla::io
