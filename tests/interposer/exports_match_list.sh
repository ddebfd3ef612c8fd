#!/bin/sh
# exports_match_list.sh LIBRARY EXPORTS_MAP: the library's dynamic symbols
# are exactly the functions of intercepted.h's list, as the build's
# exports.map (generated from it) names them: a function listed but not
# defined, or defined and exported some other way, fails.
set -eu
library=$1
map=$2
defined=$(nm -D --defined-only "$library" | awk '{print $3}' | LC_ALL=C sort | tr '\n' ' ')
listed=$(tr ' ;{}' '\n\n\n\n' <"$map" | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | LC_ALL=C sort | tr '\n' ' ')
[ -n "$listed" ] || { echo "exports_match_list: $map lists no function" >&2; exit 1; }
if [ "$defined" != "$listed" ]; then
  echo "exports_match_list: $library exports: $defined" >&2
  echo "exports_match_list: intercepted.h lists: $listed" >&2
  exit 1
fi
