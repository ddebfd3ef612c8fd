// The accounting hot path against the forwarding-only baseline, at 1, 2 and
// 4 threads.
//
// Why link the accounting instead of preloading the two libraries: a
// preloaded run cannot hold both variants in one process, so the comparison
// would mix two processes' noise; here both variants run in the same process,
// interleaved by Google Benchmark, on the same allocator. Each benchmark
// performs exactly what the override layer's glibc path (glibc_malloc and
// glibc_free in alloc_override.cpp) does per call:
//   BM_ForwardOnly  __libc_malloc / __libc_free, direct calls: what
//                   libheapline_null.so reaches after its one jump;
//   BM_Accounted    the same plus the chunk-header read and the slot's
//                   add-and-test (add_crosses_threshold,
//                   remove_crosses_threshold): what libheapline.so adds.
// The workload is malloc_churn's: each thread keeps 64 blocks and replaces
// them in turn with a pseudo-random size in [16, 4096] (or 64 KiB–1 MiB for
// the large variant), so the pending delta wanders and publishes happen at
// their natural rate. The whole-process figure (malloc_churn preloaded with
// each library) is what the harness measures; this isolates the hot path.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "accounting.h"
#include "next_allocator.h"
#include <heapline/splitmix64.h>

namespace {

using heapline::glibc_chunk_size;
namespace accounting = heapline::accounting;

std::int64_t chunk_bytes(const void* p) { return static_cast<std::int64_t>(glibc_chunk_size(p)); }

// glibc_malloc and glibc_free of alloc_override.cpp.
template <bool kAccounted>
void* forward_malloc(std::size_t size) {
  void* p = __libc_malloc(size);
  if constexpr (kAccounted) {
    if (__builtin_expect(p != nullptr, 1)) {
      const std::int64_t bytes = chunk_bytes(p);
      if (accounting::add_crosses_threshold(bytes, accounting::kAllocCall)) {
        accounting::publish(bytes, accounting::kAllocCall);
      }
    }
  }
  return p;
}

template <bool kAccounted>
void forward_free(void* p) {
  if constexpr (kAccounted) {
    if (p == nullptr) return;
    const std::int64_t bytes = chunk_bytes(p);
    if (accounting::remove_crosses_threshold(bytes, accounting::kFreeCall)) {
      accounting::publish(-bytes, accounting::kFreeCall);
    }
  }
  __libc_free(p);
}

constexpr int kBlocks = 64;

using heapline::SplitMix64;

template <bool kAccounted>
void churn(benchmark::State& state, std::size_t min_size, std::size_t max_size) {
  SplitMix64 rng{0x686561706c696e65ULL + static_cast<std::uint64_t>(state.thread_index())};
  const std::size_t span = max_size - min_size + 1;
  void* blocks[kBlocks];
  for (auto& block : blocks) block = forward_malloc<kAccounted>(min_size + rng.next() % span);
  std::size_t slot = 0;
  for (auto _ : state) {
    forward_free<kAccounted>(blocks[slot]);
    void* fresh = forward_malloc<kAccounted>(min_size + rng.next() % span);
    benchmark::DoNotOptimize(fresh);
    blocks[slot] = fresh;
    slot = (slot + 1) % kBlocks;
  }
  for (void* block : blocks) forward_free<kAccounted>(block);
  state.SetItemsProcessed(2 * state.iterations());  // calls: a free and a malloc per iteration
}

void BM_ForwardOnly(benchmark::State& state) { churn<false>(state, 16, 4096); }
void BM_Accounted(benchmark::State& state) { churn<true>(state, 16, 4096); }
void BM_ForwardOnlyLarge(benchmark::State& state) { churn<false>(state, 65536, 1 << 20); }
void BM_AccountedLarge(benchmark::State& state) { churn<true>(state, 65536, 1 << 20); }

// The slow path alone: every call publishes (shared counter, peak, clock
// read, sample check). Multiply by the publishes per call of a run (the
// report's publishes / calls) for its share of the overhead.
//
// The change is four times the larger of the free windows' cap and the
// thread's own threshold: the earlier benchmarks leave a heap, and a
// threshold, of their own, and a fixed size below it would time the inline
// test alone (a threshold lent from the headroom stays below it: the
// headroom is at most the change). The run is refused if a call did not
// publish.
void BM_PublishEveryCall(benchmark::State& state) {
  const std::int64_t own = accounting::t_own.held;
  const std::int64_t policy = accounting::g_policy.free_window.load(std::memory_order_relaxed);
  const std::int64_t bytes = 4 * std::max<std::int64_t>({own, policy, 16 * 1024});
  const std::uint64_t publishes_before = accounting::t_own.publishes.load(std::memory_order_relaxed);
  for (auto _ : state) {
    accounting::record(bytes, accounting::kAllocCall);
    accounting::record(-bytes, accounting::kFreeCall);
  }
  const std::uint64_t publishes = accounting::t_own.publishes.load(std::memory_order_relaxed) - publishes_before;
  // A thread registers at its first call, which publishes exactly, so at
  // most that one call is counted elsewhere.
  if (publishes + 1 < 2 * static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("a call did not publish: the figure would be the inline path's");
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
