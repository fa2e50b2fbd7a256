// All-or-nothing file output: a reader never sees a half-written file, a failed
// run leaves nothing behind, and an existing file is only replaced on request.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

namespace vla::io {

// Writes `bytes` to a temporary file in the folder of `path`, then moves it into
// place. Without `overwrite` an existing `path` is left untouched and
// std::invalid_argument is thrown (the check and the move are one atomic step,
// so a file appearing meanwhile is not clobbered either). Throws
// std::invalid_argument when the folder does not exist or is not writable.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes, bool overwrite);

struct FileToWrite {
  std::filesystem::path path;
  std::span<const std::uint8_t> bytes;
};

// The files of one result, all or none: every file is written to a temporary
// beside it first, and only when all are written are they moved into place, so a
// failure while writing (a full disk, a folder that vanished) leaves no file of
// the set behind and replaces none. Should a move itself fail (another process
// creating one of the paths meanwhile), the files this call had already moved in
// and that did not exist before are removed again; a file it had already
// replaced (overwrite) stays replaced. Throws std::invalid_argument as
// write_file_atomically.
void write_files_atomically(std::span<const FileToWrite> files, bool overwrite);

}  // namespace vla::io
