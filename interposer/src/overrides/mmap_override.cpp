// The memory-mapping API as the program sees it: mmap (and mmap64, a separate
// symbol in glibc even where both take a 64-bit offset), munmap and mremap.
// Each forwards to the kernel and, in libheapline.so, tells mapped_memory.h
// what changed. Built into both libraries like alloc_override.cpp: the null
// library forwards only, so the floor the benchmarks compare with pays the
// same extra call.
#include <stdarg.h>
#include <sys/mman.h>

#include <cstddef>

#include "intercepted.h"
#include "mapped_memory.h"
#include "os.h"

namespace mapped = heapline::mapped;

namespace {

// The return address is the program's call site: the counting library tells
// a foreign allocator's own mappings apart by it.
inline void* map(void* address, std::size_t length, int prot, int flags, int fd, off_t offset, const void* caller) {
#if HEAPLINE_COUNTING
  return mapped::map(address, length, prot, flags, fd, offset, caller);
#else
  (void)caller;
  return heapline::os::map(address, length, prot, flags, fd, offset);
#endif
}

}  // namespace

HEAPLINE_EXPORT(mmap) void* mmap(void* address, std::size_t length, int prot, int flags, int fd, off_t offset) noexcept {
  return map(address, length, prot, flags, fd, offset, __builtin_return_address(0));
}

HEAPLINE_EXPORT(mmap64) void* mmap64(void* address, std::size_t length, int prot, int flags, int fd, off_t offset) noexcept {
  return map(address, length, prot, flags, fd, offset, __builtin_return_address(0));
}

HEAPLINE_EXPORT(munmap) int munmap(void* address, std::size_t length) noexcept {
#if HEAPLINE_COUNTING
  return mapped::unmap(address, length);
#else
  return heapline::os::unmap(address, length);
#endif
}

HEAPLINE_EXPORT(mremap) void* mremap(void* old_address, std::size_t old_length, std::size_t new_length, int flags,
                             ...) noexcept {
  // glibc reads the fifth argument only for these two flags: any other call
  // may have passed nothing there.
  void* new_address = nullptr;
  if ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) != 0) {
    va_list arguments;
    va_start(arguments, flags);
    new_address = va_arg(arguments, void*);
    va_end(arguments);
  }
#if HEAPLINE_COUNTING
  return mapped::remap(old_address, old_length, new_length, flags, new_address);
#else
  return heapline::os::remap(old_address, old_length, new_length, flags, new_address);
#endif
}
