#!/usr/bin/env bash
# rlvr train with Monte-Carlo turn credit ([credit] mode = mc) on bugfix-c
# tasks configured as the quickstart's (read_file, replace_in_file, submit;
# compact tool prompt), tiny model after a short sft:
#   - one process: the progress line reports the forks, metrics.h5 has the
#     mc_* columns (forks run, a fork-token ratio, Â ≠ 0 on some turns);
#   - mpirun -np 3 ([layout] 1/1/1) and -np 4 (1/1/2): fork groups travel
#     to the rollout ranks with their prefix and workspace state, and the
#     final checkpoints equal the one-process run's bit for bit;
#   - SIGTERM to a rollout rank after the first checkpoint, then --resume on
#     4 ranks: bit-identical again;
#   - 2 data-parallel trainer ranks (-np 5) run it: step 1 (same weights,
#     same rollouts and forks) has the one-process loss, gradient norm and
#     fork counts to 1e-6 relative (the per-token advantages' bytes in the
#     update batch: test_dp_update);
#   - bounded-async mode (max_staleness = 1, 2 rollout ranks): the forks go
#     out as flights of their own and the run finishes with forks every
#     step that trained, each admitted by staleness;
#   - refusals naming the key: forks above 64, an unknown tool in
#     state_changing_tools.
# Usage: test_train_mc.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"
tiny_ini "$dir/mc.ini" bugfix run.name=mc run.seed=6 train.steps=4 credit.mode=mc credit.forks=3 \
  credit.max_branch_points=2 credit.branch_entropy=0
layout() { printf '\n[layout]\n%s\n' "$1" | cat "$dir/mc.ini" - > "$dir/$2"; }
layout "rollout = 2" mc_r2.ini
layout "rollout = 2" mc_async.ini
sed -i 's/^\[train\]$/[train]\nmax_staleness = 1/' "$dir/mc_async.ini"
grep -q "^max_staleness = 1" "$dir/mc_async.ini" || fail "mc_async.ini: no max_staleness"
layout "$(printf 'trainer = 2\nrollout = 2')" mc_t2.ini

"$RLVR" sft "$dir/mc.ini" --out "$dir/one" > "$dir/sft.log" 2>&1 || { cat "$dir/sft.log"; fail "sft"; }
for run in np3 np4 term dp async; do
  mkdir -p "$dir/$run"
  cp -r "$dir/one/pool" "$dir/one/pool.manifest.json" "$dir/one/sft" "$dir/$run/"
done

# ---- one process ----
"$RLVR" train "$dir/mc.ini" --out "$dir/one" > "$dir/one.log" 2>&1 || { cat "$dir/one.log"; fail "one process"; }
grep -q "train step 4 credit: branch points" "$dir/one.log" || { cat "$dir/one.log"; fail "no credit progress line"; }
"$PY" - "$dir/one/metrics.h5" <<'EOF' || fail "metrics of Monte-Carlo credit"
import math, sys, h5py
with h5py.File(sys.argv[1], "r", libver="latest", swmr=True) as f:
    s = f["steps"]
    forks, ratio = s["mc_forks"][:], s["mc_fork_token_ratio"][:]
    points, nonzero = s["mc_branch_points"][:], s["mc_nonzero_turns"][:]
    assert len(forks) == 4, len(forks)
    assert forks[0] > 0 and nonzero[0] > 0, "step 1 ran no fork (the data-parallel check needs one)"
    assert all(f == 3 * p or p < f for f, p in zip(forks, points)), (forks, points)  # K per branch point
    assert all(r > 0 for f, r in zip(forks, ratio) if f > 0), ratio
    assert nonzero.max() > 0, nonzero
    for k in ("mc_value_std", "mc_fork_s"):
        assert all(not math.isnan(v) for v in s[k][:]), k
    print("metrics: forks per step", [int(x) for x in forks], "fork-token ratio",
          [round(float(x), 2) for x in ratio])
EOF

# ---- 1/1/1 and 1/1/2 ----
mpi 3 train "$dir/mc.ini" --out "$dir/np3" > "$dir/np3.log" 2>&1 || { cat "$dir/np3.log"; fail "mpirun -np 3"; }
grep -q "train: 3 ranks: 1 trainer, 1 verifier, 1 rollout" "$dir/np3.log" || { cat "$dir/np3.log"; fail "np3 not distributed"; }
mpi 4 train "$dir/mc_r2.ini" --out "$dir/np4" > "$dir/np4.log" 2>&1 || { cat "$dir/np4.log"; fail "mpirun -np 4"; }
grep -q "train: 4 ranks: 1 trainer, 1 verifier, 2 rollout" "$dir/np4.log" || { cat "$dir/np4.log"; fail "np4 not distributed"; }
same_checkpoints "$dir/one/checkpoints/step_00000004.h5" "$dir/np3/checkpoints/step_00000004.h5" \
  "$dir/np4/checkpoints/step_00000004.h5" || fail "Monte-Carlo credit: 1 process, 1 and 2 rollout ranks differ"
echo "bit-identical with Monte-Carlo credit: one process, 1 and 2 rollout ranks"

# ---- 2 data-parallel trainer ranks ----
mpi 5 train "$dir/mc_t2.ini" --out "$dir/dp" > "$dir/dp.log" 2>&1 || { cat "$dir/dp.log"; fail "mpirun -np 5"; }
"$PY" - "$dir/one/metrics.h5" "$dir/dp/metrics.h5" <<'EOF' || fail "2 trainer ranks: step 1 differs"
import sys, h5py
def step1(path):
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        return {k: float(f["steps"][k][0]) for k in ("loss", "grad_norm", "mc_forks", "mc_nonzero_turns")}
a, b = step1(sys.argv[1]), step1(sys.argv[2])
for k in a:
    assert abs(a[k] - b[k]) <= 1e-6 * max(1.0, abs(a[k])), (k, a[k], b[k])
print("2 trainer ranks, step 1:", b)
EOF

# ---- SIGTERM to a rollout rank, resumed ----
sigterm_and_resume 4 "$dir/mc_r2.ini" "$dir/term" 2 "rollout rank"
same_checkpoints "$dir/one/checkpoints/step_00000004.h5" "$dir/term/checkpoints/step_00000004.h5" ||
  fail "Monte-Carlo credit: SIGTERM + resume differs from the uninterrupted run"
echo "SIGTERM to a rollout rank with Monte-Carlo credit: resumed run bit-identical"

# ---- bounded-async ----
mpi 4 train "$dir/mc_async.ini" --out "$dir/async" > "$dir/async.log" 2>&1 || { cat "$dir/async.log"; fail "async"; }
grep -q "train: bounded-async" "$dir/async.log" || { cat "$dir/async.log"; fail "async: not bounded-async"; }
"$PY" - "$dir/async/metrics.h5" <<'EOF' || { cat "$dir/async.log"; fail "async: metrics of Monte-Carlo credit"; }
import sys, h5py
with h5py.File(sys.argv[1], "r", libver="latest", swmr=True) as f:
    s = f["steps"]
    forks, groups, points = s["mc_forks"][:], s["groups"][:], s["mc_branch_points"][:]
    assert len(forks) == 4 and forks.sum() > 0, forks
    print("async: forks per step", [int(x) for x in forks], "branch points", [int(x) for x in points])
EOF

# ---- refusals ----
refused() { # NAME MESSAGE OVERRIDE... : rlvr train must exit 2 with MESSAGE
  local name=$1 message=$2
  shift 2
  tiny_ini "$dir/$name.ini" scratch tasks.family=bugfix-c tasks.train_count=4 credit.mode=mc "$@"
  set +e
  "$RLVR" train "$dir/$name.ini" --out "$dir/$name" > "$dir/$name.log" 2>&1
  local code=$?
  set -e
  [ $code -eq 2 ] || { cat "$dir/$name.log"; fail "$name: exit $code, not 2"; }
  expect_fail "$name" "$dir/$name.log" "$message"
}
refused forks "[credit] forks: 65" credit.forks=65
refused tools "[credit] state_changing_tools" credit.state_changing_tools=write_file,teleport
expect_fail tools "$dir/tools.log" "teleport"
echo "refused: 65 forks, an unknown state-changing tool"
