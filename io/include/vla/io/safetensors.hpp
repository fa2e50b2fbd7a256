// Safetensors files: an 8-byte little-endian header length N, N bytes of JSON
// describing each tensor ({"dtype", "shape", "data_offsets"}) plus optional
// string metadata under "__metadata__", then the tensors' bytes.
//
// The reader is strict: anything it cannot account for (holes or overlaps in
// the buffer, trailing bytes, duplicate keys, unknown fields) is an error that
// names the tensor and the problem, because a silently misread input would make
// every verdict downstream meaningless.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vla::io {

// A malformed or unsupported file. Derives from std::invalid_argument so that
// the CLI reports it as bad input (exit 2).
struct FormatError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

enum class DType { F64, F32, BF16, F16 };

std::string to_string(DType);
// Throws FormatError for names that are not safetensors dtypes or that this
// reader does not convert (integers, 8-bit floats).
DType parse_dtype(std::string_view);
std::size_t item_size(DType);
int significand_bits(DType);  // 53, 24, 8, 11: lets callers tell which types are wider

struct Tensor {
  std::string name;
  DType dtype = DType::F64;
  std::vector<std::uint64_t> shape;
  std::vector<double> values;  // every supported dtype converts to double exactly
  std::uint64_t numel() const;
};

using Metadata = std::map<std::string, std::string>;

struct File {
  std::vector<Tensor> tensors;  // in buffer order
  Metadata metadata;
  const Tensor* find(std::string_view name) const;
};

// Largest header accepted (the reference implementation's own limit).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// `source` names the input in error messages (a path, or "<memory>").
File parse_safetensors(std::span<const std::uint8_t> bytes, std::string_view source = "<memory>");
File read_safetensors(const std::filesystem::path& path);

// Encodes `tensors` in the given order; each value is rounded to the tensor's
// dtype with round-to-nearest-even (F16 is read-only and rejected here).
// Throws std::invalid_argument for duplicate or reserved names, a shape that does
// not match the number of values, or an F16 dtype.
std::vector<std::uint8_t> encode_safetensors(const std::vector<Tensor>& tensors, const Metadata& metadata);

// Writes through a temporary file in the same folder, then renames it into
// place. Refuses (FormatError-free std::invalid_argument naming the path) to
// replace an existing file unless `overwrite` is true.
void write_safetensors(const std::filesystem::path& path, const std::vector<Tensor>& tensors, const Metadata& metadata,
                       bool overwrite);

}  // namespace vla::io
