#!/usr/bin/env bash
# callgrind_profile.sh VALGRIND_ARGS...: the profile a stand-in valgrind
# writes, as callgrind would. Given --callgrind-out-file=FILE (not
# /dev/null), FILE names each object that ran code: the preloaded library
# among them, when LD_PRELOAD is set. heapline-bench refuses a count whose
# profile does not name the library.
for arg; do
  case "$arg" in
    --callgrind-out-file=/dev/null) ;;
    --callgrind-out-file=*)
      if [[ -n "${LD_PRELOAD:-}" ]]; then
        printf 'ob=(1) %s\nfn=(1) malloc\n0 9\n' "$LD_PRELOAD" >"${arg#*=}"
      fi
      ;;
  esac
done
exit 0
