#!/usr/bin/env bash
# accuracy.sh [THREADS...]: the stated bound against the error it states, by
# counts only (no times). For each thread count T (default 1 4 16 64 256),
# `malloc_churn T 100000 16 4096 64` (64 MiB held, each thread's 64 blocks
# held at once beside it) runs twice under libheapline.so: batched (the
# default precision) and with HEAPLINE_PRECISION=exact. The error is the
# batched peak against the exact one; the goal is |error| <= bound <=
# max(1% of the peak, 256 KiB) in every row. Prints a Markdown table and
# exits 1 when a row misses the goal.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}/bin
threads=("$@")
((${#threads[@]} > 0)) || threads=(1 4 16 64 256)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run() {  # T PRECISION -> the report's path
  local out="$scratch/$2.$1.json"
  env LD_PRELOAD="$bin/libheapline.so" HEAPLINE_OUT="$out" HEAPLINE_PRECISION="$2" \
    "$bin/malloc_churn" "$1" 100000 16 4096 64
  echo "$out"
}

echo "| threads | batched peak | exact peak | stated bound | bound / peak | error | publishes per 1000 calls |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
status=0
for t in "${threads[@]}"; do
  batched=$(run "$t" batched)
  exact=$(run "$t" exact)
  python3 - "$t" "$batched" "$exact" <<'PY' || status=1
import json, sys
threads, batched_path, exact_path = sys.argv[1:]
batched = json.load(open(batched_path))
exact = json.load(open(exact_path))
peak, truth = batched["peak_bytes"], exact["peak_bytes"]
bound = batched["precision"]["bound_bytes"]
calls = sum(batched["calls"].values())
error = peak - truth
goal = max(peak // 100, 256 * 1024)
print(f"| {threads} | {peak:,} | {truth:,} | {bound:,} | {100 * bound / peak:.2f}% | {100 * error / truth:+.2f}% "
      f"({error:+,}) | {1000 * batched['publishes'] / calls:.2f} |".replace(",", " "))
sys.exit(0 if abs(error) <= bound <= goal else 1)
PY
done
exit "$status"
