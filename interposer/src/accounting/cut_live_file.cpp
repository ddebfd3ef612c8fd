// A live file cut under its running process (slow_paths.h). What a cut
// loses is found by where it lay: the guard says from which offset the
// mapping is zeroed memory now (every page past the file's end is replaced
// at once, os.h), and the page below it may be the file's last, zeroed past
// the new end by the kernel: every sample, marker or profile with a byte in
// that span is taken as lost. A sample written there after the cut, in
// memory, is dropped with them (the page below is not told apart): a
// sample too many dropped, never a zero kept. A heap sample lost takes its
// mapped twin with it (a pair ends the same interval); a mapped sample lost
// beside a heap sample kept gives up the report's mapped series.
#include <cstddef>
#include <cstdint>

#include "heap_sampler.h"
#include "live_region.h"
#include "os.h"
#include "process.h"
#include "sampling.h"
#include "slow_paths.h"

namespace heapline::accounting {

namespace {

// What cuts of this heap line's live file lost (under the sampling lock).
struct CutRecord {
  // The offset in the region from which every loss has been accounted for
  // (the guarded length, whole pages: the file is whole as far as is known).
  std::size_t settled = SIZE_MAX;
  unsigned cuts = 0;
  std::uint64_t noticed_ns = 0;  // the first cut's, since start
  // The span of the heap line's lost samples: from the sample kept before
  // them to the one kept after them (or the moment the loss was found).
  std::uint64_t lost_from_ns = UINT64_MAX;
  std::uint64_t lost_to_ns = 0;
  std::size_t samples = 0;   // of the heap line (with their mapped twins)
  std::size_t readings = 0;  // of the resident series
  std::size_t markers = 0;
  bool mapped_series = false;  // a mapped sample lost beside a heap sample kept
  bool profile = false;      // the peak profile (with the sampler on)
  std::uint64_t markers_counted[kLiveMarkerCapacity / 64] = {};
};
constinit CutRecord g_cut;
// The live file's name kept among the process's mappings once none of its
// pages is (os::map_name_only), or nullptr.
void* g_name_page = nullptr;

void release_name_page() {
  if (g_name_page != nullptr) os::unmap(g_name_page, os::page_size());
  g_name_page = nullptr;
}

// Sample i is kept when bit i is set.
std::uint64_t g_keep[kTimelineCapacity / 64];

void keep_all() {
  for (std::uint64_t& word : g_keep) word = ~std::uint64_t{0};
}
void drop(std::size_t i) { g_keep[i / 64] &= ~(std::uint64_t{1} << (i % 64)); }

// A span of the region, in bytes from its start.
struct Span {
  std::size_t begin, end;
};

bool overlaps(const void* object, std::size_t size, Span lost) {
  const auto at = static_cast<std::size_t>(static_cast<const char*>(object) - reinterpret_cast<const char*>(g_region));
  return at < lost.end && at + size > lost.begin;
}

// The heap samples with a byte in `lost`, and their mapped twins, dropped
// together (the span they covered noted); a mapped sample lost whose heap
// twin is whole makes the mapped series lost (the heap line is kept: the
// two pair by index, and a mapped sample cannot be made up).
void drop_lost_samples(Span lost, std::uint64_t now_ns) {
  const std::size_t count = g_timeline.size();
  const std::size_t mapped_count = g_mapped_timeline.size();
  keep_all();
  std::size_t first = SIZE_MAX, last = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (overlaps(&g_timeline[i], sizeof(Sample), lost)) {
      drop(i);
      if (first == SIZE_MAX) first = i;
      last = i;
    } else if (i < mapped_count && overlaps(&g_mapped_timeline[i], sizeof(Sample), lost)) {
      g_cut.mapped_series = true;
    }
  }
  if (first != SIZE_MAX) {
    const std::uint64_t from = first > 0 ? g_timeline[first - 1].t_ns : 0;
    const std::uint64_t to = last + 1 < count ? g_timeline[last + 1].t_ns : now_ns;
    if (from < g_cut.lost_from_ns) g_cut.lost_from_ns = from;
    if (to > g_cut.lost_to_ns) g_cut.lost_to_ns = to;
  }
  g_cut.samples += g_timeline.keep_only(g_keep);
  g_mapped_timeline.keep_only(g_keep);
  keep_all();
  for (std::size_t i = 0; i < g_resident_timeline.size(); ++i) {
    if (overlaps(&g_resident_timeline[i], sizeof(Sample), lost)) drop(i);
  }
  g_cut.readings += g_resident_timeline.keep_only(g_keep);
}

// Samples that go back in time: what a merge made of zeroed samples before
// their loss was found (a merge keeps the later sample's time). Dropped,
// the heap and mapped series together.
void drop_back_in_time() {
  const std::size_t count = g_timeline.size();
  const std::size_t mapped_count = g_mapped_timeline.size();
  keep_all();
  std::uint64_t heap_t = 0, mapped_t = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const bool back = g_timeline[i].t_ns < heap_t ||
                      (!g_cut.mapped_series && i < mapped_count && g_mapped_timeline[i].t_ns < mapped_t);
    if (back) {
      drop(i);
      continue;
    }
    heap_t = g_timeline[i].t_ns;
    if (i < mapped_count) mapped_t = g_mapped_timeline[i].t_ns;
  }
  g_cut.samples += g_timeline.keep_only(g_keep);
  g_mapped_timeline.keep_only(g_keep);
  keep_all();
  std::uint64_t resident_t = 0;
  for (std::size_t i = 0; i < g_resident_timeline.size(); ++i) {
    if (g_resident_timeline[i].t_ns < resident_t) {
      drop(i);
    } else {
      resident_t = g_resident_timeline[i].t_ns;
    }
  }
  g_cut.readings += g_resident_timeline.keep_only(g_keep);
}

// Markers written before the cut where it fell (claimed, no longer ready,
// and not in the static copy the exit report takes them from), once each.
void count_lost_markers(Span lost) {
  const std::uint32_t claimed = g_process.markers_claimed.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < claimed && i < kLiveMarkerCapacity; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if ((g_cut.markers_counted[i / 64] & bit) != 0) continue;
    if (!overlaps(&g_region->markers[i], sizeof(LiveMarker), lost)) continue;
    if (g_region->markers[i].ready.load(std::memory_order_acquire) != 0) continue;
    if (g_static_region.markers[i].ready.load(std::memory_order_acquire) != 0) continue;
    g_cut.markers_counted[i / 64] |= bit;
    ++g_cut.markers;
  }
}

// "N samples of the heap line (A s to B s), the mapped series, M markers,
// R resident readings and the peak profile", or "nothing of the heap line".
void append_losses(TextSink& text) {
  enum class Loss { kSamples, kMappedSeries, kMarkers, kReadings, kProfile };
  Loss losses[5];
  int count = 0;
  if (g_cut.samples > 0) losses[count++] = Loss::kSamples;
  if (g_cut.mapped_series) losses[count++] = Loss::kMappedSeries;
  if (g_cut.markers > 0) losses[count++] = Loss::kMarkers;
  if (g_cut.readings > 0) losses[count++] = Loss::kReadings;
  if (g_cut.profile) losses[count++] = Loss::kProfile;
  if (count == 0) text.append("nothing of the heap line");
  for (int i = 0; i < count; ++i) {
    if (i > 0) text.append(i + 1 == count ? " and " : ", ");
    switch (losses[i]) {
      case Loss::kSamples:
        text.append_unsigned(g_cut.samples);
        text.append(g_cut.samples == 1 ? " sample of the heap line" : " samples of the heap line");
        if (g_cut.lost_from_ns <= g_cut.lost_to_ns) {  // else only samples a merge made of zeroed ones
          text.append(" (");
          text.append_seconds(g_cut.lost_from_ns);
          text.append(" s to ");
          text.append_seconds(g_cut.lost_to_ns);
          text.append(" s)");
        }
        break;
      case Loss::kMappedSeries:
        text.append("the mapped series");
        break;
      case Loss::kMarkers:
        text.append_unsigned(g_cut.markers);
        text.append(g_cut.markers == 1 ? " marker" : " markers");
        break;
      case Loss::kReadings:
        text.append_unsigned(g_cut.readings);
        text.append(g_cut.readings == 1 ? " resident reading" : " resident readings");
        break;
      case Loss::kProfile:
        text.append("the peak profile");
        break;
    }
  }
}

// One line on stderr, the first time a cut is found.
void say_cut() {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  text.append("heapline: ");
  text.append_shown(g_process.live_path);
  text.append(" was cut short by another process while the program ran: ");
  append_losses(text);
  text.append(" lost; from there on the heap line is kept in memory only (a kill loses it), the report at exit has it\n");
  write_stderr(line, text.size());
}

}  // namespace

void guard_live_file(bool fresh) {
  if (fresh) g_cut = CutRecord{};
  release_name_page();
  const std::size_t page = os::page_size();
  g_cut.settled = (sizeof(LiveRegion) + page - 1) / page * page;  // what settle_cut_mapping says of a whole file
  if (g_region != &g_static_region) os::guard_cut_mapping(g_region, sizeof(LiveRegion));
}

void unguard_live_file() {
  os::unguard_cut_mapping();
  release_name_page();
}

void settle_cut_live_file(bool everything) {
  if (g_region == &g_static_region) return;
  if (!everything && !os::cut_mapping_seen()) return;
  const std::size_t cut_from = os::settle_cut_mapping();
  if (cut_from < g_cut.settled) {
    const std::size_t page = os::page_size();
    const Span lost{cut_from >= page ? cut_from - page : 0, g_cut.settled};
    g_cut.settled = cut_from;
    const std::uint64_t now_ns = since_start(clock_ns(CLOCK_MONOTONIC));
    drop_lost_samples(lost, now_ns);
    count_lost_markers(lost);
    if (sampler::enabled() && overlaps(&g_region->peak_profile, sizeof(ProfileSnapshot), lost)) g_cut.profile = true;
    if (g_cut.cuts++ == 0) {
      g_cut.noticed_ns = now_ns;
      say_cut();
    }
    // None of the file is mapped now: its name stays among the process's
    // mappings all the same, where `heapline top` looks for it.
    if (cut_from == 0 && g_name_page == nullptr) g_name_page = os::map_name_only(g_process.live_path, g_process.live_id);
  }
  if (everything && g_cut.cuts > 0) drop_back_in_time();
}

bool mapped_series_kept() { return !g_cut.mapped_series; }

void describe_cut_live_file() {
  if (g_cut.cuts == 0 || g_process.live_file_problem[0] != 0) return;
  TextSink problem(g_process.live_file_problem, sizeof g_process.live_file_problem);
  problem.append("cut short by another process at ");
  problem.append_seconds(g_cut.noticed_ns);
  problem.append(" s");
  if (g_cut.cuts > 1) {
    problem.append(" (and ");
    problem.append_unsigned(g_cut.cuts - 1);
    problem.append(g_cut.cuts == 2 ? " time more)" : " times more)");
  }
  problem.append(": ");
  append_losses(problem);
  problem.append(" lost; the figures are exact, and the heap line after it was kept in memory");
  problem.c_str();
}

}  // namespace heapline::accounting
