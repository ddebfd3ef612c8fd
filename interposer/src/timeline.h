// The heap line: a fixed number of samples in static memory, so a run of any
// length costs the same memory. Each sample is [t_ns since start, live bytes,
// the largest live value published since the previous sample]. When the
// buffer is full, neighbouring samples merge pairwise (the later sample's time
// and live value, the larger of the two maxima) and the sampling interval
// doubles: resolution is lost, the true maximum never is.
//
// Not thread-safe by itself: accounting.cpp lets one thread at a time in
// (a try-acquired flag; a thread that finds it taken skips the sample).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapline {

struct Sample {
  std::uint64_t t_ns;
  std::int64_t live;
  std::int64_t max_live;
};

class Timeline {
 public:
  static constexpr std::size_t kCapacity = 4096;

  void reset(std::uint64_t interval_ns) {
    size_ = 0;
    interval_ns_ = interval_ns;
  }
  // Appends, merging first when full. The interval to use from now on is
  // interval_ns() (it doubles at each merge).
  void append(const Sample& sample);

  std::size_t size() const { return size_; }
  const Sample& operator[](std::size_t i) const { return samples_[i]; }
  std::uint64_t interval_ns() const { return interval_ns_; }

 private:
  void merge_pairs();

  Sample samples_[kCapacity] = {};
  std::size_t size_ = 0;
  std::uint64_t interval_ns_ = 0;
};

}  // namespace heapline
