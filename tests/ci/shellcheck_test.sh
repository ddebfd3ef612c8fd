#!/usr/bin/env bash
# Runs shellcheck (Debian's) on every shell script under
# tools/, on bench/*.sh, on these tests, the docs tests and the install tests, following what they source.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$source_dir"

scripts=()
while IFS= read -r -d '' file; do
  if [[ "$file" == *.sh ]] || head -n 1 "$file" | grep -qE '^#!.*\b(ba)?sh\b'; then
    scripts+=("$file")
  fi
done < <(find tools bench tests/ci tests/docs tests/install -type f -not -path '*/node_modules/*' -print0 | sort -z)

((${#scripts[@]} > 0)) || { echo "no scripts found"; exit 1; }
shellcheck --external-sources "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} script(s) clean"
