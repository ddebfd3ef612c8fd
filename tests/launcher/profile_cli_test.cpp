// heapline profile and the profile in the launcher's summary and plot, run
// for real on the known-sites program (tests/interposer/programs/
// profile_sites.cpp: at the peak site_a holds 60 MiB, site_b 30, site_c 10),
// built with line tables so that frames name their file and line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::read_file;
using nlohmann::json;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;
const std::string kLib = HEAPLINE_LIB;
const std::string kProgram = PROFILE_SITES;
const std::string kCNames = C_NAMES;

// The program `name` as found on PATH, or "".
std::string program_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string directories = path != nullptr ? path : "";
  std::size_t start = 0;
  while (start <= directories.size()) {
    const std::size_t end = std::min(directories.find(':', start), directories.size());
    const fs::path candidate = fs::path(directories.substr(start, end - start)) / name;
    if (!directories.substr(start, end - start).empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// Where each of the three sites' names first appears in `text`, in order.
void expect_sites_in_order(const std::string& text) {
  const std::size_t a = text.find("site_a");
  const std::size_t b = text.find("site_b");
  const std::size_t c = text.find("site_c");
  ASSERT_NE(a, std::string::npos) << text;
  ASSERT_NE(b, std::string::npos) << text;
  ASSERT_NE(c, std::string::npos) << text;
  EXPECT_LT(a, b) << text;
  EXPECT_LT(b, c) << text;
}

class ProfileCli : public heapline::test::TempDirTest {
 protected:
  ProfileCli() : TempDirTest("profile-cli") {}

  RunOptions options() {
    RunOptions options;
    options.cwd = dir_;
    options.env["HEAPLINE_SAMPLE"] = "256k";
    options.env["HEAPLINE_SAMPLE_SEED"] = "7";
    options.env["HEAPLINE_LIB"] = kLib;
    return options;
  }

  // The known-sites program under the launcher: its report.
  fs::path report() {
    const RunResult result = run({kLauncher, "--out", "sites.json", "--", kProgram, "threads"}, options());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    summary_ = result.err;
    return dir_ / "sites.json";
  }

  std::string summary_;
};

TEST_F(ProfileCli, SummaryNamesTheLargestSitesAtThePeakWithFileAndLine) {
  report();
  const std::size_t at_peak = summary_.find("heapline: at the peak (profile_sites");
  ASSERT_NE(at_peak, std::string::npos) << summary_;
  expect_sites_in_order(summary_.substr(at_peak));
  EXPECT_TRUE(std::regex_search(summary_, std::regex(R"(site_a\(.*\) \(profile_sites\.cpp:\d+\))"))) << summary_;
  EXPECT_TRUE(std::regex_search(summary_, std::regex("MiB \u00b1 [0-9.]+ (MiB|KiB)"))) << summary_;
  // Under each site, the function that called it: site_a's is the worker.
  EXPECT_TRUE(std::regex_search(summary_, std::regex(R"(site_a\([^\n]*\nheapline: +< \(anonymous namespace\)::worker\(void\*\))")))
      << summary_;
}

TEST_F(ProfileCli, TextFoldedAndStdout) {
  const fs::path path = report();
  const RunResult text = run({kLauncher, "profile", path.string()}, options());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("peak profile of profile_sites"), std::string::npos) << text.out;
  expect_sites_in_order(text.out);
  EXPECT_NE(text.out.find("< (anonymous namespace)::worker(void*)"), std::string::npos) << "the stack below the site";

  const RunResult folded = run({kLauncher, "profile", path.string(), "--format", "folded"}, options());
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  expect_sites_in_order(folded.out);
  // root;outermost;...;innermost BYTES: the site last, the thread's start before it.
  EXPECT_TRUE(std::regex_search(folded.out, std::regex(R"(^profile_sites;[^\n]*start_thread;[^\n]*worker[^\n]*;[^\n;]*site_a[^\n;]* \d+$)",
                                                       std::regex::multiline)))
      << folded.out;

  // --sites: the largest N, the rest counted; -o writes the text to a file.
  const RunResult one = run({kLauncher, "profile", path.string(), "--sites", "1", "-o", "one.txt"}, options());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "");
  const std::string first = read_file(dir_ / "one.txt");
  EXPECT_NE(first.find("site_a"), std::string::npos) << first;
  EXPECT_EQ(first.find("site_b"), std::string::npos) << first;
  EXPECT_TRUE(std::regex_search(first, std::regex(R"(\n  [0-9.]+ \w+ in \d+ other sites?\n$)"))) << first;

  const RunResult at_exit = run({kLauncher, "profile", path.string(), "--at", "exit"}, options());
  ASSERT_EQ(at_exit.exit_code, 0) << at_exit.err;
  EXPECT_NE(at_exit.out.find("site_e"), std::string::npos) << "what was never freed: " << at_exit.out;
}

// Samples the sampler could not keep (its live set full) are in no site:
// the text says how many, since the estimates leave them out (a profile
// of a heap twice its estimate said nothing, with tight errors).
TEST_F(ProfileCli, SamplesTheSamplerDroppedAreSaidBesideTheEstimates) {
  json written = read_json(report());
  for (const std::uint64_t dropped : {0ull, 1234ull}) {
    SCOPED_TRACE(dropped);
    written["sampling"]["dropped"] = dropped;
    std::ofstream(dir_ / "dropped.json") << written.dump();
    const RunResult text = run({kLauncher, "profile", (dir_ / "dropped.json").string()}, options());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const std::string said = "  the process's sampler dropped 1234 samples (its live set was full, or it was busy): "
                             "the sites leave them out, so their estimates may be low\n";
    EXPECT_EQ(text.out.find("sampler dropped") != std::string::npos, dropped != 0) << text.out;
    if (dropped != 0) EXPECT_NE(text.out.find(said), std::string::npos) << text.out;
  }
}

TEST_F(ProfileCli, PprofFileIsGzippedAndGoToolPprofListsTheSites) {
  const fs::path path = report();
  const RunResult written = run({kLauncher, "profile", path.string(), "--format", "pprof", "-o", "sites.pb.gz"}, options());
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const std::string bytes = read_file(dir_ / "sites.pb.gz");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  const std::string go = program_on_path("go");
  if (go.empty()) {
    GTEST_SKIP() << "go is not installed (Debian golang-go, tools/setup.sh --test): go tool pprof not run";
  }
  RunOptions go_options = options();
  go_options.env["HOME"] = dir_.string();  // go keeps a cache there
  go_options.env["GOCACHE"] = (dir_ / "gocache").string();
  const RunResult top = run({go, "tool", "pprof", "-top", (dir_ / "sites.pb.gz").string()}, go_options);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("Type: inuse_space"), std::string::npos) << top.out;
  expect_sites_in_order(top.out);
  // Each value's type and unit as pprof reads them: bytes in use, a count
  // of samples, and the sampling period in bytes.
  const RunResult raw = run({go, "tool", "pprof", "-raw", (dir_ / "sites.pb.gz").string()}, go_options);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.out.find("PeriodType: space bytes\n"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("\ninuse_space/bytes[dflt] samples/count\n"), std::string::npos) << raw.out;
  // Each module as a mapping with its path, its build id (what a
  // symbolizer looks the binary up by) and what it holds.
  const nlohmann::json modules = read_json(path)["peak_profile"]["modules"];
  ASSERT_FALSE(modules.empty());
  for (const auto& module : modules) {
    EXPECT_NE(raw.out.find(" " + module["path"].get<std::string>() + " " + module["build_id"].get<std::string>() +
                           " [FN][FL][LN]\n"),
              std::string::npos)
        << module.dump() << "\n" << raw.out;
  }
}

TEST_F(ProfileCli, PprofNeedsAFile) {
  const fs::path path = report();
  const RunResult refused = run({kLauncher, "profile", path.string(), "--format", "pprof"}, options());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("give it with -o FILE"), std::string::npos) << refused.err;
}

TEST_F(ProfileCli, MalformedProfileIsOneLineNamingFileAndField) {
  const fs::path path = report();
  nlohmann::json bad = read_json(path);
  bad["peak_profile"]["sites"][1]["frames"][0] = "not a frame";
  std::ofstream(dir_ / "bad.json") << bad.dump();
  const RunResult refused = run({kLauncher, "profile", "bad.json"}, options());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "heapline profile: bad.json: not a valid heapline/1 report: field \"peak_profile.sites[1].frames[0]\" is not "
            "[module, address]\n");
  EXPECT_EQ(refused.out, "") << "nothing half written";
}

// A module that cannot name its frames (its file changed since the run, or
// is gone) is said once each, on stderr, with why; the profile is still
// written, its frames there as module and address.
TEST_F(ProfileCli, AModuleThatCannotNameItsFramesIsSaidOnceWithWhy) {
  const fs::path path = report();
  nlohmann::json changed = read_json(path);
  nlohmann::json& modules = changed["peak_profile"]["modules"];
  std::string program, real_id;
  for (auto& module : modules) {
    if (fs::path(module["path"].get<std::string>()).filename() == "profile_sites") {
      program = module["path"].get<std::string>();
      real_id = module["build_id"].get<std::string>();
      module["build_id"] = std::string(real_id.size(), '0');
    }
  }
  ASSERT_FALSE(program.empty()) << modules.dump();
  ASSERT_FALSE(real_id.empty()) << "profile_sites is built with a build id";
  std::ofstream(dir_ / "changed.json") << changed.dump();
  const RunResult text = run({kLauncher, "profile", "changed.json"}, options());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.err, "heapline profile: " + program + ": build id " + real_id + ", the process had " +
                          std::string(real_id.size(), '0') + " (the file changed since)\n");
  EXPECT_EQ(text.out.find("site_a"), std::string::npos) << "no name from another build: " << text.out;
  EXPECT_NE(text.out.find("peak profile of profile_sites"), std::string::npos) << text.out;

  nlohmann::json gone = read_json(path);
  for (auto& module : gone["peak_profile"]["modules"]) {
    if (module["path"] == program) module["path"] = (dir_ / "gone" / "profile_sites").string();
  }
  std::ofstream(dir_ / "gone.json") << gone.dump();
  const RunResult missing = run({kLauncher, "profile", "gone.json"}, options());
  ASSERT_EQ(missing.exit_code, 0) << missing.err;
  EXPECT_EQ(missing.err,
            "heapline profile: " + (dir_ / "gone" / "profile_sites").string() + ": No such file or directory\n");
}

// Python's object allocator keeps its objects in arenas it maps itself:
// at the peak of heap + mapped (building a list of a million tuples), the
// sampled sites estimate most of it (at least 60%), at the default mean,
// and the arenas' sites are there as mapped memory, named up to the
// object allocation that grew them (PyTuple_New, PyUnicode_New: the
// program's own functions have no names in Debian's stripped python3).
TEST_F(ProfileCli, PythonsArenasAreSitesAtThePeakOfHeapPlusMapped) {
  const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  RunOptions at_default = options();
  at_default.env["HEAPLINE_SAMPLE"] = std::nullopt;
  at_default.env["PYTHONHASHSEED"] = "0";
  const RunResult result = run({kLauncher, "--profile", "--out", "python.json", "--", python, "-c",
                                "x=[(i,str(i)) for i in range(1000000)]"},
                               at_default);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json profile = read_json(dir_ / "python.json").at("peak_profile");
  ASSERT_TRUE(profile.is_object());
  const double held = profile["heap_bytes"].get<double>() + profile["mapped_bytes"].get<double>();
  EXPECT_GE(profile["bytes"].get<double>(), 0.6 * held) << profile.dump().substr(0, 2000);
  double mapped_sites = 0;
  for (const json& site : profile["sites"]) {
    if (site.value("kind", "") == "mapped") mapped_sites += site["bytes"].get<double>();
  }
  EXPECT_GE(mapped_sites, 0.5 * profile["mapped_bytes"].get<double>()) << "the arenas are mapped memory";
  EXPECT_NE(result.err.find("(mapped) python3"), std::string::npos) << result.err;
  // The first named frame above an arena's pymalloc frames: the object's
  // allocation in Debian's x86-64 python3.11. Its arm64 python3.11 is
  // compiled otherwise, and names other functions first: the tuples' arenas
  // are grown under _PyObject_GC_NewVar, the strings' under PyObject_Str.
#if defined(__aarch64__)
  const std::string grown_for = "(_PyObject_GC_NewVar|PyObject_Str)";
#else
  const std::string grown_for = "Py(Tuple|Unicode)_New";
#endif
  EXPECT_TRUE(std::regex_search(result.err, std::regex(R"(\(mapped\) python3[^\n]*\n[^\n]*< [^\n]*)" + grown_for)))
      << "an arena's site, named up to the object it was grown for: " << result.err;
}

// Two sites of one function in a program without line tables read apart:
// each with its offset in the function and its address in the module.
TEST_F(ProfileCli, SitesWithoutLineTablesAreToldApartByTheirAddresses) {
  RunOptions every = options();
  every.env["HEAPLINE_SAMPLE"] = "1";
  ASSERT_EQ(run({kLauncher, "-q", "--out", "two.json", "--", TWO_SITES}, every).exit_code, 0);
  const RunResult text = run({kLauncher, "profile", "two.json", "--at", "exit"}, options());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::regex site(R"(tab_init\+0x[0-9a-f]+ \(two_sites\+0x[0-9a-f]+\))");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.out.begin(), text.out.end(), site); it != std::sregex_iterator(); ++it) {
    if (std::find(names.begin(), names.end(), it->str()) == names.end()) names.push_back(it->str());
  }
  EXPECT_EQ(names.size(), 2u) << "the two sites, each named once and apart: " << text.out;
}

TEST_F(ProfileCli, ReportWithoutSamplingSaysSo) {
  RunOptions off = options();
  off.env["HEAPLINE_SAMPLE"] = "off";
  ASSERT_EQ(run({kLauncher, "--out", "off.json", "--", kProgram, "threads"}, off).exit_code, 0);
  const RunResult refused = run({kLauncher, "profile", "off.json"}, options());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err,
            "heapline profile: off.json: no heap profile (the heap sampler was off: run with heapline --profile, or "
            "HEAPLINE_SAMPLE=on)\n");
}

// The sampler is off unless asked for: --profile turns it on at the 4 MiB
// mean, and a HEAPLINE_SAMPLE of the user's own wins over it.
TEST_F(ProfileCli, LauncherSamplesOnlyWhenAsked) {
  struct Case {
    std::vector<std::string> flags;
    std::optional<std::string> sample;
    std::int64_t mean;
  };
  const Case cases[] = {{{}, std::nullopt, 0},
                        {{"--profile"}, std::nullopt, 4 << 20},
                        {{"--profile"}, "256k", 256 << 10},
                        {{}, "256k", 256 << 10}};
  int index = 0;
  for (const Case& c : cases) {
    RunOptions asked = options();
    asked.env["HEAPLINE_SAMPLE"] = c.sample;
    const std::string name = "asked" + std::to_string(index++) + ".json";
    std::vector<std::string> argv = {kLauncher, "--out", name};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    argv.insert(argv.end(), {"--", kProgram, "threads"});
    const RunResult result = run(argv, asked);
    SCOPED_TRACE(name);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(read_json(dir_ / name)["sampling"]["mean_bytes"].get<std::int64_t>(), c.mean) << result.err;
  }
}

// --profile with a HEAPLINE_SAMPLE that gives no profile (off, 0, garbage,
// empty): one line saying why, before the command runs (it writes nothing,
// runs nothing), status 2.
TEST_F(ProfileCli, ProfileWithTheSamplerSetOffOrNotValidIsRefusedWithWhy) {
  const std::pair<std::string, std::string> cases[] = {
      {"off", "heapline: --profile: HEAPLINE_SAMPLE=off in the environment turns the heap sampler off: no profile "
              "would come; unset it or give a mean such as 4m; the command was not run\n"},
      {"0", "heapline: --profile: HEAPLINE_SAMPLE='0' in the environment is not valid (expected off, on (4m), or a "
            "mean in bytes from 1 to 1099511627776 with an optional k, m or g such as 4m), and the library would "
            "sample nothing: no profile would come; unset it or give a mean; the command was not run\n"},
      {"lots\x1b[2J", "heapline: --profile: HEAPLINE_SAMPLE='lots\\x1b[2J' in the environment is not valid"},
      {"", "heapline: --profile: HEAPLINE_SAMPLE='' in the environment is not valid"},
  };
  for (const auto& [sample, said] : cases) {
    SCOPED_TRACE("HEAPLINE_SAMPLE=" + sample);
    RunOptions asked = options();
    asked.env["HEAPLINE_SAMPLE"] = sample;
    const RunResult result =
        run({kLauncher, "--out", "refused.json", "--profile", "--", "/bin/sh", "-c", "echo ran > ran"}, asked);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.err.substr(0, said.size()), said);
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
    EXPECT_FALSE(fs::exists(dir_ / "refused.json"));
  }
}

// A process killed at its peak leaves its latest peak profile in the live
// file: convert puts it in the report.
TEST_F(ProfileCli, KilledProcessKeepsItsPeakProfileInTheLiveFile) {
  RunOptions direct = options();
  direct.env["LD_PRELOAD"] = kLib;
  direct.env["HEAPLINE_OUT"] = (dir_ / "killed.json").string();
  direct.env["HEAPLINE_ROOT_PID"] = std::nullopt;
  const heapline::test::Started started = heapline::test::start({kProgram, "threads", "hold"}, direct);
  ASSERT_TRUE(heapline::test::wait_for_output(started, "peak", 60000)) << started.out_so_far();
  ::kill(started.pid, SIGKILL);
  heapline::test::finish(started);
  ASSERT_TRUE(fs::exists(dir_ / "killed.json.live"));
  const RunResult converted = run({kLauncher, "convert", "killed.json.live", "-o", "converted.json"}, options());
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const nlohmann::json report = read_json(dir_ / "converted.json");
  ASSERT_TRUE(report["peak_profile"].is_object()) << report.dump().substr(0, 300);
  EXPECT_GT(report["peak_profile"]["heap_bytes"].get<std::int64_t>(), 90 << 20);
  const RunResult text = run({kLauncher, "profile", "converted.json"}, options());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  expect_sites_in_order(text.out);
  // It never exited: no exit profile, said as such ("no sampled block was
  // live at exit" was said of a process killed holding 100 MiB).
  const RunResult at_exit = run({kLauncher, "profile", "converted.json", "--at", "exit"}, options());
  EXPECT_EQ(at_exit.exit_code, 1);
  EXPECT_EQ(at_exit.err, "heapline profile: converted.json: no exit profile (the process ended without exit); --at "
                         "peak shows its latest peak profile\n");
}

// A report without "sampling" says why as the report tells it: converted
// from a live file that kept none (the sampler off, or the process killed
// before a sample), or written by a heapline without the sampler; never a
// claim about the heapline of a report the sampler made.
TEST_F(ProfileCli, AReportWithoutSamplingSaysWhyAsTheReportTellsIt) {
  nlohmann::json written = read_json(report());
  for (const char* key : {"sampling", "peak_profile", "exit_profile"}) written.erase(key);
  for (const auto& [ended, said] : std::vector<std::pair<std::string, std::string>>{
           {"exit", "no heap profile (the report has no \"sampling\": written by a heapline without the sampler)"},
           {"without-exit", "no heap profile (converted from a live file that kept none: the heap sampler was off, or "
                            "the process ended before it kept a sample)"}}) {
    nlohmann::json edited = written;
    edited["ended"] = ended;
    if (ended != "exit") edited["last_sample_ns"] = edited["duration_ns"];
    std::ofstream(dir_ / "edited.json") << edited.dump();
    const RunResult refused = run({kLauncher, "profile", "edited.json"}, options());
    EXPECT_EQ(refused.exit_code, 1) << ended;
    EXPECT_EQ(refused.err, "heapline profile: edited.json: " + said + "\n") << ended;
  }
}

// Only a symbol that starts with _Z is a mangled C++ name: C functions named
// i, d, f, w and Dn (which a demangler reads as int, double, float, wchar_t
// and decltype(nullptr)) keep their names in the summary and in every format
// of heapline profile.
TEST_F(ProfileCli, NamesThatAreNotMangledAreShownAsTheBinarySpellsThem) {
  const RunResult result = run({kLauncher, "--out", "c.json", "--", kCNames}, options());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const RunResult text = run({kLauncher, "profile", "c.json"}, options());
  const RunResult folded = run({kLauncher, "profile", "c.json", "--format", "folded"}, options());
  const RunResult pprof = run({kLauncher, "profile", "c.json", "--format", "pprof", "-o", "c.pb.gz"}, options());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
  std::string proto;
  {
    gzFile file = gzopen((dir_ / "c.pb.gz").c_str(), "rb");
    ASSERT_NE(file, nullptr);
    char buffer[4096];
    for (int n; (n = gzread(file, buffer, sizeof buffer)) > 0;) proto.append(buffer, static_cast<std::size_t>(n));
    gzclose(file);
  }
  for (const std::string type : {"int", "double", "float", "wchar_t", "decltype(nullptr)"}) {
    EXPECT_EQ(result.err.find(" " + type + " ("), std::string::npos) << type << "\n" << result.err;
    EXPECT_EQ(text.out.find(" " + type + " ("), std::string::npos) << type << "\n" << text.out;
    EXPECT_EQ(folded.out.find(";" + type + " "), std::string::npos) << type << "\n" << folded.out;
    // A string of the profile's table: field 6, length-delimited.
    EXPECT_EQ(proto.find(std::string{'\x32', static_cast<char>(type.size())} + type), std::string::npos) << type;
  }
  for (const std::string name : {"i", "d", "f", "w", "Dn"}) {
    EXPECT_NE(result.err.find("  " + name + " (c_names.c:"), std::string::npos) << name << "\n" << result.err;
    EXPECT_NE(text.out.find("  " + name + " (c_names.c:"), std::string::npos) << name << "\n" << text.out;
    EXPECT_NE(folded.out.find(";" + name + " "), std::string::npos) << name << "\n" << folded.out;
    EXPECT_NE(proto.find(std::string{'\x32', static_cast<char>(name.size())} + name), std::string::npos) << name;
  }
}

// Every file a report names is read only when it is a regular file holding
// an ELF image (heapline/regular_file.h, then the ELF magic): a report whose
// module table names a FIFO, a device, /proc/self/mem, a directory, a link
// to a FIFO or a text file is named by module and address, each module's
// problem in one line, and never waited on (the FIFO has no writer: an
// open of it would block for ever, hence `timeout`).
TEST_F(ProfileCli, ModulesAReportNamesAreReadOnlyWhenTheyAreRegularElfFiles) {
  const fs::path path = report();
  ASSERT_EQ(mkfifo((dir_ / "fifo.so").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "fifo.so", dir_ / "link-to-fifo.so");
  fs::create_directory(dir_ / "directory.so");
  std::ofstream(dir_ / "text.so") << std::string(4096, 'x');
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {(dir_ / "fifo.so").string(), " is a FIFO, not a regular file"},
      {"/dev/urandom", " is a character device, not a regular file"},
      {"/proc/self/mem", " is not an ELF file"},
      {(dir_ / "directory.so").string(), " is a directory, not a regular file"},
      {(dir_ / "link-to-fifo.so").string(), " is a FIFO, not a regular file"},
      {(dir_ / "text.so").string(), " is not an ELF file"},
  };
  nlohmann::json report = read_json(path);
  for (const char* at : {"peak_profile", "exit_profile"}) {
    auto& modules = report[at]["modules"];
    ASSERT_GE(modules.size(), 1u);
    for (std::size_t i = 0; i < modules.size(); ++i) modules[i]["path"] = hostile[i % hostile.size()].first;
  }
  const std::size_t named = std::min(report["peak_profile"]["modules"].size(), hostile.size());
  std::ofstream(dir_ / "hostile.json") << report.dump();
  for (const std::string format : {"text", "folded"}) {
    const RunResult result =
        run({"/usr/bin/timeout", "60", kLauncher, "profile", (dir_ / "hostile.json").string(), "--format", format},
            options());
    ASSERT_EQ(result.exit_code, 0) << format << ": " << result.err;
    EXPECT_FALSE(result.out.empty());
    for (std::size_t i = 0; i < named; ++i) {
      EXPECT_NE(result.err.find("heapline profile: " + hostile[i].first + hostile[i].second + "\n"), std::string::npos)
          << hostile[i].first << "\n" << result.err;
    }
  }
}

TEST_F(ProfileCli, PlotMarksThePeakWithItsTopSite) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  RunOptions plot = options();
  const RunResult result =
      run({kLauncher, "--out", "sites.json", "--plot", "sites.svg", "--", kProgram, "threads"}, plot);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string svg = read_file(dir_ / "sites.svg");
  EXPECT_NE(svg.find("; most held by "), std::string::npos);
  EXPECT_NE(svg.find("site_a"), std::string::npos) << "the peak's top site is labelled";
}

}  // namespace
