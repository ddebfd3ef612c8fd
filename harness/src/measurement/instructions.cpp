#include "heapline_bench/measurement/instructions.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {

std::string find_valgrind() {
  try {
    return resolved_program("valgrind");
  } catch (const Refusal&) {
    return {};
  }
}

std::optional<std::uint64_t> collected_instructions(const std::string& callgrind_stderr) {
  constexpr std::string_view kLabel = "Collected : ";
  const auto at = callgrind_stderr.rfind(kLabel);
  if (at == std::string::npos) return std::nullopt;
  const char* digits = callgrind_stderr.c_str() + at + kLabel.size();
  char* end = nullptr;
  const unsigned long long value = std::strtoull(digits, &end, 10);
  if (end == digits) return std::nullopt;
  return value;
}

bool callgrind_profile_names_object(std::istream& profile, const std::string& library) {
  std::error_code ignored;
  const std::string canonical = std::filesystem::weakly_canonical(library, ignored).string();
  std::string line;
  while (std::getline(profile, line)) {
    std::string_view name = line;
    if (name.rfind("ob=", 0) == 0)
      name.remove_prefix(3);
    else if (name.rfind("cob=", 0) == 0)
      name.remove_prefix(4);
    else
      continue;
    // Callgrind names an object once in full, "(N) /path", then as "(N)".
    if (!name.empty() && name.front() == '(') {
      const auto close = name.find(") ");
      if (close == std::string_view::npos) continue;
      name.remove_prefix(close + 2);
    }
    if (name == library || name == canonical) return true;
  }
  return false;
}

namespace {

std::uint64_t count_once(ProcessRunner& runner, const InstructionRequest& request, bool with) {
  // Only the with side's profile is read (to see which objects ran code);
  // the other is not kept.
  std::optional<ScratchDirectory> scratch;
  if (with) {
    try {
      scratch.emplace();
    } catch (const std::runtime_error& error) {
      throw Refusal(std::string("callgrind's profile has nowhere to go: ") + error.what());
    }
  }
  const std::string profile = scratch ? scratch->path() + "/callgrind.out" : "/dev/null";
  RunSpec spec;
  spec.argv = {request.valgrind, "--tool=callgrind", "--callgrind-out-file=" + profile};
  spec.argv.insert(spec.argv.end(), request.command.begin(), request.command.end());
  spec.env = request.env;
  spec.settings_from_env_only = true;
  // The report is not written: its cost depends on the timeline's length,
  // not on the library's per-call cost that this figure follows.
  spec.env["HEAPLINE_OUT"] = "off";
  if (with) set_preload(spec.env, {request.library});
  const RunResult result = runner.run(spec);
  const auto count = result.succeeded() ? collected_instructions(result.stderr_tail) : std::nullopt;
  if (!count)
    throw Refusal("the instruction count of " + request.command[0] + (with ? " with" : " without") +
                  " the library failed: callgrind " +
                  (result.succeeded() ? std::string("printed no count") +
                                            (result.stderr_tail.empty() ? "" : ":\n" + result.stderr_tail)
                                      : how_it_ended_and_said(result)));
  // A count is the library's only if the library ran in the program. A
  // library can be gone before the program starts: valgrind is a script
  // and a launcher, and a library that removes itself from LD_PRELOAD
  // where it is first loaded (heaptrack's does, to spare child processes)
  // leaves valgrind nothing to preload, so the count would be the program's
  // alone, an overhead of 0.
  if (scratch) {
    std::ifstream file(profile);
    if (!callgrind_profile_names_object(file, request.library)) {
      LoadEvidence seen;
      seen.untraced_reason = "callgrind counted no instruction of it in the program: the library did not reach the "
                             "program under valgrind (a library that removes itself from LD_PRELOAD, as heaptrack's "
                             "does, is gone before valgrind starts the program)";
      throw Refusal("the instruction count with the library: " +
                    library_not_loaded(request.library, request.command[0], seen) + ".");
    }
  }
  return *count;
}

}  // namespace

InstructionFigure count_instructions(ProcessRunner& runner, const InstructionRequest& request) {
  InstructionFigure figure;
  figure.without = count_once(runner, request, false);
  figure.with = count_once(runner, request, true);
  figure.overhead = static_cast<double>(figure.with) / static_cast<double>(figure.without) - 1;
  figure.command = request.shown;
  return figure;
}

}  // namespace heapline::bench
