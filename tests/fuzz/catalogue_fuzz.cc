// The scenario catalogue reader (scenarios.json, or any --catalogue): on any
// bytes it returns a catalogue or refuses it with one line that names the
// file, never a crash and never an exception of another kind. What it
// accepts can be used: each scenario expands at every scale --scale accepts,
// its name is a file name of the page's plots, and no text of it holds a
// control character (its command reaches points, pages and terminals).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/text/text.h"

namespace {

[[noreturn]] void broken(const char* property, const std::string& shown = {}) {
  std::fprintf(stderr, "catalogue_fuzz: broken: %s\n%s\n", property, shown.c_str());
  std::abort();
}
void expect(bool holds, const char* property, const std::string& shown = {}) {
  if (!holds) broken(property, shown);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heapline::bench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Catalogue catalogue;
  try {
    catalogue = parse_catalogue(text, "fuzz.json");
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    expect(message.rfind("scenario catalogue fuzz.json: ", 0) == 0, "a refusal names the file", message);
    expect(find_control_character(message) == std::string::npos, "a refusal is one line", message);
    return 0;
  }
  expect(!catalogue.scenarios.empty(), "an accepted catalogue has a scenario");
  for (const auto& scenario : catalogue.scenarios) {
    expect(is_scenario_name(scenario.name), "a name is a file name");
    expect(catalogue.find(scenario.name) == &scenario, "a name is defined once");
    expect(find_control_character(scenario.display_command()) == std::string::npos, "the command shows on one line");
    for (double scale : {0.0005, 0.05, 1.0, 7.3, 1000.0}) {
      const auto argv = expand_command(scenario, {"/bin-dir", "/source-dir"}, scale);
      expect(argv.size() == scenario.command.size(), "the command expands word for word");
      const auto counted = expand_instructions_command(scenario, {"/bin-dir", "/source-dir"}, scale);
      expect(counted.size() == scenario.instructions_command.size(), "the reduced command expands word for word");
      if (scenario.scale_arg >= 0) {
        const std::string& count = argv[static_cast<std::size_t>(scenario.scale_arg)];
        expect(!count.empty() && count.find_first_not_of("0123456789") == std::string::npos && count != "0",
               "a scaled operation count is a positive whole number");
      }
    }
  }
  return 0;
}
