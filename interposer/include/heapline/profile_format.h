// A heap profile: the sampled call sites that held the heap at one moment
// (the peak, or the exit), shared by its writers and its reader.
//
//  - libheapline.so aggregates its live sampled blocks by stack into a
//    ProfileSnapshot (docs/design.md, "The heap sampler"): at each new peak
//    into the live file (LiveRegion::peak_profile, so a killed process still
//    has it), and at exit into static memory;
//  - the heapline/1 report writes a snapshot as JSON (`peak_profile`,
//    `exit_profile`) with write_profile_json, the same function for the
//    library at exit and for `heapline convert`;
//  - the launcher reads that JSON back with read_profile
//    (heapline/profile_reader.h) and symbolizes it offline.
//
// Frames are kept as (module, address within the module's ELF image), the
// module named by its path and its GNU build id: they resolve after the
// process has gone, whatever address space layout it had.
//
// Everything here is plain data with fixed capacities (it lives in a
// MAP_SHARED file and in the library's static memory: no pointers, no
// allocation), native byte order, x86-64.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapline {

constexpr std::size_t kProfileFrames = 32;      // frames kept per stack, innermost first
constexpr std::size_t kProfileSites = 64;       // the top K sites; the rest is "other"
constexpr std::size_t kProfileModules = 64;     // modules the top sites' frames are in
constexpr std::size_t kProfilePathBytes = 512;  // a module's path, NUL-terminated (longer: cut)
constexpr std::size_t kProfileBuildIdBytes = 20;
// A frame in no module the writer could name: `address` is the raw one.
constexpr std::uint32_t kProfileNoModule = 0xffffffffu;

struct ProfileFrame {
  std::uint32_t module = kProfileNoModule;  // index into ProfileSnapshot::modules
  std::uint32_t reserved = 0;
  // The return address (or, for the innermost frame, the call's own
  // address) as a virtual address of the module's ELF file: the run-time
  // address minus the module's load bias.
  std::uint64_t address = 0;
};
static_assert(sizeof(ProfileFrame) == 16);

// What a site's stack did: allocate heap blocks, or map anonymous memory
// (mmap, mremap: the mapped series' bytes).
enum ProfileSiteKind : std::uint32_t { kProfileSiteHeap = 0, kProfileSiteMapped = 1 };

// One site: the blocks of one stack that were live and sampled.
struct ProfileSite {
  double bytes = 0;     // the estimate: the sum of the sampled blocks' weights
  double variance = 0;  // its estimated variance (bytes^2)
  std::uint64_t samples = 0;
  std::uint64_t sampled_bytes = 0;  // the sampled blocks' own sizes, summed
  std::uint32_t frame_count = 0;
  std::uint32_t kind = kProfileSiteHeap;  // ProfileSiteKind (0 in files written before it)
  ProfileFrame frames[kProfileFrames] = {};
};
static_assert(sizeof(ProfileSite) == 40 + 16 * kProfileFrames);

struct ProfileModule {
  char path[kProfilePathBytes] = {};
  std::uint8_t build_id[kProfileBuildIdBytes] = {};
  std::uint32_t build_id_bytes = 0;  // 0: the module carries none
};
static_assert(sizeof(ProfileModule) == kProfilePathBytes + 24);

// Why a profile is empty or partial, as the report says it.
enum ProfileState : std::uint32_t {
  kProfileNone = 0,     // never taken (sampling off, or no sample yet)
  kProfileTaken = 1,
};

struct ProfileSnapshot {
  // Odd while the writer updates the rest (a reader of the live file copies
  // until it reads the same even value before and after).
  std::atomic<std::uint64_t> seq{0};
  std::uint32_t state = kProfileNone;
  std::uint32_t site_count = 0;    // sites[0, site_count), largest first
  std::uint32_t module_count = 0;  // modules[0, module_count)
  std::uint32_t reserved = 0;
  std::uint64_t time_ns = 0;        // when, since the process's start
  std::int64_t heap_bytes = 0;      // the published live heap at that moment
  std::uint64_t mean_bytes = 0;     // the sampler's mean distance between samples
  std::uint64_t live_samples = 0;   // sampled blocks live at that moment
  std::uint64_t stacks = 0;         // distinct stacks among them
  double total_bytes = 0;           // the estimate of all sampled sites together
  double total_variance = 0;
  ProfileSite other;                // the sites past the top K, summed (no frames)
  std::uint64_t other_sites = 0;    // how many
  // The mapped memory counted at that moment (0 in files written before it):
  // the profile's moment is the peak of heap + mapped.
  std::int64_t mapped_bytes = 0;
  std::uint64_t reserved2[6] = {};
  ProfileModule modules[kProfileModules];
  ProfileSite sites[kProfileSites];
};
// The snapshot is part of the live file (LiveRegion::peak_profile), whose
// reader tells versions apart by size: any change of this layout is a new
// live-file version, never a silent one.
static_assert(offsetof(ProfileSnapshot, other) == 80);
static_assert(offsetof(ProfileSnapshot, modules) == 696);
static_assert(offsetof(ProfileSnapshot, sites) == 696 + kProfileModules * sizeof(ProfileModule));
static_assert(sizeof(ProfileSnapshot) == 70328);

// The estimator (docs/design.md, "The estimator"): a block of `size` bytes
// is sampled with probability p = 1 - exp(-size / mean); a sampled block
// stands for `chunk / p` bytes (chunk: the bytes the heap figure counts for
// it), with variance chunk^2 (1 - p) / p^2. Reported errors are three
// standard errors: a profile states several sites at once, and two (95%
// each) would leave one of them outside its error in one run of three or
// four; with three, about one run in a hundred.
constexpr double kProfileErrorSigmas = 3.0;

}  // namespace heapline

namespace heapline {

// The sampler's part of a heapline/1 report ("sampling", "peak_profile",
// "exit_profile"): what write_profile_json writes. Profiles without
// kProfileTaken are written as null.
struct SamplingReport {
  std::uint64_t mean_bytes = 0;   // 0: sampling off ("sampling": {"mean_bytes": 0}, no profiles)
  const char* unwinder = "none";  // "libunwind" or "none"
  // The functions whose blocks the sampler meters ("entry_points"; none
  // written when null: a live file's conversion does not know them).
  const char* const* entry_points = nullptr;
  std::size_t entry_point_count = 0;
  std::uint64_t samples = 0;      // blocks sampled over the run
  std::uint64_t dropped = 0;      // blocks the meter chose that the live set could not take
  std::uint64_t live_capacity = 0;
  std::uint64_t stack_capacity = 0;
  std::uint64_t snapshots = 0;    // peak profiles taken
  const ProfileSnapshot* peak_profile = nullptr;
  const ProfileSnapshot* exit_profile = nullptr;
};

}  // namespace heapline
