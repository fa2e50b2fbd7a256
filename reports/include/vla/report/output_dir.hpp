// All-or-nothing output folder: everything is written into a hidden staging
// folder next to the destination, which replaces the destination in one
// rename at the end. An interrupted run leaves the destination as it was.
#pragma once

#include <filesystem>
#include <string>

namespace vla::report {

// Name of the marker file that identifies a folder written by `vla report`
// (only such folders, or empty ones, are ever replaced).
inline constexpr const char* kMarkerFile = ".vla-report";

class StagingDir {
 public:
  // Throws std::invalid_argument when `dest` exists and is not a report folder
  // (nor an empty folder), or is a file. Removes staging folders left behind by
  // killed runs (their process is gone).
  explicit StagingDir(std::filesystem::path dest);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::filesystem::path& path() const { return tmp_; }
  const std::filesystem::path& dest() const { return dest_; }
  // Whether a previous report is there (and will be replaced by commit()).
  bool replaces_previous() const { return replaces_; }
  // Moves the staging folder into place (atomically swapping out a previous report).
  void commit();

 private:
  std::filesystem::path dest_, tmp_;
  bool replaces_ = false;
  bool committed_ = false;
};

// True when `dir` holds the marker of a report folder.
bool is_report_folder(const std::filesystem::path& dir);

}  // namespace vla::report
