// The one reader of heapline/1 (heapline/report_reader.h): it reads back
// every field the writer writes, and refuses every other input with one
// line naming the file and the field; the launcher and `heapline clean`
// then go on (the command's exit status kept, other files cleaned).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <regex>
#include <string>

#include <cstring>
#include <heapline/figures.h>
#include <heapline/live_format.h>
#include <heapline/report_format.h>
#include <heapline/report_reader.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::ParsedReport;
using heapline::parse_report;
using heapline::read_report_file;
using heapline::ReportProblem;
using heapline::test::read_file;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;

// A report with every field set to a value of its own.
struct WrittenReport {
  heapline::Sample samples[2] = {{10, 20, 30}, {40, -50, 60}};
  heapline::Sample mapped_samples[1] = {{11, 21, 31}};
  heapline::Sample resident_samples[2] = {{12, 22, 32}, {42, 52, 62}};
  heapline::LiveMarker markers[heapline::kLiveMarkerCapacity];  // the first two claimed, 300 placed
  heapline::Report report{};
  std::unique_ptr<heapline::ProfileSnapshot> peak = std::make_unique<heapline::ProfileSnapshot>();
  heapline::SamplingReport sampling;
  WrittenReport() {
    peak->state = heapline::kProfileTaken;
    peak->time_ns = 201;
    peak->heap_bytes = 202;
    peak->mean_bytes = 203;
    peak->live_samples = 204;
    peak->stacks = 205;
    peak->total_bytes = 206;
    peak->total_variance = 100;  // 3 standard errors: 30
    peak->site_count = 1;
    peak->sites[0].bytes = 207;
    peak->sites[0].variance = 4;
    peak->sites[0].samples = 208;
    peak->sites[0].sampled_bytes = 209;
    peak->sites[0].frame_count = 2;
    peak->sites[0].frames[0] = {0, 0, 0x210};
    peak->sites[0].frames[1] = {heapline::kProfileNoModule, 0, 0x211};
    peak->other.bytes = 212;
    peak->other.samples = 213;
    peak->other.sampled_bytes = 214;
    peak->other_sites = 215;
    peak->module_count = 1;
    std::snprintf(peak->modules[0].path, sizeof peak->modules[0].path, "/lib/a \"b\".so");
    peak->modules[0].build_id[0] = 0xab;
    peak->modules[0].build_id[1] = 0x01;
    peak->modules[0].build_id_bytes = 2;
    sampling.mean_bytes = 216;
    sampling.unwinder = "frame-pointers";
    sampling.samples = 217;
    sampling.dropped = 218;
    sampling.peak_profile = peak.get();  // the exit profile: none (null)
    report.sampling = &sampling;
    markers[0].ready.store(1);
    markers[0].t_ns.store(77);
    std::snprintf(markers[0].name, sizeof markers[0].name, "phase \"one\"\n");
    markers[1].ready.store(0);  // claimed but not published: not written
    heapline::Report& r = report;
    r.pid = 101;
    r.ppid = 102;
    r.exe = "/usr/bin/some\tprogram";
    r.start_unix_ns = 103;
    r.duration_ns = 104;
    r.allocator = "glibc";
    r.size_basis = "usable";
    r.exact = false;
    r.bound_bytes = 105;
    r.budget_floor_bytes = 106;
    r.budget_divisor = 107;
    r.budget_bytes = 1000;
    r.max_threshold_bytes = 108;
    r.max_threads = 109;
    r.peak_bytes = 110;
    r.peak_time_ns = 111;
    r.final_bytes = -112;
    r.mapped_known = true;
    r.mapped_enabled = true;
    r.mapped_peak_bytes = 113;
    r.mapped_peak_time_ns = 114;
    r.mapped_final_bytes = 115;
    r.mapped_changes = 116;
    r.mapped_untracked = 117;
    r.total_peak_bytes = 118;
    r.total_peak_time_ns = 119;
    r.alloc_calls = 120;
    r.free_calls = 121;
    r.realloc_calls = 122;
    r.publishes = 123;
    r.interval_ns = 124;
    r.samples = samples;
    r.sample_count = 2;
    r.mapped_samples = mapped_samples;
    r.mapped_sample_count = 1;
    r.markers = markers;
    r.marker_slots = heapline::kLiveMarkerCapacity + 44;  // the rest published, each but the first not ready
    r.allocations_seen = 0;
    r.ended = "without-exit";
    r.last_sample_ns = 125;
    r.signal = 9;
    r.peak_rss_bytes = 126;
    r.resident_samples = resident_samples;
    r.resident_sample_count = 2;
    r.resident_peak_bytes = 129;
    r.resident_peak_time_ns = 130;
    r.resident_final_bytes = 131;
    r.live_file_problem = "no room \"here\"";
    r.exact_shadow_peak_bytes = 127;
    r.exact_shadow_final_bytes = -128;
  }
};

class ReportReader : public heapline::test::TempDirTest {
 protected:
  ReportReader() : TempDirTest("report-reader") {}
  // The writer's text of a report with every field set.
  std::string written() {
    WrittenReport w;
    const fs::path path = dir_ / "written.json";
    EXPECT_EQ(heapline::write_report_file(path.c_str(), w.report), 0);
    return read_file(path);
  }
  std::string error_of(const std::string& text) {
    const heapline::ReportReading reading = parse_report(text, "r.json");
    EXPECT_FALSE(reading) << text;
    return reading.error;
  }
};

// Writer and reader share report_format.h's field names: every field the
// writer writes comes back, with its value.
TEST_F(ReportReader, ReadsBackEveryFieldTheWriterWrites) {
  WrittenReport w;
  const fs::path path = dir_ / "r.json";
  ASSERT_EQ(heapline::write_report_file(path.c_str(), w.report), 0);
  const heapline::ReportReading reading = read_report_file(path.string());
  ASSERT_TRUE(reading) << reading.error;
  const ParsedReport& r = *reading.report;
  EXPECT_EQ(r.path, path.string());
  EXPECT_EQ(r.pid, 101);
  EXPECT_EQ(r.ppid, 102);
  EXPECT_EQ(r.exe, "/usr/bin/some\tprogram");
  EXPECT_EQ(r.start_unix_ns, 103u);
  EXPECT_EQ(r.duration_ns, 104u);
  EXPECT_EQ(r.allocator, "glibc");
  EXPECT_EQ(r.size_basis, "usable");
  EXPECT_FALSE(r.precision.exact);
  EXPECT_EQ(r.precision.bound_bytes, 105u);
  EXPECT_EQ(r.precision.budget_floor_bytes, 106u);
  EXPECT_EQ(r.precision.budget_divisor, 107u);
  EXPECT_EQ(r.precision.budget_bytes, 1000u);
  EXPECT_EQ(r.precision.min_threshold_bytes, 0u);
  EXPECT_EQ(r.precision.max_threshold_bytes, 108u);
  EXPECT_EQ(r.precision.max_threads, 109u);
  EXPECT_EQ(r.peak_bytes, 110);
  EXPECT_EQ(r.peak_time_ns, 111u);
  EXPECT_EQ(r.final_bytes, -112);
  EXPECT_EQ(r.mapped.mode, ParsedReport::MappedMode::kOn);
  EXPECT_EQ(r.mapped.peak_bytes, 113);
  EXPECT_EQ(r.mapped.peak_time_ns, 114u);
  EXPECT_EQ(r.mapped.final_bytes, 115);
  EXPECT_EQ(r.mapped.changes, 116u);
  EXPECT_EQ(r.mapped.untracked, 117u);
  EXPECT_EQ(r.total.peak_bytes, 118);
  EXPECT_EQ(r.total.peak_time_ns, 119u);
  EXPECT_EQ(r.total.final_bytes, -112 + 115);
  EXPECT_EQ(r.calls.alloc, 120u);
  EXPECT_EQ(r.calls.free, 121u);
  EXPECT_EQ(r.calls.realloc, 122u);
  EXPECT_EQ(r.publishes, 123u);
  EXPECT_EQ(r.interval_ns, 124u);
  EXPECT_EQ(r.allocations_seen, std::optional<bool>(false));
  EXPECT_EQ(r.ended, "without-exit");
  EXPECT_EQ(r.last_sample_ns, 125u);
  EXPECT_EQ(r.signal, 9);
  ASSERT_TRUE(r.exact_shadow.has_value());
  EXPECT_EQ(r.exact_shadow->peak_bytes, 127);
  EXPECT_EQ(r.exact_shadow->final_bytes, -128);
  ASSERT_EQ(r.markers.size(), 1u);
  EXPECT_EQ(r.markers_dropped, 44u);
  EXPECT_EQ(r.markers[0].t_ns, 77u);
  EXPECT_EQ(r.markers[0].name, "phase \"one\"\n");
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[1].t_ns, 40u);
  EXPECT_EQ(r.samples[1].live, -50);
  EXPECT_EQ(r.samples[1].max_live, 60);
  ASSERT_EQ(r.mapped_samples.size(), 1u);
  EXPECT_EQ(r.mapped_samples[0].max_live, 31);
  EXPECT_EQ(r.run_id, "");  // optional: this writer does not record it
  ASSERT_TRUE(r.sampling.has_value());
  EXPECT_EQ(r.sampling->mean_bytes, 216u);
  EXPECT_EQ(r.sampling->unwinder, "frame-pointers");
  EXPECT_EQ(r.sampling->samples, 217u);
  EXPECT_EQ(r.sampling->dropped, 218u);
  EXPECT_FALSE(r.sampling->exit_profile.has_value());
  ASSERT_TRUE(r.sampling->peak_profile.has_value());
  const heapline::ProfileData& peak = *r.sampling->peak_profile;
  EXPECT_EQ(peak.time_ns, 201u);
  EXPECT_EQ(peak.heap_bytes, 202);
  EXPECT_EQ(peak.mean_bytes, 203u);
  EXPECT_EQ(peak.live_samples, 204u);
  EXPECT_EQ(peak.stacks, 205u);
  EXPECT_EQ(peak.bytes, 206);
  EXPECT_EQ(peak.error_bytes, 30);
  ASSERT_EQ(peak.sites.size(), 1u);
  EXPECT_EQ(peak.sites[0].bytes, 207);
  EXPECT_EQ(peak.sites[0].error_bytes, 6);
  EXPECT_EQ(peak.sites[0].samples, 208u);
  EXPECT_EQ(peak.sites[0].sampled_bytes, 209u);
  ASSERT_EQ(peak.sites[0].frames.size(), 2u);
  EXPECT_EQ(peak.sites[0].frames[0].module, 0);
  EXPECT_EQ(peak.sites[0].frames[0].address, 0x210u);
  EXPECT_EQ(peak.sites[0].frames[1].module, -1);
  EXPECT_EQ(peak.sites[0].frames[1].address, 0x211u);
  EXPECT_EQ(peak.other.bytes, 212);
  EXPECT_EQ(peak.other.samples, 213u);
  EXPECT_EQ(peak.other.sampled_bytes, 214u);
  EXPECT_EQ(peak.other_sites, 215u);
  ASSERT_EQ(peak.modules.size(), 1u);
  EXPECT_EQ(peak.modules[0].path, "/lib/a \"b\".so");
  EXPECT_EQ(peak.modules[0].build_id, "ab01");
  EXPECT_EQ(r.peak_rss_bytes, std::optional<std::int64_t>(126));
  ASSERT_TRUE(r.resident.has_value());
  EXPECT_EQ(r.resident->peak_bytes, 129);
  EXPECT_EQ(r.resident->peak_time_ns, 130u);
  EXPECT_EQ(r.resident->final_bytes, 131);
  ASSERT_EQ(r.resident_samples.size(), 2u);
  EXPECT_EQ(r.resident_samples[0].t_ns, 12u);
  EXPECT_EQ(r.resident_samples[0].live, 22);
  EXPECT_EQ(r.resident_samples[1].t_ns, 42u);
  EXPECT_EQ(r.resident_samples[1].max_live, 62);
  EXPECT_EQ(r.live_file_problem, "no room \"here\"");
}

// The resident series is optional: a writer with no reading leaves its
// figures out and its series empty, and a report older than the series
// (neither field) reads, with the resident set unknown.
TEST_F(ReportReader, TheResidentSeriesIsOptional) {
  WrittenReport w;
  w.report.resident_final_bytes = -1;
  w.report.resident_sample_count = 0;
  const fs::path path = dir_ / "r.json";
  ASSERT_EQ(heapline::write_report_file(path.c_str(), w.report), 0);
  const nlohmann::json written = nlohmann::json::parse(read_file(path));
  EXPECT_FALSE(written.contains(heapline::report_key::kResident)) << written.dump();
  EXPECT_EQ(written.at(heapline::report_key::kResidentSamples).size(), 0u);
  heapline::ReportReading reading = read_report_file(path.string());
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_FALSE(reading.report->resident.has_value());
  EXPECT_TRUE(reading.report->resident_samples.empty());

  // -1 alone means no reading: a last reading of 0 bytes (a process whose
  // pages were all given back, as the kernel counts them) is a reading.
  w.report.resident_final_bytes = 0;
  ASSERT_EQ(heapline::write_report_file(path.c_str(), w.report), 0);
  reading = read_report_file(path.string());
  ASSERT_TRUE(reading) << reading.error;
  ASSERT_TRUE(reading.report->resident.has_value());
  EXPECT_EQ(reading.report->resident->final_bytes, 0);

  nlohmann::json older = nlohmann::json::parse(this->written());
  older.erase(heapline::report_key::kResident);
  older.erase(heapline::report_key::kResidentSamples);
  reading = parse_report(older.dump(), "older.json");
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_FALSE(reading.report->resident.has_value());
  EXPECT_TRUE(reading.report->resident_samples.empty());
  EXPECT_EQ(reading.report->peak_rss_bytes, std::optional<std::int64_t>(126));
}

// The peak resident set size is optional: a writer that does not know it
// (a report converted from a live file) leaves it out, and it reads as
// unknown.
TEST_F(ReportReader, ThePeakResidentSetIsOptional) {
  WrittenReport w;
  w.report.peak_rss_bytes = -1;
  const fs::path path = dir_ / "r.json";
  ASSERT_EQ(heapline::write_report_file(path.c_str(), w.report), 0);
  EXPECT_EQ(read_file(path).find(heapline::report_key::kPeakRssBytes), std::string::npos);
  const heapline::ReportReading reading = read_report_file(path.string());
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_FALSE(reading.report->peak_rss_bytes.has_value());
}

// The writer writes no field the reader does not know (and so cannot read
// back): the names come from one list.
TEST_F(ReportReader, KnowsEveryFieldTheWriterWrites) {
  const nlohmann::json report = nlohmann::json::parse(written());
  namespace key = heapline::report_key;
  const std::set<std::string> known = {
      key::kFormat, key::kPid, key::kPpid, key::kExe, key::kStartUnixNs, key::kDurationNs, key::kAllocator,
      key::kSizeBasis, key::kPrecision, key::kPeakBytes, key::kPeakTimeNs, key::kFinalBytes, key::kMapped,
      key::kTotal, key::kCalls, key::kPublishes, key::kIntervalNs, key::kAllocationsSeen, key::kEnded,
      key::kLastSampleNs, key::kSignal, key::kRunId, key::kPeakRssBytes, key::kResident, key::kResidentSamples, key::kExactShadow, key::kLiveFileProblem, key::kMarkersDropped, key::kMarkers, key::kSamples, key::kMappedSamples,
      key::kSampling, key::kPeakProfile, key::kExitProfile};
  for (const auto& [name, value] : report.items()) EXPECT_TRUE(known.count(name)) << name;
}

// A report of the per-thread policy (before the budget) reads, its
// minimum threshold and divisor kept, the budget's figures 0.
TEST_F(ReportReader, AReportWrittenBeforeTheBudgetReads) {
  nlohmann::json report = nlohmann::json::parse(written());
  report["precision"] = {{"mode", "batched"}, {"bound_bytes", 81920}, {"min_threshold_bytes", 16384},
                         {"divisor", 64}, {"max_threshold_bytes", 16384}, {"max_threads", 5}};
  const heapline::ReportReading reading = parse_report(report.dump(), "old.json");
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_EQ(reading.report->precision.bound_bytes, 81920u);
  EXPECT_EQ(reading.report->precision.min_threshold_bytes, 16384u);
  EXPECT_EQ(reading.report->precision.divisor, 64u);
  EXPECT_EQ(reading.report->precision.budget_divisor, 0u);
  EXPECT_EQ(reading.report->precision.max_threads, 5u);
}

// Every field the reader requires, removed in turn: the error names it.
TEST_F(ReportReader, AMissingFieldIsNamed) {
  const nlohmann::json good = nlohmann::json::parse(written());
  for (const char* name : {"pid", "ppid", "exe", "start_unix_ns", "duration_ns", "precision", "peak_bytes",
                           "peak_time_ns", "final_bytes", "calls", "publishes", "interval_ns", "samples"}) {
    nlohmann::json report = good;
    report.erase(name);
    EXPECT_EQ(error_of(report.dump()),
              std::string("r.json: not a valid heapline/1 report: field \"") + name + "\" is missing");
  }
  nlohmann::json report = good;
  report["precision"].erase("max_threads");
  EXPECT_EQ(error_of(report.dump()),
            "r.json: not a valid heapline/1 report: field \"precision.max_threads\" is missing");
  report = good;
  report["precision"].erase("budget_bytes");
  EXPECT_EQ(error_of(report.dump()),
            "r.json: not a valid heapline/1 report: field \"precision.budget_bytes\" is missing");
  // A report written before the budget has each thread's minimum threshold instead.
  report = good;
  for (const char* name : {"budget_floor_bytes", "budget_divisor", "budget_bytes"}) report["precision"].erase(name);
  EXPECT_EQ(error_of(report.dump()),
            "r.json: not a valid heapline/1 report: field \"precision.min_threshold_bytes\" is missing");
  report = good;
  report["total"].erase("peak_bytes");
  EXPECT_EQ(error_of(report.dump()), "r.json: not a valid heapline/1 report: field \"total.peak_bytes\" is missing");
}

TEST_F(ReportReader, AMistypedOrOutOfRangeFieldIsNamed) {
  const nlohmann::json good = nlohmann::json::parse(written());
  const std::string prefix = "r.json: not a valid heapline/1 report: field ";
  auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json report = good;
    report[nlohmann::json::json_pointer(pointer)] = value;
    return error_of(report.dump());
  };
  EXPECT_EQ(with("/pid", "x"), prefix + "\"pid\" is a string, not an integer");
  EXPECT_EQ(with("/pid", 0), prefix + "\"pid\" is out of range (0; 1 to 2147483647)");
  EXPECT_EQ(with("/pid", 4294967296), prefix + "\"pid\" is out of range (4294967296; 1 to 2147483647)");
  EXPECT_EQ(with("/pid", 1.5), prefix + "\"pid\" is not a whole number");
  EXPECT_EQ(with("/peak_bytes", 9223372036854775808u), prefix + "\"peak_bytes\" is out of range (9223372036854775808)");
  EXPECT_EQ(with("/duration_ns", -1), prefix + "\"duration_ns\" is out of range (-1; at least 0)");
  EXPECT_EQ(with("/exe", nullptr), prefix + "\"exe\" is null, not a string");
  EXPECT_EQ(with("/precision", nlohmann::json::array()), prefix + "\"precision\" is an array, not an object");
  EXPECT_EQ(with("/precision/mode", "rough"), prefix + "\"precision.mode\" is \"rough\", not one of \"exact\", \"batched\"");
  EXPECT_EQ(with("/ended", "x\ny"), prefix + "\"ended\" is \"x\\x0ay\", not one of \"exit\", \"without-exit\", \"running\"");
  EXPECT_EQ(with("/signal", 999), prefix + "\"signal\" is out of range (999; 1 to 127)");
  EXPECT_EQ(with("/allocations_seen", 1), prefix + "\"allocations_seen\" is a number, not true or false");
  EXPECT_EQ(with("/samples", nlohmann::json::array()),
            prefix + "\"samples\" is empty (a report has at least its first sample)");
  EXPECT_EQ(with("/samples/1", {1, 2}), prefix + "\"samples[1]\" is not [t_ns, bytes, max_bytes]");
  EXPECT_EQ(with("/samples/1/2", "9"), prefix + "\"samples[1][2]\" is a string, not an integer");
  EXPECT_EQ(with("/markers/0", {1, 2}), prefix + "\"markers[0]\" is not [t_ns, \"name\"]");
  EXPECT_EQ(with("/run_id", 5), prefix + "\"run_id\" is a number, not a string");
  EXPECT_EQ(with("/live_file_problem", 5), prefix + "\"live_file_problem\" is a number, not a string");
  EXPECT_EQ(with("/peak_rss_bytes", -1), prefix + "\"peak_rss_bytes\" is out of range (-1; at least 0)");
  EXPECT_EQ(with("/peak_rss_bytes", "1"), prefix + "\"peak_rss_bytes\" is a string, not an integer");
  EXPECT_EQ(with("/resident", 5), prefix + "\"resident\" is a number, not an object");
  EXPECT_EQ(with("/resident/peak_bytes", -1), prefix + "\"resident.peak_bytes\" is out of range (-1; at least 0)");
  EXPECT_EQ(with("/resident/final_bytes", -1), prefix + "\"resident.final_bytes\" is out of range (-1; at least 0)");
  EXPECT_EQ(with("/resident/peak_time_ns", -1), prefix + "\"resident.peak_time_ns\" is out of range (-1; at least 0)");
  EXPECT_EQ(with("/resident_samples/1", {1, 2}), prefix + "\"resident_samples[1]\" is not [t_ns, bytes, max_bytes]");
  EXPECT_EQ(with("/resident_samples/0/1", -1), prefix + "\"resident_samples[0][1]\" is out of range (at least 0)");
}

// A profile's estimates and their errors, each site's and the rest's, are
// never negative, and its sampling mean is at least a byte. Each is refused naming the
// field (a profile with "-5 B ± -1000 B" was printed, and its folded and
// pprof forms dropped the site without a word).
TEST_F(ReportReader, EveryAmountOfAProfileIsNeverNegative) {
  const nlohmann::json good = nlohmann::json::parse(written());
  const std::string prefix = "r.json: not a valid heapline/1 report: field ";
  ASSERT_FALSE(good["peak_profile"]["sites"].empty());
  for (const std::string field : {"peak_profile/bytes", "peak_profile/error_bytes", "peak_profile/sites/0/bytes",
                                  "peak_profile/sites/0/error_bytes", "peak_profile/other/bytes",
                                  "peak_profile/other/error_bytes"}) {
    nlohmann::json report = good;
    const nlohmann::json::json_pointer at("/" + field);
    ASSERT_TRUE(report.contains(at)) << field;
    report[at] = -5;
    std::string name = field;
    std::replace(name.begin(), name.end(), '/', '.');
    name = std::regex_replace(name, std::regex(R"(\.(\d+)(\.|$))"), "[$1]$2");
    EXPECT_EQ(error_of(report.dump()), prefix + "\"" + name + "\" is out of range (-5; at least 0)") << field;
  }
  nlohmann::json report = good;
  report["peak_profile"]["mean_bytes"] = 0;
  EXPECT_EQ(error_of(report.dump()), prefix + "\"peak_profile.mean_bytes\" is out of range (0; at least 1 in a profile)");
}

// Every figure of a report, found by walking what the writer wrote (so a
// field added later is found too): a byte figure within ±2^60 and a time
// within 2^62 ns are read, one past is refused naming the field, so that
// no sum of what the readers accept can overflow (heapline/figures.h).
TEST_F(ReportReader, EveryFigureIsReadWithinItsLimitAndRefusedPastIt) {
  const nlohmann::json good = nlohmann::json::parse(written());
  struct Figure {
    nlohmann::json::json_pointer pointer;
    std::string name;  // as the reader's message names it
    bool time;
  };
  std::vector<Figure> figures;
  // Integer leaves whose key ends in _bytes or _ns, and the figures of the
  // sample and marker arrays ([t_ns, bytes, max_bytes], [t_ns, name]).
  std::function<void(const nlohmann::json&, const nlohmann::json::json_pointer&, const std::string&, const std::string&)>
      walk = [&](const nlohmann::json& value, const nlohmann::json::json_pointer& at, const std::string& name,
                 const std::string& key) {
        if (value.is_object()) {
          for (const auto& [k, v] : value.items()) walk(v, at / k, name.empty() ? k : name + "." + k, k);
        } else if (value.is_array()) {
          const bool series = key.find("samples") != std::string::npos || key == "markers";
          for (std::size_t i = 0; i < value.size(); ++i) {
            const std::string item = name + "[" + std::to_string(i) + "]";
            if (series && value[i].is_array()) {
              for (std::size_t j = 0; j < value[i].size(); ++j) {
                if (value[i][j].is_number_integer()) figures.push_back({at / i / j, item + "[" + std::to_string(j) + "]", j == 0});
              }
            } else {
              walk(value[i], at / i, item, key);
            }
          }
        } else if (value.is_number_integer()) {
          const bool time = key.size() > 3 && key.compare(key.size() - 3, 3, "_ns") == 0;
          const bool bytes = key.size() >= 5 && key.compare(key.size() - 5, 5, "bytes") == 0;
          if (time || bytes) figures.push_back({at, name, time});
        }
      };
  walk(good, nlohmann::json::json_pointer(), "", "");
  ASSERT_GT(figures.size(), 40u);
  const std::string prefix = "r.json: not a valid heapline/1 report: field ";
  for (const Figure& figure : figures) {
    SCOPED_TRACE(figure.name);
    const std::uint64_t limit = figure.time ? heapline::kTimeLimitNs : static_cast<std::uint64_t>(heapline::kBytesLimit);
    nlohmann::json report = good;
    report[figure.pointer] = limit;
    const heapline::ReportReading at_limit = parse_report(report.dump(), "r.json");
    EXPECT_TRUE(at_limit) << at_limit.error;
    report[figure.pointer] = limit + 1;
    EXPECT_EQ(error_of(report.dump()).rfind(prefix + "\"" + figure.name + "\" is out of range (" + std::to_string(limit + 1), 0), 0u)
        << error_of(report.dump());
    if (!figure.time && good[figure.pointer].get<std::int64_t>() < 0) {
      report[figure.pointer] = -heapline::kBytesLimit - 1;
      EXPECT_NE(error_of(report.dump()).find("is out of range (-1152921504606846977"), std::string::npos);
    }
  }
}

// The writer's side of the same limits: whatever its figures hold (a
// report converted from a damaged or crafted live file), the report it
// writes is one the reader takes, each figure at its limit.
TEST_F(ReportReader, AReportOfAnyFiguresReadsBack) {
  WrittenReport w;
  heapline::Report& r = w.report;
  constexpr std::uint64_t kAnyTime = UINT64_MAX;
  r.start_unix_ns = r.duration_ns = r.peak_time_ns = r.mapped_peak_time_ns = r.total_peak_time_ns = kAnyTime;
  r.interval_ns = r.last_sample_ns = r.resident_peak_time_ns = kAnyTime;
  r.bound_bytes = r.budget_floor_bytes = r.budget_bytes = r.max_threshold_bytes = UINT64_MAX;
  r.peak_bytes = r.mapped_peak_bytes = r.total_peak_bytes = r.peak_rss_bytes = INT64_MAX;
  r.final_bytes = r.mapped_final_bytes = INT64_MAX;  // their sum is the total's final
  r.exact_shadow_peak_bytes = r.resident_peak_bytes = r.resident_final_bytes = INT64_MAX;
  r.exact_shadow_final_bytes = INT64_MIN;
  w.samples[0] = {kAnyTime, INT64_MIN, INT64_MAX};
  w.markers[0].t_ns.store(kAnyTime);
  w.peak->time_ns = kAnyTime;
  w.peak->heap_bytes = INT64_MIN;
  w.peak->mean_bytes = w.peak->sites[0].sampled_bytes = UINT64_MAX;
  w.peak->total_bytes = 1e30;
  const fs::path path = dir_ / "extreme.json";
  ASSERT_EQ(heapline::write_report_file(path.c_str(), r), 0);
  const heapline::ReportReading reading = parse_report(read_file(path), "extreme.json");
  ASSERT_TRUE(reading) << reading.error;
  const ParsedReport& back = *reading.report;
  EXPECT_EQ(back.start_unix_ns, heapline::kTimeLimitNs);
  EXPECT_EQ(back.peak_bytes, heapline::kBytesLimit);
  EXPECT_EQ(back.total.final_bytes, heapline::kBytesLimit);
  EXPECT_EQ(back.exact_shadow->final_bytes, -heapline::kBytesLimit);
  EXPECT_EQ(back.samples[0].live, -heapline::kBytesLimit);
  EXPECT_EQ(back.markers.at(0).t_ns, heapline::kTimeLimitNs);
  EXPECT_EQ(back.precision.bound_bytes, static_cast<std::uint64_t>(heapline::kBytesLimit));
}

TEST_F(ReportReader, WhatIsNotAReportIsSaidSo) {
  EXPECT_EQ(error_of(""), "r.json: empty, not a heapline/1 report");
  EXPECT_EQ(error_of(" \n"), "r.json: only white space, not a heapline/1 report");
  EXPECT_EQ(error_of("{\"format\""), "r.json: cut short (its JSON ends at byte 9, inside a value), not a heapline/1 report");
  EXPECT_EQ(error_of("{\"format\" x}"), "r.json: not JSON (a syntax error at byte 11), not a heapline/1 report");
  EXPECT_EQ(error_of("[1]"), "r.json: an array at the top level, not a heapline/1 report (a JSON object)");
  EXPECT_EQ(error_of("{\"format\":\"other/2\"}"), "r.json: no \"format\": \"heapline/1\": not a heapline/1 report");
  EXPECT_EQ(parse_report("{}", "r.json").problem, ReportProblem::kNotThisFormat);
  // A live file: heapline's, in the form heapline convert reads.
  std::string live(sizeof heapline::kLiveMagic, '\0');
  std::memcpy(live.data(), &heapline::kLiveMagic, sizeof heapline::kLiveMagic);
  live += std::string(64, '\0');
  EXPECT_EQ(error_of(live), "r.json: a heapline live file, not a report (heapline convert makes its report)");
  EXPECT_EQ(parse_report(live, "r.json").problem, ReportProblem::kLiveFile);
  EXPECT_EQ(parse_report("{\"format\":\"heapline/1\"}", "r.json").problem, ReportProblem::kBadField);
}

// No key twice, in any object of a report (the store's rule too): a key
// twice is refused naming it, never read as its last value (or as "no
// \"format\"" when the key is "format"). Every object of a written report
// is tried, so an object added later is tried too.
TEST_F(ReportReader, AKeyTwiceInAnyObjectIsRefusedNamingIt) {
  const nlohmann::json good = nlohmann::json::parse(written());
  std::size_t objects = 0;
  auto try_every_object = [&](auto& self, const nlohmann::json& value, const nlohmann::json::json_pointer& at,
                              const std::string& path) -> void {
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) self(self, value[i], at / i, path + "[" + std::to_string(i) + "]");
      return;
    }
    if (!value.is_object() || value.empty()) return;
    for (const auto& [key, each] : value.items()) self(self, each, at / key, path + (path.empty() ? "" : ".") + key);
    // The object with its first key written twice, once more before the
    // others (the first value the same as the second or not).
    const std::string first = value.begin().key();
    nlohmann::json report = good;
    report[at] = "@@object@@";
    std::string text = report.dump();
    const std::string object = value.dump();
    const std::string twice = "{" + nlohmann::json(first).dump() + ":1," + object.substr(1);
    text.replace(text.find("\"@@object@@\""), 12, twice);
    const std::string named = path + (path.empty() ? "" : ".") + first;
    EXPECT_EQ(error_of(text), "r.json: field \"" + named + "\" appears twice, not a heapline/1 report");
    ++objects;
  };
  try_every_object(try_every_object, good, nlohmann::json::json_pointer(), "");
  EXPECT_GE(objects, 3u);
  // The reviewer's two: a duplicated "format", and a figure given twice.
  const std::string text = written();
  const std::string format = "\"format\":\"heapline/1\"";
  ASSERT_NE(text.find(format), std::string::npos);
  std::string format_twice = text;
  format_twice.insert(text.find(format) + format.size(), ",\"format\":\"heapline/2\"");
  EXPECT_EQ(error_of(format_twice), "r.json: field \"format\" appears twice, not a heapline/1 report");
}

// Only a regular file is read; a FIFO is refused at once (an ordinary open
// would wait for a writer for ever).
TEST_F(ReportReader, OnlyARegularFileIsRead) {
  const fs::path fifo = dir_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto reading = read_report_file(fifo.string());
  EXPECT_EQ(reading.error, fifo.string() + " is a FIFO, not a regular file");
  EXPECT_EQ(reading.problem, ReportProblem::kUnreadable);
  EXPECT_EQ(read_report_file("/dev/null").error, "/dev/null is a character device, not a regular file");
  EXPECT_EQ(read_report_file(dir_.string()).error, dir_.string() + " is a directory, not a regular file");
  EXPECT_EQ(read_report_file((dir_ / "none.json").string()).error,
            (dir_ / "none.json").string() + ": No such file or directory");
  std::ofstream(dir_ / "empty.json").flush();
  EXPECT_EQ(read_report_file((dir_ / "empty.json").string()).error,
            (dir_ / "empty.json").string() + ": empty, not a heapline/1 report");
}

// The repro: a process of the run leaves a mistyped report. The launcher
// says which file, and passes the command's exit status through.
TEST_F(ReportReader, TheLauncherKeepsTheStatusWhenAReportIsMistyped) {
  RunOptions options;
  options.cwd = dir_;
  options.env = {{"HEAPLINE_LIB", HEAPLINE_LIB}};
  const std::string bad = R"({"format":"heapline/1","pid":"x"})";
  RunResult r = run({kLauncher, "--out", "r.json", "--", "/bin/sh", "-c", "echo '" + bad + "' > r.4242.json; exit 7"},
                    options);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find((dir_ / "r.4242.json").string() +
                       ": not a valid heapline/1 report: field \"pid\" is a string, not an integer\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("heapline: report r.json\n"), std::string::npos) << r.err;
}

// `heapline clean --reports` keeps a broken report, says why, and cleans the
// rest.
TEST_F(ReportReader, CleanGoesOnPastAMistypedReport) {
  std::ofstream(dir_ / "bad.json") << R"({"format":"heapline/1","pid":"x"})";
  std::ofstream(dir_ / "good.json") << written();
  RunResult r = run({kLauncher, "clean", dir_.string(), "--reports"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline clean: kept " + (dir_ / "bad.json").string() +
                       ": not a valid heapline/1 report: field \"pid\" is a string, not an integer\n"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "good.json")) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "bad.json"));
}

// A report cut short is heapline's all the same (it opens as every
// heapline/1 report does): kept, and said, not passed over as another
// program's JSON. Another program's broken JSON gets no word.
TEST_F(ReportReader, CleanSaysWhyItKeepsACutReport) {
  const std::string whole = written();
  std::ofstream(dir_ / "cut.json") << whole.substr(0, whole.size() / 2);
  std::ofstream(dir_ / "other.json") << R"({"other": 1)";
  RunResult r = run({kLauncher, "clean", dir_.string(), "--reports"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline clean: kept " + (dir_ / "cut.json").string() + ": cut short (its JSON ends at byte "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("other.json"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "cut.json"));
  EXPECT_TRUE(fs::exists(dir_ / "other.json"));
}

}  // namespace
