// Small text helpers for error messages (private to vla_io).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vla::io {

// Bytes outside printable ASCII as \xNN, so that a hostile file cannot put raw
// control characters or broken UTF-8 on the user's terminal.
inline std::string printable(std::string_view s, std::size_t max_len = 200) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > max_len) out += "...";
  return out;
}

inline std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace vla::io
