// The thread registry (thread_registry.cpp): where the other threads find
// each registered thread's slot (accounting.h's Slot, in that thread's TLS),
// and the counts of the threads that have one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "accounting.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// What a thread is doing with the registry.
enum ThreadMode : unsigned char {
  kUnregistered = 0,  // no call seen yet (or init was busy in another thread)
  kRegistering,       // inside its first call: nested calls publish exactly
  kRegistered,        // t_own is in the registry
  kNoSlot,            // the registry was full: publishes every change
  kExited,            // past its exit flush: publishes every change
};
extern __thread unsigned char t_mode __attribute__((tls_model("initial-exec")));

// An entry is claimed at the thread's first call and released by its exit
// flush; a reader of other threads' slots holds a RegistryReader, and a
// thread that releases its entry waits for the readers of the moment to
// finish, since its TLS goes away with it.
constexpr std::size_t kSlotCount = 1024;
struct RegistryEntry {
  std::atomic<Slot*> slot{nullptr};  // the owner's t_own while registered; nullptr: free
};
extern RegistryEntry g_registry[kSlotCount];
// Readers of other threads' slots at this moment (never negative).
extern std::atomic<std::int32_t> g_registry_readers;

struct RegistryReader {
  RegistryReader() { g_registry_readers.fetch_add(1, std::memory_order_seq_cst); }
  ~RegistryReader() { g_registry_readers.fetch_sub(1, std::memory_order_release); }
  RegistryReader(const RegistryReader&) = delete;
  RegistryReader& operator=(const RegistryReader&) = delete;
};

// The threads: written when one registers or exits, never on the hot path.
struct alignas(128) Threads {
  std::atomic<std::uint32_t> registered{0};      // entries held now
  std::atomic<std::uint32_t> max_registered{0};  // the most held at once in this process: only grows
  std::atomic<std::uint32_t> slots_used{0};      // entries [0, slots_used) were ever claimed: only grows
  // Calls and publishes of threads that exited, or never had a slot: only
  // grow (a fork child starts them again). A thread's own counts are added
  // before its entry goes, so a reader never misses them.
  std::atomic<std::uint64_t> folded_calls[kCallKinds] = {};
  std::atomic<std::uint64_t> folded_publishes{0};
};
extern Threads g_threads;

}  // namespace heapline::accounting
#pragma GCC visibility pop
