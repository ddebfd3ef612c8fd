// The allocator heapline forwards to: glibc's malloc, or whichever allocator
// the program really uses (jemalloc, tcmalloc, mimalloc...) when one comes
// after heapline in the symbol search order. heapline never replaces the
// program's allocator; it only watches the calls on their way through.
//
// How the override layer (alloc_override.cpp) reaches it:
//  - glibc (almost always): each entry point calls glibc's __libc_malloc
//    family directly. Nothing is looked up per call.
//  - foreign: through the ForeignAllocator table below, found once with
//    dlsym(RTLD_NEXT). The foreign path already pays a call per block to
//    malloc_usable_size, so its table and checks cost it little.
// Which of the two serves the process is decided once, by resolve_allocator(),
// at the first allocation call of the process (see alloc_override.cpp for how
// that costs the glibc path nothing afterwards).
//
// Contract shared by every file of the interposer:
//  - nothing here allocates, throws, locks or changes errno on success paths;
//  - dlsym may allocate while resolve_allocator() runs: those nested calls are
//    served by glibc and their blocks remembered as "early blocks", so that a
//    foreign free() or realloc() never receives a glibc block (the glibc path
//    never needs to look: its blocks are all glibc's);
//  - every dlsym of the allocation paths goes through next_symbol(), which
//    never re-enters itself on a thread: a program may wrap dlsym and
//    allocate in it, and that allocation must not start another lookup.
#pragma once

#include <malloc.h>
#include <stdlib.h>

#include <atomic>
#include <cstddef>

#include "intercepted.h"

extern "C" {
// glibc exports its allocator under these names as well; calling them never
// re-enters heapline.
void* __libc_malloc(std::size_t) noexcept;
void __libc_free(void*) noexcept;
void* __libc_calloc(std::size_t, std::size_t) noexcept;
void* __libc_realloc(void*, std::size_t) noexcept;
void* __libc_memalign(std::size_t, std::size_t) noexcept;
void* __libc_valloc(std::size_t) noexcept;
void* __libc_pvalloc(std::size_t) noexcept;
}

namespace heapline {

// The allocator as named in the output: "glibc" or "foreign", with the size
// basis ("glibc-chunk-size" or "usable-size").
struct NextAllocator {
  const char* name;
  const char* size_basis;
};
// Resolves on first use; never on the hot path.
const NextAllocator& next_allocator();

// One pointer per entry point of intercepted.h's HEAPLINE_ALLOCATOR_ENTRIES,
// each typed as the C library declares the function: the override layer's
// entry tables (alloc_override.cpp) and the foreign allocator's.
//
// The type is rebuilt from the declaration's return and parameter types:
// GCC keeps glibc's malloc and alloc_size attributes in the type of
// &::malloc, and a pointer of that type would tell it that the block holds
// nothing before its start (the chunk header heapline reads).
template <typename Result, typename... Parameters>
auto plain_function_pointer(Result (*)(Parameters...) noexcept) -> Result (*)(Parameters...) noexcept;
#define HEAPLINE_ENTRY_TYPE(name) decltype(::heapline::plain_function_pointer(&::name))
struct AllocatorEntries {
#define HEAPLINE_ENTRY_FIELD(name) HEAPLINE_ENTRY_TYPE(name) name;
  HEAPLINE_ALLOCATOR_ENTRIES(HEAPLINE_ENTRY_FIELD)
#undef HEAPLINE_ENTRY_FIELD
};

// A foreign allocator's entry points, every one filled (missing ones are
// built on the others, see next_allocator.cpp).
struct ForeignAllocator : AllocatorEntries {
  // Size counted for a block: identical at allocation and at free.
  HEAPLINE_ENTRY_TYPE(malloc_usable_size) usable_size;
};
// Valid once resolve_allocator() has returned kForeign.
extern ForeignAllocator g_foreign;

// dlsym(RTLD_NEXT, name) for heapline's own lookups, or nullptr when this
// thread is already inside one: a program's dlsym that allocates (tracing
// shims and GL dispatch wrappers wrap it) reaches heapline's entry points
// while the lookup runs, and a second lookup from there would recurse until
// the stack ran out. Callers serve such a call from glibc.
void* next_symbol(const char* name);
// Whether this thread is inside next_symbol() now.
bool inside_symbol_lookup();

// glibc exports no __libc_ name for these two; their addresses are taken
// with dlsym once, by resolve_allocator().
extern HEAPLINE_ENTRY_TYPE(posix_memalign) g_glibc_posix_memalign;
extern HEAPLINE_ENTRY_TYPE(aligned_alloc) g_glibc_aligned_alloc;

enum class Resolution { kNested, kGlibc, kForeign };

// Decides which allocator serves the process. kNested when called from
// inside its own dlsym on this thread: the caller then serves the call with
// the early_* functions below. Several threads may resolve at once; they
// reach the same answer.
Resolution resolve_allocator();

// glibc's chunk header: the word before the user pointer holds the chunk size
// with three flag bits. It is the same at allocation and at free, and reading
// it costs one load (malloc_usable_size costs a call and a branch or two).
inline std::size_t glibc_chunk_size(const void* p) {
  constexpr std::size_t kFlagBits = 7;
  return static_cast<const std::size_t*>(p)[-1] & ~kFlagBits;
}

// --- early blocks: glibc blocks handed out while resolving ----------------
// Remembers p (a glibc block of `size` requested bytes) and returns it;
// returns NULL with ENOMEM, p freed, when there is no room left.
void* remember_early_block(void* p, std::size_t size);
int early_posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept;
void early_free(void* p) noexcept;  // any glibc block (nested frees only see those)
void* early_realloc(void* p, std::size_t size) noexcept;
// Whether any early block is still remembered (the foreign path's cheap test
// before it looks one up): inline, since every foreign free() asks.
extern std::atomic<std::size_t> g_early_count;  // blocks remembered now
inline bool have_early_blocks() { return g_early_count.load(std::memory_order_acquire) != 0; }
// Forgets p if it is an early block; *size gets its requested size.
bool take_early_block(void* p, std::size_t* size);
// With glibc chosen, the early blocks this thread made are ordinary glibc
// blocks: hands each still allocated to `adopt` (to be counted) and forgets
// it.
void adopt_own_early_blocks(void (*adopt)(void*));

}  // namespace heapline
