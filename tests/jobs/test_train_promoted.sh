#!/usr/bin/env bash
# [train] rollout_policy = promoted in bounded-async mode (train/leader.c)
# over MPI ranks (1 trainer, 1 verifier, 2 rollout), tiny arithmetic run:
#   - before any promotion the rollout ranks use the run's initial weights:
#     every admitted rollout of steps 1-3 has policy version 0;
#   - after `promoted` names the step-2 checkpoint, the resumed run's rollouts
#     (steps 4-6) all carry version 2 while the trainer moves on;
#   - a trainer that gets more than Δv_max versions past the promoted policy
#     stops with an error naming the fix;
#   - promoted without bounded-async mode is refused, naming the key.
# Usage: test_train_promoted.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"

# Policy versions of the admitted rollouts of run $1, steps $2..$3, must all be $4.
versions_are() {
  "$PY" - "$@" <<'CHECK'
import sys, h5py, numpy as np
run, first, last, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for step in range(first, last + 1):
    with h5py.File(f"{run}/shards/step_{step:08d}.rank_0000.h5", "r") as f:
        v = np.asarray(f["rollouts/policy_version"][()])
        lag = np.asarray(f["rollouts/staleness"][()])
    assert len(v) > 0 and (v == want).all(), (step, v.tolist())
    assert (lag == (step - 1) - want).all(), (step, lag.tolist())
CHECK
}

tiny_ini "$dir/run.ini" scratch train.steps=6 train.max_staleness=3 train.rollout_policy=promoted
printf '\n[layout]\nrollout = 2\n' | cat "$dir/run.ini" - > "$dir/r2.ini"

# ---- no promotion yet: the initial weights ----
mpi 4 train "$dir/r2.ini" --out "$dir/p" --until-step 3 > "$dir/p1.log" 2>&1 || { cat "$dir/p1.log"; fail "segment 1"; }
versions_are "$dir/p" 1 3 0 || fail "before any promotion the rollouts did not all use version 0"
echo "no promotion: steps 1-3 trained on rollouts of version 0"

# ---- promote step 2: the resumed run's rollouts use it ----
realpath "$dir/p/checkpoints/step_00000002.h5" > "$dir/p/promoted"
mpi 4 train "$dir/r2.ini" --out "$dir/p" --resume > "$dir/p2.log" 2>&1 || { cat "$dir/p2.log"; fail "segment 2"; }
grep -q "rollout ranks now use the promoted checkpoint .*step_00000002.h5 (version 2)" "$dir/p2.log" ||
  { cat "$dir/p2.log"; fail "the promotion was not announced"; }
[ -f "$dir/p/checkpoints/step_00000006.h5" ] || fail "no final checkpoint"
versions_are "$dir/p" 4 6 2 || fail "after the promotion the rollouts did not all use version 2"
echo "promoted step 2: steps 4-6 trained on rollouts of version 2"

# ---- no promotion and a trainer too far ahead: a clear stop ----
set +e
mpi 4 train "$dir/r2.ini" --out "$dir/q" > "$dir/q.log" 2>&1
code=$?
set -e
[ $code -ne 0 ] || { cat "$dir/q.log"; fail "a trainer 4 versions past the promoted policy trained on"; }
grep -q "more than \[train\] max_staleness = 3: every record would be refused; promote a newer checkpoint" "$dir/q.log" ||
  { cat "$dir/q.log"; fail "no message naming the fix"; }
[ -f "$dir/q/checkpoints/step_00000003.h5" ] || fail "no checkpoint to resume from"
echo "no promotion for 4 versions: stopped, naming the fix"

# ---- refused without bounded-async mode ----
tiny_ini "$dir/sync.ini" scratch train.rollout_policy=promoted
set +e
"$RLVR" train "$dir/sync.ini" --out "$dir/s" > "$dir/s.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "rollout_policy.*promoted needs bounded-async mode" "$dir/s.log" ||
  { cat "$dir/s.log"; fail "promoted without max_staleness was not refused (exit $code)"; }
echo "test_train_promoted: ok"
