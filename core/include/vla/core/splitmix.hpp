// splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", 2014): a cheap, well-mixed 64-bit hash. Written out because
// the seeds and draws built on it must be the same bits on every platform and
// library version (the fuzzer's replayable case seeds, the error model's drawn
// storage roundings), which <random>'s engines and distributions do not promise.
#pragma once

#include <cstdint>

namespace vla::core {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace vla::core
