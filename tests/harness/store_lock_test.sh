#!/usr/bin/env bash
# An append to the store waits for the lock another process holds on
# points.jsonl (two publishers at once, or a reader checking the last line):
# while it is held the file does not change, once released the append lands.
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'exec 9>&-; rm -rf "$work"' EXIT

legacy_points() {  # FIRST LAST: legacy points with distinct commits
  for i in $(seq "$1" "$2"); do
    printf '{"measured_at": "2025-02-%02dT10:00:00Z", "overhead": 4.%02d, "commit": "%040x"}\n' "$i" "$i" "$i"
  done
}
legacy_points 1 4 >"$work/first.jsonl"
legacy_points 5 8 >"$work/second.jsonl"
mkdir -p "$work/store"
"$bench" import --store "$work/store" "$work/first.jsonl" | grep -q "imported 4 point"
store=$work/store/points.jsonl
before=$(md5sum <"$store")

exec 9<"$store"
flock --exclusive 9  # this shell holds the lock now
"$bench" import --store "$work/store" "$work/second.jsonl" >"$work/out" 2>&1 &
importer=$!
# Wait until the import is queued on the lock (a waiter in /proc/locks):
# no sleep decides anything, however slow the machine.
for ((tries = 0; ; tries++)); do
  if [[ "$(md5sum <"$store")" != "$before" ]]; then
    echo "the store changed while another process held its lock"; exit 1
  fi
  if grep -qE -- "-> FLOCK +ADVISORY +WRITE +$importer " /proc/locks; then break; fi
  if ! kill -0 "$importer" 2>/dev/null || ((tries > 1200)); then
    echo "the import neither waited for the lock nor changed the store"; cat "$work/out"; exit 1
  fi
  sleep 0.05
done
[[ "$(md5sum <"$store")" == "$before" ]] || { echo "the store changed while locked"; exit 1; }
flock --unlock 9
wait "$importer"
grep -q "imported 4 point" "$work/out"
[[ $(wc -l <"$store") -eq 8 ]]
"$bench" validate --store "$work/store" | grep -q "8 valid point(s), 0 bad line(s)"
echo "store lock: ok"
