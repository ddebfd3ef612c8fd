// The heap sampler's slow paths (heap_sampler.h): the draw of the next
// sample, the live sampled set, the stack table, the profiles.
//
// Memory. Everything lives in one private anonymous mapping of the
// library's own (mapped on the first sample, never through the program's
// allocator, its pages touched only as used):
//   live set     kLiveCapacity records of 32 bytes            2 MiB
//   stack table  kStackCapacity stacks of 272 bytes            4.25 MiB
//   per-stack sums for a snapshot, 32 bytes each              0.5 MiB
//   foreign index: kForeignSlots (pointer, record) pairs      2 MiB
//   a counting filter for foreign frees, 1 byte per bucket    64 KiB
// about 8.8 MiB of address space at most; a process with a heap of H bytes
// touches about (H / M) x (32 + 32) bytes of the set plus 272 per distinct
// stack. When the set is full an allocation the meter chose is not sampled
// (counted as dropped, and the report says how many).
//
// Concurrency. Adding to the set, the stack table and the foreign index,
// and taking a snapshot, hold one spin lock, tried a bounded number of
// times (a sample that cannot get it is dropped: nothing ever waits long).
// Removing a glibc block from the set takes no lock: its record is marked
// free with one atomic store and pushed on a free list that only lock
// holders pop (so it is safe from any thread, a signal handler included).
// A thread inside the sampler never samples again (t_inside): libunwind's
// own allocations and a signal handler's are served unsampled.
#include "heap_sampler.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "config.h"
#include "heapline/splitmix64.h"
#include "heapline/seqlock.h"
#include "mapped_memory.h"
#include "os.h"
#include "sampler_math.h"
#include "stack_capture.h"

namespace heapline::sampler {

__thread std::int64_t t_meter __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// --- configuration -----------------------------------------------------------

constexpr std::uint64_t kUnread = UINT64_MAX;
std::atomic<std::uint64_t> g_mean{kUnread};
std::uint64_t g_seed = 0;  // HEAPLINE_SAMPLE_SEED; 0: from the clock and the pid

inline void add_to_meter(std::int64_t bytes) {
#if defined(__x86_64__)
  asm volatile("addq %1, %0" : "+m"(t_meter) : "r"(bytes));
#else
  t_meter += bytes;
#endif
}

// --- per thread ------------------------------------------------------------------

__thread bool t_inside __attribute__((tls_model("initial-exec"))) = false;
__thread bool t_drawing __attribute__((tls_model("initial-exec"))) = false;
__thread SplitMix64 t_random __attribute__((tls_model("initial-exec"))) = {0};
std::atomic<std::uint64_t> g_threads_seeded{0};

// A distance to the next sample: exponential with mean M.
std::int64_t draw_distance() {
  const std::uint64_t mean = g_mean.load(std::memory_order_relaxed);
  // u in (0, 1]: 53 random bits, never 0.
  const double u = static_cast<double>((t_random.next() >> 11) + 1) * (1.0 / 9007199254740992.0);
  const double distance = -natural_log(u) * static_cast<double>(mean);
  return distance < 4.0e18 ? static_cast<std::int64_t>(distance) + 1 : INT64_MAX / 4;
}

// Whether the allocation that turned the meter negative is to be sampled:
// a thread's first allocation only draws its first distance (the meter
// started at 0), and is sampled only if that distance is already used up.
bool meter_fired() {
  if (!t_drawing) {
    t_drawing = true;
    const std::uint64_t ordinal = g_threads_seeded.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t seed = g_seed;
    if (seed == 0) {
      seed = os::clock_ns(CLOCK_MONOTONIC) ^ (static_cast<std::uint64_t>(os::pid()) << 16) ^
             reinterpret_cast<std::uintptr_t>(&t_meter);
    }
    // Each seed and each thread a stream of its own: both go through the
    // mixer (a plain sum would make seed s + 1's stream seed s's, one draw
    // on).
    t_random.state = SplitMix64{SplitMix64{seed}.next() + ordinal}.next();
    add_to_meter(draw_distance());
    if (t_meter >= 0) return false;
  }
  // The next distance counts from the end of this block (the process has no
  // memory: where the point fell inside the block does not matter).
  const std::int64_t observed = t_meter;
  add_to_meter(draw_distance() - observed);
  return true;
}

// After the meter: the probability with which a block of `size` bytes is
// sampled, or 0 when it is not.
double sample_probability(std::size_t size) {
  if (!meter_fired()) return 0;
  return sampled_probability(static_cast<double>(size) / static_cast<double>(g_mean.load(std::memory_order_relaxed)));
}

// --- the shared state ------------------------------------------------------------

constexpr std::uint32_t kLiveCapacity = 1u << 16;
constexpr std::uint32_t kStackCapacity = 1u << 14;
constexpr std::uint32_t kForeignSlots = 1u << 17;
constexpr std::uint32_t kFilterBuckets = 1u << 16;
constexpr std::uint32_t kNoRecord = 0;
// A foreign index entry's record for a block of the library's own (no
// record: records are below kLiveCapacity).
constexpr std::uint32_t kOwnForeign = UINT32_MAX;

struct Record {
  std::atomic<void*> block{nullptr};  // the program's pointer; nullptr: free
  double probability;                 // that it was sampled (the estimator's p)
  std::int64_t chunk;                 // bytes the heap figure counts for it
  std::uint32_t stack;
  std::atomic<std::uint32_t> next_free;
};
static_assert(sizeof(Record) == 32);

struct Stack {
  std::uint64_t hash;  // 0: empty entry
  std::uint32_t depth;
  std::uint32_t reserved;
  std::uintptr_t frames[kProfileFrames];
};

struct SiteSum {
  double bytes, variance;
  std::uint64_t samples, sampled_bytes;
};

struct ForeignSlot {
  std::uintptr_t block;  // 0: empty
  std::uint32_t record;
  std::uint32_t reserved;
};

struct Arena {
  Record records[kLiveCapacity];
  Stack stacks[kStackCapacity];
  SiteSum sums[kStackCapacity];
  std::uint32_t touched[kStackCapacity];
  ForeignSlot foreign[kForeignSlots];
  std::atomic<std::uint8_t> filter[kFilterBuckets];
};

Arena* g_arena = nullptr;
std::atomic<bool> g_arena_failed{false};
std::atomic<bool> g_lock{false};
// Records [1, g_high_water) were handed out at least once; the free list
// holds the ones given back (pushed by anyone, popped under the lock).
std::uint32_t g_high_water = 1;
std::atomic<std::uint32_t> g_free_head{kNoRecord};
std::atomic<std::uint64_t> g_live{0};
std::atomic<std::uint64_t> g_foreign_live{0};
std::uint32_t g_stack_count = 0;
std::atomic<std::uint64_t> g_samples{0};
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<std::uint64_t> g_snapshots{0};
std::atomic<std::int64_t> g_snapshot_at{0};

// Waits for another thread's sample or snapshot (a dropped sample would
// bias the estimates down), but not without end.
// Whether this thread holds g_lock or is taking it: set before the attempt,
// so that a signal handler's free in between never waits for a lock its own
// thread holds (forget_foreign).
__thread bool t_lock_held __attribute__((tls_model("initial-exec"))) = false;

bool try_lock() {
  t_lock_held = true;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    if (!g_lock.load(std::memory_order_relaxed) && !g_lock.exchange(true, std::memory_order_acquire)) return true;
    if (attempt >= 64) os::yield();
  }
  t_lock_held = false;
  return false;
}
// One attempt, no wait.
bool lock_now() {
  t_lock_held = true;
  if (!g_lock.load(std::memory_order_relaxed) && !g_lock.exchange(true, std::memory_order_acquire)) return true;
  t_lock_held = false;
  return false;
}
void unlock() {
  g_lock.store(false, std::memory_order_release);
  t_lock_held = false;
}

// Under the lock.
bool have_arena() {
  if (g_arena != nullptr) return true;
  if (g_arena_failed.load(std::memory_order_relaxed)) return false;
  const int saved_errno = errno;
  void* memory = os::map(nullptr, sizeof(Arena), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  errno = saved_errno;
  if (memory == MAP_FAILED) {
    g_arena_failed.store(true, std::memory_order_relaxed);
    return false;
  }
  g_arena = static_cast<Arena*>(memory);
  return true;
}

// Under the lock.
std::uint32_t take_record() {
  std::uint32_t head = g_free_head.load(std::memory_order_acquire);
  while (head != kNoRecord) {
    const std::uint32_t next = g_arena->records[head].next_free.load(std::memory_order_relaxed);
    if (g_free_head.compare_exchange_weak(head, next, std::memory_order_acq_rel)) return head;
  }
  if (g_high_water < kLiveCapacity) return g_high_water++;
  return kNoRecord;
}

// Any thread, no lock.
void give_back(std::uint32_t index) {
  Record& record = g_arena->records[index];
  std::uint32_t head = g_free_head.load(std::memory_order_relaxed);
  do {
    record.next_free.store(head, std::memory_order_relaxed);
  } while (!g_free_head.compare_exchange_weak(head, index, std::memory_order_release, std::memory_order_relaxed));
}

std::uint64_t mix(std::uint64_t value) {
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  value *= 0xc4ceb9fe1a85ec53ULL;
  return value ^ (value >> 33);
}

// Under the lock: the stack's index, added if new; 0 when the table is full
// (such samples are counted under an empty stack).
std::uint32_t intern_stack(const std::uintptr_t* frames, std::size_t depth) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL ^ depth;
  for (std::size_t i = 0; i < depth; ++i) hash = mix(hash ^ frames[i]);
  if (hash == 0) hash = 1;
  // Entry 0 is the empty stack of a full table; probing starts past it.
  for (std::uint32_t probe = 0; probe < kStackCapacity; ++probe) {
    const std::uint32_t index = 1 + static_cast<std::uint32_t>((hash + probe) % (kStackCapacity - 1));
    Stack& stack = g_arena->stacks[index];
    if (stack.hash == 0) {
      if (g_stack_count + 1 >= kStackCapacity * 3 / 4) return 0;  // keep probes short
      stack.depth = static_cast<std::uint32_t>(depth);
      memcpy(stack.frames, frames, depth * sizeof frames[0]);
      stack.hash = hash;
      ++g_stack_count;
      return index;
    }
    if (stack.hash == hash && stack.depth == depth && memcmp(stack.frames, frames, depth * sizeof frames[0]) == 0) {
      return index;
    }
  }
  return 0;
}

// A sampled block's record, under the lock; kNoRecord when there is no room.
std::uint32_t add_record(void* block, double probability, std::int64_t chunk, std::uint32_t stack) {
  const std::uint32_t index = take_record();
  if (index == kNoRecord) return kNoRecord;
  Record& record = g_arena->records[index];
  record.probability = probability;
  record.chunk = chunk;
  record.stack = stack;
  record.block.store(block, std::memory_order_release);
  g_live.fetch_add(1, std::memory_order_relaxed);
  g_samples.fetch_add(1, std::memory_order_relaxed);
  return index;
}

// Any thread: the record of `block` leaves the set.
void remove_record(std::uint32_t index, void* block) {
  if (index == kNoRecord || index >= kLiveCapacity || g_arena == nullptr) return;
  void* expected = block;
  if (!g_arena->records[index].block.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  give_back(index);
}

// The part of a sample before the block exists: the stack, captured before
// the lock (libunwind may allocate: t_inside keeps that unsampled).
struct Captured {
  std::uintptr_t frames[kProfileFrames];
  std::size_t depth;
};

}  // namespace

std::uint64_t mean_bytes() {
  std::uint64_t mean = g_mean.load(std::memory_order_acquire);
  if (mean != kUnread) return mean;
  // A bad value is reported by the process's init (config.h), once.
  Config config;
  if (!os::secure_mode()) load_sampler_config(config, os::environment);
  g_seed = config.sample_seed;
  std::uint64_t expected = kUnread;
  g_mean.compare_exchange_strong(expected, config.sample_mean_bytes, std::memory_order_acq_rel);
  return g_mean.load(std::memory_order_acquire);
}

// --- glibc ----------------------------------------------------------------------

namespace {

// glibc's answer to `request` with `extra` bytes more (0: the program's own
// call, its errors and errno glibc's). *error gets posix_memalign's result.
void* serve(const GlibcRequest& request, std::size_t extra, int* error) {
  *error = 0;
  std::size_t size;
  if (__builtin_add_overflow(request.size, extra, &size)) {
    errno = ENOMEM;
    *error = ENOMEM;
    return nullptr;
  }
  switch (request.call) {
    case GlibcCall::kMalloc:
      return __libc_malloc(size);
    case GlibcCall::kCalloc:
      return __libc_calloc(1, size);
    case GlibcCall::kMemalign:
      return __libc_memalign(request.alignment, size);
    case GlibcCall::kPosixMemalign: {
      void* p = nullptr;
      *error = g_glibc_posix_memalign(&p, request.alignment, size);
      return *error == 0 ? p : nullptr;
    }
    case GlibcCall::kAlignedAlloc:
      return g_glibc_aligned_alloc(request.alignment, size);
    case GlibcCall::kValloc:
      return __libc_valloc(size);
    case GlibcCall::kPvalloc:
      return __libc_pvalloc(size);
  }
  return nullptr;
}

// The prefix a marked block of `request` gets: 16 bytes (the tag and the
// marker) for malloc and calloc; for the aligned family the alignment the
// block gets (at least 16, a power of two: glibc rounds memalign's up),
// so that the program's pointer keeps it; 0 when the alignment is too
// large for a tag (such a block is served unsampled).
std::size_t prefix_for(const GlibcRequest& request) {
  std::size_t alignment;
  switch (request.call) {
    case GlibcCall::kMalloc:
    case GlibcCall::kCalloc:
      return kPrefixBytes;
    case GlibcCall::kValloc:
    case GlibcCall::kPvalloc:
      alignment = static_cast<std::size_t>(os::page_size());
      break;
    default:
      alignment = request.alignment;
  }
  if (alignment <= kPrefixBytes) return kPrefixBytes;
  if (alignment > (std::size_t{1} << 30)) return 0;
  std::size_t prefix = kPrefixBytes;
  while (prefix < alignment) prefix *= 2;
  return prefix;
}

// A marked block in glibc's block `base`, `prefix` bytes in.
void* mark(void* base, std::size_t prefix, std::uint32_t record) {
  void* block = static_cast<char*>(base) + prefix;
  static_cast<std::uint64_t*>(block)[-2] = make_tag(prefix, record);
  static_cast<std::int64_t*>(block)[-1] = kSampledChunkMarker;
  return block;
}

// While this thread samples: a block of the library's own (kOwnRecord).
void* allocate_own(const GlibcRequest& request, int* error) {
  const std::size_t prefix = prefix_for(request);
  if (prefix == 0) return serve(request, 0, error);  // counted as the program's: never met in practice
  void* base = serve(request, prefix, error);
  return base != nullptr ? mark(base, prefix, kOwnRecord) : nullptr;
}

// A stack, captured with the meter held negative: whatever the capture
// allocates (the loader's thread-local storage for libunwind, at a
// thread's first) reaches allocate_sampled, where t_inside makes it the
// library's own.
std::size_t capture_stack(std::uintptr_t* frames) {
  const std::int64_t meter = t_meter;
  t_meter = INT64_MIN / 4;
  const std::size_t depth = stacks::capture(frames, kProfileFrames);
  t_meter = meter;
  return depth;
}

// The start of a sample: this thread marked inside the sampler (what it
// allocates meanwhile is the library's own, never sampled), its stack
// captured, errno as it was. The sample ends with t_inside = false.
Captured begin_sample() {
  t_inside = true;
  const int saved_errno = errno;
  Captured captured;
  captured.depth = capture_stack(captured.frames);
  errno = saved_errno;
  return captured;
}

}  // namespace

void* allocate_sampled(const GlibcRequest& request, int* error) {
  if (t_inside) return allocate_own(request, error);
  const double probability = sample_probability(request.size);
  if (probability == 0) return serve(request, 0, error);
  const std::size_t prefix = prefix_for(request);
  std::size_t total;
  if (prefix == 0 || __builtin_add_overflow(request.size, prefix, &total)) return serve(request, 0, error);
  const Captured captured = begin_sample();
  void* result = nullptr;
  bool sampled = false;
  if (try_lock()) {
    if (have_arena()) {
      const std::uint32_t stack = intern_stack(captured.frames, captured.depth);
      void* base = serve(request, prefix, error);
      if (base == nullptr) {
        unlock();
        t_inside = false;
        return nullptr;  // glibc's failure (ENOMEM, or EINVAL for a bad alignment)
      }
      void* block = mark(base, prefix, kNoRecord);
      // The estimate stands for the bytes blocks count unsampled.
      const std::uint32_t index = add_record(block, probability, marked_bytes(block), stack);
      if (index != kNoRecord) {
        mark(base, prefix, index);
        result = block;
        sampled = true;
      } else {
        __libc_free(base);
      }
    }
    unlock();
  }
  t_inside = false;
  if (sampled) return result;
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return serve(request, 0, error);
}

std::int64_t free_marked(void* p) {
  void* base = underlying(p);
  const std::int64_t bytes = marked_bytes(p);
  remove_record(record_of(p), p);
  __libc_free(base);
  return bytes;
}

namespace {

// glibc's malloc_usable_size of an ordinary block: its chunk less the
// header glibc keeps in it (two words for an mmapped chunk, whose IS_MMAPPED
// flag is bit 1, one otherwise).
std::size_t glibc_usable(const void* p) {
  const std::size_t header = (static_cast<const std::size_t*>(p)[-1] & 2) != 0 ? 16 : 8;
  const std::size_t chunk = glibc_chunk_size(p);
  return chunk > header ? chunk - header : 0;
}

}  // namespace

std::size_t usable_size_marked(void* p) {
  const std::size_t usable = glibc_usable(underlying(p));
  const std::size_t prefix = prefix_of(p);
  return usable > prefix ? usable - prefix : 0;
}

void* reallocate_sampled(void* p, std::size_t size, bool sample, std::int64_t* old_chunk, std::int64_t* new_chunk) {
  *old_chunk = 0;
  *new_chunk = 0;
  const bool marked = p != nullptr && is_marked(p);
  auto chunk_of = [](void* block) { return counted_bytes(block); };
  if (p != nullptr && size == 0) {  // glibc: frees p, returns NULL
    *old_chunk = chunk_of(p);
    if (marked) {
      free_marked(p);
    } else {
      __libc_free(p);
    }
    return nullptr;
  }
  if (!sample && !marked) {  // not reached from the override layer; kept whole
    const std::int64_t before = p != nullptr ? chunk_of(p) : 0;
    void* q = __libc_realloc(p, size);
    if (q != nullptr) *old_chunk = before, *new_chunk = chunk_of(q);
    return q;
  }
  // The meter counted `size` already: the new block is sampled or not as
  // it said (a thread drawing its first distance may yet say no).
  void* q = sample ? allocate_sampled(size, false) : __libc_malloc(size);
  if (q == nullptr) return nullptr;  // p untouched, as glibc's failure
  if (p != nullptr) {
    const std::size_t old_usable = marked ? usable_size_marked(p) : glibc_usable(p);
    memcpy(q, p, old_usable < size ? old_usable : size);
    *old_chunk = chunk_of(p);
    if (marked) {
      free_marked(p);
    } else {
      __libc_free(p);
    }
  }
  *new_chunk = chunk_of(q);
  return q;
}

// --- a foreign allocator ------------------------------------------------------

namespace {

std::uint32_t filter_bucket(const void* p) {
  return static_cast<std::uint32_t>(mix(reinterpret_cast<std::uintptr_t>(p)) >> 48);
}

// Under the lock.
std::uint32_t* foreign_find(std::uintptr_t block, bool for_insert) {
  std::uint32_t slot = static_cast<std::uint32_t>(mix(block)) & (kForeignSlots - 1);
  for (std::uint32_t probe = 0; probe < kForeignSlots; ++probe, slot = (slot + 1) & (kForeignSlots - 1)) {
    ForeignSlot& entry = g_arena->foreign[slot];
    if (entry.block == block) return &entry.record;
    if (entry.block == 0) {
      if (!for_insert) return nullptr;
      entry.block = block;
      return &entry.record;
    }
  }
  return nullptr;
}

// Under the lock: linear probing's deletion, the entries after it moved up.
void foreign_erase(std::uintptr_t block) {
  std::uint32_t slot = static_cast<std::uint32_t>(mix(block)) & (kForeignSlots - 1);
  for (std::uint32_t probe = 0; probe < kForeignSlots; ++probe, slot = (slot + 1) & (kForeignSlots - 1)) {
    if (g_arena->foreign[slot].block == 0) return;
    if (g_arena->foreign[slot].block == block) break;
  }
  if (g_arena->foreign[slot].block != block) return;
  std::uint32_t hole = slot;
  for (std::uint32_t next = (hole + 1) & (kForeignSlots - 1);; next = (next + 1) & (kForeignSlots - 1)) {
    ForeignSlot& entry = g_arena->foreign[next];
    if (entry.block == 0) break;
    const std::uint32_t home = static_cast<std::uint32_t>(mix(entry.block)) & (kForeignSlots - 1);
    // Movable into the hole when its home is not in (hole, next].
    const bool between = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
    if (!between) {
      g_arena->foreign[hole] = entry;
      hole = next;
    }
  }
  g_arena->foreign[hole].block = 0;
}

}  // namespace

std::size_t foreign_sampled_count() { return g_foreign_live.load(std::memory_order_relaxed); }

bool keep_own_foreign(void* p) {
  if (t_lock_held || !try_lock()) return false;
  bool kept = false;
  if (have_arena() && g_foreign_live.load(std::memory_order_relaxed) < kForeignSlots / 2) {
    if (std::uint32_t* slot = foreign_find(reinterpret_cast<std::uintptr_t>(p), true); slot != nullptr) {
      *slot = kOwnForeign;
      g_arena->filter[filter_bucket(p)].fetch_add(1, std::memory_order_release);
      g_foreign_live.fetch_add(1, std::memory_order_relaxed);
      kept = true;
    }
  }
  unlock();
  return kept;
}

ForeignBlock note_foreign_allocation(void* p, std::size_t size, std::int64_t bytes) {
  if (p == nullptr) return ForeignBlock::kProgram;
  if (t_inside) return keep_own_foreign(p) ? ForeignBlock::kOwn : ForeignBlock::kProgram;
  const double probability = sample_probability(size);
  if (probability == 0) return ForeignBlock::kProgram;
  const Captured captured = begin_sample();
  bool sampled = false;
  if (try_lock()) {
    if (have_arena() && g_foreign_live.load(std::memory_order_relaxed) < kForeignSlots / 2) {
      const std::uint32_t stack = intern_stack(captured.frames, captured.depth);
      const std::uint32_t index = add_record(p, probability, bytes, stack);
      if (index != kNoRecord) {
        std::uint32_t* slot = foreign_find(reinterpret_cast<std::uintptr_t>(p), true);
        if (slot != nullptr) {
          *slot = index;
          g_arena->filter[filter_bucket(p)].fetch_add(1, std::memory_order_release);
          g_foreign_live.fetch_add(1, std::memory_order_relaxed);
          sampled = true;
        } else {
          remove_record(index, p);
        }
      }
    }
    unlock();
  }
  t_inside = false;
  if (!sampled) g_dropped.fetch_add(1, std::memory_order_relaxed);
  return ForeignBlock::kProgram;
}

ForeignBlock forget_foreign(void* p) {
  if (g_arena == nullptr || g_arena->filter[filter_bucket(p)].load(std::memory_order_acquire) == 0)
    return ForeignBlock::kProgram;
  if (t_lock_held || !try_lock()) {
    // This thread holds the lock (a signal handler inside the sampler), or
    // it stayed busy: the record goes now, its index entry at the next
    // lookup of the same address, which finds the record no longer its.
    // (The library's own blocks are freed by the library's own code, which
    // never holds the lock then: a handler's free of one is not told apart
    // and is counted as the program's.)
    for (std::uint32_t index = 1; index < g_high_water && index < kLiveCapacity; ++index) {
      if (g_arena->records[index].block.load(std::memory_order_acquire) == p) {
        remove_record(index, p);
        g_arena->filter[filter_bucket(p)].fetch_sub(1, std::memory_order_release);
        g_foreign_live.fetch_sub(1, std::memory_order_relaxed);
        return ForeignBlock::kProgram;
      }
    }
    return ForeignBlock::kProgram;
  }
  ForeignBlock whose = ForeignBlock::kProgram;
  if (std::uint32_t* slot = foreign_find(reinterpret_cast<std::uintptr_t>(p), false); slot != nullptr) {
    const std::uint32_t index = *slot;
    foreign_erase(reinterpret_cast<std::uintptr_t>(p));
    const bool own = index == kOwnForeign;
    if (own || g_arena->records[index].block.load(std::memory_order_acquire) == p) {
      if (own) whose = ForeignBlock::kOwn;
      else remove_record(index, p);
      g_arena->filter[filter_bucket(p)].fetch_sub(1, std::memory_order_release);
      g_foreign_live.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  unlock();
  return whose;
}

// --- profiles --------------------------------------------------------------------

namespace {

// Under the lock: the live set, summed by stack, into `out` (the top sites
// with their frames named, the rest as `other`).
void aggregate(ProfileSnapshot& out, std::int64_t heap_bytes, std::uint64_t t_ns) {
  const SeqlockWrite change(out.seq);
  const double mean = static_cast<double>(g_mean.load(std::memory_order_relaxed));
  std::uint32_t touched = 0;
  std::uint64_t live_samples = 0;
  for (std::uint32_t index = 1; index < g_high_water && index < kLiveCapacity; ++index) {
    const Record& record = g_arena->records[index];
    if (record.block.load(std::memory_order_acquire) == nullptr) continue;
    const std::uint32_t stack = record.stack < kStackCapacity ? record.stack : 0;
    SiteSum& sum = g_arena->sums[stack];
    if (sum.samples == 0) g_arena->touched[touched++] = stack;
    const double chunk = static_cast<double>(record.chunk);
    const double p = record.probability > 0 && record.probability <= 1 ? record.probability : 1;
    const double weight = chunk / p;
    sum.bytes += weight;
    sum.variance += weight * weight * (1 - p);
    sum.samples += 1;
    sum.sampled_bytes += static_cast<std::uint64_t>(record.chunk);
    ++live_samples;
  }
  // The top sites by estimated bytes (a selection: touched is short).
  out.state = kProfileTaken;
  out.time_ns = t_ns;
  out.heap_bytes = heap_bytes;
  out.mean_bytes = static_cast<std::uint64_t>(mean);
  out.live_samples = live_samples;
  out.stacks = touched;
  out.module_count = 0;
  out.site_count = 0;
  out.total_bytes = 0;
  out.total_variance = 0;
  out.other = ProfileSite{};
  out.other_sites = 0;
  std::uint32_t top[kProfileSites];
  std::uint32_t top_count = 0;
  for (std::uint32_t i = 0; i < touched; ++i) {
    const std::uint32_t stack = g_arena->touched[i];
    const double bytes = g_arena->sums[stack].bytes;
    out.total_bytes += bytes;
    out.total_variance += g_arena->sums[stack].variance;
    std::uint32_t position = top_count;
    while (position > 0 && g_arena->sums[top[position - 1]].bytes < bytes) --position;
    if (position >= kProfileSites) continue;
    const std::uint32_t last = top_count < kProfileSites ? top_count : kProfileSites - 1;
    for (std::uint32_t j = last; j > position; --j) top[j] = top[j - 1];
    top[position] = stack;
    if (top_count < kProfileSites) ++top_count;
  }
  stacks::FrameNamer namer(out);
  for (std::uint32_t i = 0; i < top_count; ++i) {
    const SiteSum& sum = g_arena->sums[top[i]];
    ProfileSite& site = out.sites[i];
    site.bytes = sum.bytes;
    site.variance = sum.variance;
    site.samples = sum.samples;
    site.sampled_bytes = sum.sampled_bytes;
    const Stack& stack = g_arena->stacks[top[i]];
    site.frame_count = top[i] == 0 ? 0 : stack.depth;
    for (std::uint32_t f = 0; f < site.frame_count; ++f) site.frames[f] = namer.name(stack.frames[f]);
  }
  out.site_count = top_count;
  // The rest, summed; and every sum back to zero for the next snapshot.
  for (std::uint32_t i = 0; i < touched; ++i) {
    SiteSum& sum = g_arena->sums[g_arena->touched[i]];
    bool in_top = false;
    for (std::uint32_t j = 0; j < top_count && !in_top; ++j) in_top = top[j] == g_arena->touched[i];
    if (!in_top) {
      out.other.bytes += sum.bytes;
      out.other.variance += sum.variance;
      out.other.samples += sum.samples;
      out.other.sampled_bytes += sum.sampled_bytes;
      ++out.other_sites;
    }
    sum = SiteSum{};
  }
}

}  // namespace

void peak_raised(ProfileSnapshot& target, std::int64_t live, std::uint64_t t_ns, std::uint64_t precision_bound) {
  if (g_arena == nullptr || t_inside) return;
  // A new snapshot once the published peak has risen by 1/128 of itself
  // (so a long climb takes a few hundred, not one per publish). At 1/16 the
  // profile's moment falls far enough before the peak for the known-sites
  // test to see site A short of what it held at the peak. Published
  // peaks are within the precision bound of the true ones: waiting for the
  // peak to rise by the bound itself would leave the snapshot up to twice
  // the bound behind.
  (void)precision_bound;
  const std::int64_t at = g_snapshot_at.load(std::memory_order_relaxed);
  std::int64_t step = 64 * 1024;
  if (live / 128 > step) step = live / 128;
  if (live <= at + step) return;
  t_inside = true;
  if (!lock_now()) {
    t_inside = false;
    return;  // another thread samples: the next publish above tries again
  }
  g_snapshot_at.store(live, std::memory_order_relaxed);
  aggregate(target, live, t_ns);
  g_snapshots.fetch_add(1, std::memory_order_relaxed);
  unlock();
  t_inside = false;
}

void phase_reset() { g_snapshot_at.store(0, std::memory_order_relaxed); }

void snapshot_now(ProfileSnapshot& out, std::int64_t heap_bytes, std::uint64_t t_ns) {
  if (g_arena == nullptr) return;
  const bool was_inside = t_inside;
  t_inside = true;
  if (try_lock()) {
    aggregate(out, heap_bytes, t_ns);
    unlock();
  }
  t_inside = was_inside;
}

Totals totals() {
  return {g_samples.load(std::memory_order_relaxed), g_dropped.load(std::memory_order_relaxed),
          g_live.load(std::memory_order_relaxed), g_stack_count, g_snapshots.load(std::memory_order_relaxed)};
}

std::uint64_t live_capacity() { return kLiveCapacity - 1; }
std::uint64_t stack_capacity() { return kStackCapacity * 3 / 4; }

const char* unwinder_name() { return stacks::have_unwinder() ? "libunwind" : "none"; }

void load_unwinder() {
  if (!enabled()) return;
  // What dlopen and libunwind's first unwind allocate is the library's own
  // (kOwnRecord), as in a capture.
  t_inside = true;
  const std::int64_t meter = t_meter;
  t_meter = INT64_MIN / 4;
  stacks::load_unwinder();
  t_meter = meter;
  t_inside = false;
}

void after_fork_in_child() {
  g_lock.store(false, std::memory_order_relaxed);
  t_inside = false;
  t_lock_held = false;
}

}  // namespace heapline::sampler
