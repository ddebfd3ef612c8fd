# shellcheck shell=bash disable=SC2034 # variables for the tests that source this
# Shared by the tests of tools/ci/: a scratch "GitHub" (a bare repository
# with a main branch) and clones of it standing in for workflow runs.
# Sourced by each test after `set -euo pipefail`.

ci_tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$ci_tests_dir/../.." && pwd)
ci=$source_dir/tools/ci
fake_bench=$ci_tests_dir/fake_heapline_bench.py

scratch=$(mktemp -d "${TMPDIR:-/tmp}/heapline-ci-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The scripts and the fake heapline-bench run Debian's python3, as in the
# workflows' Debian 12, not a version manager's shim ahead of it in PATH
# (pyenv's runs several shell processes per call, which more than doubles
# the CPU time of these tests).
mkdir -p "$scratch/bin"
ln -s /usr/bin/python3 "$scratch/bin/python3"
export PATH=$scratch/bin:$PATH
remote_git=$scratch/remote.git

# The tests run inside CI themselves (CI=true, and GitHub's variables in
# GitHub Actions): each test sets exactly the variables it is about. HOME
# without a git identity is a runner's, so the scripts' own identity is used.
unset CI GITHUB_ACTIONS GITHUB_SHA GITHUB_REF GITHUB_EVENT_NAME GITHUB_EVENT_BEFORE GITHUB_OUTPUT
unset HEAPLINE_REPO_DIR HEAPLINE_STORE_DIR HEAPLINE_REMOTE HEAPLINE_STORE_BRANCH HEAPLINE_BUILD_DIR \
  HEAPLINE_RUN_POINTS HEAPLINE_ARTIFACT_DIR HEAPLINE_PUSH_ATTEMPTS
export HOME=$scratch/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
export HEAPLINE_BENCH=$fake_bench HEAPLINE_PUSH_BACKOFF_S=0

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
assert_eq() { [[ "$1" == "$2" ]] || fail "$3: expected '$2', got '$1'"; }
assert_contains() { [[ "$1" == *"$2"* ]] || fail "$3: '$2' not in output:"$'\n'"$1"; }

dev_git() { git -c user.name=developer -c user.email=developer@example.invalid "$@"; }

# The remote, with main holding what a heapline checkout has around the
# store: bench-data/README.md tracked, the rest of bench-data/ ignored.
make_remote() {
  git init --quiet --bare -b main "$remote_git"
  git clone --quiet "$remote_git" "$scratch/developer" 2>/dev/null
  mkdir -p "$scratch/developer/bench-data"
  cp "$source_dir/bench-data/README.md" "$scratch/developer/bench-data/README.md"
  cp "$source_dir/.gitignore" "$scratch/developer/.gitignore"
  dev_git -C "$scratch/developer" add .gitignore bench-data/README.md
  dev_git -C "$scratch/developer" commit --quiet -m "heapline"
  git -C "$scratch/developer" push --quiet origin main
}

# push_commits N: N more commits on main, pushed at once; prints their SHAs.
push_commits() {
  local i
  for ((i = 0; i < $1; i++)); do
    echo "change $RANDOM" >>"$scratch/developer/code.txt"
    dev_git -C "$scratch/developer" add code.txt
    dev_git -C "$scratch/developer" commit --quiet -m "change"
    git -C "$scratch/developer" rev-parse HEAD
  done
  git -C "$scratch/developer" push --quiet origin main
}

# clone NAME: a fresh checkout of main, as a workflow run starts with.
clone() {
  git clone --quiet "$remote_git" "$scratch/$1" 2>/dev/null
}

# in_run NAME COMMAND...: COMMAND with the tools/ci/ scripts pointed at the
# checkout NAME.
in_run() {
  local name=$1
  shift
  HEAPLINE_REPO_DIR=$scratch/$name HEAPLINE_BUILD_DIR=$scratch/$name/build "$@"
}

remote_points() { git --git-dir="$remote_git" show bench-data:points.jsonl; }
remote_tip() { git --git-dir="$remote_git" rev-parse --verify --quiet refs/heads/bench-data || true; }

# run_ids FILE...: the unique id the fake suite gives every point, one a line.
run_ids() { python3 -c 'import json,sys; [print(json.loads(l)["run_id"]) for f in sys.argv[1:] for l in open(f)]' "$@"; }
