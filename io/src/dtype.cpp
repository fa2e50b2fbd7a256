#include <algorithm>
#include <array>

#include "vla/io/safetensors.hpp"

namespace vla::io {

std::string to_string(DType d) {
  switch (d) {
    case DType::F64: return "F64";
    case DType::F32: return "F32";
    case DType::BF16: return "BF16";
    case DType::F16: return "F16";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "F64") return DType::F64;
  if (s == "F32") return DType::F32;
  if (s == "BF16") return DType::BF16;
  if (s == "F16") return DType::F16;
  // The other dtypes of the safetensors format: known, but not converted here.
  static constexpr std::array<std::string_view, 12> other = {"BOOL", "U8",  "I8",  "I16",     "U16",     "I32",
                                                             "U32",  "I64", "U64", "F8_E4M3", "F8_E5M2", "C64"};
  if (std::find(other.begin(), other.end(), s) != other.end()) {
    throw FormatError("dtype '" + std::string(s) + "' is not supported (supported: F64, F32, BF16, F16)");
  }
  throw FormatError("unknown dtype '" + std::string(s) + "' (supported: F64, F32, BF16, F16)");
}

std::size_t item_size(DType d) { return d == DType::F64 ? 8 : d == DType::F32 ? 4 : 2; }

int significand_bits(DType d) {
  switch (d) {
    case DType::F64: return 53;
    case DType::F32: return 24;
    case DType::BF16: return 8;
    case DType::F16: return 11;
  }
  return 0;
}

std::uint64_t Tensor::numel() const {
  std::uint64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

const Tensor* File::find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace vla::io
