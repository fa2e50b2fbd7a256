#include "vla/report/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <vector>
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

constexpr const char* kMarkerHead = "written by `vla report`; this folder is replaced by the next run";
constexpr const char* kFilesLine = "files it wrote:";

// Every entry below `dir` as a relative path (folders with a trailing '/'), the marker excluded.
std::set<std::string> entries_below(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).generic_string();
    if (rel == kMarkerFile) continue;
    if (e.is_directory() && !e.is_symlink()) rel += '/';
    out.insert(rel);
  }
  return out;
}

// The files the marker says the report wrote; nullopt for a marker without that list.
std::optional<std::set<std::string>> listed_files(const fs::path& dir) {
  std::ifstream in(dir / kMarkerFile);
  std::string line;
  bool listing = false;
  std::set<std::string> out;
  while (std::getline(in, line)) {
    if (listing && !line.empty()) out.insert(line);
    if (line == kFilesLine) listing = true;
  }
  if (!listing) return std::nullopt;
  return out;
}

// What in a previous report's folder the report did not write (a user's notes, a plot edited by hand): replacing
// the folder would delete it, so the run is refused while any is there.
std::vector<std::string> foreign_entries(const fs::path& dir) {
  const auto listed = listed_files(dir);
  // A marker of a report written before the markers listed their files (2026-12-05): what those reports wrote.
  auto legacy = [](const std::string& e) {
    return e == "index.html" || e == "report.md" || e == "report.json" || e.rfind("figures/", 0) == 0;
  };
  std::vector<std::string> out;
  for (const auto& e : entries_below(dir))
    if (listed ? !listed->count(e) : !legacy(e)) out.push_back(e);
  return out;
}

std::string refusal(const fs::path& dest, const std::vector<std::string>& foreign) {
  std::string names;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) names += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 5) names += " and " + std::to_string(foreign.size() - 5) + " more";
  return "--out " + dest.string() + " holds a previous report and files that report did not write (" + names +
         "); replacing the folder would delete them: move them out, or choose another --out";
}

}  // namespace

bool is_report_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kMarkerFile, ec);
}

StagingDir::StagingDir(fs::path dest) : dest_(std::move(dest)) {
  if (dest_.empty()) throw std::invalid_argument("--out needs a folder name");
  if (dest_.filename().empty()) dest_ = dest_.parent_path();  // "out/" -> "out"
  std::error_code ec;
  {
    // The folder is replaced by a rename: it cannot be the current folder, one above it, or the root.
    const fs::path here = fs::current_path(ec), abs = fs::weakly_canonical(fs::absolute(dest_), ec);
    const auto [a, h] = std::mismatch(abs.begin(), abs.end(), here.begin(), here.end());
    if (dest_.filename() == "." || dest_.filename() == ".." || a == abs.end() || abs == abs.root_path())
      throw std::invalid_argument("--out " + dest_.string() + " is the current folder or one above it; name a folder to hold the report");
    (void)h;
  }
  if (fs::exists(dest_, ec)) {
    if (!fs::is_directory(dest_, ec)) {
      throw std::invalid_argument("--out " + dest_.string() + " exists and is not a folder; refusing to replace it");
    }
    const bool empty = fs::is_empty(dest_, ec);
    if (!empty && !is_report_folder(dest_)) {
      throw std::invalid_argument("--out " + dest_.string() + " exists and is not a report folder (no " +
                                  std::string(kMarkerFile) + " marker); refusing to replace it");
    }
    if (!empty) {
      const auto foreign = foreign_entries(dest_);
      if (!foreign.empty()) throw std::invalid_argument(refusal(dest_, foreign));
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
  std::ofstream(tmp_ / kMarkerFile) << kMarkerHead << "\n";
}

StagingDir::~StagingDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

void StagingDir::commit() {
  std::error_code ec;
  {
    // The marker lists what this report wrote, so that the next run knows what it may replace.
    std::ofstream m(tmp_ / kMarkerFile, std::ios::trunc);
    m << kMarkerHead << "\n" << kFilesLine << "\n";
    for (const auto& e : entries_below(tmp_)) m << e << "\n";
    m.close();
    if (!m) throw std::runtime_error("cannot write " + (tmp_ / kMarkerFile).string());
  }
  if (fs::exists(dest_, ec)) {
    // Files put there during the run (a long one) are not deleted either: the new report is kept beside it.
    const bool empty = fs::is_empty(dest_, ec), ours = is_report_folder(dest_);
    const auto foreign = empty || !ours ? std::vector<std::string>{} : foreign_entries(dest_);
    if (!empty && (!ours || !foreign.empty())) {
      const fs::path kept = dest_.string() + ".new-" + std::to_string(::getpid());
      fs::rename(tmp_, kept, ec);
      committed_ = !ec;
      const std::string why = ours ? refusal(dest_, foreign)
                                   : "--out " + dest_.string() + " changed during the run: it holds files and no report marker now; refusing to replace it";
      throw std::invalid_argument(why + (ec ? std::string("") : "; this run's report is in " + kept.string()));
    }
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
