#!/usr/bin/env bash
# tests/eval/test_sweep.sh RLVR [PYTHON] — `rlvr sweep --local` (docs/EVAL.md
# "Sweeps") on a tiny arith run (rlvr sft + rlvr train, a checkpoint every 2
# steps: steps 2, 4, 6):
#   - 3 checkpoints x 4 shards aggregate to exactly what `rlvr eval` gives
#     for each checkpoint on the whole split (same samples and seed): pass@k
#     values and intervals of every family and k, and the task counts;
#   - sweep.h5 (h5py) holds the same numbers plus pass^k; h5dump reads it
#     and a cell;
#   - a rerun skips every cell (cell files untouched) and writes the same
#     CSV; with one cell deleted only that cell runs again;
#   - a glob that matches nothing, a file that is not a checkpoint, a pool
#     without a manifest and a missing cell are refused with what to do.
# The run comes from tests/eval/sweep_run.sh (shared with the Slurm test).
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=tests/eval/sweep_run.sh
source "$here/sweep_run.sh"
make_sweep_run "$RLVR" "$dir"
pool="$dir/a/pool"
ckpts="$dir/a/checkpoints/step_*.h5"

# ---- (a) 3 checkpoints x 4 shards, then one `rlvr eval` per checkpoint ----
# (the train split: see sweep_run.sh)
"$RLVR" sweep --checkpoints "$ckpts" --pool "$pool" --samples 4 --seed 5 --split train --shards 4 --out "$dir/sw" --local \
    > "$dir/sweep.out" 2> "$dir/sweep.err" || { cat "$dir/sweep.err"; fail "sweep --local"; }
grep -q "3 checkpoints (steps 2..6) x 4 shards of 32 train tasks = 12 cells" "$dir/sweep.err" \
    || { cat "$dir/sweep.err"; fail "no plan line"; }
[ "$(grep -c "^sweep: cell [0-9]* done" "$dir/sweep.err")" = 12 ] || fail "not 12 cells run"
[ "$(ls "$dir/sw/cells" | wc -l)" = 12 ] || fail "not 12 cell files: $(ls "$dir/sw/cells")"
ls "$dir/sw/cells" | grep -q part && fail "a temporary cell file was left"
grep -q "pass@1 \[95% CI\]" "$dir/sweep.out" || { cat "$dir/sweep.out"; fail "no table"; }
for s in 2 4 6; do grep -Eq "^ +$s  " "$dir/sweep.out" || { cat "$dir/sweep.out"; fail "no row for step $s"; }; done
head -n 1 "$dir/sw/sweep.csv" | grep -qx "checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high" \
    || fail "CSV header: $(head -n 1 "$dir/sw/sweep.csv")"

for c in $ckpts; do
  s=$(basename "$c" .h5)
  "$RLVR" eval --checkpoint "$c" --pool "$pool" --samples 4 --seed 5 --split train --json > "$dir/eval_$s.json" 2> "$dir/eval_$s.err" \
      || { cat "$dir/eval_$s.err"; fail "eval $c"; }
done

"$PY" - "$dir" <<'EOF' || fail "sweep differs from rlvr eval"
import csv, glob, json, math, os, sys
import h5py, numpy as np
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/sw/sweep.csv")))
def same(a, b):
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))
checked = 0
steps = []
for path in sorted(glob.glob(f"{d}/eval_step_*.json")):
    doc = json.load(open(path))
    ck = doc["checkpoints"][0]
    res = ck["result"]
    steps.append(ck["step"])
    mine = [r for r in rows if r["checkpoint"] == ck["checkpoint"] or os.path.realpath(ck["checkpoint"]) == r["checkpoint"]]
    assert mine, ("no CSV rows for", ck["checkpoint"])
    assert all(int(r["step"]) == ck["step"] for r in mine)
    groups = res["groups"]
    assert len(mine) == sum(len(g["pass_at_k"]) for g in groups), (len(mine), ck["checkpoint"])
    for g in groups:
        for e in g["pass_at_k"]:
            r = [r for r in mine if r["family"] == g["family"] and int(r["k"]) == e["k"]]
            assert len(r) == 1, (g["family"], e["k"])
            r = r[0]
            assert int(r["n_tasks"]) == g["tasks"] and int(r["samples"]) == res["samples"] == 4, r
            for col, key in (("pass_at_k", "value"), ("low", "low"), ("high", "high")):
                assert same(float(r[col]), e[key]), (ck["checkpoint"], g["family"], e["k"], col, r[col], e[key])
            checked += 1
assert steps == [2, 4, 6], steps
assert len(rows) == checked, (len(rows), checked)
# the numbers compared are not all degenerate: some pass@k strictly inside (0, 1) with a real interval
assert any(0 < float(r["pass_at_k"]) < 1 and float(r["low"]) < float(r["high"]) for r in rows), rows

# sweep.h5: the same numbers, plus pass^k in the long table
with h5py.File(f"{d}/sw/sweep.h5", "r") as f:
    assert f.attrs["format"] in (b"rlvr.eval_sweep", "rlvr.eval_sweep") and f.attrs["n_checkpoints"] == 3
    t = f["table"]
    metric = [m.decode() for m in t["metric"][()]]
    fam = [m.decode() for m in t["family"][()]]
    assert set(metric) == {"pass@k", "pass^k"}
    at = [i for i, m in enumerate(metric) if m == "pass@k"]
    assert len(at) == len(rows)
    for i, r in zip(at, rows):
        assert fam[i] == r["family"] and t["k"][i] == int(r["k"]) and t["step"][i] == int(r["step"])
        assert same(t["value"][i], float(r["pass_at_k"])) and same(t["low"][i], float(r["low"]))
    for i, path in enumerate(sorted(glob.glob(f"{d}/eval_step_*.json"))):
        res = json.load(open(path))["checkpoints"][0]["result"]
        g = f[f"checkpoints/{i}"]
        assert list(g["tasks/id"][()].astype(str)) == [x["id"] for x in res["tasks"]]
        assert list(g["tasks/c"][()]) == [x["c"] for x in res["tasks"]]
        hat = g["groups/pass_hat_k/value"][0]
        assert all(same(float(a), b["value"]) for a, b in zip(hat, res["groups"][0]["pass_hat_k"]))
print(f"sweep == rlvr eval: {checked} pass@k rows of 3 checkpoints")
EOF
h5dump -H "$dir/sw/sweep.h5" > "$dir/sweep.dump" || fail "h5dump sweep.h5"
grep -q 'GROUP "pass_at_k"' "$dir/sweep.dump" && grep -q 'DATASET "metric"' "$dir/sweep.dump" || fail "h5dump sweep.h5 content"
h5dump "$dir/sw/cells/ckpt0_shard0.h5" > "$dir/cell.dump" || fail "h5dump cell"
grep -q '"rlvr.eval_result"' "$dir/cell.dump" || fail "h5dump cell content"

# ---- (b) resubmission skips finished cells ----
stat -c '%n %y' "$dir"/sw/cells/*.h5 > "$dir/mtimes.before"
cp "$dir/sw/sweep.csv" "$dir/sweep.csv.first"
"$RLVR" sweep --checkpoints "$ckpts" --pool "$pool" --samples 4 --seed 5 --split train --shards 4 --out "$dir/sw" --local \
    > "$dir/again.out" 2> "$dir/again.err" || { cat "$dir/again.err"; fail "rerun"; }
grep -q "skipping 12 of 12 finished cells" "$dir/again.err" || { cat "$dir/again.err"; fail "rerun did not skip all"; }
grep -q "^sweep: cell [0-9]* (" "$dir/again.err" && fail "rerun ran a cell"
stat -c '%n %y' "$dir"/sw/cells/*.h5 | cmp -s - "$dir/mtimes.before" || fail "rerun touched cell files"
cmp -s "$dir/sw/sweep.csv" "$dir/sweep.csv.first" || fail "rerun CSV differs"

rm "$dir/sw/cells/ckpt1_shard2.h5"
"$RLVR" sweep --checkpoints "$ckpts" --pool "$pool" --samples 4 --seed 5 --split train --shards 4 --out "$dir/sw" --local \
    > "$dir/one.out" 2> "$dir/one.err" || { cat "$dir/one.err"; fail "rerun after delete"; }
grep -q "skipping 11 of 12 finished cells" "$dir/one.err" || { cat "$dir/one.err"; fail "not 11 skipped"; }
[ "$(grep -c "^sweep: cell [0-9]* (" "$dir/one.err")" = 1 ] && grep -q "^sweep: cell 6 (1/1)" "$dir/one.err" \
    || { cat "$dir/one.err"; fail "not only cell 6 ran"; }
stat -c '%n %y' "$dir"/sw/cells/*.h5 | grep -v ckpt1_shard2 > "$dir/mtimes.after"
grep -v ckpt1_shard2 "$dir/mtimes.before" | cmp -s - "$dir/mtimes.after" || fail "other cells were touched"
cmp -s "$dir/sw/sweep.csv" "$dir/sweep.csv.first" || fail "CSV after re-running one cell differs"

# ---- refusals ----
set +e
"$RLVR" sweep --checkpoints "$dir/a/checkpoints/nothing_*.h5" --pool "$pool" --samples 2 --local > /dev/null 2> "$dir/err"
code=$?
set -e
[ $code -eq 1 ] && grep -q "matches no file" "$dir/err" || fail "bad glob: exit $code, $(cat "$dir/err")"
set +e
"$RLVR" sweep --checkpoints "$dir/a/checkpoints/*" --pool "$pool" --samples 2 --local > /dev/null 2> "$dir/err"
code=$?
set -e
[ $code -eq 1 ] && grep -q "checkpoints/latest" "$dir/err" || fail "not a checkpoint: exit $code, $(cat "$dir/err")"
mkdir -p "$dir/bare"
cp -r "$pool" "$dir/bare/pool"
set +e
"$RLVR" sweep --checkpoints "$ckpts" --pool "$dir/bare/pool" --samples 2 --local --out "$dir/sw2" > /dev/null 2> "$dir/err"
code=$?
set -e
[ $code -eq 1 ] && grep -q "rlvr tasks check $dir/bare/pool" "$dir/err" || fail "no manifest: exit $code, $(cat "$dir/err")"
rm "$dir/sw/cells/ckpt0_shard0.h5"
set +e
"$RLVR" sweep aggregate "$dir/sw" > /dev/null 2> "$dir/err"
code=$?
"$RLVR" sweep --pool "$pool" --samples 2 > /dev/null 2>&1
usage=$?
set -e
[ $code -eq 1 ] && grep -q "ckpt0_shard0.h5) is missing: run the sweep again" "$dir/err" \
    || fail "aggregate with a missing cell: exit $code, $(cat "$dir/err")"
[ $usage -eq 2 ] || fail "missing --checkpoints: exit $usage"
"$RLVR" sweep --help | grep -q "rlvr sweep cell DIR" || fail "--help"
"$RLVR" help | grep -q "sweep" || fail "rlvr help does not list sweep"
echo "test_sweep: ok"
