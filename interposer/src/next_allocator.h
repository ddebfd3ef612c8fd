// The allocator heapline forwards to: glibc's malloc, or whichever allocator
// the program really uses (jemalloc, tcmalloc, mimalloc...) when one comes
// after heapline in the symbol search order. heapline never replaces the
// program's allocator; it only watches the calls on their way through.
//
// Contract shared by every file of the interposer:
//  - nothing here allocates, throws, locks or changes errno on success paths;
//  - next_allocator() is valid from the very first call in the process, even
//    before constructors run: it resolves itself on first use;
//  - allocations made while the resolution itself runs (dlsym may allocate)
//    are served by a bootstrap table backed by a small static arena;
//    is_bootstrap_block() recognises those blocks so that free() and
//    realloc() never hand them to the real allocator.
#pragma once

#include <cstddef>

namespace heapline {

struct NextAllocator {
  void* (*malloc)(std::size_t);
  void (*free)(void*);
  void* (*calloc)(std::size_t, std::size_t);
  void* (*realloc)(void*, std::size_t);
  void* (*memalign)(std::size_t, std::size_t);
  void* (*valloc)(std::size_t);
  void* (*pvalloc)(std::size_t);
  int (*posix_memalign)(void**, std::size_t, std::size_t);
  void* (*aligned_alloc)(std::size_t, std::size_t);
  // Size counted for a block: identical at allocation and at free.
  std::size_t (*block_size)(void*);
  // True when block_size is glibc_chunk_size: the accounting then reads the
  // chunk header inline instead of making an indirect call.
  bool reads_glibc_chunk_header;
  // "glibc" or "foreign": written to the output so users know what was
  // watched, and with which size basis ("glibc-chunk-size" or "usable-size").
  const char* name;
  const char* size_basis;
};

namespace detail {
extern const NextAllocator* g_next;
const NextAllocator* resolve_next_allocator();
}  // namespace detail

inline const NextAllocator& next_allocator() {
  const NextAllocator* next = detail::g_next;
  if (__builtin_expect(next == nullptr, 0)) next = detail::resolve_next_allocator();
  return *next;
}

// glibc's chunk header: the word before the user pointer holds the chunk size
// with three flag bits. It is the same at allocation and at free, and reading
// it costs one load (malloc_usable_size costs a call and a branch or two).
inline std::size_t glibc_chunk_size(void* p) {
  constexpr std::size_t kFlagBits = 7;
  return static_cast<std::size_t*>(p)[-1] & ~kFlagBits;
}

bool is_bootstrap_block(const void* p);
// Bytes requested for a bootstrap block (for realloc's copy).
std::size_t bootstrap_block_size(const void* p);

}  // namespace heapline
