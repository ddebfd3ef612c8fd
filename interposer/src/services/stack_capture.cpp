#include "stack_capture.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "arch.h"
#include "loaded_object.h"
#include "os.h"

namespace heapline::stacks {

namespace {

// libunwind's entry points, by name (no build dependency on its headers).
using Backtrace = int (*)(void**, int);
using SetCachingPolicy = int (*)(void*, int);
constexpr int kUnwCachePerThread = 2;  // UNW_CACHE_PER_THREAD

std::atomic<Backtrace> g_backtrace{nullptr};
SetCachingPolicy g_set_caching = nullptr;
void** g_local_space = nullptr;

// libunwind's set-up (its caching policy, and with it libunwind's own
// initialisation: a lock of its own taken with signals masked, a pipe for
// its checks of memory), made by the first capture, not at start: the
// per-thread cache (the global one's lock masks signals around each use;
// a per-thread cache takes no lock), set once, before any thread unwinds
// (libunwind reads the policy at each unwind: changed while another thread
// unwinds, a lock taken under one policy would be released under the
// other).
OnceSetUp g_set_up;
void set_up_libunwind() {
  if (g_set_caching != nullptr && g_local_space != nullptr) g_set_caching(*g_local_space, kUnwCachePerThread);
}

// libheapline.so's own code: frames there are the sampler's, not the program's.
std::uintptr_t g_own_start = 0;
std::uintptr_t g_own_end = 0;
// The unwinder's own object, set before it is first used (is_unwinder_code).
constinit std::atomic<std::uintptr_t> g_unwinder_begin{UINTPTR_MAX};
constinit std::atomic<std::uintptr_t> g_unwinder_end{0};

}  // namespace

bool load_unwinder() {
  if (g_backtrace.load(std::memory_order_acquire) != nullptr) return true;
  const loaded::Span own = loaded::span_of_object_holding(reinterpret_cast<const void*>(&load_unwinder));
  g_own_start = own.begin;
  g_own_end = own.end;
  void* library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return false;
  auto backtrace = reinterpret_cast<Backtrace>(dlsym(library, "unw_backtrace"));
  g_set_caching = reinterpret_cast<SetCachingPolicy>(dlsym(library, arch::kUnwinderSetCachingPolicy));
  g_local_space = static_cast<void**>(dlsym(library, arch::kUnwinderLocalAddressSpace));
  if (backtrace == nullptr) return false;
  // libunwind's caches are mapped through the exported mmap: heapline's
  // memory, not the program's mapped memory (is_unwinder_code).
  const loaded::Span unwinder = loaded::span_of_object_holding(reinterpret_cast<const void*>(backtrace));
  g_unwinder_begin.store(unwinder.begin, std::memory_order_relaxed);
  g_unwinder_end.store(unwinder.end, std::memory_order_relaxed);
  // Nothing more at start: libunwind is set up by the first capture
  // (set_up_libunwind, once), and each thread's own state by that thread's
  // first, so that a process that never samples pays for the dlopen alone.
  g_backtrace.store(backtrace, std::memory_order_release);
  return true;
}

bool is_unwinder_code(std::uintptr_t address) {
  return address >= g_unwinder_begin.load(std::memory_order_relaxed) &&
         address < g_unwinder_end.load(std::memory_order_relaxed);
}

bool have_unwinder() { return g_backtrace.load(std::memory_order_acquire) != nullptr && !g_set_up.lost(); }

// Forked while another thread set libunwind up: the child's copy of
// libunwind holds its lock for ever, so the child's stacks stay empty.
void after_fork_in_child() { g_set_up.after_fork_in_child(); }

std::size_t capture(std::uintptr_t* frames, std::size_t capacity) {
  const Backtrace backtrace = g_backtrace.load(std::memory_order_acquire);
  if (backtrace == nullptr || !g_set_up.ensure(set_up_libunwind)) return 0;
  constexpr int kRaw = static_cast<int>(kProfileFrames) + 16;  // room for the library's own frames
  void* raw[kRaw];
  const int depth = backtrace(raw, kRaw);
  // Return addresses as code addresses (a signed one's authentication bits
  // cleared), so that they fall within their module.
  const auto frame = [&](int i) { return arch::code_address(reinterpret_cast<std::uintptr_t>(raw[i])); };
  std::size_t count = 0;
  int i = 0;
  while (i < depth && frame(i) >= g_own_start && frame(i) < g_own_end) ++i;
  for (; i < depth && count < capacity; ++i) frames[count++] = frame(i);
  return count;
}

// --- naming ----------------------------------------------------------------

namespace {

struct LoadedModule {
  std::uintptr_t start, end, bias;
  const char* name;
  const std::uint8_t* build_id;
  std::uint32_t build_id_bytes;
};
// The loaded objects, collected once per snapshot under the sampler's lock
// (one namer at a time). Most programs fit the static table; one with more
// (a large Python environment loads hundreds of extension modules) gets a
// mapping sized to its count, kept for the next snapshots, so that no
// object's frames go unnamed for want of room. Only if that mapping is
// refused do the objects past the table keep their raw addresses.
constexpr std::size_t kStaticLoaded = 512;
LoadedModule g_static_loaded[kStaticLoaded];
LoadedModule* g_loaded = g_static_loaded;
std::size_t g_loaded_capacity = kStaticLoaded;
std::size_t g_loaded_count = 0;
const ProfileSnapshot* g_loaded_for = nullptr;
char g_exe_path[kProfilePathBytes];

int collect_module(dl_phdr_info* info, std::size_t, void*) {
  if (g_loaded_count == g_loaded_capacity) return 1;
  const loaded::Span span = loaded::span_of(*info);
  if (span.empty()) return 0;
  const loaded::BuildId build_id = loaded::build_id_of(*info);
  LoadedModule module{span.begin, span.end, info->dlpi_addr, info->dlpi_name, build_id.bytes, build_id.size};
  if (module.name == nullptr || module.name[0] == 0) {
    // The program itself (the first object) has no name of its own here.
    if (g_exe_path[0] == 0) {
      os::program_path(g_exe_path, sizeof g_exe_path);
    }
    module.name = g_exe_path;
  }
  g_loaded[g_loaded_count++] = module;
  return 0;
}

int count_module(dl_phdr_info*, std::size_t, void* count) {
  ++*static_cast<std::size_t*>(count);
  return 0;
}

// Room for every object loaded now (and some loaded meanwhile): a larger
// mapping when the table is too small; the table as it is if refused.
void make_room_for_loaded() {
  std::size_t count = 0;
  dl_iterate_phdr(count_module, &count);
  if (count <= g_loaded_capacity) return;
  const std::size_t capacity = count + 64;
  const std::size_t bytes = capacity * sizeof(LoadedModule);
  const int saved_errno = errno;
  void* memory = os::map(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved_errno;
  if (memory == MAP_FAILED) return;
  if (g_loaded != g_static_loaded) os::unmap(g_loaded, g_loaded_capacity * sizeof(LoadedModule));
  g_loaded = static_cast<LoadedModule*>(memory);
  g_loaded_capacity = capacity;
}

void copy_path(char* out, const char* text) {
  std::size_t i = 0;
  for (; text[i] != 0 && i + 1 < kProfilePathBytes; ++i) out[i] = text[i];
  out[i] = 0;
}

}  // namespace

ProfileFrame FrameNamer::name(std::uintptr_t address) {
  if (g_loaded_for != &snapshot_ || snapshot_.module_count == 0) {
    make_room_for_loaded();
    g_loaded_count = 0;
    dl_iterate_phdr(collect_module, nullptr);
    g_loaded_for = &snapshot_;
  }
  ProfileFrame frame;
  frame.address = address;
  for (std::size_t i = 0; i < g_loaded_count; ++i) {
    const LoadedModule& module = g_loaded[i];
    if (address < module.start || address >= module.end) continue;
    frame.address = address - module.bias;
    std::uint32_t index = 0;
    for (; index < snapshot_.module_count; ++index) {
      if (strncmp(snapshot_.modules[index].path, module.name, kProfilePathBytes - 1) == 0) break;
    }
    if (index == snapshot_.module_count) {
      if (index == kProfileModules) {
        frame.address = address;
        return frame;
      }
      ProfileModule& added = snapshot_.modules[index];
      copy_path(added.path, module.name);
      added.build_id_bytes = module.build_id_bytes <= kProfileBuildIdBytes ? module.build_id_bytes : 0;
      memset(added.build_id, 0, sizeof added.build_id);
      if (added.build_id_bytes != 0) memcpy(added.build_id, module.build_id, added.build_id_bytes);
      snapshot_.module_count = index + 1;
    }
    frame.module = index;
    return frame;
  }
  return frame;
}

}  // namespace heapline::stacks
