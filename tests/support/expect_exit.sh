#!/usr/bin/env bash
# expect_exit.sh STATUS REGEX -- COMMAND...
# Runs COMMAND and passes when it exits with STATUS and its combined output
# matches the extended REGEX (ctest alone cannot check both at once).
set -uo pipefail
expected_status=$1 pattern=$2
shift 2
[[ "${1:-}" == "--" ]] && shift
output=$("$@" 2>&1)
status=$?
if [[ "$status" != "$expected_status" ]]; then
  printf 'expected exit status %s, got %s from: %s\n--- output ---\n%s\n' "$expected_status" "$status" "$*" "$output"
  exit 1
fi
# Lines are joined with spaces so a pattern can span them.
flattened=${output//$'\n'/ }
if ! [[ "$flattened" =~ $pattern ]]; then
  printf 'output of %s does not match /%s/\n--- output ---\n%s\n' "$*" "$pattern" "$output"
  exit 1
fi
