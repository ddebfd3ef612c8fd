#include "next_allocator.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <cstdint>
#include <cstring>

extern "C" {
// glibc exports its allocator under these names as well; calling them never
// re-enters heapline, so resolving needs no dlsym in the common case.
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void* __libc_valloc(std::size_t);
void* __libc_pvalloc(std::size_t);
}

namespace heapline {
namespace {

// glibc does not export __libc_posix_memalign/__libc_aligned_alloc; their
// addresses are taken with dlsym once, after which the table is constant.
NextAllocator g_glibc = {
    __libc_malloc, __libc_free, __libc_calloc, __libc_realloc, __libc_memalign,
    __libc_valloc, __libc_pvalloc, nullptr, nullptr, glibc_chunk_size, true, "glibc", "glibc-chunk-size"};
NextAllocator g_foreign = {};

// --- bootstrap arena ------------------------------------------------------
constexpr std::size_t kArenaSize = 64 * 1024;
constexpr std::size_t kArenaHeader = 16;  // keeps the block size, 16-aligned
alignas(64) unsigned char g_arena[kArenaSize];
std::atomic<std::size_t> g_arena_used{0};

thread_local bool t_resolving __attribute__((tls_model("initial-exec"))) = false;

void* bootstrap_alloc(std::size_t size, std::size_t alignment) {
  if (alignment < kArenaHeader) alignment = kArenaHeader;
  if (size > kArenaSize || alignment > kArenaSize) return nullptr;
  std::size_t used = g_arena_used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t start = (used + kArenaHeader + alignment - 1) & ~(alignment - 1);
    std::size_t end = start + ((size + kArenaHeader - 1) & ~(kArenaHeader - 1));
    if (end > kArenaSize) return nullptr;
    if (g_arena_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      std::memcpy(g_arena + start - sizeof(std::size_t), &size, sizeof size);
      return g_arena + start;  // the arena is zero-filled and never reused
    }
  }
}

// The bootstrap table: what a thread gets while it is itself resolving.
void* bootstrap_malloc(std::size_t size) { return bootstrap_alloc(size, kArenaHeader); }
void bootstrap_free(void*) {}
void* bootstrap_calloc(std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) return nullptr;
  return bootstrap_alloc(bytes, kArenaHeader);
}
void* bootstrap_realloc(void* p, std::size_t size) {
  void* fresh = bootstrap_alloc(size, kArenaHeader);
  if (fresh != nullptr && p != nullptr) {
    std::size_t old = bootstrap_block_size(p);
    std::memcpy(fresh, p, old < size ? old : size);
  }
  return fresh;
}
void* bootstrap_memalign(std::size_t alignment, std::size_t size) { return bootstrap_alloc(size, alignment); }
void* bootstrap_valloc(std::size_t size) { return bootstrap_alloc(size, 4096); }
int bootstrap_posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  void* p = bootstrap_alloc(size, alignment);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
std::size_t bootstrap_uncounted(void*) { return 0; }

const NextAllocator g_bootstrap = {
    bootstrap_malloc, bootstrap_free, bootstrap_calloc, bootstrap_realloc, bootstrap_memalign,
    bootstrap_valloc, bootstrap_valloc, bootstrap_posix_memalign, bootstrap_memalign,
    bootstrap_uncounted, false, "bootstrap", "none"};

// valloc and pvalloc for a foreign allocator that lacks them (jemalloc has no
// pvalloc): glibc's versions would hand out glibc blocks that the foreign
// free() cannot take back, so they are built on the foreign memalign.
void* foreign_valloc(std::size_t size) {
  return g_foreign.memalign(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), size);
}
void* foreign_pvalloc(std::size_t size) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t rounded;
  if (__builtin_add_overflow(size, page - 1, &rounded)) {
    errno = ENOMEM;
    return nullptr;
  }
  rounded &= ~(page - 1);
  return g_foreign.memalign(page, rounded == 0 ? page : rounded);
}

// Whether __libc_malloc bound to glibc's (in the object of a function only
// glibc has) rather than to a foreign allocator's alias of the same name.
bool libc_aliases_are_glibcs() {
  Dl_info alias, libc;
  return dladdr(reinterpret_cast<void*>(&__libc_malloc), &alias) != 0 &&
         dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &libc) != 0 && alias.dli_fbase == libc.dli_fbase;
}

template <typename Fn>
Fn lookup_next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

namespace detail {
const NextAllocator* g_next = nullptr;

const NextAllocator* resolve_next_allocator() {
  // dlsym may allocate: a call that comes back here from inside it is served
  // by the bootstrap arena. Several threads resolving at once is harmless:
  // each computes the same table and stores the same pointer.
  if (t_resolving) return &g_bootstrap;
  t_resolving = true;
  void* next_malloc = dlsym(RTLD_NEXT, "malloc");
  const NextAllocator* chosen = &g_glibc;
  // tcmalloc and mimalloc export __libc_malloc, __libc_free... themselves,
  // and heapline's references to those names then bind to theirs: the
  // "glibc" table would call the foreign allocator and read a chunk header
  // it does not have. The names are glibc's only when they live in libc.
  if (next_malloc != nullptr &&
      (next_malloc != reinterpret_cast<void*>(&__libc_malloc) || !libc_aliases_are_glibcs())) {
    NextAllocator foreign{};
    foreign.malloc = reinterpret_cast<decltype(foreign.malloc)>(next_malloc);
    foreign.free = lookup_next<decltype(foreign.free)>("free");
    foreign.calloc = lookup_next<decltype(foreign.calloc)>("calloc");
    foreign.realloc = lookup_next<decltype(foreign.realloc)>("realloc");
    foreign.memalign = lookup_next<decltype(foreign.memalign)>("memalign");
    foreign.valloc = lookup_next<decltype(foreign.valloc)>("valloc");
    foreign.pvalloc = lookup_next<decltype(foreign.pvalloc)>("pvalloc");
    foreign.posix_memalign = lookup_next<decltype(foreign.posix_memalign)>("posix_memalign");
    foreign.aligned_alloc = lookup_next<decltype(foreign.aligned_alloc)>("aligned_alloc");
    foreign.block_size = lookup_next<decltype(foreign.block_size)>("malloc_usable_size");
    // RTLD_NEXT finds glibc's entry for a function the foreign allocator
    // lacks (jemalloc has no pvalloc); a glibc block would then reach the
    // foreign free(). Only entries from the allocator's own object count.
    Dl_info malloc_info;
    if (dladdr(next_malloc, &malloc_info) != 0) {
      auto same_object = [&](auto function) {
        Dl_info info;
        return function != nullptr && dladdr(reinterpret_cast<void*>(function), &info) != 0 &&
               info.dli_fbase == malloc_info.dli_fbase;
      };
      if (!same_object(foreign.memalign)) foreign.memalign = nullptr;
      if (!same_object(foreign.valloc)) foreign.valloc = nullptr;
      if (!same_object(foreign.pvalloc)) foreign.pvalloc = nullptr;
    }
    foreign.reads_glibc_chunk_header = false;
    foreign.name = "foreign";
    foreign.size_basis = "usable-size";
    // An allocator that lacks one of these still works for the others; the
    // missing entry points fall back to what the program would have reached
    // without heapline (glibc's).
    if (!foreign.free || !foreign.calloc || !foreign.realloc || !foreign.block_size) {
      chosen = &g_glibc;
    } else {
      if (!foreign.memalign) foreign.memalign = g_glibc.memalign;
      if (!foreign.valloc) foreign.valloc = foreign_valloc;
      if (!foreign.pvalloc) foreign.pvalloc = foreign_pvalloc;
      g_foreign = foreign;
      chosen = &g_foreign;
    }
  }
  if (chosen == &g_glibc || !g_foreign.posix_memalign || !g_foreign.aligned_alloc) {
    auto pm = lookup_next<decltype(g_glibc.posix_memalign)>("posix_memalign");
    auto aa = lookup_next<decltype(g_glibc.aligned_alloc)>("aligned_alloc");
    if (chosen == &g_glibc) {
      g_glibc.posix_memalign = pm;
      g_glibc.aligned_alloc = aa;
    } else {
      if (!g_foreign.posix_memalign) g_foreign.posix_memalign = pm;
      if (!g_foreign.aligned_alloc) g_foreign.aligned_alloc = aa;
    }
  }
  __atomic_store_n(&g_next, chosen, __ATOMIC_RELEASE);
  t_resolving = false;
  return chosen;
}
}  // namespace detail

bool is_bootstrap_block(const void* p) {
  auto address = reinterpret_cast<std::uintptr_t>(p);
  auto begin = reinterpret_cast<std::uintptr_t>(g_arena);
  return address >= begin && address < begin + kArenaSize;
}

std::size_t bootstrap_block_size(const void* p) {
  std::size_t size;
  std::memcpy(&size, static_cast<const unsigned char*>(p) - sizeof(std::size_t), sizeof size);
  return size;
}

}  // namespace heapline
