// heapline clean: live files (and reports) whose process is gone.
#include <heapline/option_checks.h>

#include "commands/subcommand.h"
#include "stale_files.h"

namespace heapline::launcher {

namespace {

struct CleanCommandOptions {
  std::string dir = ".";
  CleanOptions clean;
};

int clean(const CleanCommandOptions& command) {
  const std::string& dir = command.dir;
  const CleanOptions& options = command.clean;
  try {
    const CleanOutcome outcome = clean_directory(dir, options);
    for (const std::string& kept : outcome.kept) say("heapline clean", "kept " + kept);
    for (const std::string& removed : outcome.removed) {
      say("heapline clean", (options.dry_run ? "would remove " : "removed ") + removed);
    }
    if (outcome.removed.empty()) say("heapline clean", "nothing to remove in " + dir);
    return 0;
  } catch (const std::exception& error) {
    say("heapline clean", error.what());
    return 1;
  }
}

}  // namespace

Subcommand add_clean_command(CLI::App& heapline) {
  CLI::App* app = heapline.add_subcommand(
      "clean",
      "remove the live files that processes which are gone left in DIR (never a running process's, never a file "
      "that is not heapline's or not yours)");
  auto options = std::make_shared<CleanCommandOptions>();
  app->add_option("DIR", options->dir, "the directory (default: the current one; not recursive)")
      ->check(heapline::option_checks::name());
  app->add_flag("--reports", options->clean.reports, "also remove the heapline/1 reports (*.json) there");
  app->add_flag("-n,--dry-run", options->clean.dry_run, "only say what would be removed");
  return {app, [options] { return clean(*options); }};
}

}  // namespace heapline::launcher
