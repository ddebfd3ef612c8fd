// The heapline/1 reader (heapline/report_reader.h): any bytes give a report
// or one line naming what is wrong, never a crash or an exception; what it
// accepts holds what the reader promises (a pid, at least one sample), and
// the reader's verdict on a text does not depend on where it came from.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

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
  for (const heapline::ReportMarker& marker : r.markers) {
    for (const char c : heapline::printable_text(marker.name)) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
    }
  }
  return 0;
}
