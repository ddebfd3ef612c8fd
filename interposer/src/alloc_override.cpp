// The override layer: the allocation API as the program sees it. Each entry
// point forwards to the next allocator (next_allocator.h) and tells the
// accounting how many bytes came or went. Nothing else lives here.
//
// This one file builds two libraries:
//  - libheapline.so      (HEAPLINE_COUNTING=1): the accounting of accounting.h;
//  - libheapline_null.so (HEAPLINE_COUNTING=0): forwarding only, the floor
//    any interposer pays, kept as the reference the benchmarks compare with.
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "next_allocator.h"

#if HEAPLINE_COUNTING
#include "accounting.h"
#else
namespace heapline::accounting {
inline void allocated(const NextAllocator&, void*) {}
inline std::size_t size_of(const NextAllocator&, void*) { return 0; }
inline void freed(std::size_t) {}
inline void reallocated(std::size_t, const NextAllocator&, void*) {}
}  // namespace heapline::accounting
#endif

using heapline::is_bootstrap_block;
using heapline::next_allocator;
namespace accounting = heapline::accounting;

#define HEAPLINE_EXPORT extern "C" __attribute__((visibility("default")))

HEAPLINE_EXPORT void* malloc(std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.malloc(size);
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}

HEAPLINE_EXPORT void free(void* p) noexcept {
  if (p == nullptr || is_bootstrap_block(p)) return;  // glibc: free(NULL) does nothing
  const auto& next = next_allocator();
  std::size_t bytes = accounting::size_of(next, p);  // read before the block goes
  next.free(p);
  accounting::freed(bytes);
}

HEAPLINE_EXPORT void* calloc(std::size_t count, std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.calloc(count, size);  // overflow → NULL and ENOMEM, from glibc
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}

HEAPLINE_EXPORT void* realloc(void* p, std::size_t size) noexcept {
  if (is_bootstrap_block(p)) {
    // A block from the bootstrap arena moves to the real allocator.
    void* fresh = malloc(size);
    if (fresh != nullptr) {
      std::size_t old = heapline::bootstrap_block_size(p);
      std::memcpy(fresh, p, old < size ? old : size);
    }
    return fresh;
  }
  const auto& next = next_allocator();
  std::size_t old_bytes = p != nullptr ? accounting::size_of(next, p) : 0;
  void* q = next.realloc(p, size);
  if (q != nullptr) {
    accounting::reallocated(old_bytes, next, q);
  } else if (p != nullptr && size == 0) {
    accounting::freed(old_bytes);  // glibc: realloc(p, 0) frees p and returns NULL
  }  // any other NULL is a failure: p is untouched
  return q;
}

HEAPLINE_EXPORT void* reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
  // glibc's reallocarray is this check followed by a call to realloc through
  // the PLT; forwarding to it would count the same call twice.
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

HEAPLINE_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  const auto& next = next_allocator();
  int error = next.posix_memalign(out, alignment, size);  // EINVAL, ENOMEM; errno untouched
  if (error == 0 && *out != nullptr) accounting::allocated(next, *out);
  return error;
}

HEAPLINE_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.aligned_alloc(alignment, size);
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}

HEAPLINE_EXPORT void* memalign(std::size_t alignment, std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.memalign(alignment, size);
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}

HEAPLINE_EXPORT void* valloc(std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.valloc(size);
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}

HEAPLINE_EXPORT void* pvalloc(std::size_t size) noexcept {
  const auto& next = next_allocator();
  void* p = next.pvalloc(size);
  if (p != nullptr) accounting::allocated(next, p);
  return p;
}
