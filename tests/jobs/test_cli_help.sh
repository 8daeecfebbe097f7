#!/usr/bin/env bash
# tests/jobs/test_cli_help.sh RLVR SOURCE_DIR — every verb and subverb of the
# command line helps and says what is wrong:
#   - `--help` exits 0 with the usage on stdout;
#   - without its required arguments it exits 2, and the first line on stderr
#     is "rlvr VERB: missing ..." naming what is missing, the usage after it;
#   - an unknown option exits 2 with "rlvr VERB: unknown option --x";
#   - a refusal never shows the source or build directory (source locations
#     are relative to the repository and shown only at RLVR_LOG=debug).
# The verbs are read from `rlvr help`, so a new verb is walked too.
set -uo pipefail
rlvr=${1:?usage: test_cli_help.sh RLVR SOURCE_DIR}
src=${2:?usage: test_cli_help.sh RLVR SOURCE_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

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
  [ "$rc" -eq 2 ] || bad "rlvr $cmd --no-such-option exits $rc"
  head -1 "$dir/err" | grep -q "^rlvr $cmd: unknown \(option --no-such-option\|subcommand\|source\)" ||
    bad "rlvr $cmd --no-such-option: first line on stderr is [$(head -1 "$dir/err")]"
  # nothing given: the missing argument named in one line, then the usage
  case "|$no_required|" in *"|$cmd|"* | *" $cmd|"* | *"|$cmd "*) continue ;; esac
  "$rlvr" "${words[@]}" < /dev/null > "$dir/out" 2> "$dir/err"
  rc=$?
  [ "$rc" -eq 2 ] || bad "rlvr $cmd with nothing given exits $rc"
  head -1 "$dir/err" | grep -q "^rlvr $cmd: missing [A-Za-z-]" ||
    bad "rlvr $cmd with nothing given: first line on stderr is [$(head -1 "$dir/err")]"
  sed -n 2p "$dir/err" | grep -q "^usage:" || bad "rlvr $cmd with nothing given: no usage after the line"
done
echo "walked $walked commands"

# refusals name no directory of the source tree or the build
build=$(cd "$(dirname "$rlvr")" && pwd)
for c in "model info $dir/none.gguf" "inspect $dir/none.h5" "config check $dir/none.ini" "report $dir/none"; do
  read -r -a words <<< "$c"
  for level in info debug; do
    RLVR_LOG=$level "$rlvr" "${words[@]}" > "$dir/out" 2>&1 < /dev/null
    if grep -qF -e "$src/" -e "$build/" "$dir/out"; then bad "rlvr $c (RLVR_LOG=$level) shows a build path: $(cat "$dir/out")"; fi
  done
done
# the source location: hidden by default, relative at debug
"$rlvr" model info "$dir/none.gguf" > "$dir/out" 2>&1
grep -q "(at " "$dir/out" && bad "a source location shown by default: $(cat "$dir/out")"
RLVR_LOG=debug "$rlvr" model info "$dir/none.gguf" > "$dir/out" 2>&1
grep -q "(at [a-z]*/[a-z_]*\.c:[0-9]*)" "$dir/out" || bad "no relative source location at debug: $(cat "$dir/out")"

[ "$fail" -eq 0 ] && echo "PASS: every verb helps and names what is missing"
exit "$fail"
