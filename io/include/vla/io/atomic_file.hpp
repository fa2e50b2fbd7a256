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

}  // namespace vla::io
