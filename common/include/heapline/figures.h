// Figures read from files that a program, a crash or a person wrote (the
// live file, a heapline/1 report): what a reader may hold, and the one way
// to add them.
//
// A file may hold any 64 bits, and readers add figures together (heap +
// mapped, a tree's processes over time, a profile's sites), so every reader
// keeps a byte figure within ±kBytesLimit and a time within kTimeLimitNs,
// and every sum of figures goes through bounded_sum or BytesSum: exact as
// long as it is within the limit, the limit beyond it, never an overflow,
// and a sum written back out (a converted report's heap + mapped) is again
// a figure that a reader takes. Allocation-free and constexpr: the
// interposer uses it too.
#pragma once

#include <cstdint>

namespace heapline {

// 1 EiB: past any real heap, and 2^63 / 8, so a few figures together never
// overflow even before they are bounded.
inline constexpr std::int64_t kBytesLimit = std::int64_t{1} << 60;

// 2^62 ns is 146 years: a Unix time in nanoseconds (2^60.6 in 2026) plus a
// time since a process's start stays within 64 bits unsigned.
inline constexpr std::uint64_t kTimeLimitNs = std::uint64_t{1} << 62;

constexpr std::int64_t bounded_bytes(std::int64_t bytes) {
  return bytes > kBytesLimit ? kBytesLimit : bytes < -kBytesLimit ? -kBytesLimit : bytes;
}

// A size, never negative (a block's, a site's): within kBytesLimit too.
inline constexpr std::uint64_t kByteSizeLimit = static_cast<std::uint64_t>(kBytesLimit);

constexpr std::uint64_t bounded_byte_size(std::uint64_t bytes) {
  return bytes > kByteSizeLimit ? kByteSizeLimit : bytes;
}

constexpr std::uint64_t bounded_ns(std::uint64_t ns) { return ns > kTimeLimitNs ? kTimeLimitNs : ns; }

// A sum of any number of figures, exact in 128 bits (2^64 terms of 2^63
// fit), read back bounded.
class BytesSum {
 public:
  constexpr BytesSum() = default;
  constexpr explicit BytesSum(std::int64_t bytes) : total_(bytes) {}
  constexpr BytesSum& operator+=(std::int64_t bytes) {
    total_ += bytes;
    return *this;
  }
  constexpr BytesSum& operator-=(std::int64_t bytes) {
    total_ -= bytes;
    return *this;
  }
  constexpr std::int64_t bytes() const {
    return total_ > kBytesLimit ? kBytesLimit : total_ < -kBytesLimit ? -kBytesLimit : static_cast<std::int64_t>(total_);
  }

 private:
  __int128 total_ = 0;
};

constexpr std::int64_t bounded_sum(std::int64_t a, std::int64_t b) { return (BytesSum(a) += b).bytes(); }

}  // namespace heapline
