// Streams and outputs of the recurrence as safetensors files (docs/SPEC.md):
// inputs `q`, `k`, `v` and optional `u`, each [B, T, H, D]; outputs `o`
// [B, T, H, Dv], `S` [B, H, Dv, Dk], `A` [B, H, Dk, Dk], `state_norm` [B, T, H].
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "vla/core/stream.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::io {

struct StreamFile {
  Stream stream;
  // The stored dtype of each tensor ("q", "k", "v", and "u" when present): a
  // candidate that consumes bf16 must know when the file holds wider values.
  std::map<std::string, DType> dtypes;
  Metadata metadata;
  // The narrowest stored significand among the tensors (53 when all are F64).
  int min_significand_bits() const;
};

// Checks names, ranks and shapes (FormatError naming the tensor and what is
// wrong), not values: NaN/Inf and zero keys depend on the options, so callers
// run vla::validate_stream for those.
StreamFile load_stream(const std::filesystem::path& path);
StreamFile stream_from_file(const File& file, std::string_view source);

// Values are rounded to `dtype` (round-to-nearest-even).
void save_stream(const std::filesystem::path& path, const Stream& s, DType dtype, const Metadata& metadata, bool overwrite);
std::vector<Tensor> stream_tensors(const Stream& s, DType dtype);

// Writes o, S, A (when non-empty) and state_norm.
void save_outputs(const std::filesystem::path& path, const Outputs& out, const Metadata& metadata, DType dtype, bool overwrite);
std::vector<Tensor> output_tensors(const Outputs& out, DType dtype);

}  // namespace vla::io
