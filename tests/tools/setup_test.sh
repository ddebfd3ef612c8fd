#!/usr/bin/env bash
# tools/setup.sh installs what is missing in this machine's architecture: a
# package present only as a foreign architecture's (libsimdjson-dev:arm64 where
# libsimdjson-dev:amd64 was) is missing, an architecture-independent one is
# installed. Run beside stand-in dpkg, dpkg-query and apt-get that read a
# table of installed packages and record what apt-get was asked.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "setup_test: $*" >&2; exit 1; }

mkdir -p "$work/bin"
cat >"$work/bin/dpkg" <<'STUB'
#!/bin/sh
[ "$1" = --print-architecture ] && { echo amd64; exit 0; }
exit 2
STUB
# The table holds "name arch" lines; dpkg-query -W prints each instance.
cat >"$work/bin/dpkg-query" <<STUB
#!/bin/sh
name=\$(eval echo "\\\${\$#}")
found=1
while read -r package arch; do
  [ "\$package" = "\$name" ] || continue
  printf 'install ok installed %s\n' "\$arch"; found=0
done <"$work/installed"
exit \$found
STUB
cat >"$work/bin/apt-get" <<STUB
#!/bin/sh
printf '%s\n' "\$*" >>"$work/apt.calls"
STUB
# Run by someone other than root, the script calls sudo: this one keeps PATH.
printf '#!/bin/sh\nexec "$@"\n' >"$work/bin/sudo"
chmod +x "$work/bin/"*

wanted=$(sed -n '/^build_packages=(/,/^)/p' "$source_dir/tools/setup.sh" |
  grep -v '^ *#' | sed 's/build_packages=(//; s/)//' | tr -s ' \n' '\n' | grep -v '^$')
[[ $(wc -l <<<"$wanted") -gt 5 ]] || fail "could not read the package list: $wanted"
run() { rm -f "$work/apt.calls"; PATH="$work/bin:$PATH" bash "$source_dir/tools/setup.sh" >"$work/out" 2>&1; }

# Everything native: nothing installed, no apt-get.
sed 's/$/ amd64/' <<<"$wanted" >"$work/installed"
run || fail "a complete machine failed: $(cat "$work/out")"
[[ ! -e "$work/apt.calls" ]] || fail "apt-get ran on a complete machine: $(cat "$work/apt.calls")"
grep -q "are installed" "$work/out" || fail "not said: $(cat "$work/out")"

# libsimdjson-dev only as arm64's, cmake as an architecture-independent one.
sed 's/$/ amd64/; s/^libsimdjson-dev amd64$/libsimdjson-dev arm64/; s/^cmake amd64$/cmake all/' \
  <<<"$wanted" >"$work/installed"
run || fail "the run failed: $(cat "$work/out")"
grep -q "install .* libsimdjson-dev" "$work/apt.calls" ||
  fail "a foreign architecture's package counted as installed: $(cat "$work/out")"
! grep -qw "cmake" "$work/apt.calls" || fail "an architecture-independent package counted as missing: $(cat "$work/apt.calls")"
grep -q "installing 1 Debian package(s): libsimdjson-dev$" "$work/out" || fail "not named: $(cat "$work/out")"
echo "setup_test: ok"
