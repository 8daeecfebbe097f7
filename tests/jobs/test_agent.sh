#!/bin/bash
# `rlvr agent`: one rollout of a generated bugfix-c task by a checkpoint's
# (random-weights) policy, printed turn by turn — prompt, each policy turn
# {{...}}, each observation [[...]], the end — then the patch and, with
# --verify, the enclave's verdict; an arith task is scored in process; the
# same seed prints the same trajectory; bad usage and bad paths give clear
# errors and exit codes (2 usage, 1 failure).
set -u
RLVR=$1
WRITE_CHECKPOINT=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_agent_XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $1"; fail=1; fi; }
# runs rlvr with its output (random bytes of a random policy included, NULs
# dropped) in $out and its status in $rc
agent() { "$RLVR" agent "$@" > "$dir/out" 2>&1; rc=$?; out=$(tr -d '\000' < "$dir/out"); }
grep() { command grep -a "$@"; }
# line number of the first line matching $1 in $out (0: none)
at() { grep -n -m1 -e "$1" <<< "$out" | cut -d: -f1 | grep . || echo 0; }

"$RLVR" tasks gen bugfix-c --n 1 --seed 4 --out "$dir/pool" > /dev/null || { echo "tasks gen bugfix-c failed"; exit 1; }
"$RLVR" tasks gen arith --n 1 --seed 4 --out "$dir/pool" > /dev/null || { echo "tasks gen arith failed"; exit 1; }
ckpt=$("$WRITE_CHECKPOINT" "$dir/ckpt") || { echo "writing the checkpoint failed"; exit 1; }
bug="$dir/pool/bugfix-c-train-d1-s4-000000.json"
arith="$dir/pool/arith-train-d1-s4-000000.json"

agent --task "$bug" --checkpoint "$ckpt" --seed 3 --verify --no-color
check '[ $rc -eq 0 ]'
check '! grep -q "random weights" <<< "$out"'
check '! grep "^\(====\|----\)" <<< "$out" | grep -q $'"'"'\033'"'"''
p=$(at "^==== agent: task bugfix-c-train-d1-s4-000000: prompt ([0-9]* tokens) ====$")
t=$(at "^---- turn 1: policy, [0-9]* tokens ----$")
e=$(at "^==== end: [a-z_]* ====$")
pa=$(at "^---- patch")
v=$(at "^---- verdict: [a-z]*")
s=$(at "^agent: task bugfix-c-train-d1-s4-000000, [0-9]* turns, .*stop [a-z_]*, calls")
check '[ $p -gt 0 ] && [ $t -gt $p ] && [ $e -gt $t ] && [ $pa -gt $e ] && [ $v -gt $pa ] && [ $s -gt $v ]'
check 'grep -q "<|system|>You work in a repository through tools" <<< "$out"'
check 'grep -q "^{{" <<< "$out"'
# as many policy turns as the summary says, each observation after its turn
turns=$(sed -n 's/^agent: task [^,]*, \([0-9]*\) turns.*/\1/p' <<< "$out")
check '[ "$(grep -c "^---- turn [0-9]*: policy" <<< "$out")" = "$turns" ]'
check '[ "$(grep -c "^\[\[" <<< "$out")" -le "$turns" ]'
check '! grep -q "^---- verdict: not verified" <<< "$out"'

# the same seed prints the same trajectory (timings aside)
first=$out
agent --task "$bug" --checkpoint "$ckpt" --seed 3 --verify --no-color
check '[ "$(grep -v "^agent: task" <<< "$first" | sed "s/, [0-9.]* s ----/ ----/")" = "$(grep -v "^agent: task" <<< "$out" | sed "s/, [0-9.]* s ----/ ----/")" ]'

# without --verify: the patch, no verdict
agent --task "$bug" --checkpoint "$ckpt" --seed 3 --no-color
check '[ $rc -eq 0 ]'
check 'grep -q "^---- verdict: not verified" <<< "$out"'

# arith, without a checkpoint: a random-weights policy, scored in process
agent --task "$arith" --no-color
check '[ $rc -eq 0 ]'
check 'grep -q "no --checkpoint: the policy has random weights" <<< "$out"'
check 'grep -q "<|user|>What is" <<< "$out"'
check 'grep -q "^---- verdict: .*(scored in process) ----$" <<< "$out"'
check '! grep -q "^---- patch" <<< "$out"'

# errors
agent --task "$dir/pool/none.json"
check '[ $rc -eq 1 ]'
check 'grep -q "^rlvr agent: error: task spec $dir/pool/none.json: cannot open" <<< "$out"'
agent --task "$arith" --checkpoint "$dir/none.h5"
check '[ $rc -eq 1 ]'
check 'grep -q "^rlvr agent: error: .*none.h5" <<< "$out"'
agent --checkpoint "$ckpt"
check '[ $rc -eq 2 ]'
check 'grep -q "^usage: rlvr agent --task TASK" <<< "$out"'
agent --task "$arith" --temperature -1
check '[ $rc -eq 2 ]'
check 'grep -q "^rlvr agent: --temperature wants a number >= 0 (0 = greedy)" <<< "$out"'
# greedy: the seed changes nothing (the summary's timings aside)
untimed() { sed 's/, generate [0-9.]* s.*//' <<< "$out"; }
agent --task "$arith" --checkpoint "$ckpt" --temperature 0 --seed 1
greedy1=$(untimed)
agent --task "$arith" --checkpoint "$ckpt" --temperature 0 --seed 2
check '[ -n "$greedy1" ] && [ "$(untimed)" = "$greedy1" ]'
agent --task "$arith" --checkpoint "$ckpt" --temperature 1 --seed 2
check '[ "$(untimed)" != "$greedy1" ]'
agent --task "$arith" --bogus
check '[ $rc -eq 2 ]'
exit $fail
