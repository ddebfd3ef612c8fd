// oracle_workload: the seeded random workload of the interposer's
// differential oracle (docs/design.md, "The differential oracle";
// tests/interposer/oracle/ checks it).
//
//   oracle_workload --seed S --dir DIR      a run from seed S
//   oracle_workload --calibrate --dir DIR   what the runtime itself
//                                           allocates (see below)
//
// From the seed it runs rounds of 1 to 256 threads through phases separated
// by barriers: every allocation call of the API (the memalign family,
// calloc, realloc chains, reallocarray, failures), frees of blocks other
// threads allocated, short-lived threads, anonymous mappings (mmap, partial
// munmap, mremap, MAP_FIXED, and mappings that must not count), markers;
// forks whose child runs a workload of its own (or execs this program with
// another seed), and an exec of itself at the end. Each process image
// writes DIR/truth.PID.IMAGE.json: what it knows exactly.
//
// What it knows exactly. Every block's glibc chunk size (the library's size
// basis) is read from its header, so the live bytes the workload made are
// known whatever the interleaving; the calls by kind; the mapped bytes page
// by page. The peak is designed rather than measured: each thread keeps the
// largest prefix of its own changes in a phase, so a phase can never hold
// more than its start plus the sum of those (in a deterministic upper
// estimate of each chunk, the same in every run of the seed); after the
// rounds the main thread alone allocates and maps beyond every such bound.
// The true peak of heap, mapped and their sum is then that moment, in any
// run of the seed and at any precision.
//
// What it does not know: the runtime's own blocks and calls (ld.so's DTV of
// each thread, a calloc at its creation and a free at its join; whatever a
// fresh image's startup leaves, nothing for this libc-only program).
// `--calibrate` runs a known tree (one thread, a fork while it waits at a
// barrier, an exec) from which the checker takes those figures. A fork
// child keeps the DTV of every thread waiting at the fork, whose chunk
// varies by a few bytes: each thread reads its own (own_dtv_bytes).
//
// Nothing here allocates or maps without counting it: no stdio, no
// containers; its tables are blocks allocated through the counted calls;
// thread stacks are counted blocks too (a thread on a stack of its own
// frees its thread-local storage at join, so the runtime's share does not
// depend on glibc's stack cache).
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "heapline.h"

namespace {

// --- fixed settings --------------------------------------------------------

constexpr int kMaxDepth = 2;                  // forks and execs below the root
constexpr int kMaxChildren = 4;               // forks per process image
constexpr int kMaxImages = 3;                 // execs of one pid
constexpr std::size_t kMmapThreshold = 128 * 1024;  // set with mallopt: sizes do not depend on history
constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kHelperStackBytes = 128 * 1024;
// The live file keeps the names of a process's first 256 markers (later
// ones still sample). Threads set at most 200, so that which 256 the
// library keeps never depends on how threads raced for them.
constexpr std::uint32_t kKeptMarkers = 256;
constexpr std::uint32_t kThreadMarkers = 200;
constexpr std::size_t kMarkerName = 48;
constexpr std::int64_t kMaxBlock = 64LL << 20;
constexpr std::uint32_t kMainBlocks = 1 << 16;
constexpr std::uint32_t kMainRegions = 1 << 12;
constexpr std::uint32_t kWorkerBlocks = 512;
constexpr std::uint32_t kWorkerRegions = 32;
constexpr std::uint32_t kHelperBlocks = 32;
constexpr std::uint32_t kHelperRegions = 4;
// The runtime's blocks while threads live (ld.so's DTV of each, a few
// hundred bytes): the designed peak clears every phase by this much more.
constexpr std::int64_t kRuntimeAllowance = 64 * 1024;
constexpr std::int64_t kRuntimePerThread = 4096;

enum CallKind { kAlloc = 0, kFree = 1, kRealloc = 2, kCallKinds = 3 };

std::size_t g_page = 4096;

// --- messages, without stdio --------------------------------------------------

void write_all(int fd, const char* text, std::size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, text, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    length -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void die(const char* what, long value = 0) {
  char line[256];
  int n = snprintf(line, sizeof line, "oracle_workload[%d]: %s (%ld, errno %d)\n", getpid(), what, value, errno);
  write_all(2, line, n > 0 ? static_cast<std::size_t>(n) : 0);
  _exit(3);
}

// A fixed buffer that JSON is written into (snprintf does not allocate for
// numbers and plain strings).
class Text {
 public:
  Text(char* buffer, std::size_t capacity) : buffer_(buffer), capacity_(capacity) {}
  template <typename... Args>
  void add(const char* format, Args... args) {
    if (size_ >= capacity_) die("truth buffer too small");
    int n = snprintf(buffer_ + size_, capacity_ - size_, format, args...);
    if (n < 0 || static_cast<std::size_t>(n) >= capacity_ - size_) die("truth buffer too small");
    size_ += static_cast<std::size_t>(n);
  }
  const char* data() const { return buffer_; }
  std::size_t size() const { return size_; }

 private:
  char* buffer_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

// --- random numbers (splitmix64) -------------------------------------------

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Rng {
  std::uint64_t state = 0;
  std::uint64_t next() {
    state += 0x9e3779b97f4a7c15ULL;
    return mix(state, 0);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  bool percent(unsigned p) { return below(100) < p; }
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return hi <= lo ? lo : lo + below(hi - lo + 1); }
  // Log-uniform in [lo, hi]: small values as likely per octave as large ones.
  std::uint64_t log_between(std::uint64_t lo, std::uint64_t hi) {
    if (hi <= lo) return lo;
    unsigned lo_bits = 64 - static_cast<unsigned>(__builtin_clzll(lo | 1));
    unsigned hi_bits = 64 - static_cast<unsigned>(__builtin_clzll(hi));
    unsigned bits = static_cast<unsigned>(between(lo_bits, hi_bits));
    std::uint64_t top = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
    std::uint64_t bottom = bits <= 1 ? 0 : 1ULL << (bits - 1);
    if (bottom < lo) bottom = lo;
    if (top > hi) top = hi;
    return between(bottom, top);
  }
};

// --- bytes in three currencies ------------------------------------------------
// actual: glibc's chunk sizes, read from the blocks (the truth; may differ by
// a few bytes between runs, since glibc keeps a split remainder below 32
// bytes with the chunk). upper and lower: deterministic estimates of every
// chunk from the request alone (lower = the request; upper = request +
// alignment + 64, and a page more for a block that may be mapped), so that
// every decision and every bound is the same in every run of a seed.
struct Bytes {
  std::int64_t actual = 0, upper = 0, lower = 0;
  Bytes& operator+=(const Bytes& b) {
    actual += b.actual;
    upper += b.upper;
    lower += b.lower;
    return *this;
  }
  Bytes& operator-=(const Bytes& b) {
    actual -= b.actual;
    upper -= b.upper;
    lower -= b.lower;
    return *this;
  }
};

struct Block {
  void* p;
  Bytes bytes;
  std::size_t alignment;  // what it was allocated with (0: malloc's own)
  bool may_be_mapped;     // glibc may have mapped it (upper has a page more)
};

// A range of the workload's own mappings with one protection; `counted`:
// the library must count it (anonymous, private, not PROT_NONE).
struct Region {
  std::uintptr_t base;
  std::size_t length;
  bool counted;
  bool fixed_ok;  // anonymous private (a reservation or counted): MAP_FIXED and mremap may go there
};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// A block the library's heap sampler chose reads 2^60 where glibc's
// header would be, and lies some bytes into a glibc block of its own (16
// for malloc's and calloc's, the alignment for the aligned family's: the
// high half of the word before the marker says how many); it counts that
// block's chunk less those bytes, 32 at least (interposer/src/services/heap_sampler.h,
// marked_bytes).
constexpr std::size_t kSampledMarker = std::size_t{1} << 60;

std::int64_t chunk_of(const void* p) {
  std::size_t header;
  memcpy(&header, static_cast<const char*>(p) - sizeof header, sizeof header);
  if (header == kSampledMarker) {
    std::uint64_t tag;
    memcpy(&tag, static_cast<const char*>(p) - 2 * sizeof header, sizeof tag);
    const std::int64_t prefix = static_cast<std::int64_t>(tag >> 32);
    const std::int64_t under = chunk_of(static_cast<const char*>(p) - prefix) - prefix;
    return under > 32 ? under : 32;
  }
  return static_cast<std::int64_t>(header & ~std::size_t{7});
}

// The runtime's block of the calling thread: its DTV, which ld.so callocs
// when the thread is created and frees at its join (the thread pointer's
// second word on x86-64, its first on aarch64, points one 16-byte entry
// into it). Its chunk is 304 or 320 bytes as glibc's free chunks fall, so
// it is read, not assumed: a fork child keeps the DTV of every thread
// waiting at the fork.
std::int64_t own_dtv_bytes() {
#if defined(__x86_64__)
  const char* dtv;
  asm volatile("mov %%fs:8, %0" : "=r"(dtv));
  return chunk_of(dtv - 16);
#elif defined(__aarch64__)
  // The thread pointer points at the thread control block, whose first
  // word is the DTV pointer, one entry in as well.
  const char* const* thread_pointer;
  asm volatile("mrs %0, tpidr_el0" : "=r"(thread_pointer));
  return chunk_of(thread_pointer[0] - 16);
#else
#error "own_dtv_bytes: where is this processor's DTV?"
#endif
}

bool may_be_mapped(std::size_t request, std::size_t alignment) {
  return request + alignment + 64 >= kMmapThreshold / 2;
}

Bytes estimate(const void* p, std::size_t request, std::size_t alignment, bool mapped) {
  Bytes b;
  b.actual = chunk_of(p);
  b.lower = static_cast<std::int64_t>(request);
  b.upper = static_cast<std::int64_t>(request + alignment + 64 + (mapped ? g_page + 64 : 0));
  return b;
}

// --- what a thread did in the current span ---------------------------------

struct Tally {
  Bytes heap;                  // net change
  std::int64_t heap_high = 0;  // largest prefix of heap.upper (>= 0)
  std::int64_t mapped = 0;     // net change of counted mapped bytes
  std::int64_t mapped_high = 0;
  // Short-lived threads this one ran beside itself: their highs add up.
  std::int64_t extra_heap_high = 0, extra_mapped_high = 0;
  std::uint64_t calls[kCallKinds] = {};
  std::uint64_t threads_created = 0;
  std::uint32_t threads_alive_high = 0;  // helpers alive at once beside this one
};

struct Round;

struct Context {
  std::uint32_t id = 0;  // process-unique, in marker names
  Rng rng;
  Block* blocks = nullptr;
  std::uint32_t block_count = 0, block_capacity = 0;
  Region* regions = nullptr;
  std::uint32_t region_count = 0, region_capacity = 0;
  std::int64_t held_lower = 0;    // requests of the blocks in the table: the budget
  std::int64_t held_mapped = 0;   // counted bytes in the table's regions
  std::int64_t heap_budget = 0, mapped_budget = 0;
  Tally t;
  std::uint32_t ops = 0;          // this phase's
  bool may_spawn = false;         // workers run short-lived helpers
  std::uint32_t marker_seq = 0;
  std::int64_t dtv_bytes = 0;  // the runtime's block of this thread (own_dtv_bytes)
  Round* round = nullptr;
  pthread_t thread{};
  void* stack = nullptr;
};

// --- the process -------------------------------------------------------------

struct Child {
  int pid;
  char kind[8];  // "fork" or "exec"
  int status;
};

struct ProcessState {
  const char* dir = nullptr;
  std::uint64_t seed = 0;
  int depth = 0;
  int image = 0;
  const char* role = "root";
  bool calibrate = false;
  Rng rng;
  // What the workload holds now (quiescent points only).
  Bytes heap;
  std::int64_t mapped = 0;
  // The largest value any moment so far can have had, in upper bytes.
  std::int64_t heap_bound = 0;
  std::int64_t mapped_bound = 0;
  std::uint32_t threads_alive_high = 1;
  std::uint64_t calls[kCallKinds] = {};
  std::uint64_t threads_created = 0;
  Bytes inherited_heap;
  std::int64_t inherited_mapped = 0;
  std::uint32_t parked_at_fork = 0;
  std::int64_t parked_runtime_bytes = 0;  // their DTVs, this image's for good
  std::int64_t peak_heap = 0, peak_mapped = 0;
  bool peak_designed = false;
  Child children[kMaxChildren];
  int child_count = 0;
  std::uint32_t next_context_id = 1;
  // Markers: a name per claimed index (threads claim them as they go).
  std::atomic<std::uint32_t> markers_claimed{0};
  std::atomic<std::uint32_t> thread_markers{0};
  char marker_names[kKeptMarkers][kMarkerName];
  int self_fd = -1;  // /proc/self/exe, for mappings of a file (never counted)
  std::size_t self_size = 0;
  Context main;
};
ProcessState g;

// --- counted calls -----------------------------------------------------------

void note_heap(Context& c, const Bytes& delta, bool add) {
  if (add) c.t.heap += delta;
  else c.t.heap -= delta;
  if (c.t.heap.upper > c.t.heap_high) c.t.heap_high = c.t.heap.upper;
}

void note_mapped(Context& c, std::int64_t delta) {
  c.t.mapped += delta;
  if (c.t.mapped > c.t.mapped_high) c.t.mapped_high = c.t.mapped;
}

void take_block(Context& c, Block b) {
  c.blocks[c.block_count++] = b;
  c.held_lower += b.bytes.lower;
}

Block drop_block(Context& c, std::uint32_t index) {
  Block b = c.blocks[index];
  c.blocks[index] = c.blocks[--c.block_count];
  c.held_lower -= b.bytes.lower;
  return b;
}

// A new block into c's table (or, when `keep` is false, only counted: the
// caller keeps it).
Block counted_block(Context& c, void* p, std::size_t request, std::size_t alignment) {
  const bool mapped = may_be_mapped(request, alignment);
  Block b{p, estimate(p, request, alignment, mapped), alignment, mapped};
  c.t.calls[kAlloc]++;
  note_heap(c, b.bytes, true);
  return b;
}

void counted_free(Context& c, const Block& b) {
  if (chunk_of(b.p) != b.bytes.actual) die("a block's chunk size changed while it was held", chunk_of(b.p));
  c.t.calls[kFree]++;
  note_heap(c, b.bytes, false);
  free(b.p);
}

// Bookkeeping memory: a counted block the workload does not put in a table.
void* counted_malloc(Context& c, std::size_t request, Block* out) {
  void* p = malloc(request);
  if (p == nullptr) die("bookkeeping malloc failed", static_cast<long>(request));
  *out = counted_block(c, p, request, 0);
  return p;
}

// The kinds of allocation call, each with its own rules.
enum AllocKind {
  kMalloc, kCalloc, kPosixMemalign, kAlignedAlloc, kMemalign, kValloc, kPvalloc, kReallocNull, kReallocarrayNull,
  kAllocKinds
};

std::size_t pick_alignment(Rng& rng) { return std::size_t{16} << rng.below(9); }  // 16 .. 4096

// One allocation of `kind` for about `request` bytes; false when the call
// failed (nothing counted: the library counts only blocks it saw).
bool allocate(Context& c, AllocKind kind, std::size_t request) {
  void* p = nullptr;
  std::size_t alignment = 0;
  std::size_t basis = request;  // the request the chunk is made for
  bool as_realloc = false;
  switch (kind) {
    case kMalloc:
      p = malloc(request);
      break;
    case kCalloc: {
      std::size_t count = 1 + c.rng.below(8);
      std::size_t each = request / count + 1;
      basis = count * each;
      p = calloc(count, each);
      break;
    }
    case kPosixMemalign:
      alignment = pick_alignment(c.rng);
      if (posix_memalign(&p, alignment, request) != 0) p = nullptr;
      break;
    case kAlignedAlloc:
      alignment = pick_alignment(c.rng);
      basis = round_up(request, alignment);  // C11: a multiple of the alignment
      p = aligned_alloc(alignment, basis);
      break;
    case kMemalign:
      alignment = pick_alignment(c.rng);
      p = memalign(alignment, request);
      break;
    case kValloc:
      alignment = g_page;
      p = valloc(request);
      break;
    case kPvalloc:
      alignment = g_page;
      basis = round_up(request == 0 ? 1 : request, g_page);
      p = pvalloc(request);
      break;
    case kReallocNull:
      p = realloc(nullptr, request);
      as_realloc = true;
      break;
    case kReallocarrayNull: {
      std::size_t count = 1 + c.rng.below(4);
      std::size_t each = request / count + 1;
      basis = count * each;
      p = reallocarray(nullptr, count, each);
      as_realloc = true;
      break;
    }
    case kAllocKinds:
      break;
  }
  if (p == nullptr) return false;
  Block b = counted_block(c, p, basis, alignment);
  if (as_realloc) {  // the library counts realloc(NULL, n) as a realloc
    c.t.calls[kAlloc]--;
    c.t.calls[kRealloc]++;
  }
  take_block(c, b);
  return true;
}

// realloc or reallocarray of the block at `index` to `request` bytes: the
// block moves (or goes, for 0) and the table follows.
void reallocate(Context& c, std::uint32_t index, std::size_t request, bool as_array) {
  Block old = c.blocks[index];
  if (chunk_of(old.p) != old.bytes.actual) die("a block's chunk size changed while it was held", chunk_of(old.p));
  void* q;
  std::size_t basis = request;
  if (as_array) {
    std::size_t count = 1 + c.rng.below(4);
    std::size_t each = request == 0 ? 0 : request / count + 1;
    basis = count * each;
    q = reallocarray(old.p, count, each);
  } else {
    q = realloc(old.p, request);
  }
  if (q == nullptr) {
    if (basis != 0) return;  // failed: the block is untouched
    drop_block(c, index);  // glibc: realloc(p, 0) frees p
    c.t.calls[kFree]++;
    note_heap(c, old.bytes, false);
    return;
  }
  // A block that may be mapped stays mapped when it shrinks (glibc remaps
  // it): its upper estimate keeps the page, and the old alignment's offset.
  const bool mapped = old.may_be_mapped || may_be_mapped(basis, 0);
  Block fresh{q, estimate(q, basis, old.alignment, mapped), old.alignment, mapped};
  c.t.calls[kRealloc]++;
  Bytes delta = fresh.bytes;
  delta -= old.bytes;
  note_heap(c, delta, true);
  c.held_lower += fresh.bytes.lower - old.bytes.lower;
  c.blocks[index] = fresh;
}

// --- sizes -------------------------------------------------------------------

std::size_t pick_size(Context& c) {
  std::int64_t room = c.heap_budget - c.held_lower;
  if (room < 1) room = 1;
  std::uint64_t r = c.rng.below(1000);
  std::uint64_t size;
  if (r < 600) size = c.rng.between(1, 256);
  else if (r < 880) size = c.rng.log_between(257, 8192);
  else if (r < 970) size = c.rng.log_between(8193, 256 * 1024);
  else if (r < 996) size = c.rng.log_between(256 * 1024, 4 << 20);
  else size = c.rng.log_between(4 << 20, kMaxBlock);
  if (static_cast<std::int64_t>(size) > room) size = static_cast<std::uint64_t>(room);
  return size;
}

// --- mappings ----------------------------------------------------------------

void take_region(Context& c, Region r) {
  if (r.length == 0) return;
  if (c.region_count == c.region_capacity) die("region table full");
  c.regions[c.region_count++] = r;
  if (r.counted) c.held_mapped += static_cast<std::int64_t>(r.length);
}

Region drop_region(Context& c, std::uint32_t index) {
  Region r = c.regions[index];
  c.regions[index] = c.regions[--c.region_count];
  if (r.counted) c.held_mapped -= static_cast<std::int64_t>(r.length);
  return r;
}

std::size_t pick_pages(Context& c) {
  std::int64_t room = (c.mapped_budget - c.held_mapped) / static_cast<std::int64_t>(g_page);
  if (room < 1) room = 1;
  std::uint64_t pages = c.rng.percent(95) ? c.rng.log_between(1, 64) : c.rng.log_between(65, kMaxBlock / g_page);
  if (static_cast<std::int64_t>(pages) > room) pages = static_cast<std::uint64_t>(room);
  return pages;
}

void map_new(Context& c) {
  if (c.region_count + 3 > c.region_capacity) return;
  const std::size_t length = pick_pages(c) * g_page;
  const std::uint64_t r = c.rng.below(100);
  int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1;
  bool counted = true, fixed_ok = true;
  std::size_t map_length = length;
  if (r < 10) {  // shared: not heap
    flags = MAP_SHARED | MAP_ANONYMOUS;
    counted = fixed_ok = false;
  } else if (r < 22) {  // a reservation: holds nothing until committed
    prot = PROT_NONE;
    counted = false;
  } else if (r < 27 && g.self_fd >= 0) {  // a file: not heap
    prot = PROT_READ;
    flags = MAP_PRIVATE;
    fd = g.self_fd;
    map_length = round_up(g.self_size < length ? g.self_size : length, g_page);
    counted = fixed_ok = false;
  }
  if (length >= (8u << 20)) flags |= MAP_NORESERVE;
  void* p = mmap(nullptr, map_length, prot, flags, fd, 0);
  if (p == MAP_FAILED) return;
  if (counted) note_mapped(c, static_cast<std::int64_t>(map_length));
  take_region(c, Region{reinterpret_cast<std::uintptr_t>(p), map_length, counted, fixed_ok});
}

// munmap of the whole region, its head, its tail or a hole in its middle.
void unmap_part(Context& c) {
  if (c.region_count == 0 || c.region_count + 1 >= c.region_capacity) return;
  const std::uint32_t index = static_cast<std::uint32_t>(c.rng.below(c.region_count));
  Region r = c.regions[index];
  const std::size_t pages = r.length / g_page;
  std::size_t from = 0, count = pages;
  const std::uint64_t how = c.rng.below(4);
  if (pages > 1 && how == 1) count = c.rng.between(1, pages - 1);  // head
  if (pages > 1 && how == 2) {                                     // tail
    count = c.rng.between(1, pages - 1);
    from = pages - count;
  }
  if (pages > 2 && how == 3) {  // a hole
    from = c.rng.between(1, pages - 2);
    count = c.rng.between(1, pages - 1 - from);
  }
  if (munmap(reinterpret_cast<void*>(r.base + from * g_page), count * g_page) != 0) die("munmap failed");
  drop_region(c, index);
  if (r.counted) note_mapped(c, -static_cast<std::int64_t>(count * g_page));
  take_region(c, Region{r.base, from * g_page, r.counted, r.fixed_ok});
  take_region(c, Region{r.base + (from + count) * g_page, (pages - from - count) * g_page, r.counted, r.fixed_ok});
}

// MAP_FIXED over part of an anonymous private region: commits part of a
// reservation (now counted), replaces counted pages (no change), or
// decommits them as allocators do, with a PROT_NONE mapping (no longer
// counted).
void map_fixed_over(Context& c) {
  if (c.region_count == 0 || c.region_count + 3 > c.region_capacity) return;
  const std::uint32_t index = static_cast<std::uint32_t>(c.rng.below(c.region_count));
  Region r = c.regions[index];
  if (!r.fixed_ok) return;
  const std::size_t pages = r.length / g_page;
  const std::size_t from = c.rng.below(pages);
  const std::size_t count = c.rng.between(1, pages - from);
  void* at = reinterpret_cast<void*>(r.base + from * g_page);
  const bool commit = c.rng.percent(75);
  void* p = mmap(at, count * g_page, commit ? PROT_READ | PROT_WRITE : PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | (commit ? 0 : MAP_NORESERVE), -1, 0);
  if (p != at) die("mmap MAP_FIXED failed");
  drop_region(c, index);
  if (commit && !r.counted) note_mapped(c, static_cast<std::int64_t>(count * g_page));
  if (!commit && r.counted) note_mapped(c, -static_cast<std::int64_t>(count * g_page));
  take_region(c, Region{r.base, from * g_page, r.counted, true});
  take_region(c, Region{r.base + from * g_page, count * g_page, commit, true});
  take_region(c, Region{r.base + (from + count) * g_page, (pages - from - count) * g_page, r.counted, true});
}

// mremap of a whole region: grow (it may move), shrink, move to a place of
// its own reservation, or (rarely) move and keep the old range mapped.
void remap_region(Context& c) {
  if (c.region_count == 0 || c.region_count + 2 > c.region_capacity) return;
  const std::uint32_t index = static_cast<std::uint32_t>(c.rng.below(c.region_count));
  Region r = c.regions[index];
  if (!r.fixed_ok || !r.counted) return;  // a counted private mapping (reservations have no pages to move)
  const std::size_t pages = r.length / g_page;
  const std::uint64_t how = c.rng.below(100);
  void* old = reinterpret_cast<void*>(r.base);
  if (how < 40) {  // grow
    std::size_t more = pick_pages(c);
    if (more > pages) more = pages;
    void* p = mremap(old, r.length, r.length + more * g_page, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return;
    drop_region(c, index);
    note_mapped(c, static_cast<std::int64_t>(more * g_page));
    take_region(c, Region{reinterpret_cast<std::uintptr_t>(p), r.length + more * g_page, true, true});
  } else if (how < 70) {  // shrink in place
    if (pages < 2) return;
    const std::size_t keep = c.rng.between(1, pages - 1);
    void* p = mremap(old, r.length, keep * g_page, 0);
    if (p != old) die("mremap shrink failed");
    drop_region(c, index);
    note_mapped(c, -static_cast<std::int64_t>((pages - keep) * g_page));
    take_region(c, Region{r.base, keep * g_page, true, true});
  } else {  // move into a reservation of our own
    const bool keep_old = how >= 95;
    void* target = mmap(nullptr, r.length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (target == MAP_FAILED) return;
    int flags = MREMAP_MAYMOVE | MREMAP_FIXED | (keep_old ? MREMAP_DONTUNMAP : 0);
    void* p = mremap(old, r.length, r.length, flags, target);
    if (p == MAP_FAILED) {  // MREMAP_DONTUNMAP needs Linux 5.7
      if (munmap(target, r.length) != 0) die("munmap of a reservation failed");
      return;
    }
    if (p != target) die("mremap MREMAP_FIXED went elsewhere");
    if (keep_old) {
      note_mapped(c, static_cast<std::int64_t>(r.length));  // the old range stays mapped, empty
    } else {
      drop_region(c, index);
    }
    take_region(c, Region{reinterpret_cast<std::uintptr_t>(p), r.length, true, true});
  }
}

// --- markers -----------------------------------------------------------------

// A marker, in the truth under the index this thread claimed (the library
// claims its own indices: the checker compares the names as a set).
void mark(const char* name) {
  const std::uint32_t index = g.markers_claimed.fetch_add(1, std::memory_order_relaxed);
  if (index < kKeptMarkers) snprintf(g.marker_names[index], kMarkerName, "%s", name);
  heapline_mark(name);
}

// "m.CONTEXT.SEQUENCE": the checker finds each thread's markers in order.
void mark_in_sequence(Context& c) {
  char name[kMarkerName];
  snprintf(name, sizeof name, "m.%u.%u", c.id, c.marker_seq++);
  mark(name);
}

// A thread's marker, within the threads' share.
void mark(Context& c) {
  if (g.thread_markers.fetch_add(1, std::memory_order_relaxed) < kThreadMarkers) mark_in_sequence(c);
}

// --- short-lived threads -----------------------------------------------------

void run_ops(Context& c);

void* helper_main(void* arg) {
  run_ops(*static_cast<Context*>(arg));
  return nullptr;
}

// The memory a context's tables and marker names need, as counted blocks.
struct ContextMemory {
  Block context, blocks, regions, stack;
};

Context* new_context(Context& parent, std::uint32_t block_capacity, std::uint32_t region_capacity,
                     std::size_t stack_bytes, ContextMemory* memory) {
  Context* c = new (counted_malloc(parent, sizeof(Context), &memory->context)) Context();
  c->blocks = static_cast<Block*>(counted_malloc(parent, block_capacity * sizeof(Block), &memory->blocks));
  c->block_capacity = block_capacity;
  c->regions = static_cast<Region*>(counted_malloc(parent, region_capacity * sizeof(Region), &memory->regions));
  c->region_capacity = region_capacity;
  c->stack = stack_bytes != 0 ? counted_malloc(parent, stack_bytes, &memory->stack) : nullptr;
  return c;
}

void free_context(Context& parent, Context* c, ContextMemory& memory, bool has_stack) {
  if (has_stack) counted_free(parent, memory.stack);
  counted_free(parent, memory.regions);
  counted_free(parent, memory.blocks);
  c->~Context();
  counted_free(parent, memory.context);
}

bool start_thread(Context& creator, Context* c, std::size_t stack_bytes, void* (*body)(void*)) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, c->stack, stack_bytes);
  const int error = pthread_create(&c->thread, &attr, body, c);
  pthread_attr_destroy(&attr);
  if (error != 0) {
    errno = error;
    die("pthread_create failed", error);
  }
  creator.t.threads_created++;
  return true;
}

// Moves up to `count` blocks and regions from one table to another (between
// threads: only while neither runs).
void hand_over(Context& from, Context& to, std::uint32_t count, std::uint32_t region_count) {
  for (std::uint32_t i = 0; i < count && from.block_count > 0 && to.block_count < to.block_capacity; ++i) {
    take_block(to, drop_block(from, static_cast<std::uint32_t>(from.rng.below(from.block_count))));
  }
  for (std::uint32_t i = 0; i < region_count && from.region_count > 0 && to.region_count + 3 <= to.region_capacity;
       ++i) {
    take_region(to, drop_region(from, static_cast<std::uint32_t>(from.rng.below(from.region_count))));
  }
}

// Folds what `helper` did (it ran beside `c`) into c.
void fold_helper(Context& c, const Tally& h) {
  c.t.extra_heap_high += h.heap_high + h.extra_heap_high;
  c.t.extra_mapped_high += h.mapped_high + h.extra_mapped_high;
  note_heap(c, h.heap, true);
  note_mapped(c, h.mapped);
  for (int k = 0; k < kCallKinds; ++k) c.t.calls[k] += h.calls[k];
  c.t.threads_created += h.threads_created;
}

// A short-lived thread: it gets a few of c's blocks to free, allocates its
// own and exits while c goes on; c joins it and takes what it left.
void run_helper(Context& c) {
  ContextMemory memory;
  Context* h = new_context(c, kHelperBlocks, kHelperRegions, kHelperStackBytes, &memory);
  h->id = __atomic_fetch_add(&g.next_context_id, 1, __ATOMIC_RELAXED);
  h->rng.state = mix(c.rng.next(), 7);
  h->ops = static_cast<std::uint32_t>(h->rng.between(1, 24));
  h->heap_budget = c.heap_budget / 4 + 1;
  h->mapped_budget = c.mapped_budget / 4 + static_cast<std::int64_t>(g_page);
  hand_over(c, *h, static_cast<std::uint32_t>(c.rng.below(8)), static_cast<std::uint32_t>(c.rng.below(2)));
  start_thread(c, h, kHelperStackBytes, helper_main);
  c.t.threads_alive_high = c.t.threads_alive_high < 1 ? 1 : c.t.threads_alive_high;
  // c works on meanwhile (not spawning more).
  const bool could_spawn = c.may_spawn;
  c.may_spawn = false;
  const std::uint32_t own = c.ops;
  c.ops = static_cast<std::uint32_t>(c.rng.below(6));
  run_ops(c);
  c.ops = own;
  c.may_spawn = could_spawn;
  const int error = pthread_join(h->thread, nullptr);
  if (error != 0) die("pthread_join failed", error);
  fold_helper(c, h->t);
  // What the helper left: c frees what does not fit its table.
  while (h->block_count > 0) {
    Block b = drop_block(*h, h->block_count - 1);
    if (c.block_count < c.block_capacity) take_block(c, b);
    else counted_free(c, b);
  }
  while (h->region_count > 0) {
    Region r = drop_region(*h, h->region_count - 1);
    if (c.region_count + 3 <= c.region_capacity) {
      take_region(c, r);
    } else {
      if (munmap(reinterpret_cast<void*>(r.base), r.length) != 0) die("munmap failed");
      if (r.counted) note_mapped(c, -static_cast<std::int64_t>(r.length));
    }
  }
  free_context(c, h, memory, true);
}

// --- one thread's operations ---------------------------------------------------

void failing_call(Context& c) {
  // Calls that fail: the library counts none of them.
  const std::size_t huge = std::size_t{1} << 62;
  switch (c.rng.below(6)) {
    case 0:
      if (malloc(huge) != nullptr) die("malloc(2^62) succeeded");
      break;
    case 1:
      if (calloc(huge, 8) != nullptr) die("calloc overflow succeeded");
      break;
    case 2: {
      void* p = nullptr;
      if (posix_memalign(&p, 24, 64) == 0) die("posix_memalign(24) succeeded");
      break;
    }
    case 3:
      if (c.block_count > 0 && realloc(c.blocks[0].p, huge) != nullptr) die("realloc(2^62) succeeded");
      break;
    case 4:
      if (c.block_count > 0 && reallocarray(c.blocks[0].p, huge, 16) != nullptr) die("reallocarray overflow succeeded");
      break;
    default:
      free(nullptr);  // no call to count
      break;
  }
}

void one_op(Context& c) {
  const std::uint64_t r = c.rng.below(1000);
  const bool full = c.block_count + 1 >= c.block_capacity;
  const bool over = c.held_lower >= c.heap_budget;
  if (c.block_count == 0 || (!full && !over && r < 430)) {
    if (full) return;
    const std::uint64_t k = c.rng.below(100);
    AllocKind kind = k < 52   ? kMalloc
                     : k < 66 ? kCalloc
                     : k < 73 ? kPosixMemalign
                     : k < 80 ? kAlignedAlloc
                     : k < 86 ? kMemalign
                     : k < 90 ? kValloc
                     : k < 93 ? kPvalloc
                     : k < 97 ? kReallocNull
                              : kReallocarrayNull;
    allocate(c, kind, pick_size(c));
  } else if (r < 780 || over || full) {
    counted_free(c, drop_block(c, static_cast<std::uint32_t>(c.rng.below(c.block_count))));
  } else if (r < 900) {
    // A realloc chain: the same block through several sizes.
    const std::uint32_t index = static_cast<std::uint32_t>(c.rng.below(c.block_count));
    const std::uint64_t links = c.rng.between(1, 5);
    for (std::uint64_t i = 0; i < links && index < c.block_count; ++i) {
      const std::uint64_t how = c.rng.below(100);
      const std::size_t now = static_cast<std::size_t>(c.blocks[index].bytes.lower);
      std::size_t next;
      if (how < 45) next = now + 1 + c.rng.below(now + 64);      // grow
      else if (how < 90) next = c.rng.below(now + 1);            // shrink
      else if (how < 95) next = pick_size(c);                    // anywhere
      else next = 0;                                             // frees it
      if (c.held_lower + static_cast<std::int64_t>(next) - static_cast<std::int64_t>(now) > c.heap_budget && next > now) {
        next = now / 2;
      }
      const std::uint32_t before = c.block_count;
      reallocate(c, index, next, c.rng.percent(20));
      if (c.block_count != before) break;  // freed: the chain ends
    }
  } else if (r < 975) {
    const std::uint64_t m = c.rng.below(100);
    if (c.region_count == 0 || m < 40) map_new(c);
    else if (m < 70) unmap_part(c);
    else if (m < 85) remap_region(c);
    else map_fixed_over(c);
  } else if (r < 985) {
    mark(c);
  } else if (r < 990 && c.may_spawn) {
    run_helper(c);
  } else {
    failing_call(c);
  }
}

void run_ops(Context& c) {
  for (std::uint32_t i = 0; i < c.ops; ++i) one_op(c);
}

// --- rounds of threads ---------------------------------------------------------

struct Round {
  pthread_barrier_t start, end;
  std::uint32_t phases = 0;
};

void* worker_main(void* arg) {
  Context& c = *static_cast<Context*>(arg);
  c.dtv_bytes = own_dtv_bytes();
  for (std::uint32_t phase = 0; phase < c.round->phases; ++phase) {
    pthread_barrier_wait(&c.round->start);
    run_ops(c);
    pthread_barrier_wait(&c.round->end);
  }
  return nullptr;
}

// A span ends (every thread of it stopped): the bound it proves, and what it
// did, into the process's figures.
void close_span(Context* const* contexts, std::uint32_t count, std::uint32_t threads_alive) {
  std::int64_t heap_high = 0, mapped_high = 0;
  std::uint32_t alive = threads_alive;
  for (std::uint32_t i = 0; i < count; ++i) {
    Tally& t = contexts[i]->t;
    heap_high += t.heap_high + t.extra_heap_high;
    mapped_high += t.mapped_high + t.extra_mapped_high;
    alive += t.threads_alive_high;
  }
  const std::int64_t heap_bound =
      g.heap.upper + heap_high + kRuntimeAllowance + kRuntimePerThread * static_cast<std::int64_t>(alive);
  if (heap_bound > g.heap_bound) g.heap_bound = heap_bound;
  if (g.mapped + mapped_high > g.mapped_bound) g.mapped_bound = g.mapped + mapped_high;
  if (alive > g.threads_alive_high) g.threads_alive_high = alive;
  for (std::uint32_t i = 0; i < count; ++i) {
    Context& c = *contexts[i];
    g.heap += c.t.heap;
    g.mapped += c.t.mapped;
    for (int k = 0; k < kCallKinds; ++k) g.calls[k] += c.t.calls[k];
    g.threads_created += c.t.threads_created;
    c.t = Tally{};
  }
}

// The main thread's own work between phases is a span of its own.
void close_main_span(std::uint32_t threads_alive) {
  Context* main = &g.main;
  close_span(&main, 1, threads_alive);
}

[[noreturn]] void run_process();
void fork_child(Context* const* parked, std::uint32_t parked_count);

void run_round(std::uint32_t round_index) {
  Rng& rng = g.rng;
  // Threads: 1 to 256, as many few as many.
  const std::uint32_t threads = static_cast<std::uint32_t>(g.calibrate ? 1 : rng.log_between(1, 256));
  const std::uint32_t phases = static_cast<std::uint32_t>(g.calibrate ? 1 : rng.between(1, 4));
  const std::uint64_t budget = (g.calibrate ? 0 : 9000 + rng.below(9000)) >> g.depth;
  std::uint64_t ops = budget / (threads * phases * 2);
  if (ops > 600) ops = 600;

  Block round_memory, table_memory;
  Round* round = new (counted_malloc(g.main, sizeof(Round), &round_memory)) Round();
  round->phases = phases;
  pthread_barrier_init(&round->start, nullptr, threads + 1);
  pthread_barrier_init(&round->end, nullptr, threads + 1);
  Context** workers = static_cast<Context**>(counted_malloc(g.main, threads * sizeof(Context*), &table_memory));
  Block memory_table_block;
  ContextMemory* memory =
      static_cast<ContextMemory*>(counted_malloc(g.main, threads * sizeof(ContextMemory), &memory_table_block));
  const std::int64_t heap_budget = static_cast<std::int64_t>((256u << 20) / threads) + (256 << 10);
  const std::int64_t mapped_budget = static_cast<std::int64_t>((128u << 20) / threads) + (256 << 10);
  for (std::uint32_t i = 0; i < threads; ++i) {
    Context* c = new_context(g.main, kWorkerBlocks, kWorkerRegions, kStackBytes, &memory[i]);
    c->id = g.next_context_id++;
    c->rng.state = mix(g.seed, 1000 * round_index + i);
    c->heap_budget = heap_budget;
    c->mapped_budget = mapped_budget;
    c->may_spawn = !g.calibrate;
    c->round = round;
    workers[i] = c;
    // Blocks and mappings of earlier rounds, for frees in other threads.
    hand_over(g.main, *c, static_cast<std::uint32_t>(rng.below(16)), static_cast<std::uint32_t>(rng.below(3)));
  }
  for (std::uint32_t i = 0; i < threads; ++i) start_thread(g.main, workers[i], kStackBytes, worker_main);
  close_main_span(1 + threads);

  for (std::uint32_t phase = 0; phase < phases; ++phase) {
    for (std::uint32_t i = 0; i < threads; ++i) workers[i]->ops = static_cast<std::uint32_t>(rng.between(ops / 2, ops));
    pthread_barrier_wait(&round->start);
    pthread_barrier_wait(&round->end);
    close_span(workers, threads, 1 + threads);
    // Quiescent: every worker waits at the next barrier with its pending
    // bytes. Blocks and mappings change hands; maybe a fork, a marker.
    for (std::uint32_t i = 0; i < threads; ++i) {
      Context& to = *workers[(i + 1 + rng.below(threads)) % threads];
      if (&to != workers[i]) {
        hand_over(*workers[i], to, static_cast<std::uint32_t>(rng.below(24)), static_cast<std::uint32_t>(rng.below(2)));
      }
    }
    if (g.calibrate || (g.depth < kMaxDepth && g.child_count < kMaxChildren - 1 && rng.percent(30))) {
      fork_child(workers, threads);
    }
    if (rng.percent(50)) mark(g.main);
    close_main_span(1 + threads);
  }
  for (std::uint32_t i = 0; i < threads; ++i) {
    const int error = pthread_join(workers[i]->thread, nullptr);
    if (error != 0) die("pthread_join failed", error);
  }
  // Everything the workers held goes to the main thread.
  for (std::uint32_t i = 0; i < threads; ++i) {
    Context* c = workers[i];
    while (c->block_count > 0) {
      Block b = drop_block(*c, c->block_count - 1);
      if (g.main.block_count < g.main.block_capacity) take_block(g.main, b);
      else counted_free(g.main, b);
    }
    while (c->region_count > 0) take_region(g.main, drop_region(*c, c->region_count - 1));
    free_context(g.main, c, memory[i], true);
  }
  counted_free(g.main, memory_table_block);
  counted_free(g.main, table_memory);
  pthread_barrier_destroy(&round->start);
  pthread_barrier_destroy(&round->end);
  round->~Round();
  counted_free(g.main, round_memory);
  close_main_span(1);
}

// --- the designed peak -----------------------------------------------------------

// The main thread alone (every other thread joined) allocates and maps
// beyond every bound so far: the process's true peak of heap, of mapped
// memory and of their sum is this moment, whatever the interleavings were.
// The last few MiB come in small blocks, so that in the batched precision
// up to a threshold of them is still pending at the peak (and the free of
// the first large block afterwards publishes them only net of it): the
// reported peak then really is the stated bound's business.
void designed_peak() {
  mark("peak");  // before the peak: a marker publishes the caller's pending bytes
  close_main_span(1);
  Context& c = g.main;
  const std::uint32_t first = c.block_count;
  const std::int64_t tail = static_cast<std::int64_t>(g.rng.below(4 << 20));
  // Requests until even their lower estimate clears the upper bound.
  std::int64_t lower = g.heap.lower;
  bool reached = true;
  while (lower <= g.heap_bound) {
    const std::int64_t need = g.heap_bound - lower + 1;
    std::int64_t request = need > tail ? need - tail : static_cast<std::int64_t>(g.rng.between(1, 8192));
    if (request > kMaxBlock) request = kMaxBlock;
    if (request > need) request = need;
    void* p = c.block_count < c.block_capacity ? malloc(static_cast<std::size_t>(request)) : nullptr;
    if (p == nullptr) {
      reached = false;
      break;
    }
    take_block(c, counted_block(c, p, static_cast<std::size_t>(request), 0));
    lower += request;
  }
  // It ends with the smallest chunks, which publish on their own only when
  // every change does: an exact run whose threshold is not 1 misses them.
  for (std::uint64_t tiny = g.rng.between(1, 3); reached && tiny > 0; --tiny) {
    const std::size_t request = g.rng.between(1, 24);
    void* p = c.block_count < c.block_capacity ? malloc(request) : nullptr;
    if (p == nullptr) {
      reached = false;
      break;
    }
    take_block(c, counted_block(c, p, request, 0));
  }
  // And a mapping beyond the mapped bound.
  std::int64_t map_bytes = g.mapped_bound - g.mapped + static_cast<std::int64_t>(g_page);
  void* region = mmap(nullptr, static_cast<std::size_t>(map_bytes), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) {
    reached = false;
    map_bytes = 0;
  } else {
    note_mapped(c, map_bytes);
  }
  g.peak_heap = g.heap.actual + c.t.heap.actual;
  g.peak_mapped = g.mapped + c.t.mapped;
  g.peak_designed = reached;
  if (map_bytes != 0) {
    if (munmap(region, static_cast<std::size_t>(map_bytes)) != 0) die("munmap failed");
    note_mapped(c, -map_bytes);
  }
  while (c.block_count > first) counted_free(c, drop_block(c, first));
  close_main_span(1);
}

// After the peak: frees, shrinks and unmaps, and small allocations that
// stay below it, by the main thread (blocks of every thread).
void final_phase() {
  Context& c = g.main;
  // A burst of markers, each a sample of its own whatever the interval: the
  // timeline fills and merges pairwise a few times while the peak's sample
  // is in it (a merge must keep the larger maximum of a pair).
  for (std::uint64_t burst = 6000 + g.rng.below(6000); burst > 0; --burst) mark_in_sequence(c);
  const std::uint64_t steps = g.rng.below(200);
  for (std::uint64_t i = 0; i < steps && c.block_count > 0; ++i) {
    const std::uint64_t r = g.rng.below(100);
    if (r < 55) {
      counted_free(c, drop_block(c, static_cast<std::uint32_t>(g.rng.below(c.block_count))));
    } else if (r < 70) {
      const std::uint32_t index = static_cast<std::uint32_t>(g.rng.below(c.block_count));
      reallocate(c, index, g.rng.below(static_cast<std::uint64_t>(c.blocks[index].bytes.lower) + 1), g.rng.percent(20));
    } else if (r < 85 && c.region_count > 0) {
      unmap_part(c);
    } else if (g.heap.upper + c.t.heap.upper + 8192 + 4096 < g.heap_bound && c.block_count < c.block_capacity) {
      allocate(c, kMalloc, g.rng.between(1, 4096));
    }
  }
  // Free everything sometimes: a final of just the runtime's bytes.
  if (g.rng.percent(10)) {
    while (c.block_count > 0) counted_free(c, drop_block(c, c.block_count - 1));
  }
  close_main_span(1);
}

// --- the truth ---------------------------------------------------------------------

char g_truth[64 * 1024];

void wait_children() {
  for (int i = 0; i < g.child_count; ++i) {
    int status = 0;
    while (waitpid(g.children[i].pid, &status, 0) < 0) {
      if (errno != EINTR) die("waitpid failed");
    }
    g.children[i].status = status;
  }
}

void write_truth(bool exec_into) {
  close_main_span(1);
  Text t(g_truth, sizeof g_truth);
  t.add("{\"format\":\"heapline-oracle-truth/1\",\"pid\":%d,\"ppid\":%d,\"image\":%d,\"role\":\"%s\",", getpid(),
        getppid(), g.image, g.role);
  t.add("\"seed\":%llu,\"depth\":%d,\"exec_into\":%s,\"calibrate\":%s,\n", static_cast<unsigned long long>(g.seed),
        g.depth, exec_into ? "true" : "false", g.calibrate ? "true" : "false");
  t.add("\"heap\":{\"final\":%lld,\"final_lower\":%lld,\"final_upper\":%lld,\"peak\":%lld,\"peak_designed\":%s,"
        "\"inherited\":%lld,\"bound\":%lld},\n",
        static_cast<long long>(g.heap.actual), static_cast<long long>(g.heap.lower),
        static_cast<long long>(g.heap.upper), static_cast<long long>(g.peak_heap), g.peak_designed ? "true" : "false",
        static_cast<long long>(g.inherited_heap.actual), static_cast<long long>(g.heap_bound));
  t.add("\"mapped\":{\"final\":%lld,\"peak\":%lld,\"inherited\":%lld},\n", static_cast<long long>(g.mapped),
        static_cast<long long>(g.peak_mapped), static_cast<long long>(g.inherited_mapped));
  t.add("\"calls\":{\"alloc\":%llu,\"free\":%llu,\"realloc\":%llu},", static_cast<unsigned long long>(g.calls[kAlloc]),
        static_cast<unsigned long long>(g.calls[kFree]), static_cast<unsigned long long>(g.calls[kRealloc]));
  t.add("\"threads_created\":%llu,\"threads_alive_high\":%u,\"parked_at_fork\":%u,\"parked_runtime_bytes\":%lld,\n",
        static_cast<unsigned long long>(g.threads_created), g.threads_alive_high, g.parked_at_fork,
        static_cast<long long>(g.parked_runtime_bytes));
  t.add("\"markers\":[");
  std::uint32_t markers = g.markers_claimed.load(std::memory_order_relaxed);
  if (markers > kKeptMarkers) markers = kKeptMarkers;
  for (std::uint32_t i = 0; i < markers; ++i) t.add(i == 0 ? "\"%s\"" : ",\"%s\"", g.marker_names[i]);
  t.add("],\n\"children\":[");
  for (int i = 0; i < g.child_count; ++i) {
    const Child& child = g.children[i];
    t.add(i == 0 ? "" : ",");
    t.add("{\"index\":%d,\"pid\":%d,\"kind\":\"%s\",\"status\":%d}", i, child.pid, child.kind, child.status);
  }
  t.add("]}\n");
  char path[4096], temporary[4200];
  snprintf(path, sizeof path, "%s/truth.%d.%d.json", g.dir, getpid(), g.image);
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  const int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("cannot create the truth file");
  write_all(fd, t.data(), t.size());
  if (close(fd) != 0 || rename(temporary, path) != 0) die("cannot write the truth file");
}

// --- exec ------------------------------------------------------------------------

[[noreturn]] void exec_self(std::uint64_t seed, int depth, int image, const char* role) {
  char seed_text[32], depth_text[16], image_text[16];
  snprintf(seed_text, sizeof seed_text, "%llu", static_cast<unsigned long long>(seed));
  snprintf(depth_text, sizeof depth_text, "%d", depth);
  snprintf(image_text, sizeof image_text, "%d", image);
  const char* argv[] = {"oracle_workload", g.calibrate ? "--calibrate-exec" : "--seed", seed_text, "--dir", g.dir,
                        "--depth", depth_text, "--image", image_text, "--role", role, nullptr};
  execv("/proc/self/exe", const_cast<char* const*>(argv));
  die("execv failed");
}

// --- fork ------------------------------------------------------------------------

// A fork at a quiescent point of a round: `parked` workers wait at a barrier
// with their pending bytes, which the child inherits with everything else.
// The child runs a workload of its own (or execs this program with another
// seed) and exits; the parent waits for it at its end.
void fork_child(Context* const* parked, std::uint32_t parked_count) {
  const std::uint64_t child_seed = mix(g.seed, 0xf0 + static_cast<std::uint64_t>(g.child_count));
  const bool exec_after = g.calibrate ? g.child_count == 1 : g.rng.percent(30);
  close_main_span(1 + parked_count);
  const pid_t pid = fork();
  if (pid < 0) die("fork failed");
  if (pid > 0) {
    Child& child = g.children[g.child_count++];
    child.pid = pid;
    snprintf(child.kind, sizeof child.kind, "%s", exec_after ? "exec" : "fork");
    child.status = -1;
    return;
  }
  // The child: only this thread exists now; everything the parent held is
  // its starting point.
  g.role = "fork";
  g.seed = child_seed;
  g.depth++;
  g.image = 0;
  g.rng.state = mix(child_seed, 1);
  g.inherited_heap = g.heap;
  g.inherited_mapped = g.mapped;
  g.parked_at_fork = parked_count;
  g.parked_runtime_bytes = 0;
  for (std::uint32_t i = 0; i < parked_count; ++i) g.parked_runtime_bytes += parked[i]->dtv_bytes;
  for (int k = 0; k < kCallKinds; ++k) g.calls[k] = 0;
  g.threads_created = 0;
  g.threads_alive_high = 1;
  g.child_count = 0;
  g.markers_claimed.store(0, std::memory_order_relaxed);
  g.thread_markers.store(0, std::memory_order_relaxed);
  g.heap_bound = g.heap.upper;
  g.mapped_bound = g.mapped;
  g.peak_heap = g.heap.actual;
  g.peak_mapped = g.mapped;
  g.peak_designed = false;
  if (exec_after) {
    // fork + exec: this image only says so.
    write_truth(true);
    exec_self(mix(child_seed, 2), g.depth, 1, "exec");
  }
  // The parked threads do not exist here: what they held is the main
  // thread's now (their tables are inherited memory), to free in threads
  // that never saw it allocated.
  for (std::uint32_t i = 0; i < parked_count; ++i) {
    Context& c = *parked[i];
    while (c.block_count > 0 && g.main.block_count < g.main.block_capacity) {
      take_block(g.main, drop_block(c, c.block_count - 1));
    }
    while (c.region_count > 0 && g.main.region_count + 3 <= g.main.region_capacity) {
      take_region(g.main, drop_region(c, c.region_count - 1));
    }
  }
  run_process();
}

// --- the process ------------------------------------------------------------------

// Waits for the children, then writes the truth and exits, or execs this
// program with another seed (the same pid: the new image's report is the
// pid's).
[[noreturn]] void finish() {
  wait_children();
  const bool exec_at_end = !g.calibrate && g.depth < kMaxDepth && g.image + 1 < kMaxImages && g.rng.percent(15);
  if (exec_at_end) {
    write_truth(true);
    exec_self(mix(g.seed, 0xe0), g.depth + 1, g.image + 1, "exec");
  }
  write_truth(false);
  if (!g.calibrate && strcmp(g.role, "fork") == 0 && g.rng.percent(30)) _exit(0);  // the library's _exit writes the report
  exit(0);
}

[[noreturn]] void run_process() {
  if (!g.calibrate) {
    const std::uint32_t rounds = static_cast<std::uint32_t>(g.rng.between(1, 3));
    for (std::uint32_t r = 0; r < rounds; ++r) run_round(r);
    designed_peak();
    final_phase();
  } else if (strcmp(g.role, "root") == 0) {
    run_round(0);  // one thread; a fork while it waits; then a fork that execs
    fork_child(nullptr, 0);
  }
  finish();
}

void usage() {
  const char text[] =
      "usage: oracle_workload --seed S --dir DIR [--depth D --image I --role root|fork|exec]\n"
      "       oracle_workload --calibrate --dir DIR\n";
  write_all(2, text, sizeof text - 1);
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  // Chunk sizes must not depend on what was freed before: a fixed mapping
  // threshold (glibc otherwise raises it as mapped blocks are freed).
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold));
  g_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (strcmp(argv[i], "--seed") == 0 && has_value) {
      g.seed = strtoull(argv[++i], nullptr, 10);
      have_seed = true;
    } else if (strcmp(argv[i], "--calibrate") == 0) {
      g.calibrate = true;
      have_seed = true;
    } else if (strcmp(argv[i], "--calibrate-exec") == 0 && has_value) {
      g.calibrate = true;
      g.seed = strtoull(argv[++i], nullptr, 10);
      have_seed = true;
    } else if (strcmp(argv[i], "--dir") == 0 && has_value) {
      g.dir = argv[++i];
    } else if (strcmp(argv[i], "--depth") == 0 && has_value) {
      g.depth = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--image") == 0 && has_value) {
      g.image = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--role") == 0 && has_value) {
      g.role = argv[++i];
    } else {
      usage();
    }
  }
  if (!have_seed || g.dir == nullptr) usage();
  g.rng.state = mix(g.seed, 0);
  g.self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (g.self_fd >= 0 && fstat(g.self_fd, &info) == 0) g.self_size = static_cast<std::size_t>(info.st_size);
  // The main thread's tables.
  Context& c = g.main;
  c.id = 0;
  c.rng.state = mix(g.seed, 3);
  Block ignored;
  c.blocks = static_cast<Block*>(counted_malloc(c, kMainBlocks * sizeof(Block), &ignored));
  c.block_capacity = kMainBlocks;
  c.regions = static_cast<Region*>(counted_malloc(c, kMainRegions * sizeof(Region), &ignored));
  c.region_capacity = kMainRegions;
  c.heap_budget = 64 << 20;
  c.mapped_budget = 64 << 20;
  close_main_span(1);
  run_process();
}
