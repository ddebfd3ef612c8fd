// The heap line: a fixed number of samples, so a run of any length costs the
// same memory. Each sample is [t_ns since start, live bytes, the largest live
// value published since the previous sample]. When the buffer is full,
// neighbouring samples merge pairwise (the later sample's time and live
// value, the larger of the two maxima) and the sampling interval doubles:
// resolution is lost, the true maximum never is.
//
// The samples live in a TimelineStorage the caller provides: in libheapline.so
// that is the file-backed shared mapping of the live file, read while it is
// written by `heapline top` and after a kill by `heapline convert`. So the
// storage (include/heapline/live_format.h) is laid out for a reader in
// another process:
//  - a sample is written first, then `count` is published with a release
//    store: a reader that loads `count` with acquire never sees a torn sample;
//  - a merge rewrites the array in place, so it is bracketed by `merge_seq`
//    (odd while merging, a seqlock for live readers) and publishes its
//    progress in `merge_done`. A process killed mid-merge leaves
//    merged[0, merge_done) followed by the untouched originals
//    [2 × merge_done, merge_from): read_timeline() rebuilds exactly that.
//
// The storage's `count` and `interval_ns` are written, never read back.
//
// Not thread-safe for writers: sampling.cpp lets one thread at a time in
// (a try-acquired flag; a thread that finds it taken skips the sample).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heapline/live_format.h"

namespace heapline {

class Timeline {
 public:
  static constexpr std::size_t kCapacity = kTimelineCapacity;

  constexpr explicit Timeline(TimelineStorage* storage) : storage_(storage) {}
  // From now on samples go to `storage` (the mapped file once it exists).
  void attach(TimelineStorage* storage) { storage_ = storage; }
  TimelineStorage* storage() const { return storage_; }

  void reset(std::uint64_t interval_ns);
  // Appends, merging first when full. The interval to use from now on is
  // interval_ns() (it doubles at each merge).
  void append(const Sample& sample);

  // Keeps only the samples whose bit is set in `keep` (sample i: bit i % 64
  // of keep[i / 64]), in their order; returns how many it dropped. For what
  // a live file cut under the process lost (cut_live_file.cpp). Rewrites the
  // array in place as a merge does, bracketed by merge_seq, with merge_from
  // at the first sample dropped and merge_done 0: a process killed midway
  // leaves a storage that read_timeline reads as the samples before that.
  std::size_t keep_only(const std::uint64_t* keep);

  std::size_t size() const { return count_; }
  const Sample& operator[](std::size_t i) const { return storage_->samples[i]; }
  std::uint64_t interval_ns() const { return interval_ns_; }

 private:
  void merge_pairs();

  TimelineStorage* storage_;
  // The authoritative count and interval, in private memory: the storage's
  // copies are for readers, and a writer never trusts what another process
  // could have changed in a shared mapping (every index stays in bounds).
  std::size_t count_ = 0;
  std::uint64_t interval_ns_ = 0;
};

}  // namespace heapline
