#!/usr/bin/env bash
# tests/jobs/test_cli_help.sh RLVR SOURCE_DIR — every verb and subverb of the
# command line helps and says what is wrong:
#   - `--help` exits 0 with the usage on stdout;
#   - without its required arguments it exits 2, and the first line on stderr
#     is "rlvr VERB: missing ..." naming what is missing, the usage after it;
#   - an unknown option exits 2 with "rlvr VERB: unknown option --x";
#   - no refusal shows the source or build directory (source locations are
#     relative to the repository and shown only at RLVR_LOG=debug): every
#     command above, with nothing given, with an unknown option and with a
#     nonexistent input file, at RLVR_LOG=info and debug;
#   - the binary holds neither directory, but for the one string the run
#     manifest needs (below).
# The verbs are read from `rlvr help`, so a new verb is walked too.
set -uo pipefail
export OMP_WAIT_POLICY=passive # rlvr then skips executing itself again: half the time of each of these runs
rlvr=${1:?usage: test_cli_help.sh RLVR SOURCE_DIR}
src=${2:?usage: test_cli_help.sh RLVR SOURCE_DIR}
dir=$(mktemp -d /tmp/rlvr_cli_help.XXXXXX) # not under TMPDIR: it might lie in the build
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
build=$(cd "$(dirname "$rlvr")" && pwd)
# shows_dirs FILE WHAT: fails when FILE names the source or the build directory
shows_dirs() {
  if grep -qF -e "$src" -e "$build" "$1"; then bad "$2 shows a source or build path: $(head -c 600 "$1")"; fi
}

# verbs from the help text, subverbs of the verbs that have them
mapfile -t verbs < <("$rlvr" help | sed -n 's/^  rlvr \([a-z]\+\) .*/\1/p' | grep -vx help)
[ "${#verbs[@]}" -ge 15 ] || bad "rlvr help lists only ${#verbs[@]} verbs: ${verbs[*]}"
subverbs=("tasks gen" "tasks list" "tasks check" "tasks mine" "tasks import" "tasks import swe-bench"
          "tasks import harbor" "model import" "model export" "model info" "config check" "config keys"
          "sweep cell" "sweep aggregate" "bench policy")
# commands that run with no argument at all (they have no required one)
no_required=" quickstart|config keys|bench policy "

walked=0
for cmd in "${verbs[@]}" "${subverbs[@]}"; do
  read -r -a words <<< "$cmd"
  walked=$((walked + 1))
  # --help
  "$rlvr" "${words[@]}" --help > "$dir/out" 2> "$dir/err"
  rc=$?
  [ "$rc" -eq 0 ] || bad "rlvr $cmd --help exits $rc"
  grep -q "usage:" "$dir/out" || bad "rlvr $cmd --help prints no usage on stdout"
  # an unknown option
  "$rlvr" "${words[@]}" --no-such-option < /dev/null > "$dir/out" 2> "$dir/err"
  rc=$?
  shows_dirs "$dir/err" "rlvr $cmd --no-such-option"
  [ "$rc" -eq 2 ] || bad "rlvr $cmd --no-such-option exits $rc"
  head -1 "$dir/err" | grep -q "^rlvr $cmd: unknown \(option --no-such-option\|subcommand\|source\)" ||
    bad "rlvr $cmd --no-such-option: first line on stderr is [$(head -1 "$dir/err")]"
  # nothing given: the missing argument named in one line, then the usage
  case "|$no_required|" in *"|$cmd|"* | *" $cmd|"* | *"|$cmd "*) continue ;; esac
  "$rlvr" "${words[@]}" < /dev/null > "$dir/out" 2> "$dir/err"
  rc=$?
  shows_dirs "$dir/err" "rlvr $cmd with nothing given"
  [ "$rc" -eq 2 ] || bad "rlvr $cmd with nothing given exits $rc"
  head -1 "$dir/err" | grep -q "^rlvr $cmd: missing [A-Za-z-]" ||
    bad "rlvr $cmd with nothing given: first line on stderr is [$(head -1 "$dir/err")]"
  sed -n 2p "$dir/err" | grep -q "^usage:" || bad "rlvr $cmd with nothing given: no usage after the line"
done
echo "walked $walked commands"

# refusals name no directory of the source tree or the build: each command
# with a nonexistent input (a verb not listed gets it as its one argument),
# and at debug, where source locations show, also with nothing given and an
# unknown option (at info the walk above checked those)
none=$dir/absent/none  # outputs go to $dir/o.*, so the absent directory stays absent
declare -A missing_input=(
  ["bench policy"]="--checkpoint $none" ["config check"]="$none" ["tasks gen"]="none --n 1 --seed 1 --out $dir/o.gen"
  ["tasks mine"]="$none --out $dir/o.mine" ["tasks import"]="harbor $none --out $dir/o.harbor"
  ["tasks import swe-bench"]="$none --specs $none --repos $none --out $dir/o.swe"
  ["tasks import harbor"]="$none --out $dir/o.harbor" ["rollout"]="--task $none" ["agent"]="--task $none"
  ["verify"]="--task $none --patch $none" ["eval"]="--checkpoint $none --pool $none"
  ["quickstart"]="--config $none --out $dir/o.qs"
  ["sweep"]="--checkpoints $none* --pool $none --samples 1 --local --out $dir/o.sweep" ["sweep cell"]="$none 0"
  ["gate"]="--candidate $none --baseline $none --pool $none" ["submit"]="$none --dry-run"
  ["model"]="info $none" ["model import"]="$none --out $dir/o.h5" ["model export"]="$none --out $dir/o.export"
  ["config"]="check $none" ["bench"]="policy --checkpoint $none")
for cmd in "${verbs[@]}" "${subverbs[@]}"; do
  read -r -a words <<< "$cmd"
  read -r -a args <<< "${missing_input[$cmd]:-$none}"
  for level in info debug; do
    RLVR_LOG=$level "$rlvr" "${words[@]}" "${args[@]}" > "$dir/out" 2>&1 < /dev/null
    rc=$?
    [ "$rc" -ne 0 ] || bad "rlvr $cmd ${args[*]} (RLVR_LOG=$level) exits 0"
    shows_dirs "$dir/out" "rlvr $cmd ${args[*]} (RLVR_LOG=$level)"
  done
  RLVR_LOG=debug "$rlvr" "${words[@]}" --no-such-option > "$dir/out" 2>&1 < /dev/null
  shows_dirs "$dir/out" "rlvr $cmd --no-such-option (RLVR_LOG=debug)"
  case "|$no_required|" in *"|$cmd|"* | *" $cmd|"* | *"|$cmd "*) continue ;; esac # they would run
  RLVR_LOG=debug "$rlvr" "${words[@]}" > "$dir/out" 2>&1 < /dev/null
  shows_dirs "$dir/out" "rlvr $cmd with nothing given (RLVR_LOG=debug)"
done
[ -e "$dir/absent" ] && bad "a refused command created $dir/absent"
for c in "inspect $none.h5" "report $none" "status $none" "model info $none.gguf"; do
  read -r -a words <<< "$c"
  for level in info debug; do
    RLVR_LOG=$level "$rlvr" "${words[@]}" > "$dir/out" 2>&1 < /dev/null
    shows_dirs "$dir/out" "rlvr $c (RLVR_LOG=$level)"
  done
done

# the binary's own strings (one per NUL-terminated run; debug information,
# which names the build's directories for a debugger, stripped first) hold
# neither directory, except the source directory alone: the run manifest's
# default source_dir, where it reads the git state of the tree rlvr was
# built from when a run starts (io/manifest.c, RLVR_BUILD_SOURCE_DIR)
scan=$rlvr
if command -v objcopy > /dev/null && objcopy --strip-debug "$rlvr" "$dir/rlvr.nodebug" 2> /dev/null; then
  scan=$dir/rlvr.nodebug
fi
# An AddressSanitizer build is left out: its descriptor of every global
# variable names the source file as the compiler was given it (an absolute
# path under CMake), which no prefix map rewrites; it is never shown to a
# user, and the refusals above are checked in that build all the same.
if grep -qaF "__asan_report" "$scan"; then
  echo "binary scan skipped: an AddressSanitizer build"
else
  tr '\0' '\n' < "$scan" | grep -aF -e "$src" -e "$build" | grep -avxF "$src" > "$dir/paths"
  [ -s "$dir/paths" ] && bad "the binary holds source or build paths: $(head -5 "$dir/paths")"
fi
# the source location: hidden by default, relative at debug
"$rlvr" model info "$dir/none.gguf" > "$dir/out" 2>&1
grep -q "(at " "$dir/out" && bad "a source location shown by default: $(cat "$dir/out")"
RLVR_LOG=debug "$rlvr" model info "$dir/none.gguf" > "$dir/out" 2>&1
grep -q "(at [a-z]*/[a-z_]*\.c:[0-9]*)" "$dir/out" || bad "no relative source location at debug: $(cat "$dir/out")"

[ "$fail" -eq 0 ] && echo "PASS: every verb helps and names what is missing"
exit "$fail"
