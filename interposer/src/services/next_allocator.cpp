#include "next_allocator.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>

#include <cerrno>

#include <atomic>
#include <cstdint>

#include "os.h"

namespace heapline {

ForeignAllocator g_foreign = {};
constinit std::atomic<std::size_t> g_early_count{0};

namespace {
int posix_memalign_first(void** out, std::size_t alignment, std::size_t size) noexcept;
void* aligned_alloc_first(std::size_t alignment, std::size_t size) noexcept;
}  // namespace

// Looked up at their first call: most programs never make one, and each
// dlsym costs tens of thousands of instructions at start-up.
HEAPLINE_ENTRY_TYPE(posix_memalign) g_glibc_posix_memalign = posix_memalign_first;
HEAPLINE_ENTRY_TYPE(aligned_alloc) g_glibc_aligned_alloc = aligned_alloc_first;

namespace {

constexpr NextAllocator kGlibc = {"glibc", "glibc-chunk-size"};
constexpr NextAllocator kForeign = {"foreign", "usable-size"};
std::atomic<const NextAllocator*> g_chosen{nullptr};

thread_local bool t_resolving __attribute__((tls_model("initial-exec"))) = false;
thread_local bool t_looking_up __attribute__((tls_model("initial-exec"))) = false;

// --- early blocks -----------------------------------------------------------
// dlsym allocates only on its error path (the dlerror message), so a handful
// of slots is plenty; a nested call that finds none free fails with ENOMEM,
// which dlsym treats like any failed allocation.
struct EarlyBlock {
  std::atomic<void*> block{nullptr};
  std::size_t size = 0;
  const void* owner = nullptr;  // the resolving thread (its t_resolving)
};
constexpr std::size_t kEarlyCapacity = 64;
EarlyBlock g_early[kEarlyCapacity];

const void* this_thread() { return &t_resolving; }

void* remember(void* p, std::size_t size) {
  if (p == nullptr) return nullptr;
  for (EarlyBlock& early : g_early) {
    void* empty = nullptr;
    if (early.block.load(std::memory_order_relaxed) == nullptr &&
        early.block.compare_exchange_strong(empty, p, std::memory_order_acq_rel)) {
      early.size = size;
      early.owner = this_thread();
      g_early_count.fetch_add(1, std::memory_order_release);
      return p;
    }
  }
  __libc_free(p);
  errno = ENOMEM;
  return nullptr;
}

// valloc and pvalloc for a foreign allocator that lacks them (jemalloc has no
// pvalloc): glibc's versions would hand out glibc blocks that the foreign
// free() cannot take back, so they are built on the foreign memalign.
void* foreign_valloc(std::size_t size) noexcept {
  return g_foreign.memalign(os::page_size(), size);
}
void* foreign_pvalloc(std::size_t size) noexcept {
  const std::size_t page = os::page_size();
  std::size_t rounded;
  if (__builtin_add_overflow(size, page - 1, &rounded)) {
    errno = ENOMEM;
    return nullptr;
  }
  rounded &= ~(page - 1);
  return g_foreign.memalign(page, rounded == 0 ? page : rounded);
}

// glibc's posix_memalign, on __libc_memalign: its checks and its errors.
int posix_memalign_on_libc(void** out, std::size_t alignment, std::size_t size) noexcept {
  if (alignment == 0 || alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

// The loaded object that contains `address` (its start), or nullptr.
// _dl_find_object (glibc 2.35) searches the dynamic linker's sorted table;
// dladdr walks every symbol of the object, some 85 000 instructions for
// libc.so at every start-up, more than the whole forwarding layer costs a
// short program.
const void* object_of(const void* address) {
#if defined(DLFO_STRUCT_HAS_EH_DBASE)
  dl_find_object found;
  return _dl_find_object(const_cast<void*>(address), &found) == 0 ? found.dlfo_map_start : nullptr;
#else
  Dl_info info;
  return dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
#endif
}

// Whether __libc_malloc bound to glibc's (in the object of a function only
// glibc has) rather than to a foreign allocator's alias: tcmalloc and
// mimalloc export __libc_malloc and its siblings themselves, and heapline's
// references to those names then bind to theirs.
bool libc_aliases_are_glibcs() {
  const void* alias = object_of(reinterpret_cast<void*>(&__libc_malloc));
  return alias != nullptr && alias == object_of(reinterpret_cast<void*>(&gnu_get_libc_version));
}

template <typename Fn>
Fn lookup_next(const char* name, void* next_malloc = nullptr) {
  if (next_malloc != nullptr && detail::same_name(name, "malloc")) return reinterpret_cast<Fn>(next_malloc);
  return reinterpret_cast<Fn>(next_symbol(name));
}

// Fills g_foreign when the malloc after heapline is not glibc's and comes
// with the entry points heapline needs; false otherwise (glibc then serves).
bool find_foreign(void* next_malloc) {
  ForeignAllocator foreign{};
  // Every entry of intercepted.h's list by its name (malloc found already).
#define HEAPLINE_LOOK_UP(name) \
  foreign.name = lookup_next<decltype(foreign.name)>(#name, next_malloc);
  HEAPLINE_ALLOCATOR_ENTRIES(HEAPLINE_LOOK_UP)
#undef HEAPLINE_LOOK_UP
  foreign.usable_size = lookup_next<decltype(foreign.usable_size)>("malloc_usable_size");
  // An allocator that lacks one of these cannot be watched: glibc serves.
  if (!foreign.free || !foreign.calloc || !foreign.realloc || !foreign.usable_size) return false;
  // RTLD_NEXT finds glibc's entry for a function the foreign allocator
  // lacks (jemalloc has no pvalloc); a glibc block would then reach the
  // foreign free(). Only entries from the allocator's own object count.
  if (const void* allocator = object_of(next_malloc); allocator != nullptr) {
    auto same_object = [&](auto function) {
      return function != nullptr && object_of(reinterpret_cast<void*>(function)) == allocator;
    };
    if (!same_object(foreign.memalign)) foreign.memalign = nullptr;
    if (!same_object(foreign.valloc)) foreign.valloc = nullptr;
    if (!same_object(foreign.pvalloc)) foreign.pvalloc = nullptr;
  }
  // The missing entry points fall back to what the program would have
  // reached without heapline (glibc's), or are built on the foreign memalign.
  if (!foreign.memalign) foreign.memalign = __libc_memalign;
  if (!foreign.valloc) foreign.valloc = foreign_valloc;
  if (!foreign.pvalloc) foreign.pvalloc = foreign_pvalloc;
  if (!foreign.posix_memalign) foreign.posix_memalign = g_glibc_posix_memalign;
  if (!foreign.aligned_alloc) foreign.aligned_alloc = g_glibc_aligned_alloc;
  g_foreign = foreign;
  return true;
}

// glibc's own posix_memalign and aligned_alloc (RTLD_NEXT could find another
// library's, whose blocks glibc's free cannot take); built on __libc_memalign
// if they cannot be found. False, with nothing stored, when this thread is
// inside a lookup already (the program's dlsym asked for an aligned block).
bool find_glibc_aligned_entries() {
  if (inside_symbol_lookup()) return false;
  const void* libc = object_of(reinterpret_cast<void*>(&__libc_malloc));
  auto from_libc = [&](auto function) {
    return function != nullptr && libc != nullptr && object_of(reinterpret_cast<void*>(function)) == libc;
  };
  auto pm = lookup_next<decltype(g_glibc_posix_memalign)>("posix_memalign");
  auto aa = lookup_next<decltype(g_glibc_aligned_alloc)>("aligned_alloc");
  __atomic_store_n(&g_glibc_posix_memalign, from_libc(pm) ? pm : posix_memalign_on_libc, __ATOMIC_RELEASE);
  __atomic_store_n(&g_glibc_aligned_alloc, from_libc(aa) ? aa : __libc_memalign, __ATOMIC_RELEASE);
  return true;
}

// Each looks up both functions unless that was done already (a foreign
// allocator's table may hold these and keep calling them), then forwards;
// inside a lookup, glibc's behaviour on __libc_memalign.
int posix_memalign_first(void** out, std::size_t alignment, std::size_t size) noexcept {
  auto found = __atomic_load_n(&g_glibc_posix_memalign, __ATOMIC_ACQUIRE);
  if (found != posix_memalign_first) return found(out, alignment, size);
  if (!find_glibc_aligned_entries()) return posix_memalign_on_libc(out, alignment, size);
  return g_glibc_posix_memalign(out, alignment, size);
}

void* aligned_alloc_first(std::size_t alignment, std::size_t size) noexcept {
  auto found = __atomic_load_n(&g_glibc_aligned_alloc, __ATOMIC_ACQUIRE);
  if (found != aligned_alloc_first) return found(alignment, size);
  if (!find_glibc_aligned_entries()) return __libc_memalign(alignment, size);
  return g_glibc_aligned_alloc(alignment, size);
}

}  // namespace

Resolution resolve_allocator() {
  if (const NextAllocator* chosen = g_chosen.load(std::memory_order_acquire)) {
    return chosen == &kGlibc ? Resolution::kGlibc : Resolution::kForeign;
  }
  if (t_resolving) return Resolution::kNested;
  // One thread resolves while the others wait for its answer (dlsym takes
  // microseconds): its early blocks are then the only ones. A thread that
  // waited too long resolves for itself; the answer is the same.
  static std::atomic<bool> busy{false};
  if (busy.exchange(true, std::memory_order_acquire)) {
    for (int attempt = 0; attempt < 10000; ++attempt) {
      if (const NextAllocator* chosen = g_chosen.load(std::memory_order_acquire)) {
        return chosen == &kGlibc ? Resolution::kGlibc : Resolution::kForeign;
      }
      os::yield();
    }
  }
  t_resolving = true;
  const int saved_errno = errno;
  void* next_malloc = next_symbol("malloc");
  // The allocator after heapline is glibc's only when its malloc is glibc's
  // __libc_malloc; a foreign allocator that exports that name too (tcmalloc,
  // mimalloc) is foreign all the same, or the glibc path would call it and
  // read a chunk header its blocks do not have.
  const bool foreign =
      next_malloc != nullptr &&
      (next_malloc != reinterpret_cast<void*>(&__libc_malloc) || !libc_aliases_are_glibcs()) &&
      find_foreign(next_malloc);
  g_chosen.store(foreign ? &kForeign : &kGlibc, std::memory_order_release);
  errno = saved_errno;
  t_resolving = false;
  return foreign ? Resolution::kForeign : Resolution::kGlibc;
}

const NextAllocator& next_allocator() {
  const NextAllocator* chosen = g_chosen.load(std::memory_order_acquire);
  if (chosen == nullptr) {
    chosen = resolve_allocator() == Resolution::kForeign ? &kForeign : &kGlibc;
  }
  return *chosen;
}

void* next_symbol(const char* name) {
  if (t_looking_up) return nullptr;
  t_looking_up = true;
  void* found = dlsym(RTLD_NEXT, name);
  t_looking_up = false;
  return found;
}

bool inside_symbol_lookup() { return t_looking_up; }

// --- early blocks -----------------------------------------------------------

void* remember_early_block(void* p, std::size_t size) { return remember(p, size); }

int early_posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  void* p = nullptr;
  const int error = posix_memalign_on_libc(&p, alignment, size);
  if (error == 0 && remember(p, size) == nullptr) return ENOMEM;
  if (error == 0) *out = p;
  return error;
}

void early_free(void* p) noexcept {
  std::size_t size;
  take_early_block(p, &size);
  __libc_free(p);
}

void* early_realloc(void* p, std::size_t size) noexcept {
  std::size_t old_size;
  const bool early = p != nullptr && take_early_block(p, &old_size);
  void* q = __libc_realloc(p, size);
  if (q != nullptr) return remember(q, size);
  if (early && size != 0) remember(p, old_size);  // failed: p is untouched
  return nullptr;
}


bool take_early_block(void* p, std::size_t* size) {
  if (p == nullptr) return false;
  for (EarlyBlock& early : g_early) {
    void* expected = p;
    if (early.block.load(std::memory_order_relaxed) == p &&
        early.block.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) {
      *size = early.size;
      g_early_count.fetch_sub(1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void adopt_own_early_blocks(void (*adopt)(void*)) {
  if (!have_early_blocks()) return;
  for (EarlyBlock& early : g_early) {
    void* p = early.block.load(std::memory_order_acquire);
    if (p == nullptr || early.owner != this_thread()) continue;
    if (early.block.compare_exchange_strong(p, nullptr, std::memory_order_acq_rel)) {
      g_early_count.fetch_sub(1, std::memory_order_release);
      adopt(p);
    }
  }
}

}  // namespace heapline
