// The root process's report file: the launcher chooses it, tells the library
// through HEAPLINE_OUT, and reads it back for the summary. The name holds no
// % field any more, so processes that the command starts insert their own pid
// (the library does that for every process that is not HEAPLINE_ROOT_PID).
#pragma once

#include <string>
#include <sys/types.h>

namespace heapline::launcher {

// --out TEMPLATE with %p (the child's pid), %e (the command's base name) and
// %% expanded; without --out, heapline.<command>.<pid>.json.
std::string root_output_path(const std::string& out_template, const std::string& command, pid_t pid);

// The name of `command`'s report without --out, as a message shows it
// before the command runs: heapline.<command>.PID.json.
std::string shown_default_output_path(const std::string& command);

// What is wrong with --out TEMPLATE (or convert -o NAME: `template_fields`
// false), "" when nothing: "-", which other outputs of the programs take
// for standard output, but a report is a file; a % that is not %p, %e or
// %% (HEAPLINE_OUT's own rule: the library refuses r%q.json, and --out took
// it for a literal name).
std::string report_name_problem(const std::string& name, bool template_fields);

// A path as a HEAPLINE_OUT template that expands to exactly that path: each
// % doubled, since the library expands the template once more.
std::string as_template(const std::string& path);

// The library's name for a process that found `path` taken: ".<pid>" before
// the file name's extension (a leading dot is not one), or at its end.
std::string pid_inserted_path(const std::string& path, pid_t pid);

// The pid in `candidate` when it is pid_inserted_path(path, pid) for some pid;
// 0 otherwise.
pid_t pid_of_inserted_path(const std::string& path, const std::string& candidate);

}  // namespace heapline::launcher
