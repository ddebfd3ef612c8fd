#!/usr/bin/env bash
# needs_only_libc.sh LIBRARY
#
# libheapline.so runs inside other programs: it must need libc (and the
# loader) and nothing else, libstdc++ least of all. A missing file or a
# failing readelf fails the test instead of passing it.
set -euo pipefail
library=$1
dynamic=$(readelf -d "$library")
needed=$(grep NEEDED <<<"$dynamic" || true)
if ! grep -q 'libc\.so' <<<"$needed"; then
  echo "no NEEDED entry for libc in $library:"; echo "$dynamic"; exit 1
fi
if others=$(grep -v -e 'libc\.so' -e 'ld-linux' <<<"$needed"); then
  echo "$library needs more than libc:"; echo "$others"; exit 1
fi
