// The launcher's summary of a heapline/1 report, for stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <heapline/report_reader.h>

namespace heapline::launcher {

// "12.3 MiB" (binary units, one decimal).
std::string human_bytes(std::int64_t bytes);
// The report's peak resident set: the kernel's high-water mark at exit, or
// for a report without it (converted from a live file) the largest reading
// of its resident series; none from an older writer's converted report.
std::optional<std::int64_t> peak_resident_bytes(const ParsedReport& report);
// The same as human_bytes, "-" when the report holds neither.
std::string human_resident(const ParsedReport& report);
// "1.234 s"
std::string human_seconds(std::int64_t ns);

// Lines such as
//   heapline: peak 12.3 MiB at 1.234 s, final 1.0 MiB
//   heapline: mapped peak 250.0 MiB at 1.0 s, final 0 B; heap + mapped peak 262.1 MiB at 1.0 s, final 1.0 MiB
//   heapline: resident set peak 205.1 MiB at 0.900 s, final 2.0 MiB (read at samples; the kernel's high-water mark 207.0 MiB): ...
//   (or, from a writer without the resident series: heapline: peak resident set 207.0 MiB (the kernel's high-water mark: ...))
//   heapline: precision +/-167.9 KiB (batched: at most max(256.0 KiB, peak/100) = 256.0 KiB), 123 samples over 2.500 s
//   heapline: report heapline.sort.1234.json
std::string summarize(const ParsedReport& report, const std::string& report_path);

}  // namespace heapline::launcher
