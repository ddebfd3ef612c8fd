// heapline: run a command with libheapline.so preloaded, and the tools
// around its files.
//
//   heapline [run] [--out F] [--plot F.png|F.svg] [--summary|--quiet] [-v] [--follow tree|command] [--lib PATH] [--]
//            CMD ARGS...                        commands/run_command.cpp
//   heapline convert LIVE_FILE [-o OUT] [--signal N]   commands/convert_command.cpp
//   heapline top PID [--once] [--interval SECONDS]     commands/top_command.cpp
//   heapline clean [DIR] [--reports] [--dry-run]       commands/clean_command.cpp
//   heapline profile REPORT [--format text|folded|pprof] [-o FILE] [--at peak|exit]
//                                                      commands/profile_command.cpp
//   heapline --version | --help | --help-all
//
// A first word naming a subcommand is the subcommand; any other first word
// is the command to run (`heapline -- top` runs a program named top).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <heapline/cli_help.h>
#include <heapline/install_dirs.h>
#include <heapline/option_checks.h>
#include <heapline/write_signals.h>

#include "commands/subcommand.h"
#include "library_locator.h"

using namespace heapline::launcher;

namespace {

// Whether `word` is the separator or names an option of `run` (with or
// without "=VALUE"): never the value of the option before it.
bool is_option_word(const CLI::App& run, const std::string& word) {
  if (word == "--") return true;
  if (word.size() < 2 || word[0] != '-') return false;
  const std::string name = word.substr(0, word.find('='));
  return run.get_option_no_throw(name) != nullptr || name == "-h" || name == "--help" || name == "--help-all";
}

// The words CLI11 parses, last first; `command` gets the command to run and
// its arguments. Everything from the command on belongs to it: split there
// before CLI11 sees the arguments, so an unknown heapline flag is an error
// rather than the start of the command, and the command's own flags are
// never parsed. Which options take a value is asked of the run subcommand's
// own definitions. An option whose value is missing sets `missing_value` to
// the refusal.
std::vector<std::string> heaplines_words(int argc, char** argv, const std::vector<std::string>& subcommand_names,
                                         const CLI::App& run, std::vector<std::string>& command,
                                         std::string& missing_value) {
  std::vector<std::string> words;
  int first = 1;
  if (argc > 1 && std::find(subcommand_names.begin(), subcommand_names.end(), argv[1]) != subcommand_names.end()) {
    words.push_back(argv[1]);
    first = 2;
    if (words.front() != run.get_name()) {  // convert, top, clean: every word is theirs
      words.insert(words.end(), argv + first, argv + argc);
      std::reverse(words.begin(), words.end());
      return words;
    }
  }
  int command_start = argc;
  std::vector<std::string> options;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      command_start = i + 1;
      break;
    }
    if (arg.empty() || arg[0] != '-') {
      command_start = i;
      break;
    }
    options.push_back(arg);
    const CLI::Option* option = arg.find('=') == std::string::npos ? run.get_option_no_throw(arg) : nullptr;
    // The next word is the value, unless it is the separator or an option
    // of run's (--out -- CMD, --out -q): then the value is missing, rather
    // than a report named "--" or "-q".
    if (option != nullptr && option->get_expected_min() > 0 && i + 1 < argc) {
      const std::string next = argv[i + 1];
      if (is_option_word(run, next)) {
        missing_value = arg + ": needs a value (" +
                        (next == "--" ? std::string("-- is the separator") : next + " is an option of heapline run") +
                        ")";
        break;
      }
      options.push_back(argv[++i]);
    }
  }
  command.assign(argv + command_start, argv + argc);
  // `heapline --help` is heapline's own help, which lists the subcommands
  // (--help-all: with every subcommand's options; --version: the version
  // and the library it preloads); `heapline` alone says no command was
  // given; anything else is the run subcommand's.
  const bool asks_heapline_only =
      first == 1 && command.empty() && !options.empty() &&
      std::all_of(options.begin(), options.end(), [](const std::string& o) {
        return o == "-h" || o == "--help" || o == "--help-all" || o == "--version";
      });
  if (words.empty() && !asks_heapline_only && !(command.empty() && options.empty())) words.push_back(run.get_name());
  words.insert(words.end(), options.begin(), options.end());
  std::reverse(words.begin(), words.end());  // CLI11 takes them last-first
  return words;
}

// `heapline --version`: the version, then the library a run would preload
// (the same lookup as a run's, $HEAPLINE_LIB included) or why none.
std::string version_text() {
  std::string text = std::string("heapline ") + heapline::install_dirs::kVersion + "\n";
  LibraryChoice choice;
  if (const auto library = locate_library("", choice)) return text + "preloads " + library->string();
  return text + "preloads nothing: no libheapline.so at " + choice.tried + " (give its path with --lib or HEAPLINE_LIB)";
}

}  // namespace

int heapline_main(int argc, char** argv);

// What heapline printed on stdout (a profile, top's screen, the help) is
// whole, or its status says it is not; a command's own status other than 0
// is kept. (A command's own output is its own: the launcher writes none of
// it.)
int main(int argc, char** argv) { return heapline::finish_standard_output("heapline", heapline_main(argc, argv), 1); }

int heapline_main(int argc, char** argv) {
  // A write that fails (to a pipe whose reader has gone, past a file size
  // limit) is an error said, never the launcher's end, which would stop
  // the command's tree (heapline/write_signals.h).
  heapline::ignore_write_signals();
  CLI::App heapline{"heapline: run a command and record its live heap over time, with its peak; convert, watch and "
                    "clean the files it leaves.\n"
                    "usage: heapline [run] [OPTIONS] [--] CMD [ARGS...]   (heapline run --help: the options)",
                    "heapline"};
  heapline::option_checks::flags_take_no_value(heapline);
  heapline.require_subcommand(0, 1);
  heapline.set_help_all_flag("--help-all", "Print the help of heapline and of every subcommand and exit");
  heapline.set_version_flag("--version", version_text, "Print the version and the libheapline.so a run preloads");
  std::vector<std::string> command;
  const Subcommand subcommands[] = {add_run_command(heapline, command), add_convert_command(heapline),
                                    add_top_command(heapline), add_clean_command(heapline),
                                    add_profile_command(heapline)};
  const CLI::App& run = *subcommands[0].app;
  std::vector<std::string> names;
  for (const Subcommand& subcommand : subcommands) names.push_back(subcommand.app->get_name());
  std::string missing_value;
  std::vector<std::string> words = heaplines_words(argc, argv, names, run, command, missing_value);
  if (!missing_value.empty()) {
    say("heapline", missing_value + " (heapline run --help: the options)");
    return kUsageError;
  }
  if (const std::string refused = heapline::option_checks::empty_flag_value(heapline, words); !refused.empty()) {
    say("heapline", refused + " (heapline run --help: the options)");
    return kUsageError;
  }
  heapline::option_checks::take_every_word_as_given(heapline);
  try {
    heapline.parse(words);
  } catch (const CLI::CallForHelp&) {
    say_lines(std::cout, heapline.help());
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    say_lines(std::cout, heapline::whole_program_help(heapline));
    return 0;
  } catch (const CLI::CallForVersion& version) {
    say_lines(std::cout, std::string(version.what()) + "\n");
    return 0;
  } catch (const CLI::ParseError& error) {
    const std::vector<CLI::App*> chosen = heapline.get_subcommands();
    const bool named = !chosen.empty() && chosen.front() != &run;
    // One line: the refusal, and where the options are said (run's are
    // in `heapline run --help`; `heapline --help` lists the subcommands).
    const std::string who = named ? "heapline " + chosen.front()->get_name() : "heapline";
    const std::string help = named ? who : std::string("heapline run");
    say(who, heapline::option_checks::refusal_text(error, heapline) + " (" + help + " --help: the options)");
    return kUsageError;
  }
  // Without a command: a refusal as every other, one line (`heapline --help`
  // prints the help when asked for).
  const auto no_command = [] {
    say("heapline", "no command given: heapline [OPTIONS] -- COMMAND [ARGS...] (heapline --help: the options)");
    return kUsageError;
  };
  for (const Subcommand& subcommand : subcommands) {
    if (!subcommand.app->parsed()) continue;
    if (subcommand.app == &run && command.empty()) return no_command();
    return subcommand.run();
  }
  return no_command();
}
