#!/usr/bin/env bash
# include_layers.sh SOURCE_DIR: the interposer's files depend one way. Each
# file of interposer/src has a layer; a file may include the headers of its
# own layer and the ones below, never one above (the mapping layer never
# includes the accounting, for instance: it calls a hook it declares). A
# file missing from the table fails too, so that a new one is placed.
#   0  pure parts and the OS boundary
#   1  the allocator forwarded to, the mapped series, the heap sampler
#   2  the accounting: hot path and slow paths' state
#   3  the overrides: what the program calls
set -euo pipefail
src=$1/interposer/src
declare -A layer=(
  [os]=0 [text]=0 [config]=0 [intercepted]=0 [threshold_policy]=0 [publish_clock]=0 [timeline]=0
  [live_file]=0 [output]=0 [mapped_regions]=0 [loaded_object]=0 [sampler_math]=0 [atomic_max]=0
  [arch]=0 [arch/x86_64]=0 [arch/aarch64]=0
  [next_allocator]=1 [mapped_memory]=1 [heap_sampler]=1 [stack_capture]=1
  [accounting]=2 [process]=2 [thread_registry]=2 [published]=2 [sampling]=2 [precision_budget]=2
  [live_header]=2 [fork_child]=2 [exit_report]=2 [exact_shadow]=2
  [alloc_override]=3 [mmap_override]=3 [exit_override]=3 [exec_override]=3 [public_api]=3
)
status=0
for file in "$src"/*.h "$src"/*.cpp "$src"/arch/*.h; do
  stem=${file#"$src"/}
  stem=${stem%.*}
  own=${layer[$stem]:-}
  if [[ -z "$own" ]]; then
    echo "include_layers: $file has no layer in tests/interposer/include_layers.sh" >&2
    status=1
    continue
  fi
  while read -r header; do
    [[ "$header" == heapline/* ]] && continue  # the public headers: layer 0
    included=${layer[${header%.h}]:-}
    if [[ -z "$included" ]]; then
      echo "include_layers: $file includes $header, which has no layer" >&2
      status=1
    elif ((included > own)); then
      echo "include_layers: $file (layer $own) includes $header (layer $included): upward" >&2
      status=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done
exit "$status"
