#include "vla/io/atomic_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28, _GNU_SOURCE)
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace vla::io {

namespace {

[[noreturn]] void fail(const std::filesystem::path& p, const std::string& what, int err = 0) {
  throw std::invalid_argument("cannot write " + p.string() + ": " + what + (err ? std::string(" (") + std::strerror(err) + ")" : ""));
}

// Removes the temporary file unless it has been moved into place.
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

// Moves `from` to `to` only if `to` does not exist: renameat2(NOREPLACE) where
// the file system supports it, else a hard link (which also fails on EEXIST).
int move_no_replace(const char* from, const char* to) {
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return errno;
  if (::link(from, to) != 0) return errno;
  ::unlink(from);
  return 0;
}

// A file written to its temporary, not yet moved into place.
struct Staged {
  std::filesystem::path path;
  TempFile tmp;
};

void stage(Staged& st, std::span<const std::uint8_t> bytes, bool overwrite) {
  namespace fs = std::filesystem;
  const fs::path& path = st.path;
  if (path.filename().empty()) fail(path, "the path names a folder, not a file");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(path, "folder " + dir.string() + " does not exist");
  if (fs::is_directory(path, ec)) fail(path, "it is a folder");
  if (!overwrite && fs::exists(fs::symlink_status(path, ec))) fail(path, "the file already exists and overwriting was not requested");

  TempFile& tmp = st.tmp;
  std::string templ = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  tmp.fd = ::mkstemp(templ.data());
  if (tmp.fd < 0) fail(path, "cannot create a temporary file in " + dir.string(), errno);
  tmp.path = templ;
  const mode_t mask = ::umask(0);  // mkstemp makes 0600; give the file the usual umask-based mode
  ::umask(mask);
  ::fchmod(tmp.fd, 0666 & ~mask);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(tmp.fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(path, "write to the temporary file failed", errno);
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(tmp.fd) != 0) fail(path, "fsync failed", errno);
  const int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) fail(path, "close failed", errno);
}

// Moves a staged file into place.
void commit(Staged& st, bool overwrite) {
  if (overwrite) {
    if (::rename(st.tmp.path.c_str(), st.path.c_str()) != 0) fail(st.path, "rename into place failed", errno);
  } else if (const int err = move_no_replace(st.tmp.path.c_str(), st.path.c_str())) {
    fail(st.path, err == EEXIST ? "the file already exists and overwriting was not requested" : "move into place failed", err == EEXIST ? 0 : err);
  }
  st.tmp.keep = true;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes, bool overwrite) {
  const FileToWrite one{path, bytes};
  write_files_atomically(std::span<const FileToWrite>(&one, 1), overwrite);
}

void write_files_atomically(std::span<const FileToWrite> files, bool overwrite) {
  std::vector<Staged> staged(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    staged[i].path = files[i].path;
    stage(staged[i], files[i].bytes, overwrite);  // a failure here: the destructors remove every temporary
  }
  std::vector<bool> existed(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    existed[i] = std::filesystem::exists(std::filesystem::symlink_status(files[i].path, ec));
  }
  std::size_t moved = 0;
  try {
    for (; moved < staged.size(); ++moved) commit(staged[moved], overwrite);
  } catch (...) {
    for (std::size_t i = 0; i < moved; ++i)
      if (!existed[i]) ::unlink(staged[i].path.c_str());
    throw;
  }
}

}  // namespace vla::io
