#include "timeline.h"

namespace heapline {

void Timeline::append(const Sample& sample) {
  if (size_ == kCapacity) merge_pairs();
  samples_[size_++] = sample;
}

void Timeline::merge_pairs() {
  std::size_t merged = 0;
  for (std::size_t i = 0; i + 1 < size_; i += 2) {
    const Sample& earlier = samples_[i];
    const Sample& later = samples_[i + 1];
    Sample combined = later;
    if (earlier.max_live > combined.max_live) combined.max_live = earlier.max_live;
    samples_[merged++] = combined;
  }
  if (size_ % 2 != 0) samples_[merged++] = samples_[size_ - 1];
  // Half as many samples now span the same time: sample half as often. An
  // interval of 0 ("sample at every publish") becomes the average spacing of
  // what is kept, so even that setting settles to a bounded rate.
  if (interval_ns_ > 0) {
    interval_ns_ *= 2;
  } else if (merged > 1) {
    interval_ns_ = (samples_[merged - 1].t_ns - samples_[0].t_ns) / (merged - 1);
  }
  size_ = merged;
}

}  // namespace heapline
