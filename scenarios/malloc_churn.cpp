// malloc_churn: the allocation workload behind four of heapline's five
// benchmark scenarios (see scenarios.json).
//
//   malloc_churn THREADS OPS [MIN_SIZE MAX_SIZE RESIDENT_MIB]
//
// Each thread keeps 64 blocks and replaces them in turn, OPS times, with a
// block of pseudo-random size in [MIN_SIZE, MAX_SIZE] (defaults 16 and 4096).
// RESIDENT_MIB (default 0) is allocated and touched before the threads start
// and held until the end, so the process can hold a large heap while it
// churns. The generator is seeded per thread: every run does the same work.
// The churn starts once every thread holds its 64 blocks, so every run
// holds them all at once: the peak is the same in every run (within a
// thread's wander), whatever the scheduling, and one run's peak can be
// compared with another's (batched against HEAPLINE_PRECISION=exact).
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <heapline/splitmix64.h>

namespace {

constexpr int kBlocksPerThread = 64;
constexpr std::uint64_t kMaxThreads = 1024;
constexpr std::size_t kResidentBlock = std::size_t{1} << 20;

struct Arguments {
  std::uint64_t threads = 0;
  std::uint64_t ops = 0;
  std::uint64_t min_size = 16;
  std::uint64_t max_size = 4096;
  std::uint64_t resident_mib = 0;
};

void print_usage(std::FILE* to) {
  std::fputs(
      "usage: malloc_churn THREADS OPS [MIN_SIZE MAX_SIZE RESIDENT_MIB]\n"
      "  THREADS       1 to 1024 threads, each keeping 64 blocks\n"
      "  OPS           replacements per thread (a positive integer)\n"
      "  MIN_SIZE      smallest block in bytes (default 16, at least 1)\n"
      "  MAX_SIZE      largest block in bytes (default 4096, >= MIN_SIZE)\n"
      "  RESIDENT_MIB  MiB allocated and touched before the churn and held to "
      "the end (default 0)\n",
      to);
}

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

// Returns the parsed arguments, or an error message naming the bad one.
std::optional<Arguments> parse_arguments(int argc, char** argv, const char** error) {
  if (argc < 3 || argc > 6) {
    *error = "expected 2 to 5 arguments";
    return std::nullopt;
  }
  Arguments args;
  struct Field {
    const char* name;
    std::uint64_t* target;
  } fields[] = {{"THREADS", &args.threads},
                {"OPS", &args.ops},
                {"MIN_SIZE", &args.min_size},
                {"MAX_SIZE", &args.max_size},
                {"RESIDENT_MIB", &args.resident_mib}};
  for (int i = 1; i < argc; ++i) {
    auto value = parse_count(argv[i]);
    if (!value) {
      static char message[128];
      std::snprintf(message, sizeof message, "%s must be a non-negative integer, got '%s'",
                    fields[i - 1].name, argv[i]);
      *error = message;
      return std::nullopt;
    }
    *fields[i - 1].target = *value;
  }
  if (args.threads < 1 || args.threads > kMaxThreads) *error = "THREADS must be between 1 and 1024";
  else if (args.ops < 1) *error = "OPS must be at least 1";
  else if (args.min_size < 1) *error = "MIN_SIZE must be at least 1";
  else if (args.max_size < args.min_size) *error = "MAX_SIZE must be at least MIN_SIZE";
  else if (args.max_size > (std::uint64_t{1} << 32)) *error = "MAX_SIZE must be at most 4 GiB";
  else if (args.resident_mib > (std::uint64_t{1} << 20)) *error = "RESIDENT_MIB must be at most 1048576";
  else return args;
  return std::nullopt;
}

void churn(std::uint64_t thread_index, const Arguments& args, std::atomic<std::uint64_t>& holding,
           std::atomic<bool>& go) {
  // One generator per thread, seeded by its index: every run of the
  // scenario performs exactly the same allocations.
  heapline::SplitMix64 rng{0x686561706c696e65ULL + thread_index};  // "heapline" + index
  const std::uint64_t span = args.max_size - args.min_size + 1;
  auto next_size = [&] { return static_cast<std::size_t>(args.min_size + rng.next() % span); };

  void* blocks[kBlocksPerThread];
  for (auto& block : blocks) {
    block = std::malloc(next_size());
    if (block == nullptr) std::abort();
    *static_cast<volatile char*>(block) = 1;  // keeps the allocation observable
  }
  holding.fetch_add(1, std::memory_order_release);
  while (!go.load(std::memory_order_acquire)) std::this_thread::yield();

  for (std::uint64_t op = 0; op < args.ops; ++op) {
    auto& slot = blocks[op % kBlocksPerThread];
    std::free(slot);
    slot = std::malloc(next_size());
    if (slot == nullptr) std::abort();
    *static_cast<volatile char*>(slot) = 1;
  }
  for (auto* block : blocks) std::free(block);
}

}  // namespace

int main(int argc, char** argv) {
  const char* error = nullptr;
  const auto args = parse_arguments(argc, argv, &error);
  if (!args) {
    std::fprintf(stderr, "malloc_churn: %s\n", error);
    print_usage(stderr);
    return 2;
  }

  std::vector<void*> resident;
  resident.reserve(args->resident_mib);
  for (std::uint64_t i = 0; i < args->resident_mib; ++i) {
    void* block = std::malloc(kResidentBlock);
    if (block == nullptr) {
      std::fprintf(stderr, "malloc_churn: cannot allocate %llu MiB resident: %s\n",
                   static_cast<unsigned long long>(args->resident_mib), std::strerror(ENOMEM));
      return 1;
    }
    std::memset(block, 0x5a, kResidentBlock);  // touched: really resident
    resident.push_back(block);
  }

  std::atomic<std::uint64_t> holding{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  threads.reserve(args->threads);
  for (std::uint64_t i = 0; i < args->threads; ++i) {
    threads.emplace_back(churn, i, std::cref(*args), std::ref(holding), std::ref(go));
  }
  while (holding.load(std::memory_order_acquire) < args->threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& thread : threads) thread.join();

  for (void* block : resident) std::free(block);
  return 0;
}
