#include "vla/report/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace vla::report {

namespace fs = std::filesystem;

namespace {

std::string staging_prefix(const fs::path& dest) { return "." + dest.filename().string() + ".partial-"; }

// Removes staging folders of runs that no longer exist (killed with SIGKILL, power cut).
void remove_stale(const fs::path& dest) {
  const fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  std::error_code ec;
  const std::string prefix = staging_prefix(dest);
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_directory()) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    if (!is_report_folder(e.path())) continue;
    fs::remove_all(e.path(), ec);
  }
}

}  // namespace

bool is_report_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kMarkerFile, ec);
}

StagingDir::StagingDir(fs::path dest) : dest_(std::move(dest)) {
  if (dest_.filename().empty()) dest_ = dest_.parent_path();  // "out/" -> "out"
  std::error_code ec;
  if (fs::exists(dest_, ec)) {
    if (!fs::is_directory(dest_, ec)) {
      throw std::invalid_argument("--out " + dest_.string() + " exists and is not a folder; refusing to replace it");
    }
    const bool empty = fs::is_empty(dest_, ec);
    if (!empty && !is_report_folder(dest_)) {
      throw std::invalid_argument("--out " + dest_.string() + " exists and is not a report folder (no " +
                                  std::string(kMarkerFile) + " marker); refusing to replace it");
    }
    replaces_ = !empty;
  }
  const fs::path parent = dest_.parent_path().empty() ? fs::path(".") : dest_.parent_path();
  fs::create_directories(parent, ec);
  if (ec) throw std::invalid_argument("cannot create " + parent.string() + ": " + ec.message());
  remove_stale(dest_);
  tmp_ = parent / (staging_prefix(dest_) + std::to_string(::getpid()));
  fs::remove_all(tmp_, ec);
  fs::create_directory(tmp_, ec);
  if (ec) throw std::invalid_argument("cannot create " + tmp_.string() + ": " + ec.message());
  // The marker first: a staging folder left by a killed run is recognisably ours.
  std::ofstream(tmp_ / kMarkerFile) << "written by `vla report`; this folder is replaced by the next run\n";
}

StagingDir::~StagingDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

void StagingDir::commit() {
  std::error_code ec;
  if (fs::exists(dest_, ec)) {
    // Swap atomically: the destination always holds a complete report.
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, dest_.c_str(), RENAME_EXCHANGE) != 0) {
      // File systems without RENAME_EXCHANGE: two renames (a very short window without dest).
      const fs::path old = tmp_.string() + ".old";
      fs::rename(dest_, old);
      fs::rename(tmp_, dest_);
      fs::remove_all(old, ec);
      committed_ = true;
      return;
    }
    fs::remove_all(tmp_, ec);  // now holds the previous report
  } else {
    fs::rename(tmp_, dest_);
  }
  committed_ = true;
}

}  // namespace vla::report
