#!/bin/bash
# `rlvr rollout`: runs rollouts of a generated arith and bugfix-c task through
# the harness with a random-weights policy, renders them with --show (policy
# text {{...}} and observations [[...]] told apart) and refuses bad usage.
set -u
RLVR=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_rollout_cli_XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $1"; fail=1; fi; }

"$RLVR" tasks gen arith --n 1 --seed 4 --out "$dir/pool" > /dev/null || { echo "tasks gen arith failed"; exit 1; }
"$RLVR" tasks gen bugfix-c --n 1 --seed 4 --out "$dir/pool" > /dev/null || { echo "tasks gen bugfix-c failed"; exit 1; }

out=$("$RLVR" rollout --task "$dir/pool/arith-train-d1-s4-000000.json" --n 3 --show --no-color 2>&1)
rc=$?
check '[ $rc -eq 0 ]'
check 'grep -q "==== rollout 2: prompt" <<< "$out"'
check 'grep -q "^{{" <<< "$out"'
check 'grep -q "of 3 rollouts passed" <<< "$out"'
# the same seed gives the same rollouts
again=$("$RLVR" rollout --task "$dir/pool/arith-train-d1-s4-000000.json" --n 3 --show --no-color 2>&1 | grep -v ' s, tools ')
check '[ "$again" = "$(grep -v " s, tools " <<< "$out")" ]'

out=$("$RLVR" rollout --task "$dir/pool/bugfix-c-train-d1-s4-000000.json" --n 2 --show --no-color 2>&1)
rc=$?
check '[ $rc -eq 0 ]'
check 'grep -q "<|system|>You work in a repository through tools" <<< "$out"'
check 'grep -q "rollout 1: task bugfix-c-train-d1-s4-000000" <<< "$out"'
check 'grep -q "of 2 rollouts passed" <<< "$out"'

"$RLVR" rollout --n 2 > /dev/null 2>&1
check '[ $? -eq 2 ]'
"$RLVR" rollout --task "$dir/pool/none.json" > /dev/null 2>&1
check '[ $? -eq 1 ]'
exit $fail
