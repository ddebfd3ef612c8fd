#include "heapline_bench/measurement/instructions.h"

#include <cstdlib>

#include "heapline_bench/measurement/measurement.h"

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

namespace {

std::uint64_t count_once(ProcessRunner& runner, const InstructionRequest& request, bool with) {
  RunSpec spec;
  spec.argv = {request.valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"};
  spec.argv.insert(spec.argv.end(), request.command.begin(), request.command.end());
  spec.env = request.env;
  // The report is not written: its cost depends on the timeline's length,
  // not on the library's per-call cost that this figure follows.
  spec.env["HEAPLINE_OUT"] = "off";
  if (with) spec.env["LD_PRELOAD"] = request.library;
  const RunResult result = runner.run(spec);
  const auto count = result.succeeded() ? collected_instructions(result.stderr_tail) : std::nullopt;
  if (!count)
    throw Refusal("the instruction count of " + request.command[0] + (with ? " with" : " without") +
                  " the library failed under callgrind" +
                  (result.started ? " (status " + std::to_string(result.exit_status) + ")" : ": " + result.start_error) +
                  ":\n" + result.stderr_tail + "\nNothing was recorded.");
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
