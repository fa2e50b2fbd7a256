// The reader against files assembled byte by byte.
#include <gtest/gtest.h>

#include <cmath>

#include "handmade.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::io {
namespace {

using test::cat;
using test::handmade;

TEST(SafetensorsRead, DecodesEveryDtypeFromHandMadeBytes) {
  const std::string h =
      R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"F32","shape":[1,2],"data_offsets":[16,24]},)"
      R"("c":{"dtype":"BF16","shape":[2,1],"data_offsets":[24,28]},)"
      R"("d":{"dtype":"F16","shape":[4],"data_offsets":[28,36]},)"
      R"("__metadata__":{"format":"pt","note":"x"}})";
  // F16: 1.0 = 0x3C00, smallest subnormal 0x0001 = 2^-24, largest 0x7BFF = 65504, -Inf 0xFC00.
  const std::vector<std::uint8_t> f16 = {0x00, 0x3c, 0x01, 0x00, 0xff, 0x7b, 0x00, 0xfc};
  const File f = parse_safetensors(handmade(h, cat({test::kF64_1_5, test::kF64_m0_25, test::kF32_m2, test::kF32_third,
                                                    test::kBF16_1, test::kBF16_m3_5, f16})));
  ASSERT_EQ(f.tensors.size(), 4u);
  EXPECT_EQ(f.tensors[0].name, "a");  // buffer order
  EXPECT_EQ(f.find("a")->values, (std::vector<double>{1.5, -0.25}));
  EXPECT_EQ(f.find("b")->values, (std::vector<double>{-2.0, 11184811.0 * std::ldexp(1.0, -25)}));
  EXPECT_EQ(f.find("b")->shape, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(f.find("c")->values, (std::vector<double>{1.0, -3.5}));
  EXPECT_EQ(f.find("c")->dtype, DType::BF16);
  const auto& d = f.find("d")->values;
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], std::ldexp(1.0, -24));
  EXPECT_EQ(d[2], 65504.0);
  EXPECT_TRUE(std::isinf(d[3]) && d[3] < 0);
  EXPECT_EQ(f.metadata, (Metadata{{"format", "pt"}, {"note", "x"}}));
  EXPECT_EQ(f.find("zz"), nullptr);
}

TEST(SafetensorsRead, AcceptsPaddingEmptyAndScalarTensors) {
  // Header padded with spaces (as the reference writer aligns it); a scalar
  // (shape []) holds one element; an empty tensor takes no bytes.
  const std::string h = R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"e":{"dtype":"F64","shape":[0,3],"data_offsets":[4,4]}}   )";
  const File f = parse_safetensors(handmade(h, test::kF32_m2));
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.find("s")->values, std::vector<double>{-2.0});
  EXPECT_TRUE(f.find("e")->values.empty());
  EXPECT_TRUE(f.metadata.empty());
}

TEST(SafetensorsRead, EmptyHeaderObjectIsAnEmptyFile) {
  const File f = parse_safetensors(handmade("{}", {}));
  EXPECT_TRUE(f.tensors.empty());
}

struct Bad {
  const char* label;
  std::vector<std::uint8_t> bytes;
  const char* expected;  // a piece of the message naming the problem
};

std::vector<std::uint8_t> one(const std::string& entry, const std::vector<std::uint8_t>& buf) {
  return handmade("{\"t\":" + entry + "}", buf);
}
const std::string kGood = R"({"dtype":"F64","shape":[1],"data_offsets":[0,8]})";

std::vector<Bad> bad_files() {
  std::vector<std::uint8_t> absurd = test::le64(std::uint64_t(1) << 62);
  std::vector<std::uint8_t> beyond = test::le64(100);
  beyond.insert(beyond.end(), {'{', '}'});
  std::vector<std::uint8_t> bad_utf8 = handmade("{\"\xff\xfe\":{}}", {});
  return {
      {"empty", {}, "truncated"},
      {"short_length", {1, 0, 0}, "truncated"},
      {"absurd_header_length", absurd, "absurd"},
      {"header_beyond_file", beyond, "exceeds the 2 bytes"},
      {"truncated_json", handmade(R"({"t":{"dtype":"F64")", {}), "not valid JSON"},
      {"invalid_utf8", bad_utf8, "ill-formed UTF-8"},
      {"not_an_object", handmade("[1,2]", {}), "must be a JSON object"},
      {"entry_not_object", one("3", {}), "tensor 't': entry must be an object"},
      {"missing_dtype", one(R"({"shape":[1],"data_offsets":[0,8]})", test::kF64_1_5), "tensor 't': missing field 'dtype'"},
      {"missing_shape", one(R"({"dtype":"F64","data_offsets":[0,8]})", test::kF64_1_5), "missing field 'shape'"},
      {"missing_offsets", one(R"({"dtype":"F64","shape":[1]})", test::kF64_1_5), "missing field 'data_offsets'"},
      {"unknown_field", one(R"({"dtype":"F64","shape":[1],"data_offsets":[0,8],"extra":1})", test::kF64_1_5), "unknown field 'extra'"},
      {"dtype_not_string", one(R"({"dtype":64,"shape":[1],"data_offsets":[0,8]})", test::kF64_1_5), "dtype must be a string"},
      {"unknown_dtype", one(R"({"dtype":"F128","shape":[1],"data_offsets":[0,8]})", test::kF64_1_5), "unknown dtype 'F128'"},
      {"unsupported_dtype", one(R"({"dtype":"I64","shape":[1],"data_offsets":[0,8]})", test::kF64_1_5), "dtype 'I64' is not supported"},
      {"negative_shape", one(R"({"dtype":"F64","shape":[-1],"data_offsets":[0,8]})", test::kF64_1_5), "negative value -1"},
      {"fractional_shape", one(R"({"dtype":"F64","shape":[1.5],"data_offsets":[0,8]})", test::kF64_1_5), "non-integer value 1.5"},
      {"string_shape", one(R"({"dtype":"F64","shape":["1"],"data_offsets":[0,8]})", test::kF64_1_5), "must hold non-negative integers"},
      {"shape_not_array", one(R"({"dtype":"F64","shape":1,"data_offsets":[0,8]})", test::kF64_1_5), "shape must be an array"},
      {"shape_vs_span", one(R"({"dtype":"F64","shape":[2],"data_offsets":[0,8]})", test::kF64_1_5), "needs 16 bytes but data_offsets span 8"},
      {"huge_shape", one(R"({"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]})", test::kF64_1_5), "overflows 64 bits"},
      {"offsets_one_number", one(R"({"dtype":"F64","shape":[1],"data_offsets":[8]})", test::kF64_1_5), "data_offsets must be an array [begin, end]"},
      {"offsets_reversed", one(R"({"dtype":"F64","shape":[1],"data_offsets":[8,0]})", test::kF64_1_5), "end before they begin"},
      {"offsets_out_of_range", one(R"({"dtype":"F64","shape":[1],"data_offsets":[8,16]})", test::kF64_1_5), "beyond the 8-byte buffer"},
      {"overflowing_number", one(R"({"dtype":"F64","shape":[1],"data_offsets":[0,1e400]})", test::kF64_1_5), "number overflow"},
      {"negative_offset", one(R"({"dtype":"F64","shape":[1],"data_offsets":[-8,0]})", test::kF64_1_5), "negative value"},
      {"overlap", handmade(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", test::kF64_1_5),
       "tensor 'b': data overlaps tensor 'a'"},
      {"hole", one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})", test::kF64_1_5), "leaves a hole: bytes [0, 4)"},
      {"trailing_garbage", one(kGood, cat({test::kF64_1_5, {0xde, 0xad}})), "2 trailing bytes"},
      {"duplicate_name", handmade("{\"t\":" + kGood + ",\"t\":" + kGood + "}", test::kF64_1_5), "duplicate tensor name 't'"},
      {"duplicate_field", one(R"({"dtype":"F64","dtype":"F32","shape":[1],"data_offsets":[0,8]})", test::kF64_1_5), "duplicate field 'dtype'"},
      {"duplicate_metadata", handmade(R"({"__metadata__":{"a":"1","a":"2"}})", {}), "duplicate metadata key 'a'"},
      {"metadata_not_object", handmade(R"({"__metadata__":["a"]})", {}), "'__metadata__' must be an object"},
      {"metadata_not_string", handmade(R"({"__metadata__":{"n":3}})", {}), "metadata 'n' must be a string"},
      // The JSON parser stops at a NUL: the garbage after it would be ignored.
      {"nul_then_garbage", handmade(std::string("{}") + '\0' + "garbage{{{", {}), "holds a NUL byte at offset 10"},
  };
}

class SafetensorsBad : public ::testing::TestWithParam<Bad> {};

TEST_P(SafetensorsBad, RejectedWithAMessageNamingTheProblem) {
  const Bad& b = GetParam();
  try {
    parse_safetensors(b.bytes, "case.safetensors");
    FAIL() << "accepted a malformed file";
  } catch (const FormatError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("case.safetensors: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(b.expected), std::string::npos) << "message: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, SafetensorsBad, ::testing::ValuesIn(bad_files()),
                         [](const auto& info) { return std::string(info.param.label); });

TEST(SafetensorsRead, ErrorMessagesEscapeRawBytes) {
  try {
    parse_safetensors(handmade(R"({"t\u0001":3})", {}));
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("t\\x01"), std::string::npos) << e.what();
  }
}

TEST(SafetensorsRead, MissingFileAndFolderAreBadInput) {
  EXPECT_THROW(read_safetensors("/nonexistent/dir/x.safetensors"), FormatError);
  EXPECT_THROW(read_safetensors(::testing::TempDir()), FormatError);
}

}  // namespace
}  // namespace vla::io
