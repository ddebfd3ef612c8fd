// Stacks for the heap sampler: captured in the process (return addresses),
// named offline (module path, build id, address in the module's ELF file).
//
// Capture. libunwind (Debian's libunwind8, UNW_LOCAL_ONLY's unw_backtrace,
// which follows the .eh_frame unwind tables every x86-64 binary carries,
// frame pointers or not) is loaded with dlopen by the library's
// constructor, RTLD_LOCAL, so that no program ever binds to it and a
// machine without it still runs every program (its stacks are then empty
// and the report says so). The dlopen is all the constructor does: the
// first capture sets libunwind up (per-thread caching: no lock of
// libunwind's and no signal masking per unwind), and each thread's first
// capture its per-thread state. Nothing of it runs on an allocation's hot
// path, only for a sampled one, and never re-entered: an allocation made
// while its thread is sampling (libunwind's own first-use mallocs, a signal
// handler's) is never sampled. Frames inside libheapline.so itself are
// left out.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heapline/profile_format.h"
#include "os.h"

#pragma GCC visibility push(hidden)
namespace heapline::stacks {

// A set-up made once, by the first thread that needs it, while the others
// that need it meanwhile wait (not without end), and lost to a fork child
// that was made while another thread ran it: the child's copy of whatever
// the set-up had locked stays locked, so the child never runs it.
class OnceSetUp {
 public:
  // Runs `set_up` unless it ran (or runs) already. True once it has run;
  // false when it is lost to a fork, or the wait for another thread's ran out.
  bool ensure(void (*set_up)()) {
    int state = state_.load(std::memory_order_acquire);
    if (state == kDone) return true;
    if (state == kNotYet && state_.compare_exchange_strong(state, kRunning, std::memory_order_acq_rel)) {
      set_up();
      // kLost meanwhile: a fork from a signal handler of this thread, whose
      // child has now run it all the same.
      state_.store(kDone, std::memory_order_release);
      return true;
    }
    for (int attempt = 0; attempt < 100000; ++attempt) {
      state = state_.load(std::memory_order_acquire);
      if (state == kDone) return true;
      if (state == kLost) return false;
      if (attempt >= 64) os::yield();
    }
    return false;
  }
  // A fork child: lost if the fork came while another thread ran it.
  void after_fork_in_child() {
    int running = kRunning;
    state_.compare_exchange_strong(running, kLost, std::memory_order_acq_rel);
  }
  bool lost() const { return state_.load(std::memory_order_acquire) == kLost; }

 private:
  enum : int { kNotYet, kRunning, kDone, kLost };
  std::atomic<int> state_{kNotYet};
};

// Loads libunwind (the library's constructor): its dlopen alone; its
// set-up is the first capture's. False when it cannot be had.
bool load_unwinder();
// Whether `address` is code of the unwinder's object (libunwind, once
// loaded): what it maps for itself (its caches, through the exported mmap)
// is heapline's memory, not the program's (mapped_memory.cpp).
bool is_unwinder_code(std::uintptr_t address);
// Whether stacks can be captured: libunwind loaded, and not lost to a fork
// made while another thread set it up.
bool have_unwinder();
// A fork child: libunwind unusable if the fork came while it was set up.
void after_fork_in_child();

// The caller's stack, innermost first, without the library's own frames:
// up to `capacity` return addresses. Returns how many (0 without an
// unwinder).
std::size_t capture(std::uintptr_t* frames, std::size_t capacity);

// Names frames for a profile: each address becomes (module, address in the
// module's ELF file), the modules found with dl_iterate_phdr and added to
// `snapshot.modules` as they are first met (a frame in a module past the
// table's capacity keeps its raw address, with kProfileNoModule).
class FrameNamer {
 public:
  explicit FrameNamer(ProfileSnapshot& snapshot) : snapshot_(snapshot) {}
  ProfileFrame name(std::uintptr_t address);

 private:
  ProfileSnapshot& snapshot_;
};

}  // namespace heapline::stacks
#pragma GCC visibility pop
