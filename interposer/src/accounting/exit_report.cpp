// The report at process exit: exact final figures, the last sample, the
// heapline/1 file (report_format.h), and the one-line summary on stderr
// (HEAPLINE_SUMMARY=1).
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>

#include "exact_shadow.h"
#include "heap_sampler.h"
#include "intercepted.h"
#include "live_region.h"
#include "loaded_object.h"
#include "mapped_memory.h"
#include "os.h"
#include "output.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

namespace {

char g_exe[kMaxPath];
char g_path[kMaxPath];
ProfileSnapshot g_exit_profile;  // static: see the exit path's note on stacks
SamplingReport g_sampling_report;

// The sampler's figures, and the profile of what was never freed.
const SamplingReport* sampling_at_exit(std::int64_t final_bytes, std::int64_t mapped_bytes, std::uint64_t t_ns) {
  SamplingReport& s = g_sampling_report;
  s.mean_bytes = sampler::mean_bytes();
  if (s.mean_bytes == 0) return &s;
  const sampler::Totals totals = sampler::totals();
  s.unwinder = sampler::unwinder_name();
  s.entry_points = kSampledFunctions;
  s.entry_point_count = sizeof kSampledFunctions / sizeof kSampledFunctions[0];
  s.samples = totals.samples;
  s.dropped = totals.dropped;
  s.live_capacity = sampler::live_capacity();
  s.stack_capacity = sampler::stack_capacity();
  s.snapshots = totals.snapshots;
  // The exit may be the peak (a program that frees nothing): the peak
  // profile follows it as it follows any publish.
  sampler::peak_raised(g_region->peak_profile, final_bytes, mapped_bytes, t_ns);
  s.peak_profile = &g_region->peak_profile;
  sampler::snapshot_now(g_exit_profile, final_bytes, mapped_bytes, t_ns);
  s.exit_profile = &g_exit_profile;
  return &s;
}

// The first definition of malloc in the dynamic linker's load order (the
// program, then its preloads and libraries, then what dlopen added): what
// the program's calls are bound to, and the object defining it.
// A non-PIE program that takes malloc's address has an undefined malloc
// with a value (a canonical PLT entry): not a definition, skipped.
struct FirstMalloc {
  const char* object = nullptr;
  void* address = nullptr;
};

int find_first_malloc(dl_phdr_info* info, std::size_t, void* data) {
  auto* first = static_cast<FirstMalloc*>(data);
  void* handle = dlopen(info->dlpi_name[0] != 0 ? info->dlpi_name : nullptr, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* found = info->dlpi_name[0] != 0 ? dlsym(handle, "malloc") : dlsym(RTLD_DEFAULT, "malloc");
  dlclose(handle);
  Dl_info where{};
  void* entry = nullptr;
  if (found == nullptr || dladdr1(found, &where, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return 0;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol->st_shndx == SHN_UNDEF) return 0;
  // Only a definition in this very object counts now (dlsym also searched
  // its dependencies): its mapping starts at the page of its lowest loaded
  // segment (the kernel's page: 4, 16 or 64 KiB on arm64).
  const loaded::Span span = loaded::span_of(*info);
  const std::uintptr_t page = os::page_size();
  if (span.empty() || reinterpret_cast<std::uintptr_t>(where.dli_fbase) != (span.begin & ~(page - 1))) return 0;
  const char* name = where.dli_fname != nullptr ? where.dli_fname : "";
  first->object = name[0] != 0 ? name : "the program";
  first->address = found;
  return 1;
}

// Whether the malloc the program calls is this library's. `culprit` gets
// the object whose malloc it is otherwise. True when it cannot tell (the
// accounting linked into a test program rather than a shared object).
// Calls into the loader (dlopen, dl_iterate_phdr), which takes its lock and
// allocates: never in a fork child (write_report_at_exit).
bool program_malloc_is_ours(const char** culprit) {
  Dl_info ours{};
  if (dladdr(reinterpret_cast<void*>(&program_malloc_is_ours), &ours) == 0 || ours.dli_fname == nullptr) return true;
  void* self = dlopen(ours.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (self == nullptr) return true;
  void* own = dlsym(self, "malloc");
  dlclose(self);
  FirstMalloc first;
  dl_iterate_phdr(find_first_malloc, &first);
  if (own == nullptr || first.address == nullptr || first.address == own) return true;
  *culprit = first.object;
  return false;
}

// "peak X at T s, final Y[, mapped peak ..., total peak ... at T s]"
void append_figures(TextSink& text, const Report& report) {
  text.append("peak ");
  text.append_bytes(report.peak_bytes);
  text.append(" at ");
  text.append_seconds(report.peak_time_ns);
  text.append(" s, final ");
  text.append_bytes(report.final_bytes);
  if (report.mapped_enabled) {
    text.append(", mapped peak ");
    text.append_bytes(report.mapped_peak_bytes);
    text.append(" at ");
    text.append_seconds(report.mapped_peak_time_ns);
    text.append(" s, final ");
    text.append_bytes(report.mapped_final_bytes);
    text.append(", total peak ");
    text.append_bytes(report.total_peak_bytes);
    text.append(" at ");
    text.append_seconds(report.total_peak_time_ns);
    text.append(" s");
  }
}

void print_summary(const Report& report, std::size_t samples, const char* path, int write_error) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  text.append("heapline: ");
  append_figures(text, report);
  text.append(", precision ");
  if (report.exact) {
    text.append("exact");
  } else {
    text.append("+/-");
    text.append_bytes(static_cast<std::int64_t>(report.bound_bytes));
  }
  text.append(", ");
  text.append_unsigned(samples);
  text.append(" samples, ");
  if (path == nullptr) {
    text.append("no output (HEAPLINE_OUT=off)");
  } else if (write_error != 0) {
    text.append("output not written");
  } else {
    text.append("output ");
    text.append_shown(path);
  }
  text.append('\n');
  write_stderr(line, text.size());
}

}  // namespace

void write_report_at_exit() {
  // A copy made without the fork handler writes its own report as a fork
  // child would; a process running in another's memory writes nothing and
  // leaves `finished` alone (both are its parent's).
  if (!acts_as_itself()) return;
  if (g_process.finished.exchange(true)) return;
  if (!g_process.followed) return;  // HEAPLINE_FOLLOW=command: not the command
  int saved_errno = errno;

  // Exact figures: the published value plus every registered thread's
  // pending delta, so an idle thread never hides bytes.
  const std::int64_t published = g_published.live.load(std::memory_order_relaxed);
  const RegistryTotals totals = registry_totals();
  const std::int64_t final_bytes = published + totals.pending;
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  raise_peaks(final_bytes, now);
  const mapped::Figures mapped_figures = mapped::figures();
  raise_total_peak(final_bytes + mapped_figures.live, now);

  // The final sample. Another thread may be appending one right now (exit()
  // does not stop threads); wait for it a little, never forever.
  const bool locked = lock_sampling();
  g_process.live_file_floor = INT64_MAX;  // a live file is of no use any more
  if (locked) {
    // What a cut of the live file lost, found now if not before: the report
    // reads every series.
    settle_cut_live_file(true);
    now = take_sample(final_bytes);
  }
  g_region->header.state.store(kLiveExited, std::memory_order_release);

  const Config& config = g_process.config;
  const NextAllocator& next = next_allocator();
  char* exe = g_exe;
  os::program_path(exe, sizeof g_exe);
  const std::uint64_t max_threads = g_threads.max_registered.load(std::memory_order_relaxed);
  const std::uint64_t max_threshold = static_cast<std::uint64_t>(g_budget.max_threshold.load(std::memory_order_relaxed));
  const std::uint64_t bound = static_cast<std::uint64_t>(g_budget.bound.load(std::memory_order_relaxed));
  Report report{};
  report.pid = os::pid();
  report.ppid = os::parent_pid();
  report.exe = exe;
  report.start_unix_ns = g_process.start_unix_ns;
  report.duration_ns = since_start(now);
  report.allocator = next.name;
  report.size_basis = next.size_basis;
  report.exact = config.precision.exact;
  report.bound_bytes = config.precision.exact ? 0 : bound;
  report.budget_floor_bytes = config.precision.exact ? 0 : config.precision.budget_floor_bytes;
  report.budget_divisor = config.precision.exact ? 0 : config.precision.budget_divisor;
  report.budget_bytes = budget_for_peak(g_published.peak.load(std::memory_order_relaxed), config.precision);
  report.max_threshold_bytes = config.precision.exact ? 1 : max_threshold;
  report.max_threads = max_threads;
  report.peak_bytes = g_published.peak.load(std::memory_order_relaxed);
  report.peak_time_ns = g_published.peak_time_ns.load(std::memory_order_relaxed);
  report.final_bytes = final_bytes;
  report.mapped_enabled = mapped::enabled();
  report.mapped_peak_bytes = mapped_figures.peak;
  report.mapped_peak_time_ns = since_start(mapped_figures.peak_time_ns);
  report.mapped_final_bytes = mapped_figures.live;
  report.mapped_changes = mapped_figures.changes;
  report.mapped_untracked = mapped_figures.untracked;
  const PeakAt total = run_total_peak();
  report.total_peak_bytes = total.bytes;
  report.total_peak_time_ns = total.t_ns;
  report.peak_rss_bytes = os::peak_resident_bytes();
  if (g_sampling.resident_live >= 0) {
    report.resident_peak_bytes = g_sampling.resident_peak;
    report.resident_peak_time_ns = g_sampling.resident_peak_ns;
    report.resident_final_bytes = g_sampling.resident_live;
    report.resident_samples = g_resident_timeline.storage()->samples;
    report.resident_sample_count = g_resident_timeline.size();
  }
  if constexpr (shadow::kEnabled) {
    report.exact_shadow_peak_bytes = shadow::g_exact_shadow.peak.load(std::memory_order_relaxed);
    report.exact_shadow_final_bytes = shadow::g_exact_shadow.live.load(std::memory_order_relaxed);
  }
  report.alloc_calls = totals.calls[kAllocCall];
  report.free_calls = totals.calls[kFreeCall];
  report.realloc_calls = totals.calls[kReallocCall];
  report.publishes = totals.publishes;
  report.interval_ns = g_timeline.interval_ns();
  report.samples = g_timeline.storage()->samples;
  report.sample_count = g_timeline.size();
  report.mapped_samples = g_mapped_timeline.storage()->samples;
  report.mapped_sample_count = mapped::enabled() && mapped_series_kept() ? g_mapped_timeline.size() : 0;
  report.markers = g_region->markers;
  if (g_region != &g_static_region) {
    // A marker written while a deferred live file was being created may be
    // only in the static copy (live_header.cpp).
    const std::uint32_t claimed = g_process.markers_claimed.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < claimed && i < kLiveMarkerCapacity; ++i) {
      if (g_region->markers[i].ready.load(std::memory_order_acquire) == 0 &&
          g_static_region.markers[i].ready.load(std::memory_order_acquire) != 0) {
        memcpy(static_cast<void*>(&g_region->markers[i]), static_cast<const void*>(&g_static_region.markers[i]),
               sizeof(LiveMarker));
      }
    }
  }
  report.marker_slots = g_process.markers_claimed.load(std::memory_order_acquire);
  report.ended = "exit";
  describe_cut_live_file();
  if (g_process.live_file_problem[0] != 0) report.live_file_problem = g_process.live_file_problem;
  if (g_process.config.run_id[0] != 0) report.run_id = g_process.config.run_id;
  report.sampling = sampling_at_exit(final_bytes, mapped::enabled() ? mapped_figures.live : 0, report.duration_ns);
  // A fork child never asks: a thread of the parent that was inside the
  // loader at the fork left the child's copy of the loader's lock held (it
  // would wait for ever), and a fork from a signal handler may have left
  // malloc's state mid-update (the loader allocates). It cannot tell, so it
  // says seen, as when the library cannot tell; its parent asks at its own
  // exit. (Asked at load instead, the loader's own allocations and a
  // program's dlsym that allocates would mix in the program's figures.)
  const char* culprit = nullptr;
  report.allocations_seen = g_process.fork_child || program_malloc_is_ours(&culprit) ? 1 : 0;
  if (report.allocations_seen == 0) {
    char* line = g_line;
    TextSink text(line, sizeof g_line);
    text.append("heapline: the program's malloc is not libheapline's (it comes from ");
    text.append_shown(culprit);
    text.append(": heapline loaded with dlopen, preloaded after another allocator, or the program's own malloc); "
                "the figures miss the program's allocations\n");
    write_stderr(line, text.size());
  }

  char* path = g_path;
  const char* written_path = nullptr;
  int error = 0;
  if (!config.output_off) {
    if (g_process.report_path[0] != 0) {
      copy_text(path, sizeof g_path, g_process.report_path);  // claimed with the live file
      error = write_report_file(path, report, config.kill_writer);
    } else if (!format_output_path(config.out_template, g_process.base_dir, report.pid,
                                   program_invocation_short_name, !is_root_process(), path, sizeof g_path)) {
      error = ENAMETOOLONG;
    } else if (is_root_process()) {
      // The command's plain name, which no live file claimed: two processes
      // never write one file, so a report another process of the run wrote
      // there first is kept, and this one takes the name with its pid.
      const UnclaimedName name{path, sizeof g_path, report.pid,
                               static_cast<std::int64_t>(g_process.start_unix_ns / 1'000'000'000)};
      error = write_report_file(name, report, config.kill_writer);
    } else {
      error = write_report_file(path, report, config.kill_writer);
    }
    written_path = path;
    // The report is on disk: the live file has served its purpose. (Still
    // mapped: later destructors may allocate and sample into it, harmlessly.)
    if (error == 0) remove_live_file();
    if (error != 0) {
      char* line = g_line;
      TextSink text(line, sizeof g_line);
      if (g_process.live_path[0] == 0 && error == g_process.live_file_error) {
        // The live file's line said this cause at the start: said once.
        text.append("heapline: ");
        text.append_shown(path);
        text.append(" was not written either");
      } else {
        append_failure(text, "write", path, error);
      }
      if (error == EFBIG) {
        text.append(" (the file size limit, ulimit -f, is ");
        text.append_unsigned(os::file_size_limit());
        text.append(" bytes)");
      }
      if (g_process.live_path[0] != 0) {
        text.append("; the heap line stays in ");
        text.append_shown(g_process.live_path);
      } else {
        // Nothing else holds them: the figures, at least, reach the user.
        text.append("; the heap line is lost (");
        text.append_unsigned(g_timeline.size());
        text.append(" samples), its figures: ");
        append_figures(text, report);
      }
      text.append('\n');
      write_stderr(line, text.size());
    }
  }
  if (locked) g_sampling.busy.store(false, std::memory_order_release);
  if (config.summary) print_summary(report, g_timeline.size(), written_path, error);
  errno = saved_errno;
}

void write_report_at_early_exit() {
  // A vfork child runs in its parent's memory, with its parent's pid in
  // g_process (no fork handler ran): anything it did here would be the
  // parent's report, and it would remove the parent's live file. The one
  // identity check (acts_as_itself) tells it.
  write_report_at_exit();
}

}  // namespace heapline::accounting
