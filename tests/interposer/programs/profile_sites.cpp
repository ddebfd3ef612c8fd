// Known call sites for the heap sampler's tests (tests/interposer/profile_test.cpp,
// tools/profile_accuracy.sh). At the peak, site_a holds 60 MiB, site_b 30 MiB
// and site_c 10 MiB, split over 4 threads; before it, site_d allocates and
// frees 500 MiB (holding at most 50 MiB at once); after it, everything is
// freed and site_e leaks 8 MiB, which only the exit profile holds.
//
// It prints what each site held at the peak, as the heap figure counts it:
// "a_usable=N a_blocks=N ..." (the sum of malloc_usable_size over the
// site's blocks, and their number: glibc counts usable + 8 per block, a
// foreign allocator its usable size). glibc's mmap threshold is raised
// so that no block of these sizes is mmapped (whose chunk is page-rounded).
//
// It also prints where its functions start, as addresses in its ELF file
// ("fn_site_a=N ..."), so that a test can tell which function a profile's
// frame is in without a symbolizer.
//
//   profile_sites [threads|fork] [hold|FUNCTION]
//     fork: all of it in a forked child; hold: print "peak" at the peak
//     and wait there to be killed; FUNCTION (memalign, posix_memalign,
//     aligned_alloc, valloc, pvalloc): every other block of sites A and B
//     comes from it instead of malloc, through aligned_block (so 45 of the
//     100 MiB), and "a_aligned_usable=N a_aligned_blocks=N ..." say what
//     those blocks held at the peak.
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 64;  // the sites grow in this many steps, together
constexpr std::size_t kMiB = 1024 * 1024;

pthread_barrier_t g_allocated, g_peak_seen;

struct Held {
  std::atomic<std::uint64_t> usable{0}, blocks{0};
};
Held g_held[3];     // a, b, c: every block of the site
Held g_aligned[3];  // the same, only the blocks from aligned_block

// The aligned function that serves every other block of sites A and B
// (none: malloc serves them all).
enum class Through { kMalloc, kMemalign, kPosixMemalign, kAlignedAlloc, kValloc, kPvalloc };
Through g_through = Through::kMalloc;

// A block from the aligned function: a frame of its own on the block's
// stack, so that a test tells these blocks apart from the site's others.
[[gnu::noipa]] void* aligned_block(std::size_t size) {
  void* p = nullptr;
  switch (g_through) {
    case Through::kMalloc:
      return std::malloc(size);
    case Through::kMemalign:
      return memalign(64, size);
    case Through::kPosixMemalign:
      return posix_memalign(&p, 128, size) == 0 ? p : nullptr;
    case Through::kAlignedAlloc:
      return aligned_alloc(256, (size + 255) & ~std::size_t{255});
    case Through::kValloc:
      return valloc(size);
    case Through::kPvalloc:
      return pvalloc(size);
  }
  return nullptr;
}

// Each site's blocks, kept in an array of its own (the array itself is
// allocated with malloc by the caller, outside the sites).
struct Blocks {
  void** pointers;
  std::size_t count = 0;
  bool* aligned = nullptr;  // which blocks came from aligned_block (sites A and B)
};

// The site's next block: every other one from aligned_block when an
// aligned function is chosen.
inline void* site_block(Blocks& blocks, std::size_t size) {
  const bool aligned = g_through != Through::kMalloc && blocks.aligned != nullptr && blocks.count % 2 == 1;
  void* p = aligned ? aligned_block(size) : std::malloc(size);
  if (blocks.aligned != nullptr) blocks.aligned[blocks.count] = aligned;
  return p;
}

void touch(void* p, std::size_t size) { std::memset(p, 1, size < 64 ? size : 64); }

// Blocks of mixed sizes (1 KiB to 256 KiB), so the estimator meets
// blocks both small and large beside the mean.
[[gnu::noipa]] void site_a(Blocks& blocks, std::size_t bytes, std::uint64_t seed) {
  std::size_t held = 0;
  while (held < bytes) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    std::size_t size = 1024u << ((seed >> 33) % 9);
    if (size > bytes - held) size = bytes - held;
    void* p = site_block(blocks, size);
    touch(p, size);
    blocks.pointers[blocks.count++] = p;
    held += size;
  }
}

// 4 KiB blocks.
[[gnu::noipa]] void site_b(Blocks& blocks, std::size_t bytes) {
  for (std::size_t held = 0; held < bytes; held += 4096) {
    void* p = site_block(blocks, 4096);
    touch(p, 4096);
    blocks.pointers[blocks.count++] = p;
  }
}

// 96-byte blocks from calloc: many blocks far below the mean.
[[gnu::noipa]] void site_c(Blocks& blocks, std::size_t bytes) {
  for (std::size_t held = 0; held < bytes; held += 96) blocks.pointers[blocks.count++] = std::calloc(1, 96);
}

// 500 MiB in 10 rounds of 50 MiB held and freed, 64 KiB blocks grown by realloc.
[[gnu::noipa]] void site_d(std::size_t bytes_per_round, int rounds) {
  std::vector<void*> held;
  held.reserve(bytes_per_round / 65536 + 1);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t h = 0; h < bytes_per_round; h += 65536) {
      void* p = std::malloc(32768);
      p = std::realloc(p, 65536);
      touch(p, 65536);
      held.push_back(p);
    }
    for (void* p : held) std::free(p);
    held.clear();
  }
}

[[gnu::noipa]] void* site_e(std::size_t bytes) {
  void* p = std::malloc(bytes);
  touch(p, bytes);
  return p;
}

void* worker(void* argument) {
  const auto index = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(argument));
  site_d(50 * kMiB / kThreads, 10);
  Blocks a, b, c;
  a.pointers = static_cast<void**>(std::malloc(sizeof(void*) * (60 * kMiB / kThreads / 1024 + kRounds)));
  b.pointers = static_cast<void**>(std::malloc(sizeof(void*) * (30 * kMiB / kThreads / 4096 + kRounds)));
  c.pointers = static_cast<void**>(std::malloc(sizeof(void*) * (10 * kMiB / kThreads / 96 + kRounds)));
  a.aligned = static_cast<bool*>(std::malloc(60 * kMiB / kThreads / 1024 + kRounds));
  b.aligned = static_cast<bool*>(std::malloc(30 * kMiB / kThreads / 4096 + kRounds));
  // The sites grow together, so that wherever the peak profile is taken on
  // the way up (at a published peak: within the precision bound of the
  // true one), each holds its share of what it will hold.
  for (int round = 0; round < kRounds; ++round) {
    site_a(a, 60 * kMiB / kThreads / kRounds, index * kRounds + round + 1);
    site_b(b, 30 * kMiB / kThreads / kRounds);
    site_c(c, 10 * kMiB / kThreads / kRounds);
  }
  Blocks* sites[] = {&a, &b, &c};
  for (int site = 0; site < 3; ++site) {
    for (std::size_t i = 0; i < sites[site]->count; ++i) {
      const std::size_t usable = malloc_usable_size(sites[site]->pointers[i]);
      g_held[site].usable += usable;
      if (sites[site]->aligned != nullptr && sites[site]->aligned[i]) {
        g_aligned[site].usable += usable;
        g_aligned[site].blocks += 1;
      }
    }
    g_held[site].blocks += sites[site]->count;
  }
  pthread_barrier_wait(&g_allocated);  // every thread holds its share: the peak
  pthread_barrier_wait(&g_peak_seen);
  for (Blocks* blocks : {&a, &b, &c}) {
    for (std::size_t i = 0; i < blocks->count; ++i) std::free(blocks->pointers[i]);
    std::free(blocks->pointers);
    std::free(blocks->aligned);
  }
  return nullptr;
}

bool g_hold = false;

int find_program_base(dl_phdr_info* info, std::size_t, void* data) {
  *static_cast<std::uintptr_t*>(data) = info->dlpi_addr;  // the first object: the program
  return 1;
}

void print_function_starts() {
  std::uintptr_t base = 0;
  dl_iterate_phdr(find_program_base, &base);
  const std::pair<const char*, const void*> functions[] = {
      {"site_a", reinterpret_cast<const void*>(&site_a)}, {"site_b", reinterpret_cast<const void*>(&site_b)},
      {"site_c", reinterpret_cast<const void*>(&site_c)}, {"site_d", reinterpret_cast<const void*>(&site_d)},
      {"site_e", reinterpret_cast<const void*>(&site_e)}, {"worker", reinterpret_cast<const void*>(&worker)},
      {"aligned_block", reinterpret_cast<const void*>(&aligned_block)}};
  for (const auto& [name, address] : functions) {
    std::printf("fn_%s=%llu\n", name, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address) - base));
  }
}

int run() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  print_function_starts();
  pthread_barrier_init(&g_allocated, nullptr, kThreads + 1);
  pthread_barrier_init(&g_peak_seen, nullptr, kThreads + 1);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    pthread_create(&threads[i], nullptr, worker, reinterpret_cast<void*>(static_cast<std::uintptr_t>(i)));
  }
  pthread_barrier_wait(&g_allocated);
  const char* names[] = {"a", "b", "c"};
  for (int site = 0; site < 3; ++site) {
    std::printf("%s_usable=%llu %s_blocks=%llu\n", names[site], static_cast<unsigned long long>(g_held[site].usable.load()),
                names[site], static_cast<unsigned long long>(g_held[site].blocks.load()));
    std::printf("%s_aligned_usable=%llu %s_aligned_blocks=%llu\n", names[site],
                static_cast<unsigned long long>(g_aligned[site].usable.load()), names[site],
                static_cast<unsigned long long>(g_aligned[site].blocks.load()));
  }
  std::fflush(stdout);
  if (g_hold) {
    std::printf("peak\n");
    std::fflush(stdout);
    for (;;) pause();
  }
  pthread_barrier_wait(&g_peak_seen);
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  volatile void* leaked = site_e(8 * kMiB);
  (void)leaked;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool in_child = argc > 1 && std::strcmp(argv[1], "fork") == 0;
  g_hold = argc > 2 && std::strcmp(argv[2], "hold") == 0;
  if (argc > 2 && !g_hold) {
    const std::string through = argv[2];
    const std::pair<const char*, Through> names[] = {{"memalign", Through::kMemalign},
                                                     {"posix_memalign", Through::kPosixMemalign},
                                                     {"aligned_alloc", Through::kAlignedAlloc},
                                                     {"valloc", Through::kValloc},
                                                     {"pvalloc", Through::kPvalloc}};
    bool known = false;
    for (const auto& [name, value] : names) {
      if (through == name) g_through = value, known = true;
    }
    if (!known) {
      std::fprintf(stderr, "profile_sites: unknown function '%s'\n", argv[2]);
      return 2;
    }
  }
  if (!in_child) return run();
  const pid_t child = fork();
  if (child == 0) std::exit(run());
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
