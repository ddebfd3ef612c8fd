#!/usr/bin/env bash
# output_targets_test.sh HEAPLINE HEAPLINE_BENCH LIBHEAPLINE SOURCE_DIR
# The output rule (heapline/output_file.h) for every file the launcher and
# heapline-bench write: each writer, given each kind of name that cannot be
# an output (a FIFO, a device, a symbolic link to a file, a directory, a
# name too long for the filesystem, an empty name, a missing directory),
# refuses it in one line before its work (the command is not run), and
# leaves what was there as it was; two outputs of one command that name one
# file are refused, and so is an output that names a file the command
# reads (the report profile reads, the store export reads) or a directory
# of the program's own that is a link (a page's plots/); a render cut short by a file size limit, or a gnuplot
# that exits 0 without a whole picture, replaces no earlier output.
set -uo pipefail
heapline=$1 bench=$2 LIB=$3 source_dir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir store render-store
: > store/points.jsonl
echo "victim" > victim
# A fake report and live file: the writers refuse before reading them.
echo '{}' > report.json
echo 'x' > a.live

# What a target is, to compare before and after.
describe() {
  if [[ -L $1 ]]; then echo "link to $(readlink "$1"), victim: $(cat victim)"
  elif [[ -p $1 ]]; then echo fifo
  elif [[ -c $1 ]]; then echo "char device $(stat -c %t:%T "$1")"
  elif [[ -d $1 ]]; then echo "directory $(ls -A "$1" | tr '\n' ' ')"
  elif [[ -e $1 ]]; then echo "file $(cat "$1")"
  else echo none; fi
}

# make_target KIND NAME: puts a KIND at NAME.
make_target() {
  rm -rf "$2"
  case $1 in
    fifo) mkfifo "$2" ;;
    device) mknod "$2" c 1 3 2>/dev/null || return 1 ;;  # /dev/null's numbers, in the test's own directory
    symlink) ln -s "$work/victim" "$2" ;;
    directory) mkdir "$2" ;;
  esac
}

# check WHAT STATUS TARGET -- COMMAND...: COMMAND exits STATUS with one line
# on stderr and nothing on stdout, TARGET is as it was, the command it
# would run was not run, and no temporary is left.
check() {
  local what=$1 status=$2 target=$3
  shift 4
  local before after code
  before=$(describe "$target")
  rm -f ran
  "$@" >out 2>err </dev/null
  code=$?
  after=$(describe "$target")
  [[ $code == "$status" ]] || fail "$what: exit $code, expected $status: $(cat err)"
  [[ $(wc -l <err) == 1 ]] || fail "$what: stderr is not one line: $(cat err)"
  [[ ! -s out ]] || fail "$what: printed on stdout: $(cat out)"
  [[ $before == "$after" ]] || fail "$what: $target was '$before', is '$after'"
  [[ ! -e ran ]] || fail "$what: the command ran"
  if compgen -G "$work/.heapline-*" >/dev/null || compgen -G "$work/*/.heapline-*" >/dev/null; then
    fail "$what: a temporary was left: $(ls -A "$work" "$work"/*/ | grep .heapline-)"
  fi
}

long=$(printf 'x%.0s' {1..300})
command=(/bin/sh -c 'touch ran; exit 3')
# Each writer, its exit status when it refuses, and its command with @ for
# the output's name (@.svg for a plot).
# (run: the command follows.)
writers=(
  "run --out|2|$heapline --out @"
  "run --plot|2|$heapline --plot @.svg"
  "profile -o|2|$heapline profile report.json -o @"
  "convert -o|2|$heapline convert a.live -o @"
  "export --out|1|$bench export --store store --out @"
  "compare --json|1|$bench compare --build a=$LIB --build b=$LIB --runs 1 --only churn-1t --json @"
)
for writer in "${writers[@]}"; do
  IFS='|' read -r what status template <<<"$writer"
  suffix=""
  [[ $template == *"@.svg"* ]] && suffix=".svg"
  for kind in fifo device symlink directory; do
    name="$work/target$suffix"
    make_target "$kind" "$name" || continue
    read -r -a argv <<<"${template//@$suffix/$name}"
    [[ $what == run* ]] && argv+=(-- "${command[@]}")
    check "$what $kind" "$status" "$name" -- "${argv[@]}"
  done
  rm -rf "$work/target$suffix"
  for name in "$work/$long$suffix" "$work/nodir/x$suffix"; do
    read -r -a argv <<<"${template//@$suffix/$name}"
    [[ $what == run* ]] && argv+=(-- "${command[@]}")
    # A missing directory is refused, and not made.
    target=$name
    [[ $name == */nodir/* ]] && target=$work/nodir
    check "$what ${name:0:40}..." "$status" "$target" -- "${argv[@]}"
  done
done
# render and compare make the output directory they are asked for, never
# the one it is in: a missing directory on the way is refused, and not made.
check "render --out nodir/sub" 1 "$work/nodir" -- "$bench" render --store store --out "$work/nodir/sub"
check "compare --out nodir/sub" 1 "$work/nodir" -- "$bench" compare --build a=$LIB --build b=$LIB --runs 1 \
  --only churn-1t --out "$work/nodir/sub"
check "compare --json nodir/sub/r.json" 1 "$work/nodir" -- "$bench" compare --build a=$LIB --build b=$LIB --runs 1 \
  --only churn-1t --json "$work/nodir/sub/r.json"
"$bench" render --store store --out "$work/new-page" >out 2>err || fail "render --out a new directory: $(cat err)"
[[ -f $work/new-page/performance.md ]] || fail "render --out a new directory: no page"
rm -rf "$work/new-page"
# A directory on the way that is a symbolic link to nothing: said as such
# ("cannot create rlink/plots: File exists" named a directory that does not
# exist).
ln -s "$work/no_such_target" rlink
for out in rlink/x.csv; do
  check "export --out $out" 1 rlink -- "$bench" export --store store --out "$out"
  grep -q "rlink is a symbolic link to $work/no_such_target, which does not exist" err || fail "export --out $out: $(cat err)"
done
for out in rlink rlink/sub; do
  check "render --out $out" 1 rlink -- "$bench" render --store store --out "$out"
  grep -q "rlink is a symbolic link to $work/no_such_target, which does not exist" err || fail "render --out $out: $(cat err)"
done
rm -f rlink
# An empty name is refused, never taken for the default.
check "run --out ''" 2 none -- "$heapline" --out '' -- "${command[@]}"
check "run --plot ''" 2 none -- "$heapline" --plot '' -- "${command[@]}"
check "convert -o ''" 2 a.live -- "$heapline" convert a.live -o ''
check "profile -o ''" 2 none -- "$heapline" profile report.json -o ''
"$bench" export --store store --out '' >out 2>err
code=$?
[[ $code == 2 ]] && grep -q -- "^heapline-bench export: --out: must not be empty" err || fail "export --out '': exit $code: $(cat err)"
# Two outputs of one command that name one file.
echo old > x.svg
check "run --out x.svg --plot x.svg" 2 x.svg -- "$heapline" --out x.svg --plot x.svg -- "${command[@]}"
check "run --out x.svg --plot ./x.svg" 2 x.svg -- "$heapline" --out x.svg --plot ./x.svg -- "${command[@]}"
# A name too long is blamed on what is too long: the file's name (given,
# or the default one made from the command's name), a directory's on the
# way, or the whole path.
long_command=$(printf 'p%.0s' {1..240})
cp /bin/true "$long_command"
check "run, a default name too long" 2 none -- "$heapline" -- "./$long_command"
grep -q "^heapline: the report's default name heapline\.$long_command\.PID\.json: the file's name is too long (" err ||
  fail "run, a default name too long: not blamed on the name: $(cat err)"
rm -f "$long_command"
check "run --out, a directory's name too long" 2 none -- "$heapline" --out "$long/r.json" -- "${command[@]}"
grep -q "^heapline: --out $long/r.json: a directory's name on the way is too long (300 bytes" err ||
  fail "run --out DIR/r.json: not blamed on the directory's name: $(cat err)"
check "run --out, the file's name too long" 2 none -- "$heapline" --out "$long.json" -- "${command[@]}"
grep -q "^heapline: --out $long.json: the file's name is too long (305 bytes" err ||
  fail "run --out LONG.json: not blamed on the file's name: $(cat err)"
deep=$(printf 'd%.0s/' {1..3000})
check "export --out, a path too long" 1 none -- "$bench" export --store store --out "${deep}x.csv"
grep -q "the path is too long (6005 bytes" err || fail "export --out DEEP: not blamed on the path: $(cat err)"

# A name with a control character (a newline, an escape) is refused by
# every writer, as --plot's was alone.
for bad in $'n\nl' $'\e[31m'; do
  check "run --out with a control character" 2 none -- "$heapline" --out "$bad.json" -- "${command[@]}"
  grep -q "the name holds a control character" err || fail "run --out with a control character: $(cat err)"
  check "convert -o with a control character" 2 a.live -- "$heapline" convert a.live -o "$bad.json"
  check "profile -o with a control character" 2 none -- "$heapline" profile report.json -o "$bad.txt"
done

# The separator or an option of run is never an option's value: a report
# named "--" or "-q" was written.
for value in -- -q --quiet --plot=x.svg; do
  check "run --out $value" 2 none -- "$heapline" --out "$value" -- "${command[@]}"
  [[ ! -e ./$value ]] || fail "run --out $value: a file named $value was written"
done
check "run --plot --" 2 none -- "$heapline" --plot -- "${command[@]}"

# The plot's name made a link, a directory or a FIFO while the command
# runs: no plot, and the line names what the name became (it printed freed
# memory).
for make in "ln -s $work/victim late.svg" "mkdir late.svg" "mkfifo late.svg"; do
  rm -rf late.svg
  "$heapline" -q --plot late.svg -- /bin/sh -c "$make; exit 3" >out 2>err
  code=$?
  [[ $code == 3 ]] || fail "plot made '$make' during the run: exit $code, expected the command's 3"
  grep -qE "^heapline: no plot written: .*late\.svg.* is (a symbolic link|a directory|a FIFO)" err ||
    fail "plot made '$make' during the run: not said as it is: $(cat -A err)"
  [[ $(cat victim) == victim ]] || fail "plot made '$make' during the run: written through the link"
done
rm -rf late.svg

# Standard output is an output too: a write that fails (a full disk
# behind > file, here /dev/full) is one line and a status that says so.
for argv in "$heapline --help" "$heapline top --help" "$bench --help" "$bench validate --store store"; do
  read -r -a words <<<"$argv"
  "${words[@]}" >/dev/full 2>err
  code=$?
  [[ $code == 1 ]] || fail "$argv > /dev/full: exit $code, expected 1: $(cat err)"
  # The reason is said when the last flush gave it (a write that failed
  # earlier, inside the standard library, left errno to what came after).
  grep -qE "cannot write to standard output(: No space left on device)?; what it holds is not whole" err ||
    fail "$argv > /dev/full: not said: $(cat err)"
  [[ $(wc -l <err) == 1 ]] || fail "$argv > /dev/full: stderr is not one line: $(cat err)"
done

# A reader of standard output that has gone (| head -1) chose to read no
# more: nothing is said and the status is the one SIGPIPE would have given,
# but the program is not ended by it half way (heapline/write_signals.h).
for argv in "$heapline --help" "$heapline top --help" "$bench --help" "$bench validate --store store"; do
  read -r -a words <<<"$argv"
  got=$(python3 -c '
import os, subprocess, sys
reader, writer = os.pipe()
os.close(reader)
ran = subprocess.run(sys.argv[1:], stdout=writer, stderr=subprocess.PIPE)
print(ran.returncode, repr(ran.stderr.decode()))' "${words[@]}")
  [[ $got == "141 ''" ]] || fail "$argv | a reader that has gone: $got, expected status 141 and nothing said"
done

# An output that is a file the command reads: the report, the store.
ln report.json report-link.json
check "profile R -o R" 2 report.json -- "$heapline" profile report.json -o report.json
check "profile R -o ./R" 2 report.json -- "$heapline" profile report.json -o ./report.json
check "profile R -o a hard link to R" 2 report.json -- "$heapline" profile report.json -o report-link.json
check "export --out the store's points" 1 store/points.jsonl -- "$bench" export --store store --out store/points.jsonl
# (A copy of the catalogue: a writer that broke this rule would replace the
# source tree's own.)
cp "$source_dir/scenarios/scenarios.json" catalogue.json
check "compare --json the catalogue" 1 catalogue.json -- "$bench" --catalogue catalogue.json compare \
  --build "a=$LIB" --build "b=$LIB" --runs 1 --only churn-1t --json catalogue.json
cp /bin/true prog
check "run --out the program it runs" 2 prog -- "$heapline" --out prog -- ./prog
mkdir -p cmp
check "compare --json OUT/release-comparison.md --out OUT" 1 x.svg -- \
  "$bench" compare --build "a=$LIB" --build "b=$LIB" --runs 1 --only churn-1t --json cmp/release-comparison.md --out cmp
# Two names of one command where one goes through the other: the output
# that would be a file on the way to another output, or to a file the
# command reads, is refused before any run (compare --json X --out X ran
# every round, then found X a directory and lost them all).
check "compare --json X --out X" 1 o10.json -- \
  "$bench" compare --build "a=$LIB" --build "b=$LIB" --runs 1 --rounds 1 --no-instructions --only churn-1t \
  --json o10.json --out o10.json
grep -q "^heapline-bench: --out o10.json: would be written inside --json o10.json, another output" err ||
  fail "compare --json X --out X: not said as a clash: $(cat err)"
check "compare --json X/release-comparison.md --out X" 1 o11 -- \
  "$bench" compare --build "a=$LIB" --build "b=$LIB" --runs 1 --rounds 1 --no-instructions --only churn-1t \
  --json o11/release-comparison.md/x.json --out o11
mkdir -p clash-store
check "render --out the store's points" 1 clash-store/points.jsonl -- \
  "$bench" render --store clash-store --out clash-store/points.jsonl
grep -q "would be written inside .*clash-store/points.jsonl, which this command reads" err ||
  fail "render --out the store's points: not said as a clash: $(cat err)"
# (suite makes the store's file before its outputs are claimed: the page
# is refused there as one whose directory is a file.)
check "suite --out the store's points" 1 clash-store/points.jsonl/performance.md -- \
  "$bench" suite --lib "$LIB" --commit 0123456 --runs 1 --no-instructions --only churn-1t --store clash-store \
  --out clash-store/points.jsonl
rm -rf clash-store
# Every file of a store (its points, its calibrations, whatever else it
# holds) is kept from every output of every command: export --out
# STORE/calibration.jsonl replaced the calibrations with CSV.
mkdir -p guarded/bench-data
printf '{"kept": 1}\n' >guarded/bench-data/calibration.jsonl
printf 'unstored\n' >guarded/bench-data/unstored-1.jsonl
for name in calibration.jsonl unstored-1.jsonl new.csv; do
  check "export --out the store's $name" 1 guarded/bench-data/$name -- \
    "$bench" export --store guarded/bench-data --out guarded/bench-data/$name
  grep -q "which this command reads" err || fail "export --out the store's $name: not said as the store's: $(cat err)"
done
check "render --out the store" 1 guarded/bench-data/calibration.jsonl -- \
  "$bench" render --store guarded/bench-data --out guarded/bench-data
# compare reads the default store (<work>/bench-data): its files too.
check "compare --json the default store's calibrations" 1 guarded/bench-data/calibration.jsonl -- \
  "$bench" --source-dir "$work/guarded" compare --build "a=$LIB" --build "b=$LIB" --runs 1 --only churn-1t \
  --json "$work/guarded/bench-data/calibration.jsonl"
# check --github's job summary is an output too.
before=$(describe guarded/bench-data/calibration.jsonl)
GITHUB_STEP_SUMMARY=guarded/bench-data/calibration.jsonl "$bench" check --store guarded/bench-data --github \
  >out 2>err
[[ $(describe guarded/bench-data/calibration.jsonl) == "$before" ]] ||
  fail "check --github: the store's calibrations were written: $(cat guarded/bench-data/calibration.jsonl)"
grep -q "the job summary (GITHUB_STEP_SUMMARY) was not written: .*which this command reads" err ||
  fail "check --github, the summary in the store: not said: $(cat err)"
rm -rf guarded
# render: a file of the page that is not a regular file is refused before the render.
mkdir -p page
for kind in fifo symlink directory; do
  make_target "$kind" page/scenarios.md
  check "render, scenarios.md a $kind" 1 page/scenarios.md -- "$bench" render --store render-store --out page
done
rm -rf page
# render: the page's plots/ a link to another directory: nothing written there.
mkdir -p page victim-dir
echo keep > victim-dir/history.gp
ln -s "$work/victim-dir" page/plots
check "render, plots/ a link" 1 victim-dir/history.gp -- "$bench" render --store render-store --out page
[[ $(ls -A victim-dir) == history.gp ]] || fail "render, plots/ a link: written into the link's directory: $(ls -A victim-dir)"
rm -rf page victim-dir

# gnuplot that exits 0 without a whole picture: the launcher says so in one
# line, keeps the command's status, and the earlier plot stays.
mkdir fakebin
printf '#!/bin/sh\n# a gnuplot cut short: the output it names is left empty\nexit 0\n' >fakebin/gnuplot
chmod +x fakebin/gnuplot
echo "earlier plot" > p.png
PATH="$work/fakebin:$PATH" "$heapline" --plot p.png -- /bin/sh -c 'exit 3' >out 2>err
code=$?
[[ $code == 3 ]] || fail "cut plot: exit $code, expected the command's 3"
grep -q "^heapline: gnuplot failed (the picture it drew is not whole); no plot written" err ||
  fail "cut plot: not said: $(cat err)"
[[ $(cat p.png) == "earlier plot" ]] || fail "cut plot: the earlier plot was replaced"
# A gnuplot that refuses the script: said, with its status.
printf '#!/bin/sh\necho "line 1: invalid command" >&2\nexit 1\n' >fakebin/gnuplot
PATH="$work/fakebin:$PATH" "$heapline" --plot p.png -- /bin/sh -c 'exit 3' >out 2>err
code=$?
[[ $code == 3 ]] || fail "refused plot: exit $code, expected the command's 3"
grep -q "^heapline: gnuplot failed (exit status 1); no plot written" err || fail "refused plot: not said: $(cat err)"
[[ $(cat p.png) == "earlier plot" ]] || fail "refused plot: the earlier plot was replaced"
# What gnuplot writes goes through the door of printed lines, indented under
# the launcher's line: no escape reaches the terminal, no line of it passes
# for heapline's (its stderr was the terminal's).
printf '#!/bin/sh
printf "\033[2Jfake gnuplot error\nheapline: forged\n" >&2
exit 1
' >fakebin/gnuplot
PATH="$work/fakebin:$PATH" "$heapline" --plot p.png -- /bin/sh -c 'exit 3' >out 2>err
grep -q "^    heapline: forged$" err || fail "gnuplot's words not indented: $(cat -A err)"
grep -qxF '    \x1b[2Jfake gnuplot error' err || fail "gnuplot's escape not shown as text: $(cat -A err)"
if grep -q $'\e' err || grep -q "^heapline: forged" err; then fail "gnuplot's words reached the terminal raw: $(cat -A err)"; fi
# A gnuplot killed by a signal is said so, not as an exit status 128 + N.
printf '#!/bin/sh
kill -s TERM $$
' >fakebin/gnuplot
PATH="$work/fakebin:$PATH" "$heapline" --plot p.png -- /bin/sh -c 'exit 3' >out 2>err
grep -q "^heapline: gnuplot failed (killed by signal 15 (Terminated)); no plot written" err ||
  fail "a killed gnuplot: $(cat err)"

# render on a full disk (a file size limit) after a good render: it fails
# in one line and every file of the earlier render is as it was.
/usr/bin/python3 "$source_dir/tests/docs/make_history_store.py" render-store || fail "no store for render"
if "$bench" render --store render-store --out good >/dev/null 2>render-err; then
  (cd good && find . -type f | sort | xargs sha256sum) >before
  (ulimit -f 2; "$bench" render --store render-store --out good >out 2>err)
  code=$?
  (cd good && find . -type f | sort | xargs sha256sum) >after
  [[ $code != 0 ]] || fail "render on a full disk: exit 0"
  [[ $(wc -l <err) -le 2 ]] || fail "render on a full disk: $(cat err)"
  cmp -s before after || fail "render on a full disk changed the earlier render: $(diff before after)"
  [[ -z $(find good -name '.heapline-*') ]] || fail "render on a full disk left temporaries"
  # A gnuplot that exits 0 and draws nothing whole: refused, nothing replaced.
  cat >fakebin/gnuplot <<'EOF'
#!/bin/sh
# Each picture the script names, begun and cut short.
sed -n "s/^set output '\(.*\)'\$/\1/p" history.gp | while read -r name; do printf '<svg' >"$name"; done
exit 0
EOF
  PATH="$work/fakebin:$PATH" "$bench" render --store render-store --out good >out 2>err
  code=$?
  (cd good && find . -type f | sort | xargs sha256sum) >after
  [[ $code == 1 ]] || fail "render with a cut gnuplot: exit $code"
  grep -q "the plots could not be drawn: gnuplot left .* cut short" err || fail "render with a cut gnuplot: $(cat err)"
  cmp -s before after || fail "render with a cut gnuplot changed the earlier render: $(diff before after)"
  # A gnuplot that fails saying a line that reads like heapline-bench's:
  # indented under render's own line, its escape shown as text.
  printf '#!/bin/sh
printf "\033[2Jfake gnuplot error\nheapline-bench: forged\n" >&2
exit 1
' >fakebin/gnuplot
  PATH="$work/fakebin:$PATH" "$bench" render --store render-store --out good >out 2>err
  grep -q "^    heapline-bench: forged$" err || fail "render: gnuplot's words not indented: $(cat -A err)"
  if grep -q $'\e' err || grep -q "^heapline-bench: forged" err; then
    fail "render: gnuplot's words passed for its own: $(cat -A err)"
  fi
else
  fail "the good render failed: $(cat render-err)"
fi

# The mode of an output (every writer's, through the one rule): a new file
# gets 0666 less the umask, as open(2) gives it (export's, profile's and the
# pages were 0644 under umask 077), and a regular file replaced keeps its
# own (a private file came back world-readable).
mkdir modes
(umask 077 && "$bench" export --store render-store --out modes/new.csv >out 2>err) || fail "export under umask 077: $(cat err)"
(umask 077 && "$bench" render --store render-store --out modes/page --no-plots >out 2>err) ||
  fail "render under umask 077: $(cat err)"
for file in modes/new.csv modes/page/performance.md modes/page/scenarios.md; do
  [[ $(stat -c %a "$file") == 600 ]] || fail "$file under umask 077: mode $(stat -c %a "$file"), expected 600"
done
echo old >modes/kept.csv
chmod 640 modes/kept.csv
"$bench" export --store render-store --out modes/kept.csv >out 2>err || fail "export over a 640 file: $(cat err)"
[[ $(stat -c %a modes/kept.csv) == 640 ]] || fail "a replaced 640 file: mode $(stat -c %a modes/kept.csv)"
[[ $(head -c 3 modes/kept.csv) != old ]] || fail "a replaced 640 file: not replaced"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "every writer follows the output rule"
