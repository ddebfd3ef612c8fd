// Unit tests of the interposer's pure parts: settings, output names, the
// timeline's merging, the JSON writer and the byte formatting.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "config.h"
#include "output.h"
#include "text.h"
#include "timeline.h"

namespace heapline {
namespace {

TEST(Config, IntervalMilliseconds) {
  std::uint64_t ms = 99;
  EXPECT_TRUE(parse_interval_ms("0", &ms));
  EXPECT_EQ(ms, 0u);
  EXPECT_TRUE(parse_interval_ms("250", &ms));
  EXPECT_EQ(ms, 250u);
  for (const char* bad : {"", "-1", "1.5", "10ms", " 10", "86400001", "99999999999999999999"}) {
    EXPECT_FALSE(parse_interval_ms(bad, &ms)) << bad;
  }
  EXPECT_EQ(ms, 250u);
}

TEST(Config, Precision) {
  Precision p;
  EXPECT_TRUE(parse_precision("exact", &p));
  EXPECT_TRUE(p.exact);
  EXPECT_TRUE(parse_precision("batched", &p));
  EXPECT_FALSE(p.exact);
  EXPECT_EQ(p.budget_floor_bytes, 262144u);
  EXPECT_EQ(p.budget_divisor, 100u);
  EXPECT_TRUE(parse_precision("65536,32", &p));
  EXPECT_EQ(p.budget_floor_bytes, 65536u);
  EXPECT_EQ(p.budget_divisor, 32u);
  EXPECT_TRUE(parse_precision("4096", &p));
  EXPECT_EQ(p.budget_floor_bytes, 4096u);
  EXPECT_EQ(p.budget_divisor, 100u);
  for (const char* bad : {"", "fast", "0", "10,0", ",5", "5,", "1,2,3", "-4", "Exact", "2000000000000"}) {
    EXPECT_FALSE(parse_precision(bad, &p)) << bad;
  }
}

// Each setting's limit is taken and one past it refused: the interval (a
// day in ms), the budget and its divisor (2^40), the sampler's mean (2^40
// bytes, 1024g), the root's pid (the kernel's largest, 2^22).
TEST(Config, EveryLimitIsTakenAndOnePastItRefused) {
  std::uint64_t ms = 0;
  EXPECT_TRUE(parse_interval_ms("86400000", &ms));
  EXPECT_EQ(ms, 86'400'000u);
  EXPECT_FALSE(parse_interval_ms("86400001", &ms));
  Precision p;
  EXPECT_TRUE(parse_precision("1099511627776,1099511627776", &p));
  EXPECT_EQ(p.budget_floor_bytes, std::uint64_t{1} << 40);
  EXPECT_EQ(p.budget_divisor, std::uint64_t{1} << 40);
  EXPECT_TRUE(parse_precision("1,1", &p));
  EXPECT_EQ(p.budget_floor_bytes, 1u);
  EXPECT_EQ(p.budget_divisor, 1u);
  EXPECT_FALSE(parse_precision("1099511627777", &p));
  EXPECT_FALSE(parse_precision("1,1099511627777", &p));
  std::uint64_t mean = 0;
  EXPECT_TRUE(parse_sample_mean("1099511627776", &mean));
  EXPECT_EQ(mean, std::uint64_t{1} << 40);
  EXPECT_FALSE(parse_sample_mean("1099511627777", &mean));
  EXPECT_TRUE(parse_sample_mean("1073741824k", &mean));
  EXPECT_FALSE(parse_sample_mean("1073741825k", &mean));
  EXPECT_TRUE(parse_sample_mean("1048576m", &mean));
  EXPECT_FALSE(parse_sample_mean("1048577m", &mean));
  int pid = 0;
  EXPECT_TRUE(parse_pid("4194304", &pid));
  EXPECT_FALSE(parse_pid("4194305", &pid));
  EXPECT_TRUE(parse_pid("1", &pid));
  EXPECT_FALSE(parse_pid("0", &pid));
}

// Each spelling docs/usage.md gives a setting is taken, with its meaning,
// and a near miss (another case, a word of another setting) is refused:
// every switch on / 1 / off / 0, HEAPLINE_FOLLOW tree / command,
// HEAPLINE_SAMPLE off / on / a mean with k, m or g (binary units),
// HEAPLINE_PRECISION exact / BYTES[,DIVISOR].
TEST(Config, EverySpellingTheDocsGiveIsTakenAndNoOther) {
  for (const auto& [text, meaning] : {std::pair<const char*, bool>{"on", true}, {"1", true}, {"off", false}, {"0", false}}) {
    bool on = !meaning;
    EXPECT_TRUE(parse_switch(text, &on)) << text;
    EXPECT_EQ(on, meaning) << text;
  }
  bool on = false;
  for (const char* near : {"On", "OFF", "yes", "true", "tree", "", "2", "01", " 1", "1 "}) {
    EXPECT_FALSE(parse_switch(near, &on)) << near;
  }
  std::uint64_t mean = 0;
  for (const auto& [text, bytes] : {std::pair<const char*, std::uint64_t>{"off", 0}, {"on", 4u << 20}, {"3k", 3u << 10},
                                    {"3m", 3u << 20}, {"3g", std::uint64_t{3} << 30}, {"3000", 3000}, {"1", 1}}) {
    EXPECT_TRUE(parse_sample_mean(text, &mean)) << text;
    EXPECT_EQ(mean, bytes) << text;
  }
  for (const char* near : {"On", "4 MiB", "4mib", "3kb", "1t", "exact", "0", "0k", "000"}) {
    EXPECT_FALSE(parse_sample_mean(near, &mean)) << near;
  }
  Precision precision;
  EXPECT_TRUE(parse_precision("exact", &precision));
  EXPECT_TRUE(precision.exact);
  EXPECT_TRUE(parse_precision("262144,100", &precision));
  EXPECT_FALSE(precision.exact);
  for (const char* near : {"EXACT", "exactly", "on", "256k", "262144;100"}) {
    EXPECT_FALSE(parse_precision(near, &precision)) << near;
  }
}

// Every HEAPLINE_* variable, by the kind of its value: each kind is read by
// one rule (heapline/option_values.h), so the same spellings are taken and
// refused for every variable of a kind. The table must name every variable
// load_config reads: a new one needs its row.
enum class Kind { kSwitch, kWholeNumber, kSampleMean, kPrecision, kWord, kTemplate, kName };
struct SettingRow {
  const char* name;
  Kind kind;
  std::vector<const char*> taken;  // besides the kind's own
};

TEST(Config, EveryVariableOfAKindTakesTheSameSpellings) {
  const std::vector<SettingRow> table = {
      {"HEAPLINE_OUT", Kind::kTemplate, {"off", "r.json", "%e.%p.json"}},
      {"HEAPLINE_INTERVAL_MS", Kind::kWholeNumber, {"0", "86400000"}},
      {"HEAPLINE_PRECISION", Kind::kPrecision, {"exact", "batched", "1", "1099511627776,1099511627776"}},
      {"HEAPLINE_SUMMARY", Kind::kSwitch, {}},
      {"HEAPLINE_MAPPED", Kind::kSwitch, {}},
      {"HEAPLINE_FOLLOW", Kind::kWord, {"tree", "command"}},
      {"HEAPLINE_ROOT_PID", Kind::kWholeNumber, {"1", "4194304"}},
      {"HEAPLINE_SAMPLE", Kind::kSampleMean, {"off", "on", "1", "1024g", "4m"}},
      {"HEAPLINE_SAMPLE_SEED", Kind::kWholeNumber, {"0", "18446744073709551615"}},
      {"HEAPLINE_RUN_ID", Kind::kName,
       {"4471-0123456789abcdef", "a", "A.b_c-1", "012345678901234567890123456789012345678901234567890123456789012"}},
#if HEAPLINE_TEST_HOOKS
      {"HEAPLINE_TEST_KILL_WRITER", Kind::kWord, {"mid-write", "before-rename", "live-before-rename"}},
#endif
  };
  std::set<std::string> read;
  for (std::size_t i = 0; setting_name(i) != nullptr; ++i) read.insert(setting_name(i));
  std::set<std::string> listed;
  for (const SettingRow& row : table) listed.insert(row.name);
  EXPECT_EQ(listed, read) << "a HEAPLINE_* variable without its row here";

  // What no variable takes: a number in another base or with a sign,
  // spaces, an exponent, NaN, another case, an empty value.
  const std::vector<const char*> refused_by_all = {"", " 1", "1 ", "+1", "0x10", "1e3", "1.0", "nan", "inf", "-1",
                                                   "ON", "Off", "yes", "true", "99999999999999999999999"};
  const std::map<Kind, std::vector<const char*>> kind_taken = {
      {Kind::kSwitch, {"on", "1", "off", "0"}},
      {Kind::kSampleMean, {"on", "off", "3k", "3m", "3g", "3K"}},
  };
  const std::map<Kind, std::vector<const char*>> kind_refused = {
      {Kind::kSwitch, {"2", "01", "tree"}},
      {Kind::kWholeNumber, {"1k", "one", "4194305999999999999999"}},
      {Kind::kSampleMean, {"0", "0k", "1t", "3kb", "4 MiB", "1099511627777"}},
      {Kind::kPrecision, {"0", "1,0", ",5", "5,", "1,2,3", "1099511627777"}},
      {Kind::kWord, {"Tree", "on", "1"}},
      // 64 bytes: one past the longest (kRunIdBytes, its NUL included).
      {Kind::kName, {"0123456789012345678901234567890123456789012345678901234567890123"}},
  };
  for (const SettingRow& row : table) {
    SCOPED_TRACE(row.name);
    std::vector<const char*> taken = row.taken;
    if (auto it = kind_taken.find(row.kind); it != kind_taken.end()) taken.insert(taken.end(), it->second.begin(), it->second.end());
    for (const char* text : taken) EXPECT_EQ(read_setting_alone(row.name, text), 1) << "'" << text << "' refused";
    std::vector<const char*> refused;
    // A template is a path and a name is a word: the numbers and words the
    // others refuse are theirs to take.
    if (row.kind == Kind::kTemplate) refused = {"", "%x.json", "%"};
    else if (row.kind == Kind::kName) refused = {"", " 1", "1 ", "+1", "a/b", "a b", "\xc3\xa9t\xc3\xa9", "x\n"};
    else refused = refused_by_all;
    if (auto it = kind_refused.find(row.kind); it != kind_refused.end()) refused.insert(refused.end(), it->second.begin(), it->second.end());
    for (const char* text : refused) EXPECT_EQ(read_setting_alone(row.name, text), 0) << "'" << text << "' taken";
  }
}

TEST(Config, Follow) {
  bool children = false;
  EXPECT_TRUE(parse_follow("tree", &children));
  EXPECT_TRUE(children);
  EXPECT_TRUE(parse_follow("command", &children));
  EXPECT_FALSE(children);
  for (const char* bad : {"", "all", "Tree", "children", "1"}) EXPECT_FALSE(parse_follow(bad, &children)) << bad;
  EXPECT_FALSE(children);
  EXPECT_TRUE(Config{}.follow_children);  // the environment's default: the whole tree
}

TEST(Config, LoadUsesDefaultsForBadValues) {
  static const std::pair<const char*, const char*> env[] = {
      {"HEAPLINE_OUT", "/x/%e.json"}, {"HEAPLINE_INTERVAL_MS", "abc"}, {"HEAPLINE_PRECISION", "8192,16"}};
  Config config;
  load_config(config, [](const char* name) -> const char* {
    for (auto [key, value] : env) {
      if (std::string(key) == name) return value;
    }
    return nullptr;
  });
  EXPECT_STREQ(config.out_template, "/x/%e.json");
  EXPECT_EQ(config.interval_ns, 10'000'000u);
  EXPECT_EQ(config.precision.budget_floor_bytes, 8192u);
  EXPECT_EQ(config.precision.budget_divisor, 16u);
}

TEST(Config, RootPid) {
  int pid = 0;
  EXPECT_TRUE(parse_pid("1", &pid));
  EXPECT_EQ(pid, 1);
  EXPECT_TRUE(parse_pid("4194304", &pid));
  EXPECT_EQ(pid, 4194304);
  for (const char* bad : {"", "0", "-1", "+5", " 5", "5 ", "12abc", "4194305", "99999999999999999999", "0x10"}) {
    EXPECT_FALSE(parse_pid(bad, &pid)) << bad;
  }
  EXPECT_EQ(pid, 4194304);
}

TEST(Config, SampleMeanAndSeed) {
  std::uint64_t mean = 1;
  EXPECT_TRUE(parse_sample_mean("off", &mean));
  EXPECT_EQ(mean, 0u);
  EXPECT_TRUE(parse_sample_mean("on", &mean));
  EXPECT_EQ(mean, 4u << 20);
  EXPECT_TRUE(parse_sample_mean("off", &mean));
  EXPECT_EQ(mean, 0u);
  EXPECT_TRUE(parse_sample_mean("4m", &mean));
  EXPECT_EQ(mean, 4u << 20);
  EXPECT_TRUE(parse_sample_mean("512K", &mean));
  EXPECT_EQ(mean, 512u << 10);
  EXPECT_TRUE(parse_sample_mean("1024g", &mean));
  EXPECT_EQ(mean, std::uint64_t{1} << 40);
  EXPECT_TRUE(parse_sample_mean("1", &mean));
  EXPECT_EQ(mean, 1u);
  for (const char* bad : {"", "m", "lots", "-1", "4 m", "4mb", "1025g", "4t", "0k", "99999999999999999999"}) {
    EXPECT_FALSE(parse_sample_mean(bad, &mean)) << bad;
  }
  EXPECT_EQ(mean, 1u);
  std::uint64_t seed = 0;
  EXPECT_TRUE(parse_seed("18446744073709551615", &seed));
  EXPECT_EQ(seed, UINT64_MAX);
  for (const char* bad : {"", "x", "18446744073709551616", "-3"}) EXPECT_FALSE(parse_seed(bad, &seed)) << bad;
}

// The process's settings are read from the environment once, by the first
// to ask (here the library's init, at load), and each later caller (in the
// library, the sampler or the init, whichever comes second) gets the same
// values, whatever the environment says by then.
TEST(Config, TheProcessSettingsAreReadOnce) {
  Config first;
  read_process_settings(first);
  ::setenv("HEAPLINE_SAMPLE", first.sample_mean_bytes == 65536 ? "1m" : "64k", 1);
  ::setenv("HEAPLINE_INTERVAL_MS", first.interval_ns == 5'000'000 ? "7" : "5", 1);
  Config later;
  read_process_settings(later);
  EXPECT_EQ(later.sample_mean_bytes, first.sample_mean_bytes);
  EXPECT_EQ(later.interval_ns, first.interval_ns);
  ::unsetenv("HEAPLINE_SAMPLE");
  ::unsetenv("HEAPLINE_INTERVAL_MS");
}

TEST(Config, OutTemplate) {
  Config config;
  EXPECT_TRUE(parse_out_template("/tmp/%e-%p-%%.json", &config));
  EXPECT_STREQ(config.out_template, "/tmp/%e-%p-%%.json");
  EXPECT_TRUE(parse_out_template("off", &config));
  EXPECT_TRUE(config.output_off);
  const std::string longest(kMaxTemplateBytes - 1, 'a');
  EXPECT_TRUE(parse_out_template(longest.c_str(), &config));
  EXPECT_FALSE(config.output_off);
  const std::string too_long(kMaxTemplateBytes, 'a');
  std::string too_many_names;  // short, but each %e may stand for 255 bytes
  for (int i = 0; i < 16; ++i) too_many_names += "%e/";
  for (const char* bad : {"", "%", "r%d.json", "x%", "%P", too_long.c_str(), too_many_names.c_str()}) {
    EXPECT_FALSE(parse_out_template(bad, &config)) << bad;
  }
  EXPECT_EQ(std::string(config.out_template), longest);
}

// Every variable through one reader: each bad value is one line naming it,
// the setting keeps its default; good values give no line.
TEST(Config, EachBadValueIsOneLineAndKeepsTheDefault) {
  static std::string said;
  static const std::pair<const char*, const char*> env[] = {
      {"HEAPLINE_OUT", "r%q.json"},        {"HEAPLINE_INTERVAL_MS", "86400001"}, {"HEAPLINE_PRECISION", "1,0"},
      {"HEAPLINE_SUMMARY", "true"},        {"HEAPLINE_MAPPED", "yes"},          {"HEAPLINE_FOLLOW", "all"},
      {"HEAPLINE_ROOT_PID", "12\nabc"}};
  said.clear();
  Config config;
  load_config(
      config,
      [](const char* name) -> const char* {
        for (auto [key, value] : env) {
          if (std::string(key) == name) return value;
        }
        return nullptr;
      },
      [](const char* line, std::size_t size) { said.append(line, size); });
  const Config defaults;
  EXPECT_STREQ(config.out_template, defaults.out_template);
  EXPECT_EQ(config.interval_ns, defaults.interval_ns);
  EXPECT_EQ(config.precision.budget_divisor, defaults.precision.budget_divisor);
  EXPECT_EQ(config.summary, defaults.summary);
  EXPECT_EQ(config.mapped, defaults.mapped);
  EXPECT_EQ(config.follow_children, defaults.follow_children);
  EXPECT_EQ(config.root_pid, 0);
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 7) << said;
  for (auto [key, value] : env) EXPECT_NE(said.find(std::string("heapline: ") + key + "='"), std::string::npos) << key;

  said.clear();
  load_config(
      config,
      [](const char* name) -> const char* { return std::string(name) == "HEAPLINE_ROOT_PID" ? "321" : nullptr; },
      [](const char* line, std::size_t size) { said.append(line, size); });
  EXPECT_EQ(config.root_pid, 321);
  EXPECT_EQ(said, "");
}

// The line quotes the value as the user wrote it, so that they can find it:
// every printable byte (the space too) as it is, each other byte as '?',
// the first 80 bytes and "..." after them.
// A refused value is quoted as a terminal shows it (heapline/terminal_text.h,
// the one escaping of the library's, the launcher's and heapline-bench's
// lines): well-formed characters as they are, every other byte as \xNN.
TEST(Config, ABadValueIsQuotedAsATerminalShowsIt) {
  static std::string value;
  static std::string said;
  const std::string long_value(100, 'x');
  const std::pair<std::string, std::string> cases[] = {
      {"1 s", "1 s"},
      {" ~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}", " ~!\"#$%&'()*+,-./:;<=>?@[\\x5c]^_`{|}"},
      {"12\nabc\t\x7f\x1f", "12\\x0aabc\\x09\\x7f\\x1f"},
      {"caf\xc3\xa9", "caf\xc3\xa9"},
      {"\xc2\x9b"
       "2J\xff",
       "\\xc2\\x9b2J\\xff"},
      {long_value, std::string(80, 'x') + "..."},
  };
  for (const auto& [written, shown] : cases) {
    value = written;
    said.clear();
    Config config;
    load_config(
        config, [](const char* name) -> const char* { return std::string(name) == "HEAPLINE_INTERVAL_MS" ? value.c_str() : nullptr; },
        [](const char* line, std::size_t size) { said.append(line, size); });
    EXPECT_EQ(said.substr(0, said.find(" is not valid")), "heapline: HEAPLINE_INTERVAL_MS='" + shown + "'") << said;
  }
}

std::string path(const char* tmpl, bool insert_pid, const char* base = "/work") {
  char out[kMaxPath];
  EXPECT_TRUE(format_output_path(tmpl, base, 123, "prog", insert_pid, out, sizeof out));
  return out;
}

TEST(OutputPath, ExpandsTemplates) {
  EXPECT_EQ(path("heapline.%e.%p.json", false), "/work/heapline.prog.123.json");
  EXPECT_EQ(path("/tmp/x-%%-%p", true), "/tmp/x-%-123");
  EXPECT_EQ(path("out.json", false, ""), "out.json");
  EXPECT_EQ(path("out.json", false, "/"), "/out.json");
}

TEST(OutputPath, InsertsThePidBeforeTheExtensionForNonRootProcesses) {
  EXPECT_EQ(path("/tmp/run.json", true), "/tmp/run.123.json");
  EXPECT_EQ(path("/tmp/run", true), "/tmp/run.123");
  EXPECT_EQ(path("/tmp/.hidden", true), "/tmp/.hidden.123");
  EXPECT_EQ(path("/tmp/a.b/run", true), "/tmp/a.b/run.123");
  EXPECT_EQ(path("run.tar.json", true), "/work/run.tar.123.json");
  EXPECT_EQ(path("/tmp/run.%p.json", true), "/tmp/run.123.json");  // already unique
}

// %e is the program's name as a file name (heapline/terminal_text.h's
// name_for_file): what a terminal would not show as itself is '_', byte by
// byte, so that no report's name holds a newline, an escape, a right-to-left
// override or a byte that is not UTF-8; other characters stay.
TEST(OutputPath, TheProgramsNameIsAFileNameOfCharactersAsTheyShow) {
  char out[kMaxPath];
  ASSERT_TRUE(format_output_path("r.%e.json", "", 7, "a\nb\x1b[31m\xe2\x80\xae\xff\xc3\xa9", false, out, sizeof out));
  EXPECT_STREQ(out, "r.a_b_[31m____\xc3\xa9.json");
}

// HEAPLINE_OUT follows the launcher's rule for the names it writes.
TEST(OutputPath, ATemplateWithACharacterATerminalDoesNotShowIsRefused) {
  for (const char* bad : {"x\ny.json", "\x1b[2Jr.json", "\xe2\x80\xaer.json", "r\xff.json"}) {
    Config config;
    EXPECT_FALSE(parse_out_template(bad, &config)) << bad;
    EXPECT_STREQ(config.out_template, Config().out_template);
  }
  Config config;
  EXPECT_TRUE(parse_out_template("r\xc3\xa9.%p.json", &config));
}

TEST(OutputPath, RefusesWhatDoesNotFit) {
  char out[16];
  EXPECT_FALSE(format_output_path("a-very-long-name.json", "", 1, "p", false, out, sizeof out));
  EXPECT_FALSE(format_output_path("abcdefghijkl.json", "", 12345, "p", true, out, sizeof out));
}

TEST(Timeline, MergesPairwiseKeepingTheMaximumAndDoublingTheInterval) {
  static TimelineStorage storage;  // large: not on the stack
  Timeline timeline(&storage);
  timeline.reset(1000);
  const std::size_t total = Timeline::kCapacity * 3 + 7;
  for (std::size_t i = 0; i < total; ++i) {
    std::int64_t live = static_cast<std::int64_t>(i % 100);
    std::int64_t max_live = i == 5000 ? 1'000'000 : live + 1;
    timeline.append(Sample{i * 1000, live, max_live});
  }
  EXPECT_LE(timeline.size(), Timeline::kCapacity);
  EXPECT_GE(timeline.size(), Timeline::kCapacity / 2);
  // Full at 4096, then every 2048 appends: five merges for 12295 samples.
  EXPECT_EQ(timeline.interval_ns(), 1000u << 5);
  std::int64_t most = 0;
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    most = std::max(most, timeline[i].max_live);
    if (i > 0) {
      EXPECT_GT(timeline[i].t_ns, timeline[i - 1].t_ns);
    }
  }
  EXPECT_EQ(most, 1'000'000);
  EXPECT_EQ(timeline[timeline.size() - 1].t_ns, (total - 1) * 1000);  // the latest sample survives
}

TEST(Timeline, ZeroIntervalSettlesToTheAverageSpacing) {
  static TimelineStorage storage;
  Timeline timeline(&storage);
  timeline.reset(0);
  for (std::size_t i = 0; i <= Timeline::kCapacity; ++i) timeline.append(Sample{i * 10, 1, 1});
  EXPECT_GT(timeline.interval_ns(), 0u);
}

TEST(Json, ReportParsesAndCarriesEveryField) {
  const Sample samples[] = {{0, 0, 0}, {10, 100, 150}};
  Report report{};
  report.samples = samples;
  report.sample_count = 2;
  report.pid = 7;
  report.ppid = 1;
  report.exe = "/bin/odd \"name\"\n";
  report.allocator = "glibc";
  report.size_basis = "glibc-chunk-size";
  report.bound_bytes = 65536;
  report.peak_bytes = 150;
  report.final_bytes = -3;
  report.max_threads = 4;
  std::string text;
  char buffer[64];  // small: exercises streaming through the flush function
  TextSink sink(buffer, sizeof buffer, [](void* context, const char* data, std::size_t size) {
    static_cast<std::string*>(context)->append(data, size);
    return true;
  }, &text);
  write_report_json(sink, report);
  sink.drain();
  auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json["format"], "heapline/1");
  EXPECT_EQ(json["exe"], "/bin/odd \"name\"\n");
  EXPECT_EQ(json["final_bytes"], -3);
  EXPECT_EQ(json["precision"]["bound_bytes"], 65536);
  EXPECT_EQ(json["precision"]["mode"], "batched");
  EXPECT_EQ(json["samples"], nlohmann::json::parse("[[0,0,0],[10,100,150]]"));
}

std::string bytes(std::int64_t value) {
  char buffer[64];
  TextSink text(buffer, sizeof buffer);
  text.append_bytes(value);
  return text.c_str();
}

TEST(Text, HumanBytes) {
  EXPECT_EQ(bytes(0), "0 B");
  EXPECT_EQ(bytes(1023), "1023 B");
  EXPECT_EQ(bytes(1024), "1.0 KiB");
  EXPECT_EQ(bytes(1536), "1.5 KiB");
  EXPECT_EQ(bytes(5 * 1024 * 1024 + 100), "5.0 MiB");
  EXPECT_EQ(bytes(-2048), "-2.0 KiB");
}

std::string json_string(const char* text) {
  char buffer[256];
  TextSink sink(buffer, sizeof buffer);
  sink.append_json_string(text);
  return sink.c_str();
}

TEST(Text, JsonStringsAreValidUtf8WhateverTheBytes) {
  EXPECT_EQ(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(json_string("/tmp/\xff\xfe/x"), "\"/tmp/\\ufffd\\ufffd/x\"");
  EXPECT_EQ(json_string("cut \xe2\x82"), "\"cut \\ufffd\\ufffd\"");      // a truncated character
  EXPECT_EQ(json_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");               // overlong '/'
  EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(json_string("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // above U+10FFFF
  for (const char* text : {"/tmp/\xff\xfe/x", "cut \xe2\x82", "\xed\xa0\x80"}) {
    EXPECT_TRUE(nlohmann::json::accept(json_string(text))) << text;
  }
}

// utf8_character_length (heapline/terminal_text.h, the library's and the
// programs' one reading of UTF-8) against RFC 3629 itself: the well-formed sequences
// are exactly the encodings of U+0000..U+10FFFF without the surrogates, so
// every 1- to 4-byte text is checked against that set (all first and second
// bytes, the third and fourth from every class of byte).
TEST(Text, Utf8SequencesAreExactlyTheEncodingsOfScalarValues) {
  std::unordered_set<std::uint64_t> encodings;  // length << 32 | the bytes, first byte highest
  for (std::uint32_t scalar = 1; scalar <= 0x10FFFF; ++scalar) {
    if (scalar >= 0xD800 && scalar <= 0xDFFF) continue;
    std::uint64_t bytes = 0, length = 0;
    if (scalar < 0x80) {
      bytes = scalar, length = 1;
    } else if (scalar < 0x800) {
      bytes = (0xC0 | scalar >> 6) << 8 | (0x80 | (scalar & 0x3F)), length = 2;
    } else if (scalar < 0x10000) {
      bytes = (0xE0 | scalar >> 12) << 16 | (0x80 | (scalar >> 6 & 0x3F)) << 8 | (0x80 | (scalar & 0x3F)), length = 3;
    } else {
      bytes = std::uint64_t{0xF0 | scalar >> 18} << 24 | (0x80 | (scalar >> 12 & 0x3F)) << 16 |
              (0x80 | (scalar >> 6 & 0x3F)) << 8 | (0x80 | (scalar & 0x3F)),
      length = 4;
    }
    encodings.insert(length << 32 | bytes);
  }
  const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
  for (unsigned first = 1; first < 256; ++first) {
    for (unsigned second = 0; second < 256; ++second) {
      for (unsigned char third : tails) {
        for (unsigned char fourth : tails) {
          const unsigned char text[5] = {static_cast<unsigned char>(first), static_cast<unsigned char>(second), third,
                                         fourth, 0};
          std::size_t expected = 0;
          std::uint64_t bytes = 0;
          for (std::uint64_t length = 1; length <= 4 && expected == 0; ++length) {
            if (text[length - 1] == 0) break;  // the text ends: no longer sequence
            bytes = bytes << 8 | text[length - 1];
            if (encodings.count(length << 32 | bytes) != 0) expected = length;
          }
          ASSERT_EQ(heapline::utf8_character_length(reinterpret_cast<const char*>(text), 0), expected)
              << std::hex << first << ' ' << second << ' ' << unsigned{third} << ' ' << unsigned{fourth};
        }
      }
    }
  }
}

TEST(Text, CopiesCutAtACharacterBoundary) {
  char out[6];
  copy_utf8_prefix(out, sizeof out, "ab\xe2\x82\xac\xe2\x82\xac");  // "ab€€": room for 5 bytes
  EXPECT_STREQ(out, "ab\xe2\x82\xac");
  copy_utf8_prefix(out, sizeof out, "abcd\xc3\xa9");  // é would straddle the end
  EXPECT_STREQ(out, "abcd");
  copy_utf8_prefix(out, sizeof out, "abc");
  EXPECT_STREQ(out, "abc");
}

TEST(Text, FixedBufferTruncates) {
  char buffer[4];
  TextSink text(buffer, sizeof buffer);
  text.append("abcdef");
  EXPECT_TRUE(text.truncated());
  EXPECT_STREQ(text.c_str(), "abc");
}

}  // namespace
}  // namespace heapline
