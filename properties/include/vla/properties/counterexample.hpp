// Replayable counterexamples: the stream as a safetensors file (F64, exact) with
// the options, the claim and how it was found in the file's metadata, under
// properties/counterexamples/. The claims ledger and the reports load them.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "vla/core/spec.hpp"
#include "vla/properties/generators.hpp"

namespace vla::props {

struct Counterexample {
  std::string claim;     // claims-ledger id, e.g. "prop2-unit-jacobian"
  Case c;                // the stream, lambda0, feature map, family, seed
  Options opt;           // the options the claim was tested with (lambda0 and feature map from c)
  std::string found_by;  // e.g. "rapidcheck shrink", "construction", "adversarial search seed=5"
  std::string note;      // what it shows, one line
  std::map<std::string, std::string> extra;  // measured margins etc. (stored as "vla.extra.<key>")
};

// Writes atomically; refuses to replace an existing file unless overwrite.
void save_counterexample(const std::filesystem::path& path, const Counterexample& cx, bool overwrite);
// Throws std::invalid_argument naming the file and the missing or bad field.
Counterexample load_counterexample(const std::filesystem::path& path);

// The folder of the committed counterexamples (the source tree's properties/counterexamples).
std::filesystem::path counterexample_dir();

}  // namespace vla::props
