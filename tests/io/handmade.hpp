// Safetensors bytes assembled by hand (not by the writer under test): the
// 8-byte little-endian header length, the header text, then the raw buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vla::io::test {

inline std::vector<std::uint8_t> le64(std::uint64_t n) {
  std::vector<std::uint8_t> b;
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  return b;
}

inline std::vector<std::uint8_t> handmade(const std::string& header, const std::vector<std::uint8_t>& buffer) {
  std::vector<std::uint8_t> f = le64(header.size());
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), buffer.begin(), buffer.end());
  return f;
}

// Little-endian bytes of a few values worked out by hand.
inline const std::vector<std::uint8_t> kF64_1_5 = {0, 0, 0, 0, 0, 0, 0xf8, 0x3f};        // 1.5  = 0x3FF8000000000000
inline const std::vector<std::uint8_t> kF64_m0_25 = {0, 0, 0, 0, 0, 0, 0xd0, 0xbf};      // -0.25 = 0xBFD0000000000000
inline const std::vector<std::uint8_t> kF32_m2 = {0, 0, 0, 0xc0};                        // -2.0 = 0xC0000000
inline const std::vector<std::uint8_t> kF32_third = {0xab, 0xaa, 0xaa, 0x3e};            // 0x3EAAAAAB = 11184811 * 2^-25
inline const std::vector<std::uint8_t> kBF16_1 = {0x80, 0x3f};                           // 1.0 = 0x3F80
inline const std::vector<std::uint8_t> kBF16_m3_5 = {0x60, 0xc0};                        // -3.5 = 0xC060

inline std::vector<std::uint8_t> cat(std::initializer_list<std::vector<std::uint8_t>> parts) {
  std::vector<std::uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace vla::io::test
