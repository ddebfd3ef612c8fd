#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# instructions_test.sh BENCH: `heapline-bench instructions` counts what the
# suite counts for a point, run for run: a stand-in valgrind logs each
# command it is given with the variables that change a count (LD_PRELOAD,
# HEAPLINE_OUT, PYTHONHASHSEED), and the log of `instructions` must be the
# suite's, at the same scale, for a scenario with an environment of its own
# too; the figures and the commands they record must be the point's. Then
# --base: the verdict and --fail-on-regression's status.
set -euo pipefail
bench=$1
bin_dir=$(dirname "$bench")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

mkdir -p "$work/bin"
support=$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)
cat >"$work/bin/valgrind" <<STUB
#!/usr/bin/env bash
# The profile is in a fresh temporary directory each time: logged as PROFILE.
args=\$(sed -E 's/--callgrind-out-file=[^ ]*heapline-bench-[^ ]*/--callgrind-out-file=PROFILE/' <<<"\$*")
printf '%s|%s|%s|%s\n' "\${LD_PRELOAD:-}" "\${HEAPLINE_OUT:-}" "\${PYTHONHASHSEED:-}" "\$args" >>"\$VALGRIND_LOG"
case "\${LD_PRELOAD:-}" in
  "") n=1000 ;;
  */libheapline_null.so) n=1010 ;;
  *) n=1100 ;;
esac
"$support/callgrind_profile.sh" "\$@"
echo "==1== Collected : \$n" >&2
STUB
chmod +x "$work/bin/valgrind"
export PATH=$work/bin:$PATH

only=churn-1t,python
mkdir -p "$work/store"
VALGRIND_LOG=$work/suite.log "$bench" suite --store "$work/store" --out "$work/page" --no-plots --runs 1 \
  --scale 0.01 --only "$only" --commit 0123456789abcdef0123456789abcdef01234567 >/dev/null 2>"$work/suite.err" ||
  { cat "$work/suite.err"; fail "the suite"; }
VALGRIND_LOG=$work/instructions.log "$bench" instructions --scale 0.01 --only "$only" --json >"$work/figures.json" \
  2>"$work/instructions.err" || { cat "$work/instructions.err"; fail "instructions"; }
[[ -s "$work/suite.log" ]] || fail "the suite ran no valgrind"
diff "$work/suite.log" "$work/instructions.log" || fail "instructions ran other commands than the suite (diff above)"

# The figures and their commands are the points'.
python3 - "$work/store/points.jsonl" "$work/figures.json" <<'PY' || fail "the figures differ from the points'"
import json, sys
points = {p["scenario"]: p["instructions"] for p in map(json.loads, open(sys.argv[1]))}
figures = {s["name"]: s for s in json.load(open(sys.argv[2]))["scenarios"]}
assert set(points) == set(figures) == {"churn-1t", "python"}, (points, figures)
for name, point in points.items():
    got = dict(figures[name]["figures"][0], command=figures[name]["command"])
    for field in ("without", "with", "overhead", "command"):
        assert got[field] == point[field], (name, field, got[field], point[field])
PY

# --base: the forwarding-only library (+1%) against libheapline.so (+10%):
# a regression of 9 points, which fails only with --fail-on-regression.
status=0
VALGRIND_LOG=$work/base.log "$bench" instructions --only churn-1t --base "$bin_dir/libheapline_null.so" \
  >"$work/verdict.md" 2>&1 || status=$?
[[ "$status" == 0 ]] || fail "instructions --base exited $status without --fail-on-regression"
grep -qF '| `churn-1t` | `malloc_churn 1 200000` | +1.00% | +10.00% | +9.00 pts | ±0.20 pts | **regression** |' \
  "$work/verdict.md" || { cat "$work/verdict.md"; fail "the verdict table"; }
status=0
VALGRIND_LOG=$work/base.log "$bench" instructions --only churn-1t --base "$bin_dir/libheapline_null.so" \
  --fail-on-regression >/dev/null 2>"$work/verdict.err" || status=$?
[[ "$status" == 1 ]] || fail "instructions --fail-on-regression exited $status on a regression"
grep -qF 'Regression: `churn-1t` costs +10.00% instructions against the base'"'"'s +1.00%: +9.00 pts' \
  "$work/verdict.err" || { cat "$work/verdict.err"; fail "the reason on stderr"; }
# The other way round it is an improvement, and passes.
VALGRIND_LOG=$work/base.log "$bench" instructions --only churn-1t --lib "$bin_dir/libheapline_null.so" \
  --base "$bin_dir/libheapline.so" --fail-on-regression >"$work/improved.md" 2>/dev/null ||
  fail "an improvement failed the gate"
grep -qF '**improvement**' "$work/improved.md" || fail "the improvement's verdict"
# Several libraries: a column each, in the order given.
VALGRIND_LOG=$work/columns.log "$bench" instructions --only churn-1t --lib "$bin_dir/libheapline_null.so" \
  --lib "$bin_dir/libheapline.so" >"$work/columns.md" 2>/dev/null || fail "instructions with two libraries"
for row in '| Scenario | Reduced command | Without | `libheapline_null.so` | `libheapline.so` |' \
  '| `churn-1t` | `malloc_churn 1 200000` | 1000 | +1.00% | +10.00% |'; do
  grep -qF "$row" "$work/columns.md" || { cat "$work/columns.md"; fail "the table of two libraries: no $row"; }
done
echo "instructions: ok"
