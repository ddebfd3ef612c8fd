// What mapped-memory accounting adds to a mapping call, in the same process
// and interleaved by Google Benchmark (see accounting_bench.cpp for why the
// variants are linked rather than preloaded):
//   BM_SystemCalls   mmap + munmap of an anonymous private block through the
//                    system calls alone: what libheapline_null.so forwards to;
//   BM_Counted       the same through mapped::map / mapped::unmap, which count
//                    it: what libheapline.so does per call;
//   BM_NotCounted    a shared anonymous block through mapped::map / unmap:
//                    judged, not counted (the unmap still looks it up).
// Each iteration is one mmap and one munmap of `range(0)` bytes, touched so
// the kernel really populates a page. A mapping call is a system call of a
// microsecond or more; the difference is the accounting.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstddef>

#include "mapped_memory.h"
#include "os.h"

namespace {

namespace mapped = heapline::mapped;

template <bool kThroughAccounting, int kSharing>
void map_and_unmap(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  const int flags = kSharing | MAP_ANONYMOUS;
  const int prot = PROT_READ | PROT_WRITE;
  for (auto _ : state) {
    void* p = kThroughAccounting ? mapped::map(nullptr, bytes, prot, flags, -1, 0, nullptr)
                                 : heapline::os::map(nullptr, bytes, prot, flags, -1, 0);
    if (p == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      break;
    }
    static_cast<volatile char*>(p)[0] = 1;
    if (kThroughAccounting) {
      mapped::unmap(p, bytes);
    } else {
      heapline::os::unmap(p, bytes);
    }
  }
}

void BM_SystemCalls(benchmark::State& state) { map_and_unmap<false, MAP_PRIVATE>(state); }
void BM_Counted(benchmark::State& state) { map_and_unmap<true, MAP_PRIVATE>(state); }
void BM_NotCounted(benchmark::State& state) { map_and_unmap<true, MAP_SHARED>(state); }

BENCHMARK(BM_SystemCalls)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_Counted)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_NotCounted)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
