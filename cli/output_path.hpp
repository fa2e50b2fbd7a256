// The check every command makes on a file it is asked to write, before any work:
// a refused overwrite or a missing folder costs nothing and leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>

#include "registry.hpp"

namespace vla::cli {

// Throws InputError naming `flag` when `path` is a folder, already exists (a
// dangling link counts: it would be replaced) and `force` is off, or sits in a
// folder that does not exist.
inline void check_output_path(const std::string& flag, const std::string& path, bool force) {
  namespace fs = std::filesystem;
  const fs::path out(path);
  std::error_code ec;
  if (path.empty()) throw InputError(flag + " needs a file name");
  if (fs::is_directory(out, ec)) throw InputError(flag + " " + path + " is a folder");
  if (fs::exists(fs::symlink_status(out, ec)) && !force) throw InputError(flag + " " + path + " already exists; pass --force to replace it");
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw InputError(flag + " " + path + ": folder " + dir.string() + " does not exist");
}

}  // namespace vla::cli
