#!/usr/bin/env bash
# rlvr train on a pool mined from a real history: inih's fixes since
# 2025-03 (results as expected files, so `rlvr tasks check` keeps them),
# 3 steps from scratch in one process and under mpirun -np 3 (1 trainer,
# 1 verifier, 1 rollout rank): the checkpoints are bit-identical.
# Usage: test_train_mined.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"
src=$(cd "$(dirname "$0")/../.." && pwd)
cp "$src/tests/data/repos/inih.facts.json" "$dir/facts.json"
"$RLVR" tasks mine "$src/tests/data/repos/inih.bundle" --out "$dir/pool" --facts "$dir/facts.json" \
  --since 2025-03-01 --eval-share 0 > "$dir/mine.log" 2>&1 || { cat "$dir/mine.log"; fail "mine"; }
"$RLVR" tasks check "$dir/pool" --runs 2 > "$dir/check.log" 2>&1 || { cat "$dir/check.log"; fail "check"; }
grep -q "checked 2 tasks: 2 ok" "$dir/check.log" || { cat "$dir/check.log"; fail "check: not 2 ok"; }
tiny_ini "$dir/run.ini" bugfix -tasks "tasks.pool=$dir/pool" train.init=scratch train.steps=3 checkpoint.every=1
"$RLVR" train "$dir/run.ini" --out "$dir/single" > "$dir/single.log" 2>&1 || { cat "$dir/single.log"; fail "one process"; }
grep -q "enclave verifications" "$dir/single.log" || { cat "$dir/single.log"; fail "no verification in enclaves"; }
mpi 3 train "$dir/run.ini" --out "$dir/np3" > "$dir/np3.log" 2>&1 || { cat "$dir/np3.log"; fail "mpirun -np 3"; }
grep -q "train: 3 ranks: 1 trainer, 1 verifier, 1 rollout" "$dir/np3.log" || { cat "$dir/np3.log"; fail "np3 not distributed"; }
same_checkpoints "$dir/single/checkpoints/step_00000003.h5" "$dir/np3/checkpoints/step_00000003.h5" ||
  fail "the mined pool: one process and -np 3 differ at step 3"
echo "mined inih pool: one process and -np 3 (1/1/1) bit-identical at step 3"
