// The heapline/1 reader (heapline/report_reader.h): any bytes give a report
// or one line naming what is wrong, never a crash or an exception; what it
// accepts holds what the reader promises (a pid, at least one sample), and
// the reader's verdict on a text does not depend on where it came from;
// every figure it accepts is within heapline/figures.h's limits, so that no
// sum of them overflows.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <heapline/figures.h>
#include <heapline/report_reader.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  heapline::ReportReading reading;
  try {
    reading = heapline::parse_report(text, "fuzz.json");
  } catch (...) {
    std::abort();  // the reader says what is wrong; it never throws
  }
  if (reading.report.has_value() != (reading.problem == heapline::ReportProblem::kNone)) std::abort();
  if (!reading) {
    // One line, naming the source.
    if (reading.error.rfind("fuzz.json", 0) != 0 || reading.error.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const heapline::ParsedReport& r = *reading.report;
  if (r.pid <= 0 || r.ppid < 0 || r.samples.empty() || r.signal < 0 || r.signal > 127) std::abort();
  auto bytes_ok = [](std::int64_t bytes) { return bytes == heapline::bounded_bytes(bytes); };
  auto ns_ok = [](std::uint64_t ns) { return ns == heapline::bounded_ns(ns); };
  for (const std::int64_t bytes : {r.peak_bytes, r.final_bytes, r.mapped.peak_bytes, r.mapped.final_bytes,
                                   r.total.peak_bytes, r.total.final_bytes}) {
    if (!bytes_ok(bytes)) std::abort();
  }
  for (const std::uint64_t ns : {r.start_unix_ns, r.duration_ns, r.peak_time_ns, r.mapped.peak_time_ns,
                                 r.total.peak_time_ns, r.interval_ns, r.last_sample_ns}) {
    if (!ns_ok(ns)) std::abort();
  }
  for (const auto* series : {&r.samples, &r.mapped_samples, &r.resident_samples}) {
    for (const heapline::Sample& s : *series) {
      if (!ns_ok(s.t_ns) || !bytes_ok(s.live) || !bytes_ok(s.max_live)) std::abort();
    }
  }
  for (const heapline::ReportMarker& marker : r.markers) {
    if (!ns_ok(marker.t_ns)) std::abort();
    if (!heapline::shows_as_written(heapline::terminal_text(marker.name))) std::abort();
  }
  return 0;
}
