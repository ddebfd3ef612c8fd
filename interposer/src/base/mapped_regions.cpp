#include "mapped_regions.h"

#include <cstring>

namespace heapline {
namespace {

std::uint64_t common_bytes(const AddressRange& range, std::uintptr_t begin, std::uintptr_t end) {
  const std::uintptr_t from = range.begin > begin ? range.begin : begin;
  const std::uintptr_t to = range.end < end ? range.end : end;
  return to > from ? to - from : 0;
}

}  // namespace

void RegionSet::move_to(AddressRange* storage, std::size_t capacity) {
  if (count_ > 0 && storage != ranges_) std::memmove(storage, ranges_, count_ * sizeof(AddressRange));
  ranges_ = storage;
  capacity_ = capacity;
}

std::size_t RegionSet::first_ending_after(std::uintptr_t address) const {
  std::size_t low = 0, high = count_;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (ranges_[middle].end > address) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

std::int64_t RegionSet::add(std::uintptr_t begin, std::uintptr_t end) {
  if (begin >= end) return 0;
  // Ranges that overlap or touch [begin, end) all merge with it into one.
  const std::size_t first = begin > 0 ? first_ending_after(begin - 1) : 0;
  std::size_t last = first;  // one past the last range to merge
  std::uint64_t already = 0;
  while (last < count_ && ranges_[last].begin <= end) already += common_bytes(ranges_[last++], begin, end);
  if (first == last) {
    if (count_ == capacity_) return -1;
    std::memmove(ranges_ + first + 1, ranges_ + first, (count_ - first) * sizeof(AddressRange));
    ranges_[first] = {begin, end};
    ++count_;
  } else {
    AddressRange merged{ranges_[first].begin < begin ? ranges_[first].begin : begin,
                        ranges_[last - 1].end > end ? ranges_[last - 1].end : end};
    ranges_[first] = merged;
    std::memmove(ranges_ + first + 1, ranges_ + last, (count_ - last) * sizeof(AddressRange));
    count_ -= last - first - 1;
  }
  const std::uint64_t added = (end - begin) - already;
  bytes_ += added;
  return static_cast<std::int64_t>(added);
}

std::int64_t RegionSet::remove(std::uintptr_t begin, std::uintptr_t end) {
  if (begin >= end) return 0;
  const std::size_t first = first_ending_after(begin);
  std::size_t last = first;  // one past the last range that overlaps
  std::uint64_t removed = 0;
  while (last < count_ && ranges_[last].begin < end) removed += common_bytes(ranges_[last++], begin, end);
  if (first == last) return 0;
  const bool keep_head = ranges_[first].begin < begin;
  const bool keep_tail = ranges_[last - 1].end > end;
  if (first + 1 == last && keep_head && keep_tail) {
    // A hole in the middle of one range: it becomes two.
    if (count_ == capacity_) return -1;
    std::memmove(ranges_ + last + 1, ranges_ + last, (count_ - last) * sizeof(AddressRange));
    ranges_[last] = {end, ranges_[first].end};
    ranges_[first].end = begin;
    ++count_;
  } else {
    std::size_t erase_from = first, erase_to = last;
    if (keep_head) {
      ranges_[first].end = begin;
      ++erase_from;
    }
    if (keep_tail) {
      ranges_[last - 1].begin = end;
      --erase_to;
    }
    std::memmove(ranges_ + erase_from, ranges_ + erase_to, (count_ - erase_to) * sizeof(AddressRange));
    count_ -= erase_to - erase_from;
  }
  bytes_ -= removed;
  return static_cast<std::int64_t>(removed);
}

std::int64_t RegionSet::remove_through_range_end(std::uintptr_t begin, std::uintptr_t end) {
  if (begin >= end) return 0;
  const std::size_t first = first_ending_after(begin);
  // Only a range that holds [begin, end) with bytes on both sides splits.
  if (first < count_ && ranges_[first].begin < begin && ranges_[first].end > end) end = ranges_[first].end;
  return remove(begin, end);
}

std::uint64_t RegionSet::overlap(std::uintptr_t begin, std::uintptr_t end) const {
  std::uint64_t bytes = 0;
  for (std::size_t i = first_ending_after(begin); i < count_ && ranges_[i].begin < end; ++i) {
    bytes += common_bytes(ranges_[i], begin, end);
  }
  return bytes;
}

}  // namespace heapline
