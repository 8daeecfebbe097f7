#!/usr/bin/env bash
# Data-parallel trainer ranks ([layout] trainer = 2, train/dp.c
# and train/follower.c) on a tiny arithmetic run:
#   - mpirun -np 4 (2 trainer, 1 verifier, 1 rollout) runs to the end, and the
#     leader reports the replicas' weights hashed equal after every update;
#   - two such runs end with bit-identical checkpoints (steps 4 and 8);
#   - against one process (same data, gradient summed in another float
#     order): step 1's loss and grad norm agree to 1e-6 relative (same
#     weights, same rollouts), and at step 8 every parameter agrees to 1e-4
#     absolute and the metrics' reward_mean / loss to 0.05 / 1e-3;
#   - SIGTERM to the second trainer rank after the first checkpoint: exit 3,
#     and --resume ends bit-identical to the uninterrupted 2-trainer run;
#   - bounded-async mode (max_staleness = 1) with 2 trainer ranks finishes;
#   - per-rank shards (docs/FORMATS.md "Rollout shard"), in every 2-trainer
#     run above: each step has exactly step_N.rank_0000.h5 and
#     rank_0001.h5; their rollouts are disjoint, and rank 0's followed by rank 1's are the step's batch: the
#     cut between them is the one rlvr_update_part makes (the first rollout
#     whose preceding policy tokens reach N/2), recomputed here from the
#     files' masks — so each rank's file holds the rollouts it trained on;
#     step 1 (same weights) equals the one-process run's rank_0000 shard:
#     the same (task id, group, index) in the same order with identical
#     tokens, mask and sampling log-probs; after SIGTERM + --resume every
#     shard equals the uninterrupted run's; a resume after planted leftovers
#     (a rank_0002 file and a .part of steps after the checkpoint) removes
#     them and rewrites those steps' shards; trainer rank 1 failing to write
#     its shard ends the job (no hang) before that step is checkpointed.
# Usage: test_train_dp.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"
tiny_ini "$dir/run.ini" scratch
printf '\n[layout]\ntrainer = 2\n' | cat "$dir/run.ini" - > "$dir/dp.ini"
sed 's/^init = scratch$/init = scratch\nmax_staleness = 1/' "$dir/dp.ini" > "$dir/dp_async.ini"

# check_shards RUN STEPS T [REF_RUN [REF_STEPS]]: RUN's per-rank shards (see
# above); with REF_RUN, steps 1 … REF_STEPS (default 1) of RUN equal REF_RUN's
# rollouts (REF_RUN may have any number of trainer ranks).
check_shards() {
  "$PY" - "$@" <<'CHECK'
import glob, os, sys, h5py, numpy as np
run, steps, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ref = sys.argv[4] if len(sys.argv) > 4 else None
ref_steps = int(sys.argv[5]) if len(sys.argv) > 5 else 1

def read(path, step, rank):
    with h5py.File(path, "r") as f:
        assert int(f.attrs["step"]) == step and int(f.attrs["rank"]) == rank, (path, dict(f.attrs))
        off = f["rollouts/token_offset"][()]
        ids, mask, lp = f["tokens/id"][()], f["tokens/mask"][()], f["tokens/logprob"][()]
        r = f["rollouts"]
        keys = list(zip((t.decode() for t in r["task_id"][()]), r["group_id"][()].tolist(), r["index"][()].tolist()))
        return [dict(key=k, ids=ids[off[i]:off[i + 1]], mask=mask[off[i]:off[i + 1]], lp=lp[off[i]:off[i + 1]],
                     adv=float(r["advantage"][i])) for i, k in enumerate(keys)]

def step_files(d, step):
    names = sorted(os.path.basename(p) for p in glob.glob(f"{d}/shards/step_{step:08d}.*"))
    want = [f"step_{step:08d}.rank_{r:04d}.h5" for r in range(len(names))]
    assert names == want, (d, step, names)
    return [read(f"{d}/shards/{n}", step, r) for r, n in enumerate(names)]

def cut(rollouts, r, T):
    # rlvr_update_part (train/trainer.c): the start of rank r's part
    p = [int((x["mask"] == 1).sum()) for x in rollouts]
    N, before, i = sum(p), 0, 0
    if r == 0 or r >= T: return 0 if r == 0 else len(p)
    while i < len(p) and before * T < r * N: before += p[i]; i += 1
    return i

assert sorted(glob.glob(f"{run}/shards/*.part")) == [], "left-over .part files"
sizes = []
for step in range(1, steps + 1):
    parts = step_files(run, step)
    assert len(parts) == T, (step, len(parts))
    batch = [x for part in parts for x in part]
    keys = [x["key"] for x in batch]
    assert len(set(keys)) == len(keys), (step, "a rollout in two ranks' shards")
    N = sum(int((x["mask"] == 1).sum()) for x in batch)
    at = 0
    for r, part in enumerate(parts):
        lo = cut(batch, r, T) if N > 0 else (0 if r == 0 else len(batch))
        assert at == lo, (step, r, "part starts at", at, "the split rule says", lo)
        at += len(part)
    sizes.append("+".join(str(len(p)) for p in parts))
    if ref and step <= ref_steps:
        want = [x for part in step_files(ref, step) for x in part]
        assert [x["key"] for x in want] == keys, (step, "not the reference's rollouts")
        for a, b in zip(want, batch):
            for k in ("ids", "mask", "lp"):
                assert np.array_equal(a[k], b[k]), (step, a["key"], k)
            assert a["adv"] == b["adv"], (step, a["key"])
print(f"{run}: {steps} steps x {T} rank shards, rollouts per rank {' '.join(sizes)}")
CHECK
}

# ---- 2 trainer ranks: to the end, twice, bit-identical ----
"$RLVR" train "$dir/run.ini" --out "$dir/one" > "$dir/one.log" 2>&1 || { cat "$dir/one.log"; fail "one process"; }
for run in dpa dpb; do
  mpi 4 train "$dir/dp.ini" --out "$dir/$run" > "$dir/$run.log" 2>&1 || { cat "$dir/$run.log"; fail "mpirun -np 4 ($run)"; }
done
grep -q "train: 4 ranks: 2 trainer, 1 verifier, 1 rollout" "$dir/dpa.log" || { cat "$dir/dpa.log"; fail "not 2 trainer ranks"; }
grep -q "train: 2 trainer ranks: weights identical on every rank after each of 8 updates" "$dir/dpa.log" ||
  { cat "$dir/dpa.log"; fail "the replicas were not checked after every update"; }
for s in 00000004 00000008; do
  same_checkpoints "$dir/dpa/checkpoints/step_$s.h5" "$dir/dpb/checkpoints/step_$s.h5" ||
    fail "two 2-trainer runs differ at step $s"
done
echo "2 trainer ranks: runs to the end, replicas equal after 8 updates, two runs bit-identical (steps 4, 8)"
check_shards "$dir/dpa" 8 2 "$dir/one" 1 || fail "per-rank shards of the 2-trainer run"
check_shards "$dir/one" 8 1 > /dev/null || fail "the one-process run's shards"
check_shards "$dir/dpb" 8 2 "$dir/dpa" 8 > /dev/null || fail "two 2-trainer runs wrote different shards"
echo "per-rank shards: rank_0000 + rank_0001 each step, split as trained, step 1 = the one-process shard"

# ---- close to one trainer rank ----
"$PY" - "$dir/one" "$dir/dpa" <<'EOF' || fail "2 trainer ranks are not close to one"
import sys, h5py, numpy as np
one, dp = sys.argv[1], sys.argv[2]
def metrics(run):
    with h5py.File(f"{run}/metrics.h5", "r") as f:
        return {k: f["steps"][k][()] for k in ("loss", "grad_norm", "reward_mean", "step")}
a, b = metrics(one), metrics(dp)
assert list(a["step"]) == list(b["step"]) == list(range(1, 9)), (a["step"], b["step"])
# step 1: the same weights score the same rollouts; only the summation order differs
for k in ("loss", "grad_norm"):
    assert abs(a[k][0] - b[k][0]) <= 1e-6 * max(1.0, abs(a[k][0])), (k, a[k][0], b[k][0])
assert a["reward_mean"][0] == b["reward_mean"][0]
assert np.all(np.abs(a["reward_mean"] - b["reward_mean"]) <= 0.05), (a["reward_mean"], b["reward_mean"])
assert np.all(np.abs(a["loss"] - b["loss"]) <= 1e-3), (a["loss"], b["loss"])
worst, bitsame = 0.0, True
with h5py.File(f"{one}/checkpoints/step_00000008.h5", "r") as f, h5py.File(f"{dp}/checkpoints/step_00000008.h5", "r") as g:
    for name in f["model/params"]:
        x, y = f["model/params"][name][()], g["model/params"][name][()]
        worst = max(worst, float(np.max(np.abs(x.astype(np.float64) - y))))
        bitsame &= x.tobytes() == y.tobytes()
assert worst <= 1e-4, worst
# the second rank did part of the work: the float sums differ somewhere
assert not bitsame, "2 trainer ranks bit-identical to one: did trainer rank 1 compute anything?"
print(f"close to one trainer rank: step-1 loss {a['loss'][0]:.9g} vs {b['loss'][0]:.9g}; step-8 params max |diff| {worst:.2e}")
EOF

# ---- SIGTERM to the second trainer rank, then --resume ----
sigterm_and_resume 4 "$dir/dp.ini" "$dir/term" 1 "trainer rank 1"
same_checkpoints "$dir/dpa/checkpoints/step_00000008.h5" "$dir/term/checkpoints/step_00000008.h5" ||
  fail "SIGTERM + resume differs from the uninterrupted 2-trainer run"
echo "SIGTERM to trainer rank 1: exit 3, resumed run bit-identical"
check_shards "$dir/term" 8 2 "$dir/dpa" 8 > /dev/null || fail "shards after SIGTERM + resume"

# ---- leftovers of a job that ended after its checkpoint of step 6 ----
cp -r "$dir/dpb" "$dir/left"
rm "$dir/left/checkpoints/step_00000007.h5" "$dir/left/checkpoints/step_00000008.h5"
echo step_00000006.h5 > "$dir/left/checkpoints/latest"
cp "$dir/left/shards/step_00000007.rank_0001.h5" "$dir/left/shards/step_00000007.rank_0002.h5" # a 3-trainer job's
cp "$dir/left/shards/step_00000001.rank_0000.h5" "$dir/left/shards/step_00000008.rank_0000.h5" # wrong contents
cp "$dir/left/shards/step_00000001.rank_0000.h5" "$dir/left/shards/step_00000008.rank_0001.h5.part"
mpi 4 train "$dir/dp.ini" --out "$dir/left" --resume > "$dir/left.log" 2>&1 || { cat "$dir/left.log"; fail "resume from step 6"; }
grep -q "train: removed 6 shard files of steps after step 6" "$dir/left.log" || { cat "$dir/left.log"; fail "no prune message"; }
check_shards "$dir/left" 8 2 "$dir/dpa" 8 > /dev/null || fail "shards after a resume over leftovers"
echo "resume over leftovers: stale rank/part files of steps 7-8 removed, those steps' shards rewritten"

# ---- trainer rank 1 cannot write its shard of step 2: the job ends, step 2 is not checkpointed ----
mkdir -p "$dir/nowrite/shards/step_00000002.rank_0001.h5/in_the_way" # the rename onto it fails
set +e
mpi 4 train "$dir/dp.ini" --out "$dir/nowrite" > "$dir/nowrite.log" 2>&1
code=$?
set -e
[ $code -ne 0 ] || { cat "$dir/nowrite.log"; fail "a trainer rank could not write its shard and the job succeeded"; }
grep -q "trainer rank 1 (world rank 1): error: .*step_00000002.rank_0001.h5" "$dir/nowrite.log" ||
  { cat "$dir/nowrite.log"; fail "trainer rank 1's shard error not reported"; }
if [ ! -f "$dir/nowrite/checkpoints/step_00000001.h5" ] || [ -f "$dir/nowrite/checkpoints/step_00000002.h5" ]; then
  cat "$dir/nowrite.log"
  fail "checkpoints: step 1 expected, step 2 not"
fi
echo "trainer rank 1 failing to write its shard: job ends (exit $code), no checkpoint of that step"

# ---- bounded-async with 2 trainer ranks ----
mpi 4 train "$dir/dp_async.ini" --out "$dir/async" > "$dir/async.log" 2>&1 || { cat "$dir/async.log"; fail "async, 2 trainers"; }
[ -f "$dir/async/checkpoints/step_00000008.h5" ] || { cat "$dir/async.log"; fail "async: no last checkpoint"; }
grep -q "weights identical on every rank after each of" "$dir/async.log" || { cat "$dir/async.log"; fail "async: no replica check"; }
echo "bounded-async with 2 trainer ranks: finished"
check_shards "$dir/async" 8 2 || fail "async: per-rank shards"
echo "test_train_dp: ok"
