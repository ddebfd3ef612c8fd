# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# Shared by the tools/ci/ scripts: where things are, and how they talk.
# Sourced, never run. Everything here reads the environment the same way in
# GitHub Actions and on a laptop:
#
#   HEAPLINE_REPO_DIR    the checkout of heapline to work in (default: the one
#                        these scripts belong to)
#   HEAPLINE_STORE_DIR   the history store, a worktree of the bench-data
#                        branch (default: $HEAPLINE_REPO_DIR/bench-data)
#   HEAPLINE_REMOTE      the remote holding bench-data (default: origin)
#   HEAPLINE_STORE_BRANCH  the branch of the store (default: bench-data)
#   HEAPLINE_BENCH       the heapline-bench to run (default:
#                        $HEAPLINE_BUILD_DIR/bin/heapline-bench, the build
#                        directory defaulting to build/release)

ci_script_name=$(basename "$0" .sh)
ci_source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

repo_dir=$(cd "${HEAPLINE_REPO_DIR:-$ci_source_dir}" && pwd)
store_dir=${HEAPLINE_STORE_DIR:-$repo_dir/bench-data}
remote=${HEAPLINE_REMOTE:-origin}
store_branch=${HEAPLINE_STORE_BRANCH:-bench-data}
build_dir=${HEAPLINE_BUILD_DIR:-$repo_dir/build/release}
bench=${HEAPLINE_BENCH:-$build_dir/bin/heapline-bench}
main_ref=refs/heads/main
points_file_name=points.jsonl

say() { printf '%s: %s\n' "$ci_script_name" "$*" >&2; }
die() {
  # GitHub shows ::error:: lines on the run's summary page; elsewhere they
  # are just a readable prefix.
  if [[ "${GITHUB_ACTIONS:-}" == true ]]; then
    # A message may quote a ref name: escape it as a workflow command's data
    # so it can never be read as a command of its own.
    local message="$ci_script_name: $*"
    message=${message//'%'/'%25'}
    message=${message//$'\r'/'%0D'}
    message=${message//$'\n'/'%0A'}
    printf '::error::%s\n' "$message" >&2
  else
    printf '%s: error: %s\n' "$ci_script_name" "$*" >&2
  fi
  exit 1
}

# git_commit DIR ARGS...: `git commit` in DIR. The runner has no git
# identity, so the bot's is used there; a laptop keeps its own.
git_commit() {
  local dir=$1 identity=()
  shift
  if [[ -z "$(git -C "$dir" config user.name || true)" ]]; then
    identity+=(-c "user.name=${HEAPLINE_COMMIT_NAME:-github-actions[bot]}")
  fi
  if [[ -z "$(git -C "$dir" config user.email || true)" ]]; then
    identity+=(-c "user.email=${HEAPLINE_COMMIT_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}")
  fi
  git -C "$dir" "${identity[@]}" commit "$@"
}

require_bench() {
  [[ -x "$bench" ]] || die "heapline-bench not found at $bench (build it with tools/build.sh, or set HEAPLINE_BENCH)"
}

# Performance points are only ever recorded for main: a manual run started on
# another branch would otherwise put a feature branch's commits into the
# history. Outside GitHub Actions (no GITHUB_REF) a laptop may measure
# whatever it has checked out.
refuse_unless_main() {
  local ref=${GITHUB_REF:-}
  if [[ -z "$ref" ]]; then
    [[ "${GITHUB_ACTIONS:-}" != true ]] || die "GITHUB_REF is not set; refusing to record points for an unknown ref"
    return 0
  fi
  if [[ "$ref" != "$main_ref" ]]; then
    local event=${GITHUB_EVENT_NAME:-unknown event}
    die "refusing to record performance points for $ref (started by $event): the history is kept for $main_ref only; start the workflow on main"
  fi
}

store_points_path() { printf '%s/%s' "$store_dir" "$points_file_name"; }

# project_version CMAKELISTS: the X.Y.Z of `project(heapline VERSION X.Y.Z)`,
# the one place the version is written; nothing when there is none.
project_version() {
  sed -nE '/^project\(heapline/,/\)/s/^[[:space:]]*VERSION[[:space:]]+([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$1" | head -n 1
}

# changelog_section CHANGELOG VERSION: the section of VERSION in a Keep a
# Changelog file, from its heading `## [VERSION] - YYYY-MM-DD` to the next
# heading of that level, the heading made "## heapline VERSION (YYYY-MM-DD)";
# status 1 when there is no such dated section or it says nothing.
changelog_section() {
  awk -v version="$2" '
    /^## \[/ {
      if (found) exit
      if (index($0, "## [" version "] - ") == 1 && $4 ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/) {
        found = 1
        print "## heapline " version " (" $4 ")"
        next
      }
    }
    /^\[[^]]*\]: / { next }
    found { print; if ($0 !~ /^[[:space:]]*$/) said = 1 }
    END { exit !(found && said) }' "$1"
}
