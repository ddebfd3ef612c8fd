// The heap sampler: which call sites hold the heap (docs/design.md, "The
// heap sampler"). Off the hot path except for the byte meter.
//
// Sampling by bytes, as tcmalloc and jemalloc do. Each thread keeps a meter
// of the bytes left before its next sample, drawn from an exponential
// distribution with mean M (HEAPLINE_SAMPLE=BYTES, or off); an allocation
// subtracts its size, and the one that turns the meter negative is sampled:
// its stack is captured (stack_capture.h) and it joins the live sampled set
// until it is freed. So a block of s bytes is sampled with probability
// 1 - exp(-s/M), whatever came before it.
//
// How a free finds a sampled block without a lookup on every free. With
// glibc, a sampled block is served from a glibc block 16 bytes larger (an
// aligned one's: its alignment larger), and the program gets the pointer
// that far in: the word before it, where glibc's chunk header would be,
// holds kSampledChunkMarker (2^60, no real chunk's size), the word before
// that the block's tag (its index in the live set, and how far in it is).
// Every path that already reads the chunk header (malloc's and free's
// accounting, realloc, malloc_usable_size) thus sees a size so large that
// the threshold test it makes anyway sends the call to its slow path, which
// tells the marker apart: nothing is added to the hot path of free. A
// foreign allocator's blocks have no header of heapline's to mark: its
// sampled blocks are found in a hash table, looked up only while it holds
// any (foreign_sampled_count()).
#pragma once

#include <cstddef>
#include <cstdint>

#include "arch.h"
#include "heapline/profile_format.h"
#include "next_allocator.h"

#pragma GCC visibility push(hidden)
namespace heapline::sampler {

// What a marked block's chunk header reads (chunk sizes lose their three
// flag bits: the marker has none).
constexpr std::int64_t kSampledChunkMarker = std::int64_t{1} << 60;
// The prefix of a block served by malloc or calloc: the two words before
// the program's pointer. An aligned block's prefix is its alignment (at
// least 16: the two words fit in it, and the pointer keeps the alignment).
constexpr std::size_t kPrefixBytes = 16;

// Bytes left before this thread's next sample. Zero at a thread's start:
// its first allocation takes the slow path, which draws the first distance.
extern __thread std::int64_t t_meter __attribute__((tls_model("initial-exec")));

// Set while this thread captures a stack (libunwind runs). The mapping
// calls libunwind makes meanwhile are forwarded without mapped_memory.h's
// lock (mapped::map, unmap): a mapping call of the program holds that lock
// while it samples, and so waits for libunwind's locks; libunwind built
// with .debug_frame support (Debian's arm64 one) maps and unmaps ELF files
// while it holds them, and a capture there that waited for the mapping
// lock would close the cycle (the differential oracle's threads hung so).
// Its mappings are heapline's own, never counted: forwarding them changes
// no figure.
extern __thread bool t_capturing __attribute__((tls_model("initial-exec")));
inline bool capturing() { return t_capturing; }

// `t_meter -= bytes`, and whether it turned negative, in one change (arch.h)
// (a signal handler's allocation between the two cannot be lost).
inline bool meter_runs_out(std::size_t bytes) { return arch::in_place::subtract_turns_negative(t_meter, bytes); }

// HEAPLINE_SAMPLE, from the process's settings (read_process_settings,
// config.h: the allocator's resolution asks first): the mean M in bytes, 0
// when off.
std::uint64_t mean_bytes();
inline bool enabled() { return mean_bytes() != 0; }

// --- glibc ---------------------------------------------------------------
// Whether `p` (a block the program holds) is a marked sampled block.
inline bool is_marked(const void* p) {
  return static_cast<std::int64_t>(glibc_chunk_size(p)) == kSampledChunkMarker;
}
// The word before the marker, the block's tag: the distance from the glibc
// block under it to the program's pointer (the prefix, high half) and its
// record in the live set (low half).
inline std::uint64_t tag_of(const void* p) { return static_cast<const std::uint64_t*>(p)[-2]; }
inline std::uint64_t make_tag(std::size_t prefix, std::uint32_t record) {
  return static_cast<std::uint64_t>(prefix) << 32 | record;
}
inline std::size_t prefix_of(const void* p) { return static_cast<std::size_t>(tag_of(p) >> 32); }
inline std::uint32_t record_of(const void* p) { return static_cast<std::uint32_t>(tag_of(p)); }
// The glibc block under a marked one.
inline void* underlying(void* p) { return static_cast<char*>(p) - prefix_of(p); }
// A marked block whose tag holds kOwnRecord instead of a record's index is
// the library's own: what the loader allocates while a thread captures a
// stack (libunwind's per-thread state, its thread-local storage, which
// glibc keeps with the thread's stack), and what anything allocates then.
// It counts nothing: neither its bytes nor its calls are the program's.
constexpr std::uint32_t kOwnRecord = UINT32_MAX;
inline bool is_own(const void* p) { return record_of(p) == kOwnRecord; }
// The same for any block the program holds, marked or not.
inline bool is_own_block(const void* p) { return is_marked(p) && is_own(p); }
// The bytes the heap figure counts for a marked block: its glibc chunk
// less heapline's prefix (32 at least, glibc's smallest chunk), what the
// block would have counted unsampled; 0 for the library's own. The prefix
// is heapline's, not the program's; and a program's figures do not move
// with the sampling.
inline std::int64_t marked_bytes(void* p) {
  if (is_own(p)) return 0;
  const std::int64_t chunk =
      static_cast<std::int64_t>(glibc_chunk_size(underlying(p))) - static_cast<std::int64_t>(prefix_of(p));
  return chunk > 32 ? chunk : 32;
}
// The same for any glibc block the program holds, marked or not.
inline std::int64_t counted_bytes(void* p) {
  return is_marked(p) ? marked_bytes(p) : static_cast<std::int64_t>(glibc_chunk_size(p));
}

// An allocation as the program asked glibc for it: which function, and its
// arguments (calloc's count and size multiplied, without overflow).
enum class GlibcCall : std::uint8_t { kMalloc, kCalloc, kMemalign, kPosixMemalign, kAlignedAlloc, kValloc, kPvalloc };
struct GlibcRequest {
  GlibcCall call;
  std::size_t alignment;  // the aligned family's (valloc's and pvalloc's: ignored)
  std::size_t size;
};

// The meter ran out on `request`: a sampled block (marked), or an ordinary
// one when no sample can be taken now, or the library's own (kOwnRecord)
// while this thread samples (the meter is held negative then, so that
// every allocation comes here). NULL as glibc's function fails, with its
// errno; *error gets posix_memalign's result (0 for the others).
void* allocate_sampled(const GlibcRequest& request, int* error);
inline void* allocate_sampled(std::size_t size, bool zeroed) {
  int error;
  return allocate_sampled({zeroed ? GlibcCall::kCalloc : GlibcCall::kMalloc, 0, size}, &error);
}
// realloc(p, size) where p is marked or the meter ran out: the block
// moved into a new one (sampled when `sample` is set, else ordinary), its
// bytes copied. *old_chunk gets the glibc chunk bytes that went (0 when p
// was NULL), *new_chunk those that came (0 on failure). Follows glibc's
// realloc for NULL, size 0 and failure.
void* reallocate_sampled(void* p, std::size_t size, bool sample, std::int64_t* old_chunk, std::int64_t* new_chunk);
// A marked block leaves the live set; returns its counted bytes
// (marked_bytes) and frees it.
std::int64_t free_marked(void* p);
// malloc_usable_size of a marked block.
std::size_t usable_size_marked(void* p);

// --- a foreign allocator ------------------------------------------------
// How many foreign blocks the sampler knows (sampled, or its own): a
// foreign free looks its block up only when this is not 0.
std::size_t foreign_sampled_count();
// Whose a foreign block is: the program's (counted), or the library's own,
// allocated while this thread samples (libunwind's, the loader's for it):
// never counted, in or out.
enum class ForeignBlock { kProgram, kOwn };
// A foreign block just allocated, the meter having run out: sampled (it
// joins the live set), or, while this thread samples (the meter is held
// negative then, so every allocation comes here), kept as the library's
// own: the caller then counts nothing for it. `bytes`: what the heap
// figure counts for it.
ForeignBlock note_foreign_allocation(void* p, std::size_t size, std::int64_t bytes);
// A foreign block about to be freed or moved: leaves the live set if it
// was sampled; kOwn when it was the library's own (the caller counts
// nothing, and a realloc's new block is kept as its own with keep_own_foreign).
ForeignBlock forget_foreign(void* p);
// Keeps `p` as the library's own; false when it cannot (no room, or the
// sampler's lock is busy): then it is counted as the program's.
bool keep_own_foreign(void* p);

// --- mapped memory ---------------------------------------------------------
// Anonymous private memory the mapped series counts (mapped_memory.h) is
// metered like the heap: each range that starts to count (a mapping, a
// mapping grown by mremap) subtracts its bytes from the same meter, and the
// one that runs it out is sampled with its stack; the sampled part of a
// range follows unmaps, shrinks and moves. Each is called with the mapping
// layer's lock held (one change at a time).
// [begin, end) counts from now on.
void mapping_added(std::uintptr_t begin, std::uintptr_t end);
// [begin, end) counts no more (unmapped, replaced, shrunk away).
void mapping_removed(std::uintptr_t begin, std::uintptr_t end);
// [old_begin, old_end) moved to new_begin (mremap); what lies past new_end
// went.
void mapping_moved(std::uintptr_t old_begin, std::uintptr_t old_end, std::uintptr_t new_begin, std::uintptr_t new_end);

// --- profiles --------------------------------------------------------------
// A new peak of the heap or of heap + mapped (`heap` and `mapped` then) was
// published (sampling.cpp): snapshots the live set into `target` (the live
// file's peak profile) when heap + mapped is this phase's largest and has
// risen by more than 1/128 of itself since the latest snapshot.
// Never waits: when another thread holds the sampler, the next publish
// above tries again. `t_ns`: since the start.
void peak_raised(ProfileSnapshot& target, std::int64_t heap, std::int64_t mapped, std::uint64_t t_ns);
// heapline_reset_peak(): the next phase peak gets its own snapshot.
void phase_reset();
// The live set now, as a profile (the exit's: what was never freed).
void snapshot_now(ProfileSnapshot& out, std::int64_t heap_bytes, std::int64_t mapped_bytes, std::uint64_t t_ns);
// Counts for the report.
struct Totals {
  std::uint64_t samples;     // sampled blocks, ever
  std::uint64_t dropped;     // allocations the meter chose but the set could not take
  std::uint64_t live;        // sampled blocks live now
  std::uint64_t stacks;      // distinct stacks recorded
  std::uint64_t snapshots;   // peak profiles taken
};
Totals totals();
// "libunwind", or "none" when libunwind8 could not be loaded (stacks are then
// empty).
const char* unwinder_name();
std::uint64_t live_capacity();
std::uint64_t stack_capacity();

// The library's constructor: loads the unwinder (never from an allocation
// call: dlopen may wait for the loader's lock); the first capture sets it
// up.
void load_unwinder();
// A fork child: the sampler's lock as if no thread held it, and the
// unwinder given up if the fork came while another thread set it up.
void after_fork_in_child();

}  // namespace heapline::sampler
#pragma GCC visibility pop
