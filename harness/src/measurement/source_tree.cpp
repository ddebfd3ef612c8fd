#include "heapline_bench/measurement/source_tree.h"

#include "heapline_bench/text/text.h"

namespace heapline::bench {

CommitLookup git_head(ProcessRunner& runner, const std::string& source_dir) {
  RunSpec spec;
  spec.argv = {"git", "-C", source_dir, "rev-parse", "--verify", "HEAD^{commit}"};
  spec.capture_stdout = true;
  const RunResult result = runner.run(spec);
  const std::string asked = "cannot tell which commit " + terminal_text(source_dir) + " holds: ";
  if (!result.succeeded()) {
    std::string said = result.started ? result.stderr_head.substr(0, result.stderr_head.find('\n')) : "";
    return {"",
            asked + "git rev-parse " + how_it_ended(result) + (said.empty() ? "" : " (" + terminal_text(said) + ")")};
  }
  std::string commit = result.stdout_head;
  if (!commit.empty() && commit.back() == '\n') commit.pop_back();
  if (!is_commit_name(commit))
    return {"", asked + "git rev-parse printed '" + terminal_text(commit) + "', not a commit"};
  return {commit, ""};
}

}  // namespace heapline::bench
