// Which commit the source tree holds: the commit a point measures unless
// told otherwise.
#pragma once

#include <string>

#include "heapline_bench/measurement/process_runner.h"

namespace heapline::bench {

// The source tree's HEAD commit, asked of git through `runner` with an
// argument vector (the directory is one argument, whatever it holds); or,
// when git cannot say (not a checkout, git missing, a repository without
// commits), an empty commit and the one line that says why.
struct CommitLookup {
  std::string commit;
  std::string problem;
};
CommitLookup git_head(ProcessRunner& runner, const std::string& source_dir);

}  // namespace heapline::bench
