// Results of expensive stages, cached on disk by a hash of their inputs.
//
// The key covers the stage name, its parameters (as JSON) and the identity of
// the running executable (its contents' hash), so rebuilding any kernel or the
// reference invalidates every entry: a cached number is always one this exact
// binary would compute.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace vla::report {

std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t h = 1469598103934665603ull);

// Hash of /proc/self/exe (computed once).
std::string executable_id();

class Cache {
 public:
  // `dir` empty = caching off. `fresh` = ignore existing entries (still write new ones).
  Cache(std::filesystem::path dir, bool fresh);
  std::optional<nlohmann::json> get(const std::string& stage, const nlohmann::json& inputs) const;
  void put(const std::string& stage, const nlohmann::json& inputs, const nlohmann::json& result) const;
  const std::filesystem::path& dir() const { return dir_; }
  // Default: $XDG_CACHE_HOME/vla-verify/report when set, else <parent of out>/.cache.
  static std::filesystem::path default_dir(const std::filesystem::path& out);

 private:
  std::filesystem::path file(const std::string& stage, const nlohmann::json& inputs) const;
  std::filesystem::path dir_;
  bool fresh_;
};

}  // namespace vla::report
