#include "timeline.h"

#include "heapline/seqlock.h"
#include "os.h"

namespace heapline {

void Timeline::reset(std::uint64_t interval_ns) {
  count_ = 0;
  interval_ns_ = interval_ns;
  storage_->count.store(0, std::memory_order_release);
  storage_->interval_ns.store(interval_ns, std::memory_order_relaxed);
  // A fresh storage (a fork child's new file, or the fallback) has no merge
  // in progress; keep the sequence even.
  std::uint64_t seq = storage_->merge_seq.load(std::memory_order_relaxed);
  if (seq % 2 != 0) storage_->merge_seq.store(seq + 1, std::memory_order_release);
}

void Timeline::append(const Sample& sample) {
  if (count_ >= kCapacity) merge_pairs();
  storage_->samples[count_] = sample;
  ++count_;
  storage_->count.store(count_, std::memory_order_release);  // publish after the sample is whole
}

void Timeline::merge_pairs() {
  TimelineStorage& s = *storage_;
  const std::size_t size = count_;
  s.merge_from.store(size, std::memory_order_relaxed);
  s.merge_done.store(0, std::memory_order_relaxed);
  // Odd until the merge is done: a reader that finds it odd for good (the
  // writer died mid-merge) rebuilds the line from merge_from and merge_done.
  const SeqlockWrite change(s.merge_seq);
  std::size_t merged = 0;
  for (std::size_t i = 0; i + 1 < size; i += 2) {
    const Sample earlier = s.samples[i];
    Sample combined = s.samples[i + 1];
    if (earlier.max_live > combined.max_live) combined.max_live = earlier.max_live;
    s.samples[merged++] = combined;
    s.merge_done.store(merged, std::memory_order_release);
  }
  // An odd last sample moves without a mark of progress: its original, at
  // size - 1, lies past every index the merge writes, so a reader that
  // rebuilds the line of a writer killed here (merged[0, merge_done), then
  // the originals from 2 x merge_done) reads it either way.
  if (size % 2 != 0) s.samples[merged++] = s.samples[size - 1];
  // Half as many samples now span the same time: sample half as often. An
  // interval of 0 ("sample at every publish") becomes the average spacing of
  // what is kept, so even that setting settles to a bounded rate.
  std::uint64_t interval = interval_ns_;
  if (interval > 0) {
    interval *= 2;
  } else if (merged > 1) {
    interval = (s.samples[merged - 1].t_ns - s.samples[0].t_ns) / (merged - 1);
  }
  interval_ns_ = interval;
  count_ = merged;
  s.interval_ns.store(interval, std::memory_order_relaxed);
  s.count.store(merged, std::memory_order_relaxed);
}

std::size_t Timeline::keep_only(const std::uint64_t* keep) {
  const auto kept = [keep](std::size_t i) { return (keep[i / 64] >> (i % 64) & 1) != 0; };
  std::size_t first = 0;
  while (first < count_ && kept(first)) ++first;
  if (first == count_) return 0;
  TimelineStorage& s = *storage_;
  s.merge_from.store(first, std::memory_order_relaxed);
  s.merge_done.store(0, std::memory_order_relaxed);
  const SeqlockWrite change(s.merge_seq);
  std::size_t at = first;
  for (std::size_t i = first + 1; i < count_; ++i) {
    if (kept(i)) s.samples[at++] = s.samples[i];
  }
  const std::size_t dropped = count_ - at;
  count_ = at;
  s.count.store(at, std::memory_order_relaxed);
  return dropped;
}

namespace {

// A sample as read from a live file: its figures bounded (heapline/figures.h),
// its maximum never below its value (only a process killed while writing
// one sample, or a crafted file, leaves that).
Sample bounded_sample(Sample sample) {
  sample.t_ns = bounded_ns(sample.t_ns);
  sample.live = bounded_bytes(sample.live);
  sample.max_live = bounded_bytes(sample.max_live);
  if (sample.max_live < sample.live) sample.max_live = sample.live;
  return sample;
}

// Every index comes from a file another process wrote (or anyone crafted):
// clamped so that neither the source nor `out` is ever overrun.
std::size_t copy_samples(const TimelineStorage& s, Sample* out, std::size_t from, std::size_t to, std::size_t at) {
  if (to > kTimelineCapacity) to = kTimelineCapacity;
  for (std::size_t i = from; i < to && at < kTimelineCapacity; ++i) {
    out[at++] = bounded_sample(s.samples[i]);
  }
  return at;
}

}  // namespace

std::size_t read_timeline(const TimelineStorage& s, Sample* out, bool still_writing) {
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t seq = s.merge_seq.load(std::memory_order_acquire);
    if (seq % 2 != 0) {
      if (still_writing && attempt < 10000) {
        os::yield();
        continue;
      }
      // The writer died mid-merge (or never finishes): merged prefix, then
      // the originals it had not reached.
      std::size_t from = s.merge_from.load(std::memory_order_relaxed);
      if (from > kTimelineCapacity) from = kTimelineCapacity;
      std::size_t done = s.merge_done.load(std::memory_order_acquire);
      if (done > (from + 1) / 2) done = (from + 1) / 2;  // a merge writes at most half
      std::size_t n = copy_samples(s, out, 0, done, 0);
      return copy_samples(s, out, 2 * done, from, n);
    }
    std::size_t count = s.count.load(std::memory_order_acquire);
    std::size_t n = copy_samples(s, out, 0, count, 0);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.merge_seq.load(std::memory_order_relaxed) == seq || attempt >= 10000) return n;
  }
}


std::size_t read_mapped_line(const LiveRegion& region, Sample* out, bool still_writing) {
  std::size_t n = read_timeline(region.mapped_timeline, out, still_writing);
  const LiveHeader& h = region.header;
  const std::uint64_t change_ns = latest_mapping_change_ns(h);
  if (change_ns == 0 || (n > 0 && change_ns <= out[n - 1].t_ns) || n >= kHeapLineCapacity) return n;
  out[n++] = bounded_sample(Sample{change_ns, h.mapped_change_live.load(std::memory_order_relaxed),
                                  h.mapped_open_max.load(std::memory_order_relaxed)});
  return n;
}

std::size_t read_heap_line(const LiveRegion& region, Sample* out, bool still_writing) {
  std::size_t n = read_timeline(region.timeline, out, still_writing);
  const LiveHeader& h = region.header;
  const std::uint64_t publish_ns = latest_publish_ns(h);
  // Only a publish after the latest sample is news (a crafted time is
  // harmless: never before the samples, one entry at most).
  if (publish_ns == 0 || (n > 0 && publish_ns <= out[n - 1].t_ns) || n >= kHeapLineCapacity) return n;
  out[n++] = bounded_sample(
      Sample{publish_ns, h.publish_live.load(std::memory_order_relaxed), h.open_max.load(std::memory_order_relaxed)});
  return n;
}

}  // namespace heapline
