#include "mapped_memory.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <atomic>

#include "atomic_max.h"
#include "heap_sampler.h"
#include "heapline/seqlock.h"
#include "loaded_object.h"
#include "mapped_regions.h"
#include "next_allocator.h"
#include "os.h"
#include "stack_capture.h"

namespace heapline::mapped {

constinit detail::Live detail::g_live;

namespace {

enum State : int { kUnconfigured = 0, kOn, kOff };
constinit std::atomic<int> g_state{kUnconfigured};

// Set while this thread is inside one of the calls below: a mapping call
// made from within (a foreign allocator initialising during the allocator
// lookup, the live file's creation, a signal handler) is only forwarded.
__thread bool t_inside __attribute__((tls_model("initial-exec"))) = false;

// The foreign allocator's object, [begin, end) of its loaded segments; empty
// when the next allocator is glibc's.
constinit std::atomic<std::uintptr_t> g_allocator_begin{0};
constinit std::atomic<std::uintptr_t> g_allocator_end{0};

// The region set: static room for the first ranges, then pages of its own,
// doubled when full (mapped with the system calls directly, never counted).
constexpr std::size_t kStaticRanges = 1024;
constinit AddressRange g_static_ranges[kStaticRanges] = {};
constinit RegionSet g_regions;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

// g_counters.interval_max when no change came since the latest sample.
constexpr std::int64_t kNoChange = INT64_MIN;

struct alignas(128) Counters {
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::uint64_t> peak_time_ns{0};
  std::atomic<std::uint64_t> changes{0};
  std::atomic<std::uint64_t> untracked{0};
  // The open interval of the mapped series: the largest value since the
  // latest sample took it (take_interval; kNoChange: no change since).
  std::atomic<std::int64_t> interval_max{kNoChange};
  // The latest change: its time and the bytes after it, written under
  // g_lock between two increments of latest_seq (odd meanwhile), read by a
  // sample without the lock.
  std::atomic<std::uint64_t> latest_seq{0};
  std::atomic<std::uint64_t> latest_mono_ns{0};
  std::atomic<std::int64_t> latest_live{0};
};
constinit Counters g_counters;

struct Latest {
  std::uint64_t mono_ns;
  std::int64_t live;
};

Latest read_latest() {
  Latest latest{};
  // Bounded: a writer stopped in the middle (a signal handler's sample, a
  // fork's copy) must not hold a sample up.
  read_consistent(g_counters.latest_seq, 1000, [&] {
    latest = {g_counters.latest_mono_ns.load(std::memory_order_relaxed),
              g_counters.latest_live.load(std::memory_order_relaxed)};
  });
  return latest;
}

std::uintptr_t page_size() {
  static std::uintptr_t size = 0;
  if (size == 0) size = static_cast<std::uintptr_t>(os::page_size());
  return size;
}

std::uintptr_t page_end(const void* address, std::size_t length) {
  const std::uintptr_t page = page_size();
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(address);
  std::uintptr_t end;
  if (__builtin_add_overflow(begin, length, &end) || __builtin_add_overflow(end, page - 1, &end)) {
    return ~std::uintptr_t{0} & ~(page - 1);
  }
  return end & ~(page - 1);
}

std::uintptr_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Doubles the set's storage. Called with g_lock held.
bool grow() {
  const std::size_t capacity = g_regions.capacity() == 0 ? kStaticRanges : 2 * g_regions.capacity();
  const std::size_t bytes = capacity * sizeof(AddressRange);
  void* fresh = os::map(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED) return false;
  AddressRange* old = const_cast<AddressRange*>(g_regions.ranges());
  const std::size_t old_bytes = g_regions.capacity() * sizeof(AddressRange);
  g_regions.move_to(static_cast<AddressRange*>(fresh), capacity);
  if (old != g_static_ranges && old != nullptr) os::unmap(old, old_bytes);
  return true;
}

// add/remove with the room they need. Called with g_lock held.
std::int64_t track(std::uintptr_t begin, std::uintptr_t end) {
  if (g_regions.capacity() == 0) g_regions.move_to(g_static_ranges, kStaticRanges);
  std::int64_t added = g_regions.add(begin, end);
  if (added < 0 && grow()) added = g_regions.add(begin, end);
  if (added < 0) {
    g_counters.untracked.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  return added;
}

std::int64_t untrack(std::uintptr_t begin, std::uintptr_t end) {
  std::int64_t removed = g_regions.remove(begin, end);
  if (removed < 0 && grow()) removed = g_regions.remove(begin, end);
  if (removed < 0) {
    // No room to split a range around a hole: the range's tail goes with
    // the hole, counted as gone (and `untracked` says the figure is low).
    removed = g_regions.remove_through_range_end(begin, end);
    g_counters.untracked.fetch_add(1, std::memory_order_relaxed);
  }
  return removed;
}

// A change of the counted bytes, published at once, with its own time:
// each one is a system call, so an atomic add, a clock read and a peak
// check cost nothing beside it. Called with g_lock held, so changes are
// published in the order they were made, one at a time.
void publish(std::int64_t delta) {
  if (delta == 0) return;
  g_counters.changes.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t live = detail::g_live.bytes.fetch_add(delta, std::memory_order_relaxed) + delta;
  // Before the call's claim is given back (GrowthClaim): the budget's
  // figure never passes below what is mapped.
  detail::g_live.for_budget.fetch_add(delta, std::memory_order_relaxed);
  const std::uint64_t now = os::clock_ns(CLOCK_MONOTONIC);
  if (raise_to(g_counters.peak, live) < live) g_counters.peak_time_ns.store(now, std::memory_order_relaxed);
  // The interval's maximum before the latest change: a sample that takes
  // the maximum without this change also takes the change before it.
  const std::int64_t interval_max = raise_to(g_counters.interval_max, live);
  const std::int64_t open_max = interval_max > live ? interval_max : live;
  {
    const SeqlockWrite change(g_counters.latest_seq);
    g_counters.latest_mono_ns.store(now, std::memory_order_relaxed);
    g_counters.latest_live.store(live, std::memory_order_relaxed);
  }
  on_change(live, now, open_max);
}

bool from_allocator(const void* caller) {
  const std::uintptr_t address = address_of(caller);
  return (address >= g_allocator_begin.load(std::memory_order_relaxed) &&
          address < g_allocator_end.load(std::memory_order_relaxed)) ||
         stacks::is_unwinder_code(address);
}

// Scope of one call: marks the thread as inside, keeps errno for the caller.
class Inside {
 public:
  Inside() : saved_errno_(errno) { t_inside = true; }
  ~Inside() { t_inside = false; }
  // Before the system call (so that only the kernel can set errno) and after
  // it succeeded (undoing whatever the accounting did to errno).
  void restore_errno() const { errno = saved_errno_; }
  // After the system call, g_lock held: the change published, and errno
  // the caller's when the call `succeeded`, else the kernel's.
  void publish_keeping_errno(std::int64_t delta, bool succeeded) const {
    const int call_errno = errno;
    publish(delta);
    errno = succeeded ? saved_errno_ : call_errno;
  }

 private:
  int saved_errno_;
};

// The counted bytes a mapping call may add, claimed before its system call
// and given back once the change is published (bytes_for_budget): the
// accounting has taken its lent headroom back from under them first
// (before_growth). Outside g_lock: taking it back may publish heap bytes,
// which may take a sample of the mapped series.
class GrowthClaim {
 public:
  explicit GrowthClaim(std::int64_t bytes) : bytes_(bytes) {
    if (bytes_ <= 0) return;
    detail::g_live.for_budget.fetch_add(bytes_, std::memory_order_seq_cst);
    // The claim before the budget's figures are read: a publish that read
    // the figure before the claim reads it again after its own step and
    // sees it (sampling.cpp), or this thread's read sees that step.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    before_growth();
  }
  ~GrowthClaim() {
    if (bytes_ > 0) detail::g_live.for_budget.fetch_sub(bytes_, std::memory_order_release);
  }
  GrowthClaim(const GrowthClaim&) = delete;
  GrowthClaim& operator=(const GrowthClaim&) = delete;

 private:
  std::int64_t bytes_;
};

// A length in whole pages, as a claim: at most 2^50 (a length beyond it
// is one the kernel refuses; its claim only needs to be larger than any
// growth). MAP_FIXED may replace counted pages with as many: the claim
// is then larger than the growth, never smaller.
std::int64_t claim_for(std::size_t length) {
  constexpr std::uintptr_t kLargest = std::uintptr_t{1} << 50;
  const std::uintptr_t pages = page_end(nullptr, length);
  return static_cast<std::int64_t>(pages < kLargest ? pages : kLargest);
}

// The allocator heapline forwards to is resolved before any mapping is judged
// (jemalloc maps its first arenas from its own constructor, before any call
// through heapline); when it is foreign, its object's addresses are noted.
std::atomic<bool> g_allocator_known{false};

void know_allocator() {
  if (g_allocator_known.load(std::memory_order_acquire)) return;
  const Resolution resolution = resolve_allocator();
  if (resolution == Resolution::kNested) return;  // this thread is resolving it
  if (resolution == Resolution::kForeign) set_allocator_object(reinterpret_cast<const void*>(g_foreign.malloc));
  g_allocator_known.store(true, std::memory_order_release);
}

// Also while this thread captures a stack: libunwind's own mappings, which
// must not wait for g_lock (heap_sampler.h, t_capturing).
bool forward_only() { return t_inside || sampler::capturing() || g_state.load(std::memory_order_relaxed) == kOff; }

void lock_for_fork() { pthread_mutex_lock(&g_lock); }
void unlock_after_fork() { pthread_mutex_unlock(&g_lock); }

}  // namespace

void* map(void* address, std::size_t length, int prot, int flags, int fd, off_t offset, const void* caller) {
  if (forward_only()) return os::map(address, length, prot, flags, fd, offset);
  Inside inside;
  know_allocator();
  const bool counted = (flags & MAP_ANONYMOUS) != 0 && (flags & MAP_TYPE) == MAP_PRIVATE && prot != PROT_NONE &&
                       !from_allocator(caller);
  const bool replaces = (flags & MAP_FIXED) != 0 && (flags & MAP_FIXED_NOREPLACE) == 0;
  if (!counted && !replaces) {
    inside.restore_errno();
    return os::map(address, length, prot, flags, fd, offset);
  }

  const GrowthClaim claim(counted ? claim_for(length) : 0);
  std::int64_t delta = 0;
  pthread_mutex_lock(&g_lock);
  // MAP_FIXED replaces whatever was mapped there, counted or not.
  if (replaces) {
    delta -= untrack(address_of(address), page_end(address, length));
    sampler::mapping_removed(address_of(address), page_end(address, length));
  }
  inside.restore_errno();
  void* p = os::map(address, length, prot, flags, fd, offset);
  if (p != MAP_FAILED && counted) {
    delta += track(address_of(p), page_end(p, length));
    sampler::mapping_added(address_of(p), page_end(p, length));
  }
  inside.publish_keeping_errno(delta, p != MAP_FAILED);
  pthread_mutex_unlock(&g_lock);
  return p;
}

int unmap(void* address, std::size_t length) {
  if (forward_only()) return os::unmap(address, length);
  Inside inside;
  pthread_mutex_lock(&g_lock);
  int result = os::unmap(address, length);
  std::int64_t removed = 0;
  if (result == 0) {
    removed = untrack(address_of(address), page_end(address, length));
    sampler::mapping_removed(address_of(address), page_end(address, length));
  }
  inside.publish_keeping_errno(-removed, result == 0);
  pthread_mutex_unlock(&g_lock);
  return result;
}

void* remap(void* old_address, std::size_t old_length, std::size_t new_length, int flags, void* new_address) {
  if (forward_only()) return os::remap(old_address, old_length, new_length, flags, new_address);
  Inside inside;
  // What the remap may add, before the lock (whether the old range counts
  // is known only under it: a claim for one that does not is only larger
  // than needed). MREMAP_DONTUNMAP leaves the old range counted and adds
  // the whole new one.
  const std::int64_t grows_by = (flags & MREMAP_DONTUNMAP) != 0 ? claim_for(new_length)
                                                                 : claim_for(new_length) - claim_for(old_length);
  const GrowthClaim claim(grows_by);
  inside.restore_errno();
  pthread_mutex_lock(&g_lock);
  const std::uintptr_t old_begin = address_of(old_address);
  const std::uintptr_t old_end = page_end(old_address, old_length);
  // A counted mapping stays counted wherever it goes; one that was not (a
  // file, an allocator's arena) stays out.
  const bool counted = g_regions.overlap(old_begin, old_end) > 0;
  void* p = os::remap(old_address, old_length, new_length, flags, new_address);
  std::int64_t delta = 0;
  if (p != MAP_FAILED) {
    const std::uintptr_t begin = address_of(p);
    const std::uintptr_t end = page_end(p, new_length);
    // The heap sampler's parts of counted mappings follow (heap_sampler.h),
    // and bytes that start to count are metered as a new mapping's.
    if (begin == old_begin) {
      if (end < old_end) {
        delta -= untrack(end, old_end);
        sampler::mapping_removed(end, old_end);
      }
      if (end > old_end && counted) {
        delta += track(old_end, end);
        sampler::mapping_added(old_end, end);
      }
    } else {
      // Moved. MREMAP_DONTUNMAP leaves the old range mapped (empty).
      const bool unmaps_old = (flags & MREMAP_DONTUNMAP) == 0;
      if (unmaps_old) delta -= untrack(old_begin, old_end);
      delta -= untrack(begin, end);  // MREMAP_FIXED replaced what was there
      sampler::mapping_removed(begin, end);
      if (unmaps_old) sampler::mapping_moved(old_begin, old_end, begin, end);
      if (counted) {
        delta += track(begin, end);
        // What the move brought along was counted before; what it grew by
        // (or, with MREMAP_DONTUNMAP, all of it) is new.
        const std::uintptr_t carried = unmaps_old ? begin + (old_end - old_begin) : begin;
        if (carried < end) sampler::mapping_added(carried, end);
      }
    }
  }
  inside.publish_keeping_errno(delta, p != MAP_FAILED);
  pthread_mutex_unlock(&g_lock);
  return p;
}

void configure(bool enabled) {
  static bool fork_handlers = false;
  if (!fork_handlers) {
    fork_handlers = true;
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
  }
  if (enabled) {
    g_state.store(kOn, std::memory_order_relaxed);
    return;
  }
  g_state.store(kOff, std::memory_order_relaxed);
  pthread_mutex_lock(&g_lock);
  g_regions.clear();
  pthread_mutex_unlock(&g_lock);
  detail::g_live.bytes.store(0, std::memory_order_relaxed);
  detail::g_live.for_budget.store(0, std::memory_order_relaxed);
  g_counters.peak.store(0, std::memory_order_relaxed);
  g_counters.changes.store(0, std::memory_order_relaxed);
  g_counters.untracked.store(0, std::memory_order_relaxed);
  g_counters.interval_max.store(kNoChange, std::memory_order_relaxed);
  g_counters.latest_live.store(0, std::memory_order_relaxed);
}

bool enabled() { return g_state.load(std::memory_order_relaxed) != kOff; }

void set_allocator_object(const void* code) {
  const loaded::Span range = loaded::span_of_object_holding(code);
  g_allocator_begin.store(range.begin, std::memory_order_relaxed);
  g_allocator_end.store(range.end, std::memory_order_relaxed);
}

Figures figures() {
  return {detail::g_live.bytes.load(std::memory_order_relaxed), g_counters.peak.load(std::memory_order_relaxed),
          g_counters.peak_time_ns.load(std::memory_order_relaxed),
          g_counters.changes.load(std::memory_order_relaxed), g_counters.untracked.load(std::memory_order_relaxed)};
}

Interval take_interval() {
  // A change meanwhile lands in this sample or the next (or both: it raised
  // this interval's maximum and then showed in the latest change read
  // here, after the maximum was taken).
  const std::int64_t max = g_counters.interval_max.exchange(kNoChange, std::memory_order_relaxed);
  const Latest latest = read_latest();
  if (max == kNoChange) return {false, 0, latest.live, latest.live};
  return {true, latest.mono_ns, latest.live, max > latest.live ? max : latest.live};
}

void after_fork_in_child() {
  const std::int64_t live = detail::g_live.bytes.load(std::memory_order_relaxed);
  // The other threads' claims stayed with them, in the parent.
  detail::g_live.for_budget.store(live, std::memory_order_relaxed);
  g_counters.peak.store(live, std::memory_order_relaxed);
  g_counters.peak_time_ns.store(0, std::memory_order_relaxed);
  g_counters.changes.store(0, std::memory_order_relaxed);
  g_counters.interval_max.store(kNoChange, std::memory_order_relaxed);
  // The inherited mappings are the child's figure from its start (time 0
  // of its own clock: no change of its own yet).
  g_counters.latest_seq.store(0, std::memory_order_relaxed);
  g_counters.latest_mono_ns.store(0, std::memory_order_relaxed);
  g_counters.latest_live.store(live, std::memory_order_relaxed);
  t_inside = false;
}

}  // namespace heapline::mapped
