#!/usr/bin/env bash
# Ctrl-C in the middle of a measurement: the running command (and its whole
# process group) is stopped, nothing is printed as a result, status is 130.
set -uo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The measured command records its pid, then sleeps far longer than the test.
"$bench" overhead churn-1t none 3 -- sh -c "echo \$\$ >> '$work/pids'; sleep 60" \
  >"$work/out" 2>"$work/err" &
bench_pid=$!
# (Up to a minute: a loaded machine may take long to start it.)
for _ in $(seq 1200); do [[ -s "$work/pids" ]] && break; sleep 0.05; done
[[ -s "$work/pids" ]] || { echo "the command never started"; cat "$work/err"; exit 1; }

kill -INT "$bench_pid"
wait "$bench_pid"
status=$?
[[ $status -eq 130 ]] || { echo "expected status 130, got $status"; cat "$work/err"; exit 1; }
grep -q "nothing was recorded" "$work/err" || { echo "no message:"; cat "$work/err"; exit 1; }
[[ ! -s "$work/out" ]] || { echo "a result was printed:"; cat "$work/out"; exit 1; }
while read -r pid; do
  if kill -0 "$pid" 2>/dev/null; then echo "command $pid survived the interrupt"; exit 1; fi
done <"$work/pids"
echo "interrupt: ok"
