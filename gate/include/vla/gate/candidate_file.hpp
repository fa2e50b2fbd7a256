// The outputs of an implementation under test, as a safetensors file for
// `vla check`: `o` [B, T, H, Dv] (required), and `S` [B, H, Dv, Dk], `A`
// [B, H, Dk, Dk], `state_norm` [B, T, H] when the implementation provides them.
// Strict like the stream reader: any other tensor, a wrong rank or shape is a
// FormatError naming the tensor (exit 2), since a misnamed `S` would otherwise
// go unchecked. Values are not judged here: NaN is the error model's business.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "vla/core/stream.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::gate {

struct CandidateFile {
  Outputs out;  // S, A, state_norm empty when absent
  std::map<std::string, io::DType> dtypes;
};

// `input` holds the dims of the stream the candidate was run on.
CandidateFile candidate_from_file(const io::File& file, const Dims& input, std::string_view source);
CandidateFile load_candidate(const std::filesystem::path& path, const Dims& input);

}  // namespace vla::gate
