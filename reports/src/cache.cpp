#include "vla/report/cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vla::report {

namespace fs = std::filesystem;

std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string executable_id() {
  static const std::string id = [] {
    std::ifstream f("/proc/self/exe", std::ios::binary);
    std::uint64_t h = 1469598103934665603ull;
    std::string buf(1 << 20, '\0');
    while (f) {
      f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      h = fnv1a64(buf.substr(0, static_cast<std::size_t>(f.gcount())), h);
    }
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
    return std::string(b);
  }();
  return id;
}

Cache::Cache(fs::path dir, bool fresh) : dir_(std::move(dir)), fresh_(fresh) {}

fs::path Cache::default_dir(const fs::path& out) {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "vla-verify" / "report";
  fs::path parent = out.parent_path();
  if (out.filename().empty()) parent = out.parent_path().parent_path();
  return (parent.empty() ? fs::path(".") : parent) / ".cache";
}

fs::path Cache::file(const std::string& stage, const nlohmann::json& inputs) const {
  const std::uint64_t h = fnv1a64(stage + '\n' + inputs.dump() + '\n' + executable_id());
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return dir_ / (stage + "-" + b + ".json");
}

std::optional<nlohmann::json> Cache::get(const std::string& stage, const nlohmann::json& inputs) const {
  if (dir_.empty() || fresh_) return std::nullopt;
  std::ifstream f(file(stage, inputs));
  if (!f) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    // Guard against hash collisions and foreign files: the inputs must match exactly.
    if (j.at("stage") != stage || j.at("inputs") != inputs || j.at("executable") != executable_id()) return std::nullopt;
    return j.at("result");
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is recomputed
  }
}

void Cache::put(const std::string& stage, const nlohmann::json& inputs, const nlohmann::json& result) const {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;  // caching is an optimisation: a read-only location just disables it
  const fs::path target = file(stage, inputs);
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << nlohmann::json{{"stage", stage}, {"inputs", inputs}, {"executable", executable_id()}, {"result", result}}.dump();
    if (!f) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace vla::report
