#!/usr/bin/env bash
# store_safety_test.sh BENCH SOURCE_DIR
#
# Nothing in the store is ever half-written, out of order or read two ways
# (safety, class D), from the command line:
# 1. a measurement that cannot be stored (a file size limit: a full disk's
#    EFBIG twin) is printed in full and kept beside the store (and the suite
#    never says it appended a point), the store is
#    left as it was, the next scenario still runs, and the kept file imports;
# 2. a torn last line (a writer killed mid-write) does not block the next
#    import: it is moved to a named file beside the store, byte for byte;
# 3. validate, import, render, check and export give the same verdict on
#    the same bad lines (a date that is not RFC 3339 UTC, a NUL before the
#    last brace, two points glued, overlong UTF-8, a key twice, a duplicate);
# 4. a missing store, or a FIFO or a symbolic link in its place: one line, a non-zero exit, no
#    hang.
set -euo pipefail
bench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
null_lib=$(dirname "$bench")/libheapline_null.so
legacy=$source_dir/tests/fixtures/legacy_points.jsonl

# 1. Past the file size limit: every point kept, none half-written.
mkdir -p "$work/full"
for i in $(seq 1 300); do
  printf '{"measured_at": "2025-01-01T00:%02d:%02dZ", "overhead": 0.%03d, "commit": "%040d"}\n' $((i / 60)) $((i % 60)) "$i" "$i"
done >"$work/full/points.jsonl"
before=$(md5sum <"$work/full/points.jsonl")
size_kib=$(( $(stat -c %s "$work/full/points.jsonl") / 1024 + 1 ))
status=0
( ulimit -f "$size_kib"
  exec "$bench" suite --store "$work/full" --lib "$null_lib" --only churn-1t,churn-4t --runs 1 --scale 0.0005 \
    --no-instructions --no-plots --out "$work/full-page" --commit 0123456789abcdef0123456789abcdef01234567 ) \
  >"$work/out" 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || fail "the suite exited $status past the file size limit: $(cat "$work/err")"
[[ "$(md5sum <"$work/full/points.jsonl")" == "$before" ]] || fail "a failed append changed the store"
for scenario in churn-1t churn-4t; do
  grep -q "the point of $scenario could not be stored: cannot append to $work/full/points.jsonl: File too large; the store is as it was before" \
    "$work/err" || fail "$scenario: no reason given: $(cat "$work/err")"
done
[[ $(grep -c '^{"schema":2,"scenario":"churn-' "$work/err") -eq 2 ]] || fail "the points are not printed in full: $(cat "$work/err")"
grep -q "^suite: 2 scenario(s) in .*, some FAILED; no point appended to $work/full/points.jsonl\$" "$work/err" ||
  fail "the suite's last line says points were appended: $(cat "$work/err")"
mapfile -t kept < <(sed -n 's/^It was written to \(.*\); to add it later: .*/\1/p' "$work/err")
[[ ${#kept[@]} -eq 2 ]] || fail "not every point was kept beside the store: $(cat "$work/err")"
for file in "${kept[@]}"; do
  [[ "$(dirname "$file")" == "$work/full" ]] || fail "$file is not beside the store"
  grep -qF "$(head -c 60 "$file")" "$work/err" || fail "$file is not the point printed"
  "$bench" import --store "$work/full" "$file" | grep -q "imported 1 point" || fail "$file does not import"
done
"$bench" validate --store "$work/full" | grep -q "302 valid point(s), 0 bad line(s)" || fail "the store is not whole after the import"

# 2. A torn last line: the next import moves it aside and goes on.
mkdir -p "$work/torn"
cp "$legacy" "$work/torn/points.jsonl"
printf '{"measured_at": "2026-01-01T00:00:00Z", "overh' >>"$work/torn/points.jsonl"
"$bench" import --store "$work/torn" "$work/full/points.jsonl" >"$work/out" 2>"$work/err" ||
  fail "an import after a torn line was refused: $(cat "$work/err")"
aside=$(sed -n 's/.*incomplete line of 46 bytes (an append was interrupted): moved to \(.*\); the store now ends at its last whole line/\1/p' "$work/err")
[[ -n "$aside" && "$(cat "$aside")" == '{"measured_at": "2026-01-01T00:00:00Z", "overh' ]] ||
  fail "the torn line was not kept byte for byte: $(cat "$work/err")"
"$bench" validate --store "$work/torn" | grep -q "306 valid point(s), 0 bad line(s)" || fail "the store is not whole"

# 3. One verdict on every bad line, from every command.
good='{"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.05, "commit": "abcdabcd"}'
declare -A lines=(
  [rfc2822_date]='{"measured_at": "Sun, 01 Mar 2026 12:00:00 GMT", "overhead": 0.05}'
  [nul_before_brace]=$'{"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.06\x01}'
  [glued]="$good$good"
  [overlong_utf8]=$'{"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.07, "commit": "\xc0\xaf"}'
  [key_twice]='{"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.08, "overhead": 0.5}'
  [duplicate]="$good"
)
for name in "${!lines[@]}"; do
  store=$work/agree-$name
  mkdir -p "$store"
  printf '%s\n%s\n' "$good" "${lines[$name]}" >"$store/points.jsonl"
  # A raw NUL cannot be passed through bash: write it with printf's escape.
  [[ $name != nul_before_brace ]] || printf '%s\n{"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.06\0}\n' "$good" >"$store/points.jsonl"
  if "$bench" validate --store "$store" >/dev/null 2>"$work/validate"; then fail "$name: validate accepted it"; fi
  reason=$(sed -n 's/^.*points\.jsonl:2: //p' "$work/validate")
  [[ -n "$reason" ]] || fail "$name: validate named no line 2: $(cat "$work/validate")"
  mkdir -p "$work/import-$name"
  if "$bench" import --store "$work/import-$name" "$store/points.jsonl" >/dev/null 2>"$work/import"; then fail "$name: import accepted it"; fi
  grep -qF "points.jsonl:2: $reason" "$work/import" || fail "$name: import's reason differs: $(cat "$work/import")"
  if "$bench" export --store "$store" >/dev/null 2>"$work/export"; then fail "$name: export accepted it"; fi
  grep -qF "points.jsonl:2: $reason" "$work/export" || fail "$name: export's reason differs: $(cat "$work/export")"
  "$bench" render --store "$store" --out "$work/page-$name" --no-plots >/dev/null 2>"$work/render"
  grep -qF "warning: $store/points.jsonl:2: $reason" "$work/render" || fail "$name: render's reason differs: $(cat "$work/render")"
  grep -q "^1 point(s) from 1 measured commit" "$work/page-$name/performance.md" || fail "$name: the page counts it"
  "$bench" check --store "$store" >/dev/null 2>"$work/check"
  grep -qF "warning: $store/points.jsonl:2: $reason" "$work/check" || fail "$name: check's reason differs: $(cat "$work/check")"
done
grep -q 'field "measured_at" must be a UTC time as RFC 3339 writes it ("2026-03-01T12:00:00Z", 1970 to 2261), got "Sun, 01 Mar 2026 12:00:00 GMT"' \
  <("$bench" validate --store "$work/agree-rfc2822_date" 2>&1) || fail "the date is not named"

# 4. A missing store; a FIFO in the store's place.
for command in validate render check export; do
  status=0
  "$bench" "$command" --store "$work/missing" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -eq 1 && "$(cat "$work/err")" == "heapline-bench: no store directory at $work/missing (a mistyped --store?)." ]] ||
    fail "$command of a missing store: exit $status, '$(cat "$work/err")'"
  [[ ! -s "$work/out" ]] || fail "$command of a missing store printed: $(cat "$work/out")"
done
# The commands that append refuse a missing --store too, before their work,
# and make no directory: a mistyped --store sent the points into a new
# store that nothing reads.
for command in import suite calibrate; do
  case $command in
    import) args=(import --store "$work/missing" "$work/full/points.jsonl") said="Nothing was imported." ;;
    suite) args=(suite --store "$work/missing" --only churn-1t --runs 1 --scale 0.0005 --no-instructions --no-plots
                 --commit 0123456) said="Nothing was measured." ;;
    calibrate) args=(calibrate --store "$work/missing" --only churn-1t --runs 2 --repeats 3 --scale 0.0005
                     --no-instructions) said="Nothing was measured." ;;
  esac
  status=0
  "$bench" "${args[@]}" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -eq 1 && "$(cat "$work/err")" == "heapline-bench: no store directory at $work/missing (a mistyped --store? make the directory for a new store). $said" ]] ||
    fail "$command into a missing store: exit $status, '$(cat "$work/err")'"
  [[ ! -e "$work/missing" ]] || fail "$command made the missing store"
done
# A FIFO or a symbolic link in the place of points.jsonl: every command,
# reading or appending, refuses it in the same one line, before any work
# (a link too: nothing is appended through a link, so nothing reads through
# one, and every command sees the same store).
mkdir -p "$work/fifo" "$work/linked" "$work/calibration-linked"
mkfifo "$work/fifo/points.jsonl"
ln -s "$legacy" "$work/linked/points.jsonl"
: >"$work/calibrations.jsonl"
ln -s "$work/calibrations.jsonl" "$work/calibration-linked/calibration.jsonl"
for kind in fifo linked calibration-linked; do
  commands=(validate render check export import suite calibrate)
  case $kind in
    fifo) said="$work/fifo/points.jsonl is a FIFO, not a regular file" ;;
    linked) said="$work/linked/points.jsonl is a symbolic link (nothing is written through a link: put the file itself in the store)" ;;
    calibration-linked)
      said="$work/calibration-linked/calibration.jsonl is a symbolic link (nothing is written through a link: put the file itself in the store)"
      commands=(validate render check suite calibrate) ;;
  esac
  for command in "${commands[@]}"; do
    args=("$command" --store "$work/$kind")
    case $command in
      render) args+=(--out "$work/pages-$kind") ;;
      import) args+=("$legacy") ;;
      suite) args+=(--out "$work/pages-$kind" --only churn-1t --runs 1 --scale 0.0005 --no-instructions --no-plots --commit 0123456) ;;
      calibrate) args+=(--only churn-1t --runs 2 --repeats 3 --scale 0.0005 --no-instructions) ;;
    esac
    status=0
    timeout 20 "$bench" "${args[@]}" >"$work/out" 2>"$work/err" || status=$?
    [[ $status -eq 1 ]] || fail "$command of a $kind store: exit $status (124: it hung): $(cat "$work/err")"
    [[ $(grep -c '' "$work/err") -eq 1 && "$(cat "$work/err")" == "heapline-bench: $said"* ]] ||
      fail "$command of a $kind store: $(cat "$work/err")"
  done
done
[[ -p "$work/fifo/points.jsonl" && -L "$work/linked/points.jsonl" && ! -s "$work/calibrations.jsonl" ]] ||
  fail "a refused store file was replaced or written"
echo "store safety: ok"
