// The accounting hot path against the forwarding-only baseline, at 1, 2 and
// 4 threads.
//
// Why link the accounting instead of preloading the two libraries: a
// preloaded run cannot hold both variants in one process, so the comparison
// would mix two processes' noise; here both variants run in the same process,
// interleaved by Google Benchmark, on the same allocator. Each benchmark
// performs exactly what the override layer (alloc_override.cpp) does per
// call:
//   BM_ForwardOnly  next.malloc / next.free through the NextAllocator table:
//                   what libheapline_null.so costs beyond glibc's own work;
//   BM_Accounted    the same plus accounting::allocated / size_of / freed:
//                   what libheapline.so costs.
// The workload is malloc_churn's: each thread keeps 64 blocks and replaces
// them in turn with a pseudo-random size in [16, 4096] (or 64 KiB–1 MiB for
// the large variant), so the pending delta wanders and publishes happen at
// their natural rate. The whole-process figure (malloc_churn preloaded with
// each library) is what the harness measures; this isolates the hot path.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#include "accounting.h"
#include "next_allocator.h"
#include <heapline/splitmix64.h>

namespace {

using heapline::next_allocator;
namespace accounting = heapline::accounting;

constexpr int kBlocks = 64;

using heapline::SplitMix64;

template <bool kAccounted>
void churn(benchmark::State& state, std::size_t min_size, std::size_t max_size) {
  const auto& next = next_allocator();
  SplitMix64 rng{0x686561706c696e65ULL + static_cast<std::uint64_t>(state.thread_index())};
  const std::size_t span = max_size - min_size + 1;
  void* blocks[kBlocks];
  for (auto& block : blocks) {
    block = next.malloc(min_size + rng.next() % span);
    if constexpr (kAccounted) accounting::allocated(next, block);
  }
  std::size_t slot = 0;
  for (auto _ : state) {
    void* old = blocks[slot];
    if constexpr (kAccounted) {
      std::size_t bytes = accounting::size_of(next, old);
      next.free(old);
      accounting::freed(bytes);
    } else {
      next.free(old);
    }
    void* fresh = next.malloc(min_size + rng.next() % span);
    if constexpr (kAccounted) accounting::allocated(next, fresh);
    benchmark::DoNotOptimize(fresh);
    blocks[slot] = fresh;
    slot = (slot + 1) % kBlocks;
  }
  for (void* block : blocks) {
    if constexpr (kAccounted) {
      std::size_t bytes = accounting::size_of(next, block);
      next.free(block);
      accounting::freed(bytes);
    } else {
      next.free(block);
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ForwardOnly(benchmark::State& state) { churn<false>(state, 16, 4096); }
void BM_Accounted(benchmark::State& state) { churn<true>(state, 16, 4096); }
void BM_ForwardOnlyLarge(benchmark::State& state) { churn<false>(state, 65536, 1 << 20); }
void BM_AccountedLarge(benchmark::State& state) { churn<true>(state, 65536, 1 << 20); }

// The slow path alone: every call crosses the 16 KiB threshold and
// publishes (shared counter, peak, clock read, sample check). Multiply by
// the publishes per call of a run (the report's publishes / calls) for its
// share of the overhead.
void BM_PublishEveryCall(benchmark::State& state) {
  for (auto _ : state) {
    accounting::record(20000, accounting::kAllocCall);
    accounting::record(-20000, accounting::kFreeCall);
  }
  state.SetItemsProcessed(2 * state.iterations());
}

BENCHMARK(BM_ForwardOnly)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK(BM_Accounted)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK(BM_ForwardOnlyLarge)->Threads(1)->Threads(4)->UseRealTime();
BENCHMARK(BM_AccountedLarge)->Threads(1)->Threads(4)->UseRealTime();
BENCHMARK(BM_PublishEveryCall)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  // The linked accounting would write a report at exit like the library.
  setenv("HEAPLINE_OUT", "off", 1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
