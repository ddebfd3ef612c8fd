// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", 2014): the seeded generator behind every random draw in
// heapline. The scenarios use it so every run does the same work; the harness
// so the same input always gives the same interval and the same change
// points, on any standard library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapline {

struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // An index in [0, n): the high bits of a 64x64 product (Lemire's
  // multiply-shift without the rejection step; the bias is below 2^-50 for
  // the sizes used here).
  std::size_t index(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

}  // namespace heapline
