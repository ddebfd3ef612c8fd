// The address ranges heapline counts as mapped memory: disjoint [begin, end)
// ranges in address order, touching ranges merged into one. munmap and
// mremap act on whatever range the program names, which may cover counted
// memory, memory that is not counted (a file, a foreign allocator's arena) or
// a part of either; only the set knows which bytes were counted, so that an
// unmap never subtracts bytes that were never added.
//
// Pure and allocation-free: the storage is the caller's (mapped_memory.cpp
// keeps it in pages it maps itself and grows it when full), so the unit tests
// drive it with a plain array. Not thread-safe: the caller locks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapline {

struct AddressRange {
  std::uintptr_t begin;
  std::uintptr_t end;
  friend bool operator==(const AddressRange&, const AddressRange&) = default;
};

class RegionSet {
 public:
  constexpr RegionSet() = default;
  RegionSet(AddressRange* storage, std::size_t capacity) : ranges_(storage), capacity_(capacity) {}

  // Moves the ranges to a larger array (the old one may then be released).
  void move_to(AddressRange* storage, std::size_t capacity);

  // Adds [begin, end); bytes already in the set are not added twice. Returns
  // the bytes added, or -1 (set unchanged) when the storage is too small:
  // adding needs at most one free entry (room_for_one_more()).
  std::int64_t add(std::uintptr_t begin, std::uintptr_t end);
  // Removes what the set holds of [begin, end); returns the bytes removed, or
  // -1 (set unchanged) when a range would split and there is no free entry.
  std::int64_t remove(std::uintptr_t begin, std::uintptr_t end);
  // Removes what the set holds of [begin, end) and, where a range would
  // split, that range's tail past `end` too: what a remove that returned -1
  // falls back to when the storage cannot grow. Never fails; the bytes
  // removed include the tail's.
  std::int64_t remove_through_range_end(std::uintptr_t begin, std::uintptr_t end);
  // Bytes of [begin, end) that the set holds.
  std::uint64_t overlap(std::uintptr_t begin, std::uintptr_t end) const;

  bool room_for_one_more() const { return count_ < capacity_; }
  std::size_t count() const { return count_; }
  std::size_t capacity() const { return capacity_; }
  std::uint64_t bytes() const { return bytes_; }
  const AddressRange* ranges() const { return ranges_; }
  void clear() {
    count_ = 0;
    bytes_ = 0;
  }

 private:
  // Index of the first range whose end is above `address`.
  std::size_t first_ending_after(std::uintptr_t address) const;

  AddressRange* ranges_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t count_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace heapline
