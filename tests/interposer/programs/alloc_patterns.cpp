// alloc_patterns: allocation patterns whose effect on the heap is known, for
// checking libheapline.so's figures from the outside.
//
//   alloc_patterns single  BASIS SPIKE_BLOCKS LEAK_BLOCKS
//   alloc_patterns threads BASIS THREADS BLOCKS_PER_THREAD LEAK_BLOCKS
//   alloc_patterns short   BASIS THREADS KEEP
//   alloc_patterns long    BASIS ROUNDS
//   alloc_patterns crowd   BASIS THREADS
//   alloc_patterns realloc_zero BASIS ROUNDS
//   alloc_patterns untouched BASIS MIB TOUCHED_MIB
//   alloc_patterns waves BASIS ROUNDS BLOCKS KEEP
//   alloc_patterns sites BASIS COUNT     COUNT call sites (at most 80), the
//                                        Nth holding N blocks of 16 KiB
//   alloc_patterns step BASIS KIB        one block of 128 MiB, then KIB KiB
//                                        in blocks of 100 KiB from another
//                                        site
//
// BASIS is how heapline counts a block: "chunk" (glibc's chunk header) or
// "usable" (malloc_usable_size, for a foreign allocator). Each mode prints one
// line "spike=S leak=L" (or "kept=K"): S is the counted size of the blocks
// that are live together at the pattern's peak, L those still live at exit.
// Between the peak and exit nothing else in the process allocates or frees
// (output goes through a stack buffer and write(2)), so with heapline:
//     peak_bytes − final_bytes == S − L            (exact mode)
//     |peak_bytes − final_bytes − (S − L)| <= bound_bytes   (batched)
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace {

bool g_usable_basis = false;

std::size_t counted(void* p) {
  if (g_usable_basis) return malloc_usable_size(p);
  // The word before the block: glibc's chunk size and flag bits. Read
  // through an integer so the compiler does not see a negative subscript.
  std::size_t header;
  std::memcpy(&header, reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) - sizeof header), sizeof header);
  // A block heapline's sampler chose reads 2^60 there (its marker): it
  // counts as it would have unsampled, malloc_usable_size + 8 for the
  // blocks here (no mmapped ones).
  if ((header & ~std::size_t{7}) == std::size_t{1} << 60) return malloc_usable_size(p) + 8;
  return header & ~std::size_t{7};
}

// Deterministic sizes from 24 to ~2 KiB.
std::size_t size_for(std::size_t i) { return 24 + (i * 7919) % 2000; }

void print_line(const char* line) {
  std::size_t length = std::strlen(line);
  if (write(STDOUT_FILENO, line, length) != static_cast<ssize_t>(length)) std::exit(3);
}

void report(const char* key1, std::size_t v1, const char* key2, std::size_t v2) {
  char line[128];
  std::snprintf(line, sizeof line, "%s=%zu %s=%zu\n", key1, v1, key2, v2);
  print_line(line);
}

void* must(void* p) {
  if (p == nullptr) std::abort();
  return p;
}

int single(std::size_t spike_blocks, std::size_t leak_blocks) {
  static void* blocks[1 << 16];
  if (spike_blocks > sizeof blocks / sizeof blocks[0] || leak_blocks > spike_blocks) return 2;
  std::size_t spike = 0, leak = 0;
  for (std::size_t i = 0; i < spike_blocks; ++i) {
    // Every API that allocates takes part in the pattern.
    switch (i % 6) {
      case 0: blocks[i] = must(std::malloc(size_for(i))); break;
      case 1: blocks[i] = must(std::calloc(1, size_for(i))); break;
      case 2: blocks[i] = must(std::realloc(must(std::malloc(16)), size_for(i))); break;
      case 3: blocks[i] = must(memalign(64, size_for(i))); break;
      case 4: {
        void* p = nullptr;
        if (posix_memalign(&p, 32, size_for(i)) != 0) std::abort();
        blocks[i] = p;
        break;
      }
      case 5: blocks[i] = must(std::realloc(nullptr, size_for(i))); break;  // realloc(NULL, n) is malloc(n)
    }
    spike += counted(blocks[i]);
  }
  for (std::size_t i = 0; i < spike_blocks; ++i) {
    if (i < leak_blocks) {
      leak += counted(blocks[i]);
    } else {
      std::free(blocks[i]);
    }
  }
  report("spike", spike, "leak", leak);
  return 0;
}

struct ThreadWork {
  std::size_t index;
  std::size_t count;
  std::size_t leak_blocks;
  void** blocks;  // count blocks, allocated by this thread
  void** next_blocks;  // the next thread's: freed by this one
  std::size_t bytes;
};
pthread_barrier_t g_barrier;

void* threads_body(void* argument) {
  auto* work = static_cast<ThreadWork*>(argument);
  for (std::size_t i = 0; i < work->count; ++i) {
    work->blocks[i] = must(std::malloc(size_for(work->index * 1000 + i)));
    work->bytes += counted(work->blocks[i]);
  }
  pthread_barrier_wait(&g_barrier);  // the peak: every block of every thread is live
  pthread_barrier_wait(&g_barrier);  // main has read the sizes
  for (std::size_t i = work->leak_blocks; i < work->count; ++i) std::free(work->next_blocks[i]);
  return nullptr;
}

int threads(std::size_t thread_count, std::size_t per_thread, std::size_t leak_blocks) {
  static void* blocks[256][4096];
  static ThreadWork work[256];
  static pthread_t ids[256];
  if (thread_count < 1 || thread_count > 256 || per_thread > 4096 || leak_blocks > per_thread) return 2;
  pthread_barrier_init(&g_barrier, nullptr, static_cast<unsigned>(thread_count + 1));
  for (std::size_t t = 0; t < thread_count; ++t) {
    work[t] = ThreadWork{t, per_thread, leak_blocks, blocks[t], blocks[(t + 1) % thread_count], 0};
  }
  for (std::size_t t = 0; t < thread_count; ++t) pthread_create(&ids[t], nullptr, threads_body, &work[t]);
  pthread_barrier_wait(&g_barrier);
  std::size_t spike = 0, leak = 0;
  for (std::size_t t = 0; t < thread_count; ++t) {
    spike += work[t].bytes;
    for (std::size_t i = 0; i < leak_blocks; ++i) leak += counted(blocks[t][i]);
  }
  pthread_barrier_wait(&g_barrier);
  for (std::size_t t = 0; t < thread_count; ++t) pthread_join(ids[t], nullptr);
  report("spike", spike, "leak", leak);
  return 0;
}

struct ShortWork {
  bool keep;
  void* kept[30];
};

// About 9 KiB per thread, below the batching threshold: without the exit
// flush every thread would take its pending bytes with it.
void* short_body(void* argument) {
  auto* work = static_cast<ShortWork*>(argument);
  void* blocks[40];
  for (int i = 0; i < 40; ++i) blocks[i] = must(std::malloc(200 + i));
  for (int i = 0; i < 40; ++i) {
    if (work->keep && i < 30) {
      work->kept[i] = blocks[i];  // main frees nothing: these stay live
    } else {
      std::free(blocks[i]);
    }
  }
  return nullptr;
}

int short_threads(std::size_t count, bool keep) {
  static ShortWork work[4096];
  if (count > 4096) return 2;
  std::size_t kept = 0;
  for (std::size_t t = 0; t < count; ++t) {
    work[t].keep = keep;
    pthread_t id;
    pthread_create(&id, nullptr, short_body, &work[t]);
    pthread_join(id, nullptr);  // one at a time: the same cached stack every time
    if (keep) {
      for (void* block : work[t].kept) kept += counted(block);
    }
  }
  report("kept", kept, "threads", count);
  return 0;
}

// More threads alive at once than the registry has slots (1024): the ones
// without a slot publish every change, nothing is lost.
void* crowd_body(void* argument) {
  auto* kept = static_cast<void**>(argument);
  for (int i = 0; i < 8; ++i) kept[i] = must(std::malloc(1000));  // ~8 KiB: below the threshold
  pthread_barrier_wait(&g_barrier);
  return nullptr;
}

int crowd(std::size_t count) {
  static void* kept[2048][8];
  static pthread_t ids[2048];
  if (count > 2048) return 2;
  pthread_barrier_init(&g_barrier, nullptr, static_cast<unsigned>(count + 1));
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 64 * 1024);
  for (std::size_t t = 0; t < count; ++t) {
    if (pthread_create(&ids[t], &attributes, crowd_body, kept[t]) != 0) return 3;
  }
  pthread_barrier_wait(&g_barrier);
  for (std::size_t t = 0; t < count; ++t) pthread_join(ids[t], nullptr);
  std::size_t total = 0;
  for (std::size_t t = 0; t < count; ++t) {
    for (void* block : kept[t]) total += counted(block);
  }
  report("kept", total, "threads", count);
  return 0;
}

// Many publishes (with HEAPLINE_PRECISION=exact) and so many samples with
// HEAPLINE_INTERVAL_MS=0; one spike in the middle that must survive merging.
int long_run(std::size_t rounds) {
  static void* spike_blocks[2048];
  std::size_t spike = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    void* p = must(std::malloc(4000));
    if (round == rounds / 2) {
      for (auto& block : spike_blocks) {
        block = must(std::malloc(1000));
        spike += counted(block);
      }
      spike += counted(p);
      for (auto& block : spike_blocks) std::free(block);
    }
    std::free(p);
  }
  report("spike", spike, "leak", 0);
  return 0;
}

// Each round a block of ~1 KiB goes through realloc(p, 0), which frees it in
// glibc: nothing stays live.
int realloc_zero(std::size_t rounds) {
  std::size_t block_bytes = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    void* p = must(std::malloc(1000));
    block_bytes = counted(p);
    void* q = std::realloc(p, 0);
    if (q != nullptr) std::abort();  // glibc returns NULL: the block is gone
  }
  report("spike", block_bytes, "leak", 0);
  return 0;
}

// ROUNDS waves of BLOCKS blocks, all live together and then all freed (so
// a sampler's freed records pile up on its free list, BLOCKS at a time),
// then KEEP blocks held at exit. Many waves see many more blocks in all
// than are ever live at once.
int waves(std::size_t rounds, std::size_t blocks, std::size_t keep) {
  static void* wave[4096];
  if (blocks > 4096 || keep > 4096) return 2;
  std::size_t spike = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < blocks; ++i) {
      wave[i] = must(std::malloc(size_for(i + round)));
      bytes += counted(wave[i]);
    }
    if (bytes > spike) spike = bytes;
    for (std::size_t i = 0; i < blocks; ++i) std::free(wave[i]);
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < keep; ++i) {
    wave[i] = must(std::malloc(size_for(i)));
    kept += counted(wave[i]);
  }
  report("spike", spike, "leak", kept);
  return 0;
}

// Call sites that the sampler tells apart: each instantiation is a
// function of its own with one call of malloc, so its return address names
// it. The count is hidden from the optimizer: with N known, it may peel the
// loop's first turn into a call of its own (GCC -O3 does for N = 2 on
// arm64), and that site<2> would be two sites of one block each.
void* g_site_blocks[80 * 81 / 2];
std::size_t g_site_count = 0;

template <int N>
__attribute__((noinline)) std::size_t site() {
  std::size_t bytes = 0;
  int count = N;
  asm("" : "+r"(count));
  for (int i = 0; i < count; ++i) {
    g_site_blocks[g_site_count] = must(std::malloc(16 << 10));
    bytes += counted(g_site_blocks[g_site_count++]);
  }
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
  return bytes;
}

template <int... N>
std::size_t sites_up_to(std::size_t count, std::integer_sequence<int, N...>) {
  std::size_t bytes = 0;
  ((bytes += static_cast<std::size_t>(N) < count ? site<N + 1>() : 0), ...);
  return bytes;
}

int sites(std::size_t count) {
  if (count > 80) return 2;
  const std::size_t bytes = sites_up_to(count, std::make_integer_sequence<int, 80>());
  report("spike", bytes, "leak", bytes);
  return 0;
}

__attribute__((noinline)) void* step_block(std::size_t bytes) {
  void* block = must(std::malloc(bytes));
  asm volatile("" ::: "memory");
  return block;
}

// The sampler's snapshot follows the peak once it has risen by 1/128 of
// itself: 128 MiB, then KIB KiB more, below or past 1 MiB.
int step(std::size_t kib) {
  static void* blocks[64];
  if (kib / 100 > 64) return 2;
  void* large = must(std::malloc(128 << 20));
  std::size_t bytes = counted(large);
  for (std::size_t i = 0; i < kib / 100; ++i) {
    blocks[i] = step_block(100 << 10);
    bytes += counted(blocks[i]);
  }
  report("spike", bytes, "leak", bytes);
  return 0;
}

std::size_t arg(char** argv, int i) { return static_cast<std::size_t>(std::strtoull(argv[i], nullptr, 10)); }

}  // namespace

// One block of `mib` MiB, of which only the first `touched_mib` are
// written: the heap holds it all, the resident set only what was touched
// (glibc serves a block this large with its own mapping, untouched pages
// never faulted in).
int untouched(std::size_t mib, std::size_t touched_mib) {
  if (touched_mib > mib) return 2;
  auto* block = static_cast<char*>(must(std::malloc(mib << 20)));
  for (std::size_t i = 0; i < (touched_mib << 20); i += 4096) block[i] = 1;
  report("spike", counted(block), "leak", 0);
  std::free(block);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: alloc_patterns single|threads|short|long BASIS ...\n");
    return 2;
  }
  g_usable_basis = std::strcmp(argv[2], "usable") == 0;
  const char* mode = argv[1];
  if (std::strcmp(mode, "single") == 0 && argc == 5) return single(arg(argv, 3), arg(argv, 4));
  if (std::strcmp(mode, "threads") == 0 && argc == 6) return threads(arg(argv, 3), arg(argv, 4), arg(argv, 5));
  if (std::strcmp(mode, "short") == 0 && argc == 5) return short_threads(arg(argv, 3), arg(argv, 4) != 0);
  if (std::strcmp(mode, "long") == 0 && argc == 4) return long_run(arg(argv, 3));
  if (std::strcmp(mode, "crowd") == 0 && argc == 4) return crowd(arg(argv, 3));
  if (std::strcmp(mode, "realloc_zero") == 0 && argc == 4) return realloc_zero(arg(argv, 3));
  if (std::strcmp(mode, "untouched") == 0 && argc == 5) return untouched(arg(argv, 3), arg(argv, 4));
  if (std::strcmp(mode, "waves") == 0 && argc == 6) return waves(arg(argv, 3), arg(argv, 4), arg(argv, 5));
  if (std::strcmp(mode, "sites") == 0 && argc == 4) return sites(arg(argv, 3));
  if (std::strcmp(mode, "step") == 0 && argc == 4) return step(arg(argv, 3));
  std::fprintf(stderr, "alloc_patterns: bad arguments\n");
  return 2;
}
