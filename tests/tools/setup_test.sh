#!/usr/bin/env bash
# tools/setup.sh installs what is missing in this machine's architecture: a
# package present only as a foreign architecture's (libsimdjson-dev:arm64 where
# libsimdjson-dev:amd64 was) is missing, an architecture-independent one is
# installed; --arm64 installs the cross compilers, qemu and debootstrap,
# never an arm64 package. Run beside stand-in dpkg, dpkg-query and apt-get
# that read a table of installed packages and record what apt-get was asked.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "setup_test: $*" >&2; exit 1; }

mkdir -p "$work/bin"
# dpkg knows the foreign architectures of $work/foreign and records an added one.
touch "$work/foreign"
cat >"$work/bin/dpkg" <<STUB
#!/bin/sh
[ "\$1" = --print-architecture ] && { echo amd64; exit 0; }
[ "\$1" = --print-foreign-architectures ] && { cat "$work/foreign"; exit 0; }
[ "\$1" = --add-architecture ] && { printf '%s\n' "\$*" >>"$work/dpkg.calls"; exit 0; }
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
run() { rm -f "$work/apt.calls" "$work/dpkg.calls"; PATH="$work/bin:$PATH" bash "$source_dir/tools/setup.sh" "$@" >"$work/out" 2>&1; }

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

# --arm64 on amd64: the cross compilers, qemu and debootstrap as native
# packages, the arm64 architecture added to apt's lists once, and no arm64
# package.
sed 's/$/ amd64/' <<<"$wanted" >"$work/installed"
run --arm64 || fail "--arm64 failed: $(cat "$work/out")"
grep -q "^install .*crossbuild-essential-arm64 qemu-user-static debootstrap$" "$work/apt.calls" ||
  fail "--arm64 did not install the cross compilers, qemu and debootstrap: $(cat "$work/apt.calls" 2>/dev/null)"
! grep -q ":arm64" "$work/apt.calls" || fail "--arm64 installed an arm64 package: $(cat "$work/apt.calls")"
grep -qx -- "--add-architecture arm64" "$work/dpkg.calls" || fail "--arm64 did not add the architecture: $(cat "$work/out")"
echo arm64 >"$work/foreign"
printf '%s\n' "crossbuild-essential-arm64 amd64" "qemu-user-static amd64" "debootstrap all" >>"$work/installed"
run --arm64 || fail "--arm64 failed on a set-up machine: $(cat "$work/out")"
[[ ! -e "$work/apt.calls" && ! -e "$work/dpkg.calls" ]] || fail "--arm64 changed a set-up machine: $(cat "$work/out")"
# Options together: --test --arm64 asks for both lists (the second was
# ignored: only the first option was read); an unknown one is refused.
rm -f "$work/foreign"; touch "$work/foreign"
sed 's/$/ amd64/' <<<"$wanted" >"$work/installed"
run --test --arm64 || fail "--test --arm64 failed: $(cat "$work/out")"
grep -q "crossbuild-essential-arm64" "$work/apt.calls" || fail "--test --arm64 left out --arm64: $(cat "$work/apt.calls")"
test_package=$(sed -n '/^test_packages=(/,/^)/p' "$source_dir/tools/setup.sh" | grep -v '^ *#' |
  sed 's/test_packages=(//; s/)//' | tr -s ' \n' '\n' | grep -v '^$' | head -1)
grep -qw -- "$test_package" "$work/apt.calls" || fail "--test --arm64 left out --test ($test_package): $(cat "$work/apt.calls")"
! run --test --nonsense || fail "an unknown option was taken"
grep -q "usage: tools/setup.sh" "$work/out" || fail "an unknown option not said: $(cat "$work/out")"
echo "setup_test: ok"
