#!/usr/bin/env bash
# pull_request_figures_test.sh: the pull request's table from fixed inputs:
# a comparison whose CPU times give known figures, and a stand-in valgrind
# whose instruction counts depend on the library preloaded. The figures, the
# change in points and the reduced command must come out exactly.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Stand-in valgrind: 1000 instructions without a library, 1100 with the
# base's, 1150 with the pull request's; logs the command it was given.
cat >"$scratch/valgrind" <<STUB
#!/usr/bin/env bash
printf '%s\n' "\$*" >>"$scratch/valgrind.log"
case "\${LD_PRELOAD:-}" in
  */base/libheapline.so) n=1100 ;;
  */head/libheapline.so) n=1150 ;;
  "") n=1000 ;;
  *) echo "unexpected LD_PRELOAD=\$LD_PRELOAD" >&2; exit 1 ;;
esac
echo "==1== Collected : \$n" >&2
STUB
chmod +x "$scratch/valgrind"

# compare's cpu figure per build (the median of its rounds, which compare
# computes: harness_gtest proves it): base +15%, pull request +5%. The change
# is -10 points; the wall figure (0) is not the one read.
python3 - "$scratch/comparison.json" <<'PY'
import json, sys
def result(build, cpu):
    return {"build": build, "overhead": 0, "cpu_overhead": cpu, "rounds": []}
json.dump({"schema": "heapline-comparison/1", "rounds": 2, "runs": 3, "scale": 0.05,
           "machine": {"description": "a test machine"},
           "builds": [{"label": "base"}, {"label": "pull request"}],
           "scenarios": [{"name": "churn-1t", "results": [result("base", 0.15),
                                                          result("pull request", 0.05)]}]},
          open(sys.argv[1], "w"))
PY

table=$(python3 "$source_dir/tools/ci/pull_request_figures.py" --catalogue "$source_dir/scenarios/scenarios.json" \
  --bin /opt/bin --source "$source_dir" --comparison "$scratch/comparison.json" \
  --lib "base=$scratch/base/libheapline.so" --lib "pull request=$scratch/head/libheapline.so" \
  --instructions-scale 0.02 --valgrind "$scratch/valgrind")
# shellcheck disable=SC2016 # the backquotes are Markdown
assert_contains "$table" '| `churn-1t` | +10.00% | +15.00% | +5.00 | +15.00% | +5.00% | -10.00 |' "the table"
assert_contains "$table" "| Scenario | instructions, base | instructions, pull request | change (points) |" "the table"
assert_contains "$table" "on a test machine." "the table's note"
assert_eq "$(sort -u "$scratch/valgrind.log")" \
  "--tool=callgrind --callgrind-out-file=/dev/null /opt/bin/malloc_churn 1 200000" "the reduced command under callgrind"

# A failing callgrind run is an error, not a figure.
sed -i 's/^echo "==1== Collected/exit 3; echo "/' "$scratch/valgrind"
status=0
log=$(python3 "$source_dir/tools/ci/pull_request_figures.py" --catalogue "$source_dir/scenarios/scenarios.json" \
  --bin /opt/bin --source "$source_dir" --comparison "$scratch/comparison.json" \
  --lib "base=$scratch/base/libheapline.so" --lib "pull request=$scratch/head/libheapline.so" \
  --valgrind "$scratch/valgrind" 2>&1) || status=$?
assert_eq "$status" 1 "the status when callgrind fails"
assert_contains "$log" "callgrind failed on /opt/bin/malloc_churn 1 200000 (exit 3)" "the error"

# compare_pull_request.sh refuses what is not a commit, before building.
status=0
log=$("$source_dir/tools/ci/compare_pull_request.sh" 'no-such-ref' 2>&1) || status=$?
assert_eq "$status" 1 "the status for a base that is not a commit"
assert_contains "$log" "'no-such-ref' is not a commit" "the refusal"
echo "pull request figures: ok"
