// The override layer: the allocation API as the program sees it. Each entry
// point forwards to the next allocator (next_allocator.h) and tells the
// accounting how many bytes came or went. Nothing else lives here.
//
// This one file builds two libraries:
//  - libheapline.so      (HEAPLINE_COUNTING=1): the accounting of accounting.h;
//  - libheapline_null.so (HEAPLINE_COUNTING=0): forwarding only, the floor
//    any interposer pays, kept as the reference the benchmarks compare with.
//
// How an exported function reaches its allocator. Each one is a single
// indirect jump through its entry in g_entry: the same one instruction as a
// call from a shared object to glibc's malloc through the GOT, and like the
// GOT it is bound once. Until the first call of the process every entry
// holds a resolving_* function, which decides (dlsym, next_allocator.cpp)
// between glibc and a foreign allocator and fills every entry: with glibc_*,
// which call __libc_malloc and the others directly and read glibc's chunk
// header (libheapline_null.so: __libc_* themselves), or with foreign_*.
// libheapline.so's malloc() and free(), the calls that matter, go further
// and skip the jump too (glibc_path_malloc/glibc_path_free below). So the
// glibc path has no test of any kind for the choice, no table walk and no
// bootstrap-block check: blocks handed out while dlsym runs come from glibc
// (next_allocator.h), only a foreign free() has to look for them.
//
// Not GNU ifunc: libc.so's own calls to malloc bind to heapline's symbol
// while libc.so is relocated, before libheapline.so is, and ld.so then warns
// "Relink `libc.so.6' with `libheapline.so' for IFUNC symbol `malloc'" in
// every program; and the choice needs dlsym, which cannot run inside an
// ifunc resolver. A cold branch on a read-mostly flag costs two instructions
// per call (compare, jump) where the entry costs none beyond the jump that
// any forwarder pays, and the inline malloc()/free() fold the choice into
// the NULL test they make anyway.

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "intercepted.h"
#include "next_allocator.h"

#if HEAPLINE_COUNTING
#include "accounting.h"
#include "heap_sampler.h"
#else
namespace heapline::accounting {
enum CallKind : unsigned { kAllocCall, kFreeCall, kReallocCall };
inline bool add_crosses_threshold(std::int64_t, CallKind) { return false; }
inline bool remove_crosses_threshold(std::int64_t, CallKind) { return false; }
inline void record(std::int64_t, CallKind) {}
inline void publish(std::int64_t, CallKind) {}
}  // namespace heapline::accounting
#endif

namespace {

using namespace heapline;
using accounting::kAllocCall;
using accounting::kFreeCall;
using accounting::kReallocCall;
using accounting::record;
constexpr bool kCounting = HEAPLINE_COUNTING;

// The entry tables (g_entry and the ones it is filled from): one pointer
// per function of intercepted.h's HEAPLINE_ALLOCATOR_ENTRIES. Each table
// below is built from that list by a naming rule: glibc_NAME, foreign_NAME,
// early_NAME.
using Entries = AllocatorEntries;
#define HEAPLINE_TABLE_OF(prefix) {HEAPLINE_ALLOCATOR_ENTRIES(HEAPLINE_TABLE_ENTRY_##prefix)}
#define HEAPLINE_TABLE_ENTRY_glibc(name) glibc_##name,
#define HEAPLINE_TABLE_ENTRY_foreign(name) foreign_##name,
#define HEAPLINE_TABLE_ENTRY_early(name) early_##name,

inline std::int64_t chunk_bytes(const void* p) { return static_cast<std::int64_t>(glibc_chunk_size(p)); }

#if HEAPLINE_COUNTING
// --- sampled blocks (heap_sampler.h) -------------------------------------------
// A sampled glibc block's chunk header reads kSampledChunkMarker, so the
// inline accounting of malloc() and free() took that marker for its size
// and its threshold test sent the call here. Each first takes the marker's
// bytes back out of the headroom (one instruction, as the hot path put
// them in: a signal handler's bytes meanwhile stay), then counts the
// block's real glibc chunk as the hot path would have.
constexpr std::int64_t kMarker = sampler::kSampledChunkMarker;

[[gnu::noinline, gnu::cold]] void* account_marked_malloc(void* p) {
  accounting::add_in_place(accounting::t_own.headroom, kMarker);
  // The library's own block (heap_sampler.h, kOwnRecord): not the program's call.
  if (sampler::is_own(p)) accounting::uncount_call(accounting::t_own.calls[kAllocCall]);
  const std::int64_t bytes = sampler::marked_bytes(p);
  accounting::shadow::count(bytes);
  if (accounting::subtract_turns_negative(accounting::t_own.headroom, bytes)) accounting::publish(bytes, kAllocCall);
  return p;
}

[[gnu::noinline, gnu::cold]] void account_marked_free(void* p) {
  accounting::subtract_in_place(accounting::t_own.headroom, kMarker);
  if (sampler::is_own(p)) accounting::uncount_call(accounting::t_own.calls[kFreeCall]);
  const std::int64_t bytes = sampler::marked_bytes(p);
  accounting::shadow::count(-bytes);
  accounting::add_in_place(accounting::t_own.headroom, bytes);
  if (accounting::t_own.out_of_range()) accounting::publish(-bytes, kFreeCall);
  sampler::free_marked(p);
}

#endif

// --- glibc: direct calls, the chunk header read inline ----------------------
// A block is counted out before glibc takes it, so that free() ends in a
// tail call; the figures are the same.

[[gnu::noinline, gnu::cold]] void* publish_after_malloc(void* p, std::int64_t bytes) {
  accounting::publish(bytes, kAllocCall);
  return p;
}

[[gnu::noinline, gnu::cold]] void publish_then_free(void* p, std::int64_t bytes) {
  accounting::publish(bytes, kFreeCall);
  __libc_free(p);
}

// With the heap sampler on, a crossing may be a marked block's (its
// marker taken for its size): told apart here. Bound (g_after_malloc,
// g_before_free) only then, so that with the sampler off a crossing costs
// not one instruction more than without it.
#if HEAPLINE_COUNTING
[[gnu::noinline, gnu::cold]] void* publish_after_marked_malloc(void* p, std::int64_t bytes) {
  if (bytes == kMarker) return account_marked_malloc(p);
  return publish_after_malloc(p, bytes);
}

[[gnu::noinline, gnu::cold]] void publish_then_marked_free(void* p, std::int64_t bytes) {
  if (bytes == -kMarker) return account_marked_free(p);
  publish_then_free(p, bytes);
}
#endif
void* (*g_after_malloc)(void*, std::int64_t) = publish_after_malloc;
void (*g_before_free)(void*, std::int64_t) = publish_then_free;

// libheapline.so's malloc() and free() skip even the entry jump (see the
// exported functions at the end): malloc() calls g_malloc_target, free()
// calls glibc directly, and both count inline every block at or above
// g_inline_from. That is 1 (NULL excepted) once glibc is chosen; until then,
// and with a foreign allocator, it is the top address, so every block takes
// the cold path, where the entry table decides (foreign_* count for
// themselves). This one compare replaces the NULL test that the glibc path
// needs anyway, so the choice costs it nothing.
void* resolving_malloc_target(std::size_t size) noexcept;
void* (*g_malloc_target)(std::size_t) = resolving_malloc_target;
std::uintptr_t g_inline_from = UINTPTR_MAX;
[[gnu::noinline, gnu::cold, maybe_unused]] void free_off_the_glibc_path(void* p) noexcept;

[[gnu::always_inline]] inline void* glibc_path_malloc(std::size_t size) noexcept {
  void* p = g_malloc_target(size);
  if (__builtin_expect(reinterpret_cast<std::uintptr_t>(p) < g_inline_from, 0)) return p;
  const std::int64_t bytes = chunk_bytes(p);
  if (accounting::add_crosses_threshold(bytes, kAllocCall)) return g_after_malloc(p, bytes);
  return p;
}

[[gnu::always_inline]] inline void glibc_path_free(void* p) noexcept {
  if (__builtin_expect(reinterpret_cast<std::uintptr_t>(p) < g_inline_from, 0)) return free_off_the_glibc_path(p);
  const std::int64_t bytes = chunk_bytes(p);
  if (accounting::remove_crosses_threshold(bytes, kFreeCall)) return g_before_free(p, -bytes);
  __libc_free(p);
}

// The same, as entries (free() reaches glibc_free through the cold path
// while glibc is being chosen).
void* glibc_malloc(std::size_t size) noexcept { return glibc_path_malloc(size); }
void glibc_free(void* p) noexcept { glibc_path_free(p); }

void* glibc_calloc(std::size_t count, std::size_t size) noexcept {
  void* p = __libc_calloc(count, size);  // overflow → NULL and ENOMEM, from glibc
  if (p != nullptr) record(chunk_bytes(p), kAllocCall);
  return p;
}

void* glibc_realloc(void* p, std::size_t size) noexcept {
  const std::int64_t old_bytes = p != nullptr ? chunk_bytes(p) : 0;  // read before the block goes
  void* q = __libc_realloc(p, size);
  if (q != nullptr) {
    record(chunk_bytes(q) - old_bytes, kReallocCall);
  } else if (p != nullptr && size == 0) {
    record(-old_bytes, kFreeCall);  // glibc: realloc(p, 0) frees p and returns NULL
  }  // any other NULL is a failure: p is untouched
  return q;
}

int glibc_posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  const int error = g_glibc_posix_memalign(out, alignment, size);  // EINVAL, ENOMEM; errno untouched
  if (error == 0 && *out != nullptr) record(chunk_bytes(*out), kAllocCall);
  return error;
}

void* glibc_aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  void* p = g_glibc_aligned_alloc(alignment, size);
  if (p != nullptr) record(chunk_bytes(p), kAllocCall);
  return p;
}

void* glibc_memalign(std::size_t alignment, std::size_t size) noexcept {
  void* p = __libc_memalign(alignment, size);
  if (p != nullptr) record(chunk_bytes(p), kAllocCall);
  return p;
}

template <void* (*kAllocate)(std::size_t) noexcept>
void* glibc_paged(std::size_t size) noexcept {  // valloc, pvalloc
  void* p = kAllocate(size);
  if (p != nullptr) record(chunk_bytes(p), kAllocCall);
  return p;
}
constexpr auto glibc_valloc = glibc_paged<__libc_valloc>;
constexpr auto glibc_pvalloc = glibc_paged<__libc_pvalloc>;

#if HEAPLINE_COUNTING
// --- glibc with the heap sampler: the meter on every allocation's bytes ------
// malloc() reaches glibc through sampling_malloc (g_malloc_target) instead
// of __libc_malloc; every other allocation function has an entry of its
// own (reallocarray is realloc's, below). With
// HEAPLINE_SAMPLE=off none of them is bound: the calls are today's.

void* sampling_malloc(std::size_t size) noexcept {
  if (sampler::meter_runs_out(size)) [[unlikely]] return sampler::allocate_sampled(size, false);
  return __libc_malloc(size);
}

[[gnu::noinline, gnu::cold]] void* calloc_sampled(std::size_t bytes) noexcept {
  void* p = sampler::allocate_sampled(bytes, true);
  if (p != nullptr && !sampler::is_own_block(p)) record(sampler::counted_bytes(p), kAllocCall);
  return p;
}

void* glibc_calloc_sampling(std::size_t count, std::size_t size) noexcept {
  std::size_t bytes;
  if (!__builtin_mul_overflow(count, size, &bytes) && sampler::meter_runs_out(bytes)) [[unlikely]] {
    return calloc_sampled(bytes);
  }
  return glibc_calloc(count, size);
}

// A marked block moves (glibc cannot resize it), or the meter chose the
// new block: either way a new block, the old one's bytes copied.
[[gnu::noinline, gnu::cold]] void* realloc_sampled(void* p, std::size_t size, bool sample) noexcept {
  std::int64_t old_bytes, new_bytes;
  void* q = sampler::reallocate_sampled(p, size, sample, &old_bytes, &new_bytes);
  if (q != nullptr && sampler::is_own_block(q) && (p == nullptr || old_bytes == 0)) {
    return q;  // the library's own block (heap_sampler.h, kOwnRecord), made or moved: not the program's call
  }
  if (q != nullptr) {
    record(new_bytes - old_bytes, kReallocCall);
  } else if (p != nullptr && size == 0) {
    record(-old_bytes, kFreeCall);
  }
  return q;
}

void* glibc_realloc_sampling(void* p, std::size_t size) noexcept {
  const bool sample = sampler::meter_runs_out(size);
  if (sample || (p != nullptr && sampler::is_marked(p))) [[unlikely]] return realloc_sampled(p, size, sample);
  return glibc_realloc(p, size);
}

// The aligned family: the meter on the requested size, as malloc's; a
// sampled block keeps the alignment asked for (heap_sampler.h, the prefix).
using sampler::GlibcCall;
template <GlibcCall kCall>
[[gnu::noinline, gnu::cold]] void* aligned_sampled(std::size_t alignment, std::size_t size, int* error) noexcept {
  void* p = sampler::allocate_sampled({kCall, alignment, size}, error);
  if (p != nullptr && !sampler::is_own_block(p)) record(sampler::counted_bytes(p), kAllocCall);
  return p;
}

int glibc_posix_memalign_sampling(void** out, std::size_t alignment, std::size_t size) noexcept {
  if (sampler::meter_runs_out(size)) [[unlikely]] {
    int error = 0;
    void* p = aligned_sampled<GlibcCall::kPosixMemalign>(alignment, size, &error);
    if (error == 0) *out = p;
    return error;
  }
  return glibc_posix_memalign(out, alignment, size);
}

void* glibc_aligned_alloc_sampling(std::size_t alignment, std::size_t size) noexcept {
  int error;
  if (sampler::meter_runs_out(size)) [[unlikely]] return aligned_sampled<GlibcCall::kAlignedAlloc>(alignment, size, &error);
  return glibc_aligned_alloc(alignment, size);
}

void* glibc_memalign_sampling(std::size_t alignment, std::size_t size) noexcept {
  int error;
  if (sampler::meter_runs_out(size)) [[unlikely]] return aligned_sampled<GlibcCall::kMemalign>(alignment, size, &error);
  return glibc_memalign(alignment, size);
}

void* glibc_valloc_sampling(std::size_t size) noexcept {
  int error;
  if (sampler::meter_runs_out(size)) [[unlikely]] return aligned_sampled<GlibcCall::kValloc>(0, size, &error);
  return glibc_valloc(size);
}

void* glibc_pvalloc_sampling(std::size_t size) noexcept {
  int error;
  if (sampler::meter_runs_out(size)) [[unlikely]] return aligned_sampled<GlibcCall::kPvalloc>(0, size, &error);
  return glibc_pvalloc(size);
}
#endif

Entries glibc_entries() {
  if constexpr (kCounting) {
    Entries entries = HEAPLINE_TABLE_OF(glibc);
#if HEAPLINE_COUNTING
    if (sampler::enabled()) {
      entries.calloc = glibc_calloc_sampling;
      entries.realloc = glibc_realloc_sampling;
      entries.posix_memalign = glibc_posix_memalign_sampling;
      entries.aligned_alloc = glibc_aligned_alloc_sampling;
      entries.memalign = glibc_memalign_sampling;
      entries.valloc = glibc_valloc_sampling;
      entries.pvalloc = glibc_pvalloc_sampling;
    }
#endif
    return entries;
  } else {
    return {.malloc = __libc_malloc,
            .free = __libc_free,
            .calloc = __libc_calloc,
            .realloc = __libc_realloc,
            .posix_memalign = g_glibc_posix_memalign,
            .aligned_alloc = g_glibc_aligned_alloc,
            .memalign = __libc_memalign,
            .valloc = __libc_valloc,
            .pvalloc = __libc_pvalloc};
  }
}

// --- foreign: through the table, its malloc_usable_size called --------------

inline std::int64_t usable_bytes(void* p) {
  if constexpr (kCounting) return static_cast<std::int64_t>(g_foreign.usable_size(p));
  return 0;
}

// With the sampler, the meter counts a foreign block's usable bytes; a
// sampled one is remembered by address (it has no header of heapline's),
// and so is one the sampler allocated for itself, which is never counted.
[[maybe_unused]] bool g_foreign_sampling = false;  // written only by libheapline.so

// Whether the foreign block `p` of `bytes` just allocated is the library's
// own (the sampler's, while this thread samples): then nothing counts it.
inline bool sampled_or_own(void* p, std::int64_t bytes) {
#if HEAPLINE_COUNTING
  if (g_foreign_sampling && sampler::meter_runs_out(static_cast<std::size_t>(bytes))) [[unlikely]] {
    return sampler::note_foreign_allocation(p, static_cast<std::size_t>(bytes), bytes) == sampler::ForeignBlock::kOwn;
  }
#else
  (void)p, (void)bytes;
#endif
  return false;
}

// Keeps a moved block of the library's own as its own.
inline bool keep_own(void* p) {
#if HEAPLINE_COUNTING
  return sampler::keep_own_foreign(p);
#else
  (void)p;
  return false;
#endif
}

inline void* counted_foreign(void* p) {
  if (p != nullptr && kCounting) {
    const std::int64_t bytes = usable_bytes(p);
    if (!sampled_or_own(p, bytes)) record(bytes, kAllocCall);
  }
  return p;
}

// A foreign block that goes (freed, or moved by realloc) leaves the
// sampled set; looked up only while that holds any foreign block. True
// when it was the library's own (never counted).
inline bool forget_if_sampled(void* p) {
#if HEAPLINE_COUNTING
  if (sampler::foreign_sampled_count() != 0) [[unlikely]] return sampler::forget_foreign(p) == sampler::ForeignBlock::kOwn;
#else
  (void)p;
#endif
  return false;
}

void* foreign_malloc(std::size_t size) noexcept { return counted_foreign(g_foreign.malloc(size)); }

// A foreign realloc's new block: counted as a change, and metered as a new
// block of its size (the library's own one counts only as the old block
// going).
inline void counted_realloc_foreign(void* q, std::int64_t old_bytes) {
  const std::int64_t bytes = usable_bytes(q);
  record((sampled_or_own(q, bytes) ? 0 : bytes) - old_bytes, kReallocCall);
}

void foreign_free(void* p) noexcept {
  if (p == nullptr) return;
  std::size_t early_size;
  if (__builtin_expect(have_early_blocks(), 0) && take_early_block(p, &early_size)) {
    __libc_free(p);  // a glibc block from the resolution, never counted
    return;
  }
  if constexpr (kCounting) {
    const std::int64_t bytes = usable_bytes(p);
    if (!forget_if_sampled(p)) record(-bytes, kFreeCall);
  }
  g_foreign.free(p);
}

void* foreign_calloc(std::size_t count, std::size_t size) noexcept {
  return counted_foreign(g_foreign.calloc(count, size));
}

void* foreign_realloc(void* p, std::size_t size) noexcept {
  std::size_t early_size;
  if (p != nullptr && __builtin_expect(have_early_blocks(), 0) && take_early_block(p, &early_size)) {
    // A glibc block from the resolution moves to the foreign allocator
    // (realloc(p, 0) frees it, as glibc's realloc would).
    void* fresh = size != 0 ? g_foreign.malloc(size) : nullptr;
    if (fresh == nullptr && size != 0) {
      remember_early_block(p, early_size);  // failed: p stays, still a glibc block
      return nullptr;
    }
    if (fresh != nullptr) {
      std::memcpy(fresh, p, early_size < size ? early_size : size);
      if constexpr (kCounting) counted_realloc_foreign(fresh, 0);
    }
    __libc_free(p);
    return fresh;
  }
  const std::int64_t old_bytes = p != nullptr ? usable_bytes(p) : 0;
  // Read before the block moves: its address may be the new block's.
  const bool own = kCounting && p != nullptr && forget_if_sampled(p);
  void* q = g_foreign.realloc(p, size);
  if (own) {
    // The library's own block stays its own, moved or not (a failed
    // realloc leaves it where it was); counted only if it cannot be kept.
    void* kept = q != nullptr ? q : (size != 0 ? p : nullptr);
    if (kept != nullptr && !keep_own(kept)) record(usable_bytes(kept), kReallocCall);
    return q;
  }
  if (q != nullptr) {
    if constexpr (kCounting) counted_realloc_foreign(q, old_bytes);
  } else if (p != nullptr && size == 0) {
    if constexpr (kCounting) record(-old_bytes, kFreeCall);
  }
  return q;
}

int foreign_posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  const int error = g_foreign.posix_memalign(out, alignment, size);
  if (error == 0) counted_foreign(*out);
  return error;
}

void* foreign_aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  return counted_foreign(g_foreign.aligned_alloc(alignment, size));
}
void* foreign_memalign(std::size_t alignment, std::size_t size) noexcept {
  return counted_foreign(g_foreign.memalign(alignment, size));
}
void* foreign_valloc(std::size_t size) noexcept { return counted_foreign(g_foreign.valloc(size)); }
void* foreign_pvalloc(std::size_t size) noexcept { return counted_foreign(g_foreign.pvalloc(size)); }

constexpr Entries kForeignEntries = HEAPLINE_TABLE_OF(foreign);

// --- early: a call made while this thread resolves (its dlsym) -------------
// Served by glibc and remembered as an early block (next_allocator.h).

void* early_malloc(std::size_t size) noexcept { return remember_early_block(__libc_malloc(size), size); }
void* early_calloc(std::size_t count, std::size_t size) noexcept {
  void* p = __libc_calloc(count, size);  // as glibc_calloc, uncounted
  return p != nullptr ? remember_early_block(p, count * size) : nullptr;
}
void* early_aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  return remember_early_block(__libc_memalign(alignment, size), size);
}
void* early_memalign(std::size_t alignment, std::size_t size) noexcept {
  return remember_early_block(__libc_memalign(alignment, size), size);
}
void* early_valloc(std::size_t size) noexcept { return remember_early_block(__libc_valloc(size), size); }
void* early_pvalloc(std::size_t size) noexcept { return remember_early_block(__libc_pvalloc(size), size); }
// early_free, early_realloc and early_posix_memalign: next_allocator.cpp.

constexpr Entries kEarlyEntries = HEAPLINE_TABLE_OF(early);

// --- resolution --------------------------------------------------------------

bool bind_entries();

// Each entry's first call: binds every entry (or, inside this thread's own
// resolution, serves the call as an early block), then makes the call.
template <auto kEntry>
struct Resolving;
template <typename R, typename... Arguments, R (*Entries::*kEntry)(Arguments...) noexcept>
struct Resolving<kEntry> {
  static R call(Arguments... arguments) noexcept;
};
#define HEAPLINE_TABLE_ENTRY_resolving(name) Resolving<&Entries::name>::call,

// Read by every exported call with a plain load (the jump); written only
// while resolving, with the same values by every thread that does.
Entries g_entry = HEAPLINE_TABLE_OF(resolving);

template <typename R, typename... Arguments, R (*Entries::*kEntry)(Arguments...) noexcept>
R Resolving<kEntry>::call(Arguments... arguments) noexcept {
  return bind_entries() ? (g_entry.*kEntry)(arguments...) : (kEarlyEntries.*kEntry)(arguments...);
}

void free_off_the_glibc_path(void* p) noexcept {
  if (p != nullptr) g_entry.free(p);  // glibc: free(NULL) does nothing
}

template <typename Fn>
void bind(Fn& entry, Fn target) {
  __atomic_store_n(&entry, target, __ATOMIC_RELEASE);
}

// Fills g_entry; false when this thread is inside its own resolution (the
// caller then serves the call from glibc as an early block).
bool bind_entries() {
  const Resolution resolution = resolve_allocator();
  if (resolution == Resolution::kNested) return false;
  const Entries chosen = resolution == Resolution::kGlibc ? glibc_entries() : kForeignEntries;
#if HEAPLINE_COUNTING
  // Before any entry can mark a block: the crossings and publishing that
  // know markers (a sampled glibc block's).
  if (resolution == Resolution::kGlibc && sampler::enabled()) {
    accounting::bind_marked_publish();
    bind(g_after_malloc, publish_after_marked_malloc);
    bind(g_before_free, publish_then_marked_free);
  }
#endif
  bind(g_entry.malloc, chosen.malloc);
  bind(g_entry.free, chosen.free);
  bind(g_entry.calloc, chosen.calloc);
  bind(g_entry.realloc, chosen.realloc);
  bind(g_entry.posix_memalign, chosen.posix_memalign);
  bind(g_entry.aligned_alloc, chosen.aligned_alloc);
  bind(g_entry.memalign, chosen.memalign);
  bind(g_entry.valloc, chosen.valloc);
  bind(g_entry.pvalloc, chosen.pvalloc);
  // The limit before the target: x86 keeps stores in order, so a thread that
  // calls the new target then reads the new limit.
  if (resolution == Resolution::kGlibc) bind(g_inline_from, std::uintptr_t{1});
  void* (*glibc_target)(std::size_t) = __libc_malloc;
#if HEAPLINE_COUNTING
  if (sampler::enabled()) glibc_target = sampling_malloc;
  g_foreign_sampling = resolution == Resolution::kForeign && sampler::enabled();
#endif
  bind(g_malloc_target, resolution == Resolution::kGlibc ? glibc_target : foreign_malloc);
  // With glibc, the blocks dlsym took meanwhile are ordinary glibc blocks
  // that glibc_free() will count out: count them in.
  if (kCounting && resolution == Resolution::kGlibc) {
    adopt_own_early_blocks([](void* p) { record(chunk_bytes(p), kAllocCall); });
  }
  return true;
}

void* resolving_malloc_target(std::size_t size) noexcept {
  return bind_entries() ? g_malloc_target(size) : early_malloc(size);
}

}  // namespace

#if HEAPLINE_COUNTING
HEAPLINE_EXPORT(malloc) void* malloc(std::size_t size) noexcept { return glibc_path_malloc(size); }
HEAPLINE_EXPORT(free) void free(void* p) noexcept { glibc_path_free(p); }
#else
HEAPLINE_EXPORT(malloc) void* malloc(std::size_t size) noexcept { return g_entry.malloc(size); }
HEAPLINE_EXPORT(free) void free(void* p) noexcept { g_entry.free(p); }
#endif
HEAPLINE_EXPORT(calloc) void* calloc(std::size_t count, std::size_t size) noexcept { return g_entry.calloc(count, size); }
HEAPLINE_EXPORT(realloc) void* realloc(void* p, std::size_t size) noexcept { return g_entry.realloc(p, size); }

HEAPLINE_EXPORT(reallocarray) void* reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
  // glibc's reallocarray is this check followed by a call to realloc through
  // the PLT; forwarding to it would count the same call twice.
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return g_entry.realloc(p, bytes);
}

HEAPLINE_EXPORT(posix_memalign) int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  return g_entry.posix_memalign(out, alignment, size);
}
HEAPLINE_EXPORT(aligned_alloc) void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  return g_entry.aligned_alloc(alignment, size);
}
HEAPLINE_EXPORT(memalign) void* memalign(std::size_t alignment, std::size_t size) noexcept {
  return g_entry.memalign(alignment, size);
}
HEAPLINE_EXPORT(valloc) void* valloc(std::size_t size) noexcept { return g_entry.valloc(size); }
HEAPLINE_EXPORT(pvalloc) void* pvalloc(std::size_t size) noexcept { return g_entry.pvalloc(size); }

// glibc's malloc_usable_size reads the chunk header, which a sampled block's
// marker would make nonsense of: the size is answered here (and forwarded
// to a foreign allocator as its own).
namespace {
std::size_t (*g_glibc_usable_size)(void*) = nullptr;
}

HEAPLINE_EXPORT(malloc_usable_size) std::size_t malloc_usable_size(void* p) noexcept {
  if (p == nullptr) return 0;
  const Resolution resolution = resolve_allocator();
  if (resolution == Resolution::kForeign) return g_foreign.usable_size(p);
#if HEAPLINE_COUNTING
  if (heapline::sampler::is_marked(p)) return heapline::sampler::usable_size_marked(p);
#endif
  auto usable = __atomic_load_n(&g_glibc_usable_size, __ATOMIC_ACQUIRE);
  if (usable == nullptr) {
    usable = reinterpret_cast<std::size_t (*)(void*)>(next_symbol("malloc_usable_size"));
    // Asked from inside the lookup (a program's dlsym), or not found:
    // glibc's own answer for a block in use, from its chunk header (a
    // mapped chunk has two header words, the others one).
    if (usable == nullptr) {
      constexpr std::size_t kMmappedBit = 2;
      const std::size_t header = static_cast<const std::size_t*>(p)[-1];
      return glibc_chunk_size(p) - ((header & kMmappedBit) != 0 ? 2 : 1) * sizeof(std::size_t);
    }
    __atomic_store_n(&g_glibc_usable_size, usable, __ATOMIC_RELEASE);
  }
  return usable(p);
}
