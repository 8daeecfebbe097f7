#!/usr/bin/env bash
# rlvr sft + rlvr train on a tiny arithmetic run (one process):
#   - both jobs finish, write checkpoints, metrics rows and shards;
#   - every step's max |sampler − trainer log-prob| is 0 at the quickstart's
#     temperature 0.3 (synchronous; the requirement is ≤ 1e-4: the training
#     forward runs the sampler's kernels, docs/POLICY.md "One forward");
#   - two runs with the same seed end with bit-identical checkpoints;
#   - a run sent SIGTERM mid-way exits 3 after a checkpoint, and resumed with
#     --resume ends bit-identical to the uninterrupted run;
#   - a run directory with checkpoints is refused without --resume;
#   - a run trained in three --until-step segments ends bit-identical;
#   - with [harness] max_malformed_calls = 1 the metrics count the rollouts
#     it stops (malformed_stops), at least those the step's shard holds;
#   - rlvr sft sent SIGTERM as soon as it starts (the pool check or the
#     demonstrations, before any step, or a step after): exit 3, and
#     --resume ends with the uninterrupted run's SFT checkpoint bit for bit;
#   - [sft] extra_demos adds the demonstrations of that many generated train
#     tasks (after the pool's, train split keys only, not in the manifest);
#     a changed count is refused naming the directory, and so is
#     extra_demos next to [tasks] pool;
#   - [sft] pool_demos = false: those tasks take the first train indices,
#     the pool's come after them, and only they are imitated; demonstration
#     tasks of the other layout are refused, and so is pool_demos = false
#     without extra_demos;
#   - [grpo] epochs = 2: the first pass matches one pass's, the second
#     moves the weights further, and stop-and-resume is bit-identical;
#   - [sft] recovery_share on arith tasks makes none and says so;
#   - a bad key is a usage error naming the file and line.
# Usage: test_train.sh RLVR PYTHON
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive
tiny_tmpdir
tiny_ini "$dir/run.ini" sft sampler.temperature=0.3

"$RLVR" sft "$dir/run.ini" --out "$dir/a" > "$dir/sft.log" 2>&1 || { cat "$dir/sft.log"; fail "sft"; }
grep -q "sft: done; final checkpoint" "$dir/sft.log" || fail "sft did not report its checkpoint"
"$RLVR" train "$dir/run.ini" --out "$dir/a" > "$dir/train.log" 2>&1 || { cat "$dir/train.log"; fail "train"; }
[ -f "$dir/a/checkpoints/step_00000012.h5" ] || fail "no final checkpoint"
ls "$dir/a/shards/"step_*.h5 > /dev/null || fail "no shards"
grep -q "train step 12/12" "$dir/train.log" || fail "no progress line for the last step"

# second run, same seed, same pool: copy the validated pool so only training repeats
mkdir -p "$dir/b"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/a/sft" "$dir/b/"
rm -f "$dir/b/sft/metrics.h5"
"$RLVR" train "$dir/run.ini" --out "$dir/b" > "$dir/train_b.log" 2>&1 || { cat "$dir/train_b.log"; fail "train b"; }

# third run: SIGTERM after the first checkpoint, then resume
mkdir -p "$dir/c"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/a/sft" "$dir/c/"
"$RLVR" train "$dir/run.ini" --out "$dir/c" > "$dir/train_c1.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -f "$dir/c/checkpoints/latest" ] && break
  kill -0 $pid 2> /dev/null || break
  sleep 0.05
done
kill -TERM $pid 2> /dev/null || true
set +e
wait $pid
code=$?
set -e
if [ $code -eq 3 ]; then
  grep -q "stopped by signal 15 after a checkpoint" "$dir/train_c1.log" || fail "exit 3 without the message"
  if "$RLVR" train "$dir/run.ini" --out "$dir/c" > "$dir/train_c2.log" 2>&1; then
    fail "a run directory with checkpoints was accepted without --resume"
  fi
  grep -q "pass --resume" "$dir/train_c2.log" || fail "refusal does not say --resume"
  "$RLVR" train "$dir/run.ini" --out "$dir/c" --resume > "$dir/train_c3.log" 2>&1 || { cat "$dir/train_c3.log"; fail "resume"; }
  grep -q "resuming from" "$dir/train_c3.log" || fail "resume did not say where from"
elif [ $code -ne 0 ]; then
  cat "$dir/train_c1.log"; fail "SIGTERM run exited $code"
else
  echo "note: the run finished before SIGTERM arrived; resume path not exercised this time"
fi

# fourth run: three segments of a chain (--until-step 5, then 9, then the rest)
mkdir -p "$dir/d"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/a/sft" "$dir/d/"
"$RLVR" train "$dir/run.ini" --out "$dir/d" --until-step 5 > "$dir/train_d1.log" 2>&1 || { cat "$dir/train_d1.log"; fail "segment 1"; }
[ -f "$dir/d/checkpoints/step_00000005.h5" ] && [ ! -f "$dir/d/checkpoints/step_00000006.h5" ] || fail "segment 1 did not end at step 5"
"$RLVR" train "$dir/run.ini" --out "$dir/d" --resume --until-step 9 > "$dir/train_d2.log" 2>&1 || { cat "$dir/train_d2.log"; fail "segment 2"; }
grep -q "resuming from" "$dir/train_d2.log" || fail "segment 2 did not resume"
"$RLVR" train "$dir/run.ini" --out "$dir/d" --resume > "$dir/train_d3.log" 2>&1 || { cat "$dir/train_d3.log"; fail "segment 3"; }
set +e
"$RLVR" sft "$dir/run.ini" --out "$dir/d" --until-step 3 > "$dir/sft_until.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "sft --until-step exit $code"

same_checkpoints --config "$dir/a/checkpoints/step_00000012.h5" "$dir"/{b,c,d}/checkpoints/step_00000012.h5 ||
  fail "checkpoint or metrics check"
"$PY" - "$dir" <<'EOF' || fail "checkpoint or metrics check"
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/a/metrics.h5", "r", swmr=True) as f:
    g = f["steps"] if "steps" in f else f
    diff = np.asarray(g["logprob_diff_max"][()])
    steps = np.asarray(g["step"][()])
    assert list(steps) == list(range(1, 13)), steps
    measured = diff[~np.isnan(diff)]
    assert len(measured) > 0 and measured.max() == 0.0, diff
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
for path, last in ((f"{d}/a/sft/manifest.h5", 30), (f"{d}/a/manifest.h5", 12), (f"{d}/c/manifest.h5", 12)):
    with h5py.File(path, "r") as f:
        assert text(f.attrs["status"]) == "finished", (path, text(f.attrs["status"]))
        assert int(f.attrs["final_step"]) == last, (path, dict(f.attrs))
        assert len(text(f.attrs["task_pool_hash"])) == 16, (path, dict(f.attrs))
print("checkpoints bit-identical (runs a, b, c, d); max |sampler - trainer log-prob| =", measured.max())
EOF

# fifth run: the malformed-call ceiling at 1 stops rollouts, and the metrics count them
tiny_ini "$dir/malformed.ini" sft harness.max_malformed_calls=1 train.steps=2
mkdir -p "$dir/e"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/a/sft" "$dir/e/"
"$RLVR" train "$dir/malformed.ini" --out "$dir/e" > "$dir/train_e.log" 2>&1 || { cat "$dir/train_e.log"; fail "train e"; }
grep -q "train step 2/2 .* malf [1-9]" "$dir/train_e.log" || { cat "$dir/train_e.log"; fail "no malformed stops on the progress line"; }
"$PY" - "$dir/e" <<'EOF' || fail "malformed_stops check"
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/metrics.h5", "r", swmr=True) as f:
    counted = np.asarray(f["steps/malformed_stops"][()])
assert len(counted) == 2 and (counted > 0).all(), counted
in_shards = 0
for step, n in enumerate(counted, 1):
    with h5py.File(f"{d}/shards/step_{step:08d}.rank_0000.h5", "r") as f:
        stops = np.asarray(f["rollouts/stop_reason"][()])
    assert (stops == 7).sum() <= n, (step, (stops == 7).sum(), n)  # the shard holds the kept groups only
    in_shards += int((stops == 7).sum())
assert in_shards > 0, "no shard rollout has stop reason 7 (malformed)"
print("malformed_stops per step:", counted.tolist(), "of which in the shards:", in_shards)
EOF

# sixth: SIGTERM to rlvr sft at its start; the demonstrations stop between harness calls
mkdir -p "$dir/f"
"$RLVR" sft "$dir/run.ini" --out "$dir/f" > "$dir/sft_f1.log" 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
  grep -q "generating" "$dir/sft_f1.log" 2> /dev/null && break
  sleep 0.005
done
kill -TERM $pid
set +e
wait $pid
code=$?
set -e
[ $code -eq 3 ] || { cat "$dir/sft_f1.log"; fail "sft after SIGTERM exited $code, not 3"; }
if grep -q "^sft step" "$dir/sft_f1.log"; then
  echo "SIGTERM reached sft after its first steps"
else
  [ ! -f "$dir/f/sft/checkpoints/latest" ] || fail "sft stopped before any step but wrote a checkpoint"
  grep -q "sft: stopped by signal 15 before the first step: nothing to save" "$dir/sft_f1.log" ||
    { cat "$dir/sft_f1.log"; fail "no message for a stop before the first step"; }
  echo "SIGTERM reached sft before its first step: no checkpoint"
fi
"$RLVR" sft "$dir/run.ini" --out "$dir/f" --resume > "$dir/sft_f2.log" 2>&1 || { cat "$dir/sft_f2.log"; fail "sft --resume"; }
same_checkpoints "$dir/a/sft/checkpoints/step_00000030.h5" "$dir/f/sft/checkpoints/step_00000030.h5" ||
  fail "sft stopped at its start and resumed differs from the uninterrupted run"

# seventh: [sft] extra_demos
tiny_ini "$dir/extra.ini" sft sft.extra_demos=12 sft.steps=2
mkdir -p "$dir/g"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/g/"
"$RLVR" sft "$dir/extra.ini" --out "$dir/g" > "$dir/sft_g.log" 2>&1 || { cat "$dir/sft_g.log"; fail "sft with extra_demos"; }
grep -q "sft: 44 demonstrations rendered" "$dir/sft_g.log" || { cat "$dir/sft_g.log"; fail "not 32 + 12 demonstrations"; }
"$PY" - "$dir/g" <<'EOF' || fail "extra demonstration tasks"
import sys, json, glob, os
d = sys.argv[1]
extra = [json.load(open(f)) for f in glob.glob(f"{d}/sft/demo_tasks/*.json")]
pool = [json.load(open(f)) for f in glob.glob(f"{d}/pool/*.json")]
checked = {t["id"] for t in json.load(open(f"{d}/pool.manifest.json"))["tasks"]}
assert len(extra) == 12 and all(t["split"] == "train" for t in extra), [t["split"] for t in extra]
ids = {t["id"] for t in pool}
assert not ids & {t["id"] for t in extra} and not checked & {t["id"] for t in extra}
held_out = {t["split_key"] for t in pool if t["split"] != "train"}
assert not held_out & {t["split_key"] for t in extra}
EOF
# [sft] recovery_share on arith tasks: none can be made (no file to edit),
# and SFT says so and goes on with the plain demonstrations (bugfix-c
# recovery demonstrations: test_demo)
tiny_ini "$dir/recovery.ini" sft sft.extra_demos=12 sft.steps=2 sft.recovery_share=0.5
mkdir -p "$dir/g_rec"
cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/g_rec/"
"$RLVR" sft "$dir/recovery.ini" --out "$dir/g_rec" > "$dir/sft_g_rec.log" 2>&1 || { cat "$dir/sft_g_rec.log"; fail "sft with recovery_share"; }
grep -q "sft: 0 recovery demonstrations .* 22 of the 22 tasks chosen allow none" "$dir/sft_g_rec.log" &&
  grep -q "sft: 44 demonstrations rendered" "$dir/sft_g_rec.log" || { cat "$dir/sft_g_rec.log"; fail "recovery_share on arith"; }
tiny_ini "$dir/extra5.ini" sft sft.extra_demos=5 sft.steps=4
if "$RLVR" sft "$dir/extra5.ini" --out "$dir/g" --resume > "$dir/sft_g2.log" 2>&1; then
  fail "sft resumed with demonstration tasks made for another extra_demos"
fi
grep -q "demo_tasks holds 12 tasks, .* ask for 5 train tasks" "$dir/sft_g2.log" || { cat "$dir/sft_g2.log"; fail "no message naming the stale demo_tasks"; }
tiny_ini "$dir/extra_pool.ini" sft sft.extra_demos=4 -tasks "tasks.pool=$dir/a/pool"
set +e
"$RLVR" sft "$dir/extra_pool.ini" --out "$dir/h" > "$dir/sft_h.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "extra_demos" "$dir/sft_h.log" || { cat "$dir/sft_h.log"; fail "extra_demos next to a pool: exit $code"; }

# eighth: [sft] pool_demos = false: the demonstration tasks take train
# indices 0-11, the pool's 32 train tasks 12-43, and only the 12 are imitated
tiny_ini "$dir/apart.ini" sft sft.extra_demos=12 sft.pool_demos=false sft.steps=2
"$RLVR" sft "$dir/apart.ini" --out "$dir/i" > "$dir/sft_i.log" 2>&1 || { cat "$dir/sft_i.log"; fail "sft with pool_demos = false"; }
grep -q "sft: 12 demonstrations rendered" "$dir/sft_i.log" || { cat "$dir/sft_i.log"; fail "not the 12 demonstration tasks alone"; }
"$PY" - "$dir/i" <<'EOF' || fail "pool_demos = false: task indices"
import sys, json, glob
d = sys.argv[1]
index = lambda t: int(t["id"].rsplit("-", 1)[1])
extra = [json.load(open(f)) for f in glob.glob(f"{d}/sft/demo_tasks/*.json")]
train = [t for t in (json.load(open(f)) for f in glob.glob(f"{d}/pool/*.json")) if t["split"] == "train"]
assert sorted(map(index, extra)) == list(range(12)), sorted(map(index, extra))
assert sorted(map(index, train)) == list(range(12, 44)), sorted(map(index, train))
EOF
# the demonstration tasks of run g (indices 32-43) in a run that wants 0-11
mkdir -p "$dir/j/sft" && cp -r "$dir/g/sft/demo_tasks" "$dir/j/sft/" && cp -r "$dir/i/pool" "$dir/i/pool.manifest.json" "$dir/j/"
if "$RLVR" sft "$dir/apart.ini" --out "$dir/j" > "$dir/sft_j.log" 2>&1; then
  fail "sft used demonstration tasks made with pool_demos = true"
fi
grep -q "demo_tasks holds 12 tasks, .* ask for 12 train tasks .*-000000 \.\. .*-000011" "$dir/sft_j.log" ||
  { cat "$dir/sft_j.log"; fail "no message naming demonstration tasks of the other layout"; }
# a pool built with the pool's train tasks first (run g) under pool_demos = false
mkdir -p "$dir/l" && cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/l/"
if "$RLVR" sft "$dir/apart.ini" --out "$dir/l" > "$dir/sft_l.log" 2>&1; then
  fail "sft used a pool built for pool_demos = true"
fi
grep -q "lacks the train tasks .*-000012 \.\. .*-000043" "$dir/sft_l.log" || { cat "$dir/sft_l.log"; fail "no message naming the pool of the other layout"; }
tiny_ini "$dir/apart0.ini" sft sft.pool_demos=false
set +e
"$RLVR" sft "$dir/apart0.ini" --out "$dir/k" > "$dir/sft_k.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "pool_demos" "$dir/sft_k.log" || { cat "$dir/sft_k.log"; fail "pool_demos = false without extra_demos: exit $code"; }

# ninth: [grpo] epochs = 2, two AdamW steps on each step's batch: the first
# pass is one pass's (same loss and gradient norm at step 1, log-prob gap 0),
# the second moves the weights further, and a run stopped after step 2 and
# resumed ends bit-identical to the uninterrupted one
tiny_ini "$dir/epochs1.ini" sft sampler.temperature=0.3 train.steps=4
tiny_ini "$dir/epochs2.ini" sft sampler.temperature=0.3 train.steps=4 grpo.epochs=2
for r in m n o; do mkdir -p "$dir/$r" && cp -r "$dir/a/pool" "$dir/a/pool.manifest.json" "$dir/a/sft" "$dir/$r/"; done
"$RLVR" train "$dir/epochs1.ini" --out "$dir/m" > "$dir/train_m.log" 2>&1 || { cat "$dir/train_m.log"; fail "epochs = 1"; }
"$RLVR" train "$dir/epochs2.ini" --out "$dir/n" > "$dir/train_n.log" 2>&1 || { cat "$dir/train_n.log"; fail "epochs = 2"; }
"$RLVR" train "$dir/epochs2.ini" --out "$dir/o" --until-step 2 > "$dir/train_o1.log" 2>&1 || { cat "$dir/train_o1.log"; fail "epochs = 2 until step 2"; }
"$RLVR" train "$dir/epochs2.ini" --out "$dir/o" --resume > "$dir/train_o2.log" 2>&1 || { cat "$dir/train_o2.log"; fail "epochs = 2 resumed"; }
same_checkpoints "$dir/n/checkpoints/step_00000004.h5" "$dir/o/checkpoints/step_00000004.h5" || fail "epochs = 2: resumed run differs"
"$PY" - "$dir" <<'EOF' || fail "epochs check"
import sys, h5py, numpy as np
d = sys.argv[1]
def metric(run, name):
    with h5py.File(f"{d}/{run}/metrics.h5", "r", swmr=True) as f:
        return np.asarray(f["steps/" + name][()])
for name in ("loss", "grad_norm"):
    one, two = metric("m", name), metric("n", name)
    assert one[0] == two[0], (name, one, two)
gap = metric("n", "logprob_diff_max")
assert np.nanmax(gap) == 0.0, gap
def params(run):
    out = {}
    with h5py.File(f"{d}/{run}/checkpoints/step_00000002.h5", "r") as f:
        f["model/params"].visititems(lambda k, o: out.__setitem__(k, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out
one, two = params("m"), params("n")
assert one and any(not np.array_equal(one[k], two[k]) for k in one), "a second pass left the weights where one pass put them"
print("epochs = 2: step 1's first pass as one pass's, then the weights moved further; log-prob gap", np.nanmax(gap))
EOF

printf '[train]\nstep = 3\n' > "$dir/bad.ini"
set +e
"$RLVR" train "$dir/bad.ini" > "$dir/bad.log" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "bad key exit $code"
grep -q "bad.ini:2" "$dir/bad.log" && grep -q "did you mean" "$dir/bad.log" || { cat "$dir/bad.log"; fail "bad key message"; }
echo "test_train: ok"
