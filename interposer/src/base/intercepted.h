// The one list of the functions libheapline.so defines for the program: each
// family an X-macro (memray's hooks.h is the model), from which the rest
// comes:
//  - HEAPLINE_ALLOCATOR_ENTRIES: the allocator entry points heapline
//    forwards through a table. The override layer's entry table, its
//    glibc, foreign, early and resolving entries (alloc_override.cpp) and
//    the foreign allocator's table with its dlsym lookups
//    (next_allocator.{h,cpp}) are built from it, each entry typed as the
//    C library declares the function (decltype(&::NAME)).
//  - HEAPLINE_EXPORTED_FUNCTIONS: every exported name. exports.map, the
//    library's version script, is generated from it at build time
//    (exports.map.in, through the C preprocessor), and a test compares the
//    library's dynamic symbols with it.
// Every exported definition is written HEAPLINE_EXPORT(NAME), which fails
// to compile for a name missing here; a name listed here without a
// definition fails that test. So adding an intercepted function touches
// this file and the one that defines it.
//
// Preprocessor only above the C++ part: exports.map.in includes this file
// through the C preprocessor.
#pragma once

// The allocator's entry points, in the order of the entry tables.
#define HEAPLINE_ALLOCATOR_ENTRIES(X) \
  X(malloc)                           \
  X(free)                             \
  X(calloc)                           \
  X(realloc)                          \
  X(posix_memalign)                   \
  X(aligned_alloc)                    \
  X(memalign)                         \
  X(valloc)                           \
  X(pvalloc)

// Every exported function, by family and the file that defines it.
#define HEAPLINE_EXPORTED_FUNCTIONS(X)                                                   \
  /* alloc_override.cpp: the entries, and two built on them */                          \
  HEAPLINE_ALLOCATOR_ENTRIES(X)                                                         \
  X(reallocarray)                                                                       \
  X(malloc_usable_size)                                                                 \
  /* mmap_override.cpp: the mapped series */                                            \
  X(mmap) X(mmap64) X(munmap) X(mremap)                                                 \
  /* exit_override.cpp: a process that ends through these still writes its report */  \
  X(_exit) X(_Exit)                                                                     \
  /* exec_override.cpp: an image that execs another gives its live file up first */    \
  X(execve) X(execv) X(execvp) X(execvpe) X(execl) X(execle) X(execlp) X(fexecve)       \
  X(execveat)                                                                           \
  /* public_api.cpp: include/heapline.h */                                              \
  X(heapline_v1_mark) X(heapline_v1_live_bytes) X(heapline_v1_peak_bytes)               \
  X(heapline_v1_reset_peak) X(heapline_v1_mapped_bytes) X(heapline_v1_total_bytes)      \
  X(heapline_v1_total_peak_bytes)

// The functions whose blocks the heap sampler meters, each an exported one
// (the report's sampling.entry_points; free and munmap only give back).
// mmap, mmap64 and mremap: anonymous private memory, as the mapped series
// counts it.
#define HEAPLINE_SAMPLED_FUNCTIONS(X)                                                           \
  X(malloc) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc) X(memalign) \
  X(valloc) X(pvalloc) X(mmap) X(mmap64) X(mremap)

#ifdef __cplusplus

namespace heapline {

namespace detail {
constexpr bool same_name(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}
#define HEAPLINE_DETAIL_NAME(name) #name,
inline constexpr const char* kExportedNames[] = {HEAPLINE_EXPORTED_FUNCTIONS(HEAPLINE_DETAIL_NAME)};
#undef HEAPLINE_DETAIL_NAME
}  // namespace detail

// Whether `name` is in HEAPLINE_EXPORTED_FUNCTIONS.
constexpr bool is_exported(const char* name) {
  for (const char* listed : detail::kExportedNames) {
    if (detail::same_name(listed, name)) return true;
  }
  return false;
}

// The names of HEAPLINE_SAMPLED_FUNCTIONS, each one exported.
#define HEAPLINE_DETAIL_SAMPLED_NAME(name) #name,
inline constexpr const char* kSampledFunctions[] = {HEAPLINE_SAMPLED_FUNCTIONS(HEAPLINE_DETAIL_SAMPLED_NAME)};
#undef HEAPLINE_DETAIL_SAMPLED_NAME

}  // namespace heapline

#define HEAPLINE_DETAIL_SAMPLED_IS_EXPORTED(name) \
  static_assert(::heapline::is_exported(#name), #name ": a sampled function the library does not export");
HEAPLINE_SAMPLED_FUNCTIONS(HEAPLINE_DETAIL_SAMPLED_IS_EXPORTED)
#undef HEAPLINE_DETAIL_SAMPLED_IS_EXPORTED

// Opens the definition of an exported function: `HEAPLINE_EXPORT(malloc)
// void* malloc(std::size_t size) noexcept {...}`.
#define HEAPLINE_EXPORT(name)                                                                       \
  static_assert(::heapline::is_exported(#name), #name ": add it to HEAPLINE_EXPORTED_FUNCTIONS " \
                                                       "(intercepted.h), or it is not exported");  \
  extern "C" __attribute__((visibility("default")))

#endif
