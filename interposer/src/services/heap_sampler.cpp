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
//   sampled mappings' ranges, kMappedRanges of 24 bytes       384 KiB
// about 9.2 MiB of address space at most; a process with a heap of H bytes
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
#include "atomic_max.h"
#include "heapline/seqlock.h"
#include "os.h"
#include "sampler_math.h"
#include "stack_capture.h"

namespace heapline::sampler {

__thread std::int64_t t_meter __attribute__((tls_model("initial-exec"))) = 0;
__thread bool t_capturing __attribute__((tls_model("initial-exec"))) = false;

namespace {

// --- configuration -----------------------------------------------------------

constexpr std::uint64_t kUnread = UINT64_MAX;
std::atomic<std::uint64_t> g_mean{kUnread};
std::uint64_t g_seed = 0;  // HEAPLINE_SAMPLE_SEED; 0: from the clock and the pid

inline void add_to_meter(std::int64_t bytes) { arch::in_place::add(t_meter, bytes); }

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
constexpr std::uint32_t kMappedRanges = 1u << 14;
// A peak profile is summed again once the peak has risen by this fraction of
// itself since the latest sum and the sampled set has changed (peak_raised).
constexpr std::int64_t kSnapshotFraction = 128;
constexpr std::uint32_t kNoRecord = 0;
// A foreign index entry's record for a block of the library's own (no
// record: records are below kLiveCapacity).
constexpr std::uint32_t kOwnForeign = UINT32_MAX;

struct Record {
  // The program's pointer (a mapping's: where it started); nullptr: free.
  std::atomic<void*> block{nullptr};
  double probability;  // that it was sampled (the estimator's p)
  // Bytes the heap figure counts for it (a mapping's: those still counted,
  // less as parts of it go; written under the mapping layer's lock).
  std::atomic<std::int64_t> chunk;
  std::uint32_t stack;
  std::atomic<std::uint32_t> next_free;
};
static_assert(sizeof(Record) == 32);

struct Stack {
  std::uint64_t hash;  // 0: empty entry
  std::uint32_t depth;
  std::uint32_t kind;  // ProfileSiteKind: a stack that allocated, or one that mapped
  std::uintptr_t frames[kProfileFrames];
};

// A sampled mapping's part that is still counted: [begin, end), in the
// record's bytes. Sorted by address, disjoint.
struct MappedRange {
  std::uintptr_t begin, end;
  std::uint32_t record;
  std::uint32_t reserved;
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
  MappedRange ranges[kMappedRanges];
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
// The peak of heap + mapped that the peak profile follows (this phase's).
std::atomic<std::int64_t> g_profile_peak{0};
// Changes of the live sampled set (a record added or removed, a sampled
// mapping's bytes changed): a profile taken when the count was what it is
// now still describes the set.
std::atomic<std::uint64_t> g_set_changes{0};
std::uint64_t g_changes_at_snapshot = 0;  // under the lock: g_set_changes as the latest peak snapshot read it
// The sampled mappings' ranges in use (g_arena->ranges): changed only with
// the mapping layer's lock held (mapped_memory.cpp calls the mapping_*
// functions under it).
std::uint32_t g_range_count = 0;

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
std::uint32_t intern_stack(const std::uintptr_t* frames, std::size_t depth, ProfileSiteKind kind) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL ^ depth ^ (static_cast<std::uint64_t>(kind) << 40);
  for (std::size_t i = 0; i < depth; ++i) hash = mix(hash ^ frames[i]);
  if (hash == 0) hash = 1;
  // Entry 0 is the empty stack of a full table; probing starts past it.
  for (std::uint32_t probe = 0; probe < kStackCapacity; ++probe) {
    const std::uint32_t index = 1 + static_cast<std::uint32_t>((hash + probe) % (kStackCapacity - 1));
    Stack& stack = g_arena->stacks[index];
    if (stack.hash == 0) {
      if (g_stack_count + 1 >= kStackCapacity * 3 / 4) return 0;  // keep probes short
      stack.depth = static_cast<std::uint32_t>(depth);
      stack.kind = kind;
      memcpy(stack.frames, frames, depth * sizeof frames[0]);
      stack.hash = hash;
      ++g_stack_count;
      return index;
    }
    if (stack.hash == hash && stack.depth == depth && stack.kind == kind &&
        memcmp(stack.frames, frames, depth * sizeof frames[0]) == 0) {
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
  record.chunk.store(chunk, std::memory_order_relaxed);
  record.stack = stack;
  record.block.store(block, std::memory_order_release);
  g_set_changes.fetch_add(1, std::memory_order_relaxed);
  g_live.fetch_add(1, std::memory_order_relaxed);
  g_samples.fetch_add(1, std::memory_order_relaxed);
  return index;
}

// Any thread: the record of `block` leaves the set.
void remove_record(std::uint32_t index, void* block) {
  if (index == kNoRecord || index >= kLiveCapacity || g_arena == nullptr) return;
  void* expected = block;
  if (!g_arena->records[index].block.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
  g_set_changes.fetch_add(1, std::memory_order_relaxed);
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
  // A bad value is said by the process's init (config.h), once.
  Config config;
  read_process_settings(config);
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

// What a sample needs of the stack below the sampler's frame: libunwind's
// context and cursor (2 KiB on x86-64) and its own frames, the raw frames,
// the loader's first binding of a name libunwind calls, with room to spare
// (the processor's figure, arch.h: 8 KiB on x86-64, 32 KiB on arm64);
// glibc's allocation after it needs what a plain call needs. A thread with
// less left (a small stack the program has mostly used: thread pools,
// coroutines) is not sampled there, rather than killed.
constexpr std::uintptr_t kSampleStackBytes = arch::kSampleStackBytes;
// The stack this thread is known to have, [low, high): checked once, then
// any sample whose need falls inside it needs no system call.
__thread std::uintptr_t t_room_low __attribute__((tls_model("initial-exec"))) = 0;
__thread std::uintptr_t t_room_high __attribute__((tls_model("initial-exec"))) = 0;
// -1: not asked yet; 1: the main thread, whose stack grows on demand.
__thread signed char t_main_thread __attribute__((tls_model("initial-exec"))) = -1;
// capture_stack's depth when the stack had no room for a capture: the
// sample is dropped (and counted so).
constexpr std::size_t kNoStackRoom = SIZE_MAX;

bool stack_room_for_capture() {
  const char here = 0;
  const auto at = reinterpret_cast<std::uintptr_t>(&here);
  const std::uintptr_t need = at - kSampleStackBytes;
  if (need >= t_room_low && need < t_room_high) return true;
  if (t_main_thread < 0) t_main_thread = os::is_main_thread() ? 1 : 0;
  if (t_main_thread == 1) return true;
  // The kernel reads the bytes the capture would use (a guard page among
  // them says no); one that cannot tell leaves the sample as it was.
  const int readable = os::readable_below(at, kSampleStackBytes);
  if (readable == 1) {
    t_room_low = need;
    t_room_high = at;
  }
  return readable != 0;
}

// A stack, captured with the meter held negative: whatever the capture
// allocates (the loader's thread-local storage for libunwind, at a
// thread's first) reaches allocate_sampled, where t_inside makes it the
// library's own.
// kNoStackRoom when the thread's stack has no room for it.
std::size_t capture_stack(std::uintptr_t* frames) {
  const std::int64_t meter = t_meter;
  t_meter = INT64_MIN / 4;
  std::size_t depth = kNoStackRoom;
  if (stack_room_for_capture()) {
    t_capturing = true;
    depth = stacks::capture(frames, kProfileFrames);
    t_capturing = false;
  }
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
  if (captured.depth != kNoStackRoom && try_lock()) {
    if (have_arena()) {
      const std::uint32_t stack = intern_stack(captured.frames, captured.depth, kProfileSiteHeap);
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
  if (captured.depth != kNoStackRoom && try_lock()) {
    if (have_arena() && g_foreign_live.load(std::memory_order_relaxed) < kForeignSlots / 2) {
      const std::uint32_t stack = intern_stack(captured.frames, captured.depth, kProfileSiteHeap);
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
void aggregate(ProfileSnapshot& out, std::int64_t heap_bytes, std::int64_t mapped_bytes, std::uint64_t t_ns) {
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
    const std::int64_t counted = record.chunk.load(std::memory_order_relaxed);
    const double chunk = static_cast<double>(counted);
    const double p = record.probability > 0 && record.probability <= 1 ? record.probability : 1;
    const double weight = chunk / p;
    sum.bytes += weight;
    sum.variance += weight * weight * (1 - p);
    sum.samples += 1;
    sum.sampled_bytes += static_cast<std::uint64_t>(counted);
    ++live_samples;
  }
  // The top sites by estimated bytes (a selection: touched is short).
  out.state = kProfileTaken;
  out.time_ns = t_ns;
  out.heap_bytes = heap_bytes;
  out.mapped_bytes = mapped_bytes;
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
    site.kind = top[i] == 0 ? kProfileSiteHeap : stack.kind;
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

void peak_raised(ProfileSnapshot& target, std::int64_t heap, std::int64_t mapped, std::uint64_t t_ns) {
  const std::int64_t total = heap + mapped;
  // Called at every new peak of the heap and of heap + mapped: only the
  // latter is the profile's.
  if (raise_to(g_profile_peak, total) >= total) return;
  if (g_arena == nullptr || t_inside) return;
  // While the sampled set is what the latest snapshot summed, that
  // snapshot is this moment's too: only its moment moves (a few stores).
  // Once the set has changed, a new sum waits until the peak has risen by
  // 1/kSnapshotFraction since the latest one, so that a climb sampled all
  // the way takes a few hundred, not one per publish: the profile's moment
  // is then within that fraction of the peak it describes (plus the
  // precision bound, within which the published peak is the true one).
  const std::int64_t at = g_snapshot_at.load(std::memory_order_relaxed);
  const bool changed = g_set_changes.load(std::memory_order_relaxed) != g_changes_at_snapshot;
  if (changed && total - at <= total / kSnapshotFraction) return;
  t_inside = true;
  if (!lock_now()) {
    t_inside = false;
    return;  // another thread samples: the next publish above tries again
  }
  g_snapshot_at.store(total, std::memory_order_relaxed);
  if (target.state == kProfileTaken && g_set_changes.load(std::memory_order_acquire) == g_changes_at_snapshot) {
    const SeqlockWrite change(target.seq);
    target.time_ns = t_ns;
    target.heap_bytes = heap;
    target.mapped_bytes = mapped;
  } else {
    // Read before the sum: a removal during it (it takes no lock) is a
    // change the next peak sees.
    g_changes_at_snapshot = g_set_changes.load(std::memory_order_acquire);
    aggregate(target, heap, mapped, t_ns);
    g_snapshots.fetch_add(1, std::memory_order_relaxed);
  }
  unlock();
  t_inside = false;
}

void phase_reset() {
  g_snapshot_at.store(0, std::memory_order_relaxed);
  g_profile_peak.store(0, std::memory_order_relaxed);
}

void snapshot_now(ProfileSnapshot& out, std::int64_t heap_bytes, std::int64_t mapped_bytes, std::uint64_t t_ns) {
  if (g_arena == nullptr) return;
  const bool was_inside = t_inside;
  t_inside = true;
  if (try_lock()) {
    aggregate(out, heap_bytes, mapped_bytes, t_ns);
    unlock();
  }
  t_inside = was_inside;
}

// --- mapped memory ------------------------------------------------------------------
// The sampled mappings' ranges (g_arena->ranges, g_range_count), changed
// only with the mapping layer's lock held: one change at a time, in the
// order the kernel made them. A record's bytes go down as its ranges go;
// the record leaves the set with its last byte.

namespace {

// The first range that ends after `address` (g_range_count when none).
std::uint32_t first_range_after(std::uintptr_t address) {
  std::uint32_t low = 0, high = g_range_count;
  while (low < high) {
    const std::uint32_t middle = (low + high) / 2;
    if (g_arena->ranges[middle].end <= address) low = middle + 1;
    else high = middle;
  }
  return low;
}

// Inserts a range that overlaps none; false when the table is full.
bool insert_range(std::uintptr_t begin, std::uintptr_t end, std::uint32_t record) {
  if (g_range_count == kMappedRanges) return false;
  const std::uint32_t at = first_range_after(begin);
  memmove(&g_arena->ranges[at + 1], &g_arena->ranges[at], (g_range_count - at) * sizeof(MappedRange));
  g_arena->ranges[at] = MappedRange{begin, end, record, 0};
  ++g_range_count;
  return true;
}

void erase_range(std::uint32_t at) {
  memmove(&g_arena->ranges[at], &g_arena->ranges[at + 1], (g_range_count - at - 1) * sizeof(MappedRange));
  --g_range_count;
}

// A record's mapping lost `bytes`: out of the set with its last one.
void uncount_mapped(std::uint32_t record, std::int64_t bytes) {
  if (bytes <= 0) return;
  Record& entry = g_arena->records[record];
  g_set_changes.fetch_add(1, std::memory_order_relaxed);
  if (entry.chunk.fetch_sub(bytes, std::memory_order_relaxed) - bytes <= 0) {
    remove_record(record, entry.block.load(std::memory_order_relaxed));
  }
}

struct Piece {
  std::uintptr_t begin, end;
  std::uint32_t record;
};

// Takes the first sampled part of [begin, end) out of the table (a range
// that reaches past either end keeps what is outside) into *piece; false
// when there is none. A range split in two that finds the table full loses
// its upper part, which goes with the piece's bytes.
bool take_piece(std::uintptr_t begin, std::uintptr_t end, Piece* piece, std::int64_t* lost) {
  *lost = 0;
  const std::uint32_t at = first_range_after(begin);
  if (at == g_range_count || g_arena->ranges[at].begin >= end) return false;
  MappedRange& range = g_arena->ranges[at];
  const MappedRange whole = range;
  piece->begin = whole.begin > begin ? whole.begin : begin;
  piece->end = whole.end < end ? whole.end : end;
  piece->record = whole.record;
  const bool keeps_lower = whole.begin < piece->begin;
  const bool keeps_upper = whole.end > piece->end;
  if (keeps_lower) {
    range.end = piece->begin;
    if (keeps_upper && !insert_range(piece->end, whole.end, whole.record)) {
      *lost = static_cast<std::int64_t>(whole.end - piece->end);
    }
  } else if (keeps_upper) {
    range.begin = piece->end;
  } else {
    erase_range(at);
  }
  return true;
}

}  // namespace

void mapping_added(std::uintptr_t begin, std::uintptr_t end) {
  if (end <= begin || t_inside || !enabled()) return;
  const std::size_t bytes = end - begin;
  if (!meter_runs_out(bytes)) return;
  const double probability = sample_probability(bytes);
  if (probability == 0) return;
  const Captured captured = begin_sample();
  bool sampled = false;
  if (captured.depth != kNoStackRoom && try_lock()) {
    if (have_arena() && g_range_count < kMappedRanges) {
      const std::uint32_t stack = intern_stack(captured.frames, captured.depth, kProfileSiteMapped);
      void* identity = reinterpret_cast<void*>(begin);
      const std::uint32_t index = add_record(identity, probability, static_cast<std::int64_t>(bytes), stack);
      if (index != kNoRecord) {
        insert_range(begin, end, index);  // room checked above; only this thread changes the table
        sampled = true;
      }
    }
    unlock();
  }
  t_inside = false;
  if (!sampled) g_dropped.fetch_add(1, std::memory_order_relaxed);
}

void mapping_removed(std::uintptr_t begin, std::uintptr_t end) {
  if (g_range_count == 0) return;
  Piece piece;
  std::int64_t lost;
  while (take_piece(begin, end, &piece, &lost)) {
    uncount_mapped(piece.record, static_cast<std::int64_t>(piece.end - piece.begin) + lost);
  }
}

void mapping_moved(std::uintptr_t old_begin, std::uintptr_t old_end, std::uintptr_t new_begin,
                   std::uintptr_t new_end) {
  if (g_range_count == 0) return;
  // The new range is disjoint from the old (the kernel's rule for a move):
  // a piece put there is never taken again by this loop.
  Piece piece;
  std::int64_t lost;
  while (take_piece(old_begin, old_end, &piece, &lost)) {
    std::uintptr_t begin = new_begin + (piece.begin - old_begin);
    std::uintptr_t end = new_begin + (piece.end - old_begin);
    if (end > new_end) end = new_end;
    if (begin < end && !insert_range(begin, end, piece.record)) begin = end;  // no room: its bytes go
    const std::int64_t kept = begin < end ? static_cast<std::int64_t>(end - begin) : 0;
    uncount_mapped(piece.record, static_cast<std::int64_t>(piece.end - piece.begin) - kept + lost);
  }
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
  // What dlopen allocates is the library's own (kOwnRecord), as what a
  // capture allocates is.
  t_inside = true;
  const std::int64_t meter = t_meter;
  t_meter = INT64_MIN / 4;
  stacks::load_unwinder();
  t_meter = meter;
  t_inside = false;
}

void after_fork_in_child() {
  stacks::after_fork_in_child();
  g_lock.store(false, std::memory_order_relaxed);
  t_inside = false;
  t_lock_held = false;
}

}  // namespace heapline::sampler
