// The files a command writes: checked together before any work (a refused
// overwrite, a missing folder, two outputs naming one file, an output naming an
// input: each costs nothing and leaves nothing behind), and written together
// after it, all or none (io::write_files_atomically).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "registry.hpp"
#include "vla/io/atomic_file.hpp"

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

// Whether two paths name one file: the same file where both exist (hard links
// and symbolic links included), else the same absolute path once `.`, `..` and
// the links of its existing part are resolved (`./x` and `x` are one file).
inline bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ea, eb;
  if (fs::exists(a, ea) && fs::exists(b, eb)) {
    std::error_code ec;
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  auto norm = [](const std::string& p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(fs::absolute(p, ec), ec);
    return ec ? fs::absolute(p).lexically_normal() : c;
  };
  return norm(a) == norm(b);
}

class OutputFiles {
 public:
  explicit OutputFiles(bool force) : force_(force) {}

  // A file the command reads: no output may name it, --force or not.
  void input(const std::string& flag, const std::string& path) {
    if (!path.empty()) inputs_.push_back({flag, path, {}});
  }
  // A file to write; an empty path means the file was not asked for.
  void output(const std::string& flag, const std::string& path) {
    if (!path.empty()) outputs_.push_back({flag, path, {}});
  }

  // Every check that can be made before the work. Throws InputError.
  void check() const {
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const Entry& o = outputs_[i];
      check_output_path(o.flag, o.path, force_);
      for (std::size_t j = 0; j < i; ++j)
        if (same_file(outputs_[j].path, o.path))
          throw InputError(outputs_[j].flag + " " + outputs_[j].path + " and " + o.flag + " " + o.path + " name the same file");
      for (const Entry& in : inputs_)
        if (same_file(in.path, o.path))
          throw InputError(o.flag + " " + o.path + " is the " + in.flag + " file: an output never replaces an input, --force or not");
    }
  }

  // The content of the file given under `flag` (ignored when it was not asked for).
  void set(const std::string& flag, std::string text) {
    for (Entry& o : outputs_)
      if (o.flag == flag) o.text = std::move(text);
  }

  // An output the command decided not to write after all (it is neither written nor touched).
  void drop(const std::string& flag) {
    std::erase_if(outputs_, [&](const Entry& o) { return o.flag == flag; });
  }

  // Writes every output, all or none; throws std::invalid_argument naming the file that could not be written.
  void write() const {
    std::vector<io::FileToWrite> files;
    for (const Entry& o : outputs_)
      files.push_back({o.path, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(o.text.data()), o.text.size())});
    io::write_files_atomically(files, force_);
  }

  bool empty() const { return outputs_.empty(); }

 private:
  struct Entry {
    std::string flag, path, text;
  };
  bool force_;
  std::vector<Entry> inputs_, outputs_;
};

}  // namespace vla::cli
