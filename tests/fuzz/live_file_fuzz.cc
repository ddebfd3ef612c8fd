// The live-file reader (launcher/src/live_view.h) as `heapline convert`,
// `top` and `clean` use it: any bytes in a file, whatever a crash, a disk or
// a person left there, give a snapshot or one line saying what is wrong,
// never a crash; a snapshot converts into a report that the heapline/1
// reader reads back, whose peak (and resident peak) is never below a
// sample's maximum, and `top`'s screen of it shows no heap + mapped peak
// below the heap's peak.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <heapline/report_reader.h>

#include "live_view.h"

namespace fs = std::filesystem;
using namespace heapline::launcher;

namespace {

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "heapline-live-fuzz.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    return fs::path(pattern);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd_create("live", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const LiveFile file(path);
    for (const bool still_writing : {false, true}) {
      LiveSnapshot snapshot;
      try {
        snapshot = take_snapshot(file, still_writing);
      } catch (const std::runtime_error&) {
        continue;  // refused, with its reason
      }
      (void)render_top(snapshot, still_writing);
      if (still_writing) continue;
      const fs::path out = scratch() / "converted.json";
      write_converted_report(file, snapshot, out, "without-exit", 0);
      const heapline::ReportReading reading = heapline::read_report_file(out.string());
      if (!reading) {
        std::fprintf(stderr, "live_file: the converted report does not read back: %s\n", reading.error.c_str());
        std::abort();
      }
      for (const heapline::Sample& sample : reading.report->samples) {
        if (sample.max_live > reading.report->peak_bytes) std::abort();
      }
      if (reading.report->mapped_on() && reading.report->total.peak_bytes < reading.report->peak_bytes) std::abort();
      // The resident figures hold the series: never a reading above its peak.
      if (reading.report->resident) {
        for (const heapline::Sample& sample : reading.report->resident_samples) {
          if (sample.max_live > reading.report->resident->peak_bytes) std::abort();
        }
      }
    }
  } catch (const std::runtime_error&) {
    // Not a live file, or not one this heapline reads: said in one line.
  }
  close(fd);
  return 0;
}
