#!/usr/bin/env bash
# The interposer's differential oracle (docs/design.md, "The differential
# oracle") on many seeds: each one runs oracle_workload batched and exact
# under libheapline.so and checks every report of both process trees. A few
# fixed seeds are in ctest (-L oracle); this is for the rest.
#
#   tools/soak.sh N [FIRST_SEED]   seeds FIRST_SEED .. FIRST_SEED+N-1
#                                  (FIRST_SEED: a random one, printed)
#
# Prints every failing seed with its problems, the files it kept and the
# command that replays it; exit status 1 when a seed failed. Runs $(nproc)
# seeds at a time (HEAPLINE_SOAK_JOBS), in build/release or
# $HEAPLINE_BUILD_DIR, which it builds first.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/library.sh
source "$source_dir/tools/lib/library.sh"
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
jobs=${HEAPLINE_SOAK_JOBS:-$(nproc)}

case "${1:-}" in
  -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if (($# < 1 || $# > 2)); then
  echo "usage: tools/soak.sh N [FIRST_SEED]" >&2
  exit 2
fi
count=$1
if [[ ! "$count" =~ ^[1-9][0-9]*$ ]]; then
  echo "soak.sh: N must be a positive integer, got '$count'" >&2
  exit 2
fi
first=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if [[ ! "$first" =~ ^[0-9]+$ ]] || ((${#first} > 18)); then
  echo "soak.sh: FIRST_SEED must be a non-negative integer below 10^18, got '$first'" >&2
  exit 2
fi
if [[ ! "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "soak.sh: HEAPLINE_SOAK_JOBS must be a positive integer, got '$jobs'" >&2
  exit 2
fi

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build_dir" --target oracle_check --parallel "$jobs" >/dev/null
check=$build_dir/tests/interposer/oracle_check
workload=$build_dir/tests/interposer/oracle_workload
library=$(heapline_library "$build_dir/bin")

logs=$(mktemp -d "${TMPDIR:-/tmp}/heapline-soak.XXXXXX")
trap 'rm -rf "$logs"' EXIT
echo "soak: $count seeds from $first, $jobs at a time ($build_dir)"
start=$SECONDS
# One seed: its output in $logs/SEED, kept only when it failed.
run_seed() {
  if "$check" --workload "$workload" --library "$library" --seed "$1" >"$logs/$1" 2>&1; then
    rm -f "$logs/$1"
  else
    echo "soak: seed $1 failed"
  fi
}
running=0
for ((seed = first; seed < first + count; ++seed)); do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  run_seed "$seed" &
  running=$((running + 1))
done
wait

mapfile -t failed < <(find "$logs" -type f -printf '%f\n' | sort -n)
echo "soak: $count seeds in $((SECONDS - start)) s, ${#failed[@]} failed"
for seed in "${failed[@]}"; do
  echo
  cat "$logs/$seed"
done
((${#failed[@]} == 0))
