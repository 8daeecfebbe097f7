#!/usr/bin/env bash
# rlvr train over MPI ranks (train/dist.c, docs/WIRE.md "Training
# protocol"), on a tiny arithmetic run:
#   - one process, mpirun -np 3 ([layout] 1/1/1) and -np 4 (1/1/2) end with
#     bit-identical checkpoints (steps 3 and 8), and with rollout ranks
#     sampling every step's max |sampler − trainer log-prob| is 0;
#   - SIGTERM to one rollout rank after the first checkpoint: every rank
#     agrees at the step boundary, the job exits 3, and --resume (again on
#     4 ranks) ends bit-identical to the uninterrupted run;
#   - a verifier rank that hangs (SIGSTOP): the leader gives up after
#     [layout] timeout_s naming the missing verdicts and the checkpoint to
#     resume from; resuming ends bit-identical;
#   - refusal: a layout that does not add up to -np (trainer > 1 runs data
#     parallel: test_train_dp.sh);
#   - bugfix-c (verification in enclaves, 2 verifier ranks, after a short
#     sft): one process and -np 4 (1/2/1) end bit-identical, also with
#     [reward] outcome = partial, whose failed rollouts score a fraction.
# Usage: test_train_mpi.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"
tiny_ini "$dir/run.ini" scratch
layout() { printf '\n[layout]\n%s\n' "$1" | cat "$dir/run.ini" - > "$dir/$2"; }
layout "rollout = 2" r2.ini
layout "timeout_s = 2" t2.ini

# ---- one process, 1/1/1, 1/1/2 ----
"$RLVR" train "$dir/run.ini" --out "$dir/single" > "$dir/single.log" 2>&1 || { cat "$dir/single.log"; fail "single"; }
mpi 3 train "$dir/run.ini" --out "$dir/np3" > "$dir/np3.log" 2>&1 || { cat "$dir/np3.log"; fail "mpirun -np 3"; }
grep -q "train: 3 ranks: 1 trainer, 1 verifier, 1 rollout" "$dir/np3.log" || { cat "$dir/np3.log"; fail "np3 not distributed"; }
mpi 4 train "$dir/r2.ini" --out "$dir/np4" > "$dir/np4.log" 2>&1 || { cat "$dir/np4.log"; fail "mpirun -np 4"; }
grep -q "train: 4 ranks: 1 trainer, 1 verifier, 2 rollout" "$dir/np4.log" || { cat "$dir/np4.log"; fail "np4 not distributed"; }
for s in 00000003 00000008; do
  same_checkpoints "$dir/single/checkpoints/step_$s.h5" "$dir/np3/checkpoints/step_$s.h5" \
    "$dir/np4/checkpoints/step_$s.h5" || fail "checkpoints of step $s differ between 1 process, 1/1/1 and 1/1/2"
done
echo "bit-identical: one process, -np 3 (1/1/1), -np 4 (1/1/2) at steps 3 and 8"
"$PY" - "$dir/np4/manifest.h5" <<'EOF' || fail "run manifest of the 4-rank run"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = dict(f.attrs)
    text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    assert text(a["status"]) == "finished" and int(a["final_step"]) == 8, a
    assert (int(a["world_size"]), int(a["trainer_ranks"]), int(a["verifier_ranks"]), int(a["rollout_ranks"])) == (4, 1, 1, 2), a
    hosts = [text(h) for h in f["hosts"][()]] if "hosts" in f else None
    assert hosts is not None and len(hosts) == 4 and all(hosts), (list(f), hosts)
import numpy as np
with h5py.File(sys.argv[1].replace("manifest.h5", "metrics.h5"), "r") as f:
    g = f["steps"] if "steps" in f else f
    diff = np.asarray(g["logprob_diff_max"][()])
    measured = diff[~np.isnan(diff)]
    assert len(measured) == 8 and measured.max() == 0.0, diff
EOF

# ---- SIGTERM to one rollout rank, then --resume ----
sigterm_and_resume 4 "$dir/r2.ini" "$dir/term" 3 "rollout rank"
same_checkpoints "$dir/single/checkpoints/step_00000008.h5" "$dir/term/checkpoints/step_00000008.h5" ||
  fail "SIGTERM + resume differs from the uninterrupted run"
echo "SIGTERM to a rollout rank: exit 3, resumed run bit-identical"

# ---- a hung verifier rank: the leader's timeout, then --resume ----
mpi 3 train "$dir/t2.ini" --out "$dir/hang" > "$dir/hang1.log" 2>&1 &
job=$!
wait_checkpoint $job "$dir/hang" || { cat "$dir/hang1.log"; fail "no first checkpoint (hang)"; }
verifier=$(rank_pid $job 1) || fail "verifier rank not found"
kill -STOP "$verifier"
set +e
wait $job
code=$?
set -e
kill -CONT "$verifier" 2> /dev/null || true
[ $code -ne 0 ] && [ $code -ne 3 ] || { cat "$dir/hang1.log"; fail "hung verifier: exit $code"; }
# the leader notices either while it waits for verdicts or at the step boundary
grep -Eq "verdicts of the round are missing: [0-9]+ verdicts from verifier world rank 1|not every rank reached the step boundary" \
  "$dir/hang1.log" && grep -q "the last checkpoint is .*step_0000000[1-8].h5: fix the cause and rerun with --resume" "$dir/hang1.log" ||
  { cat "$dir/hang1.log"; fail "hung verifier: message"; }
mpi 3 train "$dir/run.ini" --out "$dir/hang" --resume > "$dir/hang2.log" 2>&1 || { cat "$dir/hang2.log"; fail "resume after hang"; }
same_checkpoints "$dir/single/checkpoints/step_00000008.h5" "$dir/hang/checkpoints/step_00000008.h5" ||
  fail "hang + resume differs from the uninterrupted run"
echo "hung verifier: job failed (exit $code) naming the missing verdicts; resumed run bit-identical"

# ---- refusals ----
set +e
mpi 3 train "$dir/r2.ini" --out "$dir/bad_n" > "$dir/bad_n.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "MPI world size is 3" "$dir/bad_n.log" || { cat "$dir/bad_n.log"; fail "layout mismatch: exit $code"; }
echo "refused: 4 ranks of layout on 3"

# ---- bugfix-c: patches verified in enclaves by 2 verifier ranks ----
tiny_ini "$dir/bf.ini" bugfix run.name=bf
printf '\n[layout]\nverifier = 2\n' | cat "$dir/bf.ini" - > "$dir/bf2.ini"
"$RLVR" sft "$dir/bf.ini" --out "$dir/bf1" > "$dir/bf_sft.log" 2>&1 || { cat "$dir/bf_sft.log"; fail "bugfix-c sft"; }
mkdir -p "$dir/bf2"
cp -r "$dir/bf1/pool" "$dir/bf1/pool.manifest.json" "$dir/bf1/sft" "$dir/bf2/"
"$RLVR" train "$dir/bf.ini" --out "$dir/bf1" > "$dir/bf1.log" 2>&1 || { cat "$dir/bf1.log"; fail "bugfix-c one process"; }
# one process verifies a step's tasks on every core ([train] verify_threads =
# 0); one thread gives the same verdicts, cache hits and checkpoint
printf 'verify_threads = 1\n' > "$dir/vt.txt"
sed '/^\[train\]/r '"$dir/vt.txt" "$dir/bf.ini" > "$dir/bf_vt1.ini"
grep -q "^verify_threads = 1" "$dir/bf_vt1.ini" || fail "bf_vt1.ini: no verify_threads"
mkdir -p "$dir/bf3"
cp -r "$dir/bf1/pool" "$dir/bf1/pool.manifest.json" "$dir/bf1/sft" "$dir/bf3/"
"$RLVR" train "$dir/bf_vt1.ini" --out "$dir/bf3" > "$dir/bf3.log" 2>&1 || { cat "$dir/bf3.log"; fail "bugfix-c one thread"; }
same_checkpoints "$dir/bf1/checkpoints/step_00000002.h5" "$dir/bf3/checkpoints/step_00000002.h5" ||
  fail "bugfix-c: verify_threads 0 and 1 differ"
counts() { grep -o "[0-9]* enclave verifications, [0-9]* verdicts from the cache" "$1"; }
[ -n "$(counts "$dir/bf1.log")" ] && [ "$(counts "$dir/bf1.log")" = "$(counts "$dir/bf3.log")" ] ||
  { cat "$dir/bf1.log" "$dir/bf3.log"; fail "bugfix-c: verify_threads 0 and 1 counted other verifications"; }
echo "bugfix-c: verification on every core and on one thread bit-identical ($(counts "$dir/bf1.log"))"
# at most one task's enclave kept alive ([train] verify_enclaves = 1): the
# enclaves of earlier steps' tasks are freed, and the run is the same
printf 'verify_enclaves = 1\n' > "$dir/ve.txt"
sed '/^\[train\]/r '"$dir/ve.txt" "$dir/bf.ini" > "$dir/bf_ve1.ini"
mkdir -p "$dir/bf6"
cp -r "$dir/bf1/pool" "$dir/bf1/pool.manifest.json" "$dir/bf1/sft" "$dir/bf6/"
"$RLVR" train "$dir/bf_ve1.ini" --out "$dir/bf6" > "$dir/bf6.log" 2>&1 || { cat "$dir/bf6.log"; fail "bugfix-c verify_enclaves 1"; }
freed() { grep -o "; [0-9]* idle task enclaves freed" "$1" | grep -o "[0-9]*"; }
[ "$(freed "$dir/bf1.log")" = 0 ] && [ "$(freed "$dir/bf6.log")" -gt 0 ] ||
  { cat "$dir/bf1.log" "$dir/bf6.log"; fail "bugfix-c: verify_enclaves 1 freed no enclave (or the default did)"; }
same_checkpoints "$dir/bf1/checkpoints/step_00000002.h5" "$dir/bf6/checkpoints/step_00000002.h5" &&
  [ "$(counts "$dir/bf1.log")" = "$(counts "$dir/bf6.log")" ] ||
  { cat "$dir/bf6.log"; fail "bugfix-c: verify_enclaves 1 and 64 differ"; }
echo "bugfix-c: $(freed "$dir/bf6.log") idle task enclaves freed with verify_enclaves = 1, the run bit-identical"
# the run's sandboxes (pool check, workspaces, enclaves) live under [sandbox] scratch_dir
printf '\n[sandbox]\nscratch_dir = %s\n' "$dir/no/such/dir" | cat "$dir/bf.ini" - > "$dir/bf_scratch.ini"
if "$RLVR" sft "$dir/bf_scratch.ini" --out "$dir/bf4" > "$dir/bf4.log" 2>&1; then fail "a missing scratch_dir was not used"; fi
grep -q "creating a directory under $dir/no/such/dir" "$dir/bf4.log" || { cat "$dir/bf4.log"; fail "scratch_dir: message"; }
mkdir -p "$dir/bf5"
cp -r "$dir/bf1/pool" "$dir/bf1/pool.manifest.json" "$dir/bf1/sft" "$dir/bf5/"
if "$RLVR" train "$dir/bf_scratch.ini" --out "$dir/bf5" > "$dir/bf5.log" 2>&1; then fail "train: scratch_dir not used"; fi
grep -q "creating a directory under $dir/no/such/dir" "$dir/bf5.log" || { cat "$dir/bf5.log"; fail "train scratch_dir: message"; }
echo "bugfix-c: [sandbox] scratch_dir is where the pool check's and the run's sandboxes go"
# [reward] outcome = partial: a failed rollout of a judge-verified task
# scores the share of its tests that passed, the same on 1 process and 4
sed 's/^\[reward\]$/[reward]\noutcome = partial/' "$dir/bf.ini" > "$dir/bf_partial.ini"
printf '\n[layout]\nverifier = 2\n' | cat "$dir/bf_partial.ini" - > "$dir/bf2_partial.ini"
grep -q "^outcome = partial" "$dir/bf_partial.ini" || fail "bf_partial.ini: no outcome = partial"
for d in bf7 bf8; do mkdir -p "$dir/$d" && cp -r "$dir/bf1/pool" "$dir/bf1/pool.manifest.json" "$dir/bf1/sft" "$dir/$d/"; done
"$RLVR" train "$dir/bf_partial.ini" --out "$dir/bf7" > "$dir/bf7.log" 2>&1 || { cat "$dir/bf7.log"; fail "partial one process"; }
mpi 4 train "$dir/bf2_partial.ini" --out "$dir/bf8" > "$dir/bf8.log" 2>&1 || { cat "$dir/bf8.log"; fail "partial -np 4"; }
same_checkpoints "$dir/bf7/checkpoints/step_00000002.h5" "$dir/bf8/checkpoints/step_00000002.h5" ||
  fail "bugfix-c partial: one process and 1/2/1 differ"
"$PY" - "$dir/bf7/shards" "$dir/bf1/shards" <<'EOF' || fail "partial credit in the shards"
import glob, sys, h5py, numpy as np
def outcomes(d):
    o, v = [], []
    for p in sorted(glob.glob(d + "/step_*.h5")):
        with h5py.File(p, "r") as f:
            o += list(f["rollouts/reward_outcome"][()]); v += list(f["rollouts/verdict"][()])
    return np.array(o), np.array(v)
o, v = outcomes(sys.argv[1])
fails = o[v == 2]
assert len(fails) and ((fails > 0) & (fails < 1)).any(), (o, v)
b, w = outcomes(sys.argv[2])
assert set(np.unique(b)) <= {0.0, 1.0}, b
print("partial credit of %d failed rollouts: %s" % (len(fails), np.round(np.unique(fails), 3)))
EOF
echo "bugfix-c: [reward] outcome = partial scores failed rollouts by their share of passed tests; 1 process = -np 4"
mpi 4 train "$dir/bf2.ini" --out "$dir/bf2" > "$dir/bf2.log" 2>&1 || { cat "$dir/bf2.log"; fail "bugfix-c -np 4"; }
runs=$(awk '/^train: verifier rank [0-9]+: [0-9]+ enclave verifications/ { s += $5 } END { print s + 0 }' "$dir/bf2.log")
[ "$runs" -gt 0 ] || { cat "$dir/bf2.log"; fail "bugfix-c: the verifier ranks ran no enclave verification"; }
same_checkpoints "$dir/bf1/checkpoints/step_00000002.h5" "$dir/bf2/checkpoints/step_00000002.h5" ||
  fail "bugfix-c: one process and 1/2/1 differ"
echo "bugfix-c: one process and -np 4 (1/2/1, $runs enclave verifications) bit-identical"
echo "test_train_mpi: ok"
