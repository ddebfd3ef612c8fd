#!/usr/bin/env bash
# words_as_given_test.sh BENCH: the words after `--` reach the command, and
# import's file names are read, exactly as given, by every subcommand that
# takes them. CLI11 read "[a,b]" as its list syntax: "[x]" lost its
# brackets and "[a,b]" became two arguments, so another command than the
# one given was measured.
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
cd "$work"

# Writes its arguments, one line per run: <1> <2> ...
cat >args.sh <<EOF
#!/bin/sh
for a in "\$@"; do printf '<%s> ' "\$a"; done >>"$work/args.out"
echo >>"$work/args.out"
EOF
chmod +x args.sh
words=('[x]' 'a,b' '[a,b]' '[' ']' '[]' '[,]' '--json')
expected='<[x]> <a,b> <[a,b]> <[> <]> <[]> <[,]> <--json> '

check_runs() {  # every run of the command got the words as given
  [[ -s args.out ]] || fail "$1: the command did not run: $(cat err)"
  while IFS= read -r line; do
    [[ $line == "$expected" ]] || fail "$1: the command got '$line', not '$expected'"
  done <args.out
  rm -f args.out
}

"$bench" overhead churn-1t none 1 -- ./args.sh "${words[@]}" >out 2>err || fail "overhead: $(cat err)"
check_runs overhead
grep -qF 'command   ./args.sh [x] a,b [a,b] [ ] [] [,] --json' out || fail "overhead names another command: $(cat out)"

"$bench" accuracy -- ./args.sh "${words[@]}" >out 2>err || fail "accuracy: $(cat err)"
check_runs accuracy

# A shell's test, the sweep's case: [ -z "$LD_PRELOAD" ] is false under the
# library, so the command's status is 1 when its words were kept.
status=0
"$bench" accuracy -- sh -c '[ -n "$LD_PRELOAD" ] && [ -n "x,y" ]' >out 2>err || status=$?
[[ $status -eq 0 ]] || fail "accuracy of sh -c '[ ... ]' exited $status: $(cat err)"

mkdir store
: >'[pts]'
"$bench" import --store store '[pts]' >out 2>err || fail "import of a file named [pts]: $(cat err)"
grep -qF 'imported 0 point(s)' out || fail "import: $(cat out)"
echo PASS
