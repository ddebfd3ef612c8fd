// Stacks for the heap sampler: captured in the process (return addresses),
// named offline (module path, build id, address in the module's ELF file).
//
// Capture. libunwind (Debian's libunwind8, UNW_LOCAL_ONLY's unw_backtrace,
// which follows the .eh_frame unwind tables every x86-64 binary carries,
// frame pointers or not) is loaded with dlopen by the library's
// constructor, RTLD_LOCAL, so that no program ever binds to it and a
// machine without it still runs every program (its stacks are then empty
// and the report says so). Per-thread caching: no lock of libunwind's and
// no signal masking per unwind. Nothing of it runs on an allocation's hot
// path, only for a sampled one, and never re-entered: an allocation made
// while its thread is sampling (libunwind's own first-use mallocs, a signal
// handler's) is never sampled. Frames inside libheapline.so itself are
// left out.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapline/profile_format.h"

#pragma GCC visibility push(hidden)
namespace heapline::stacks {

// Loads libunwind (the library's constructor). False when it cannot be had.
bool load_unwinder();
bool have_unwinder();

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
