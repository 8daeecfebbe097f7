#!/usr/bin/env bash
# tests/slurm/test_sweep_slurm.sh RLVR [PYTHON] — `rlvr sweep` on the real
# single-node Slurm of slurm/cluster.sh (docs/EVAL.md "Sweeps"):
#   - 3 checkpoints x 4 shards go in as one job array (--array=0-11%3) and
#     an aggregation job (afterok on the array); the aggregate is the same
#     file, byte for byte, as the --local sweep's;
#   - resubmitted with every cell finished, only the aggregation is
#     submitted; with two cells deleted, the array holds exactly those two
#     (the only array tasks that ran), the other cells are untouched, and the
#     aggregate is again the same.
# Another Slurm test may use the cluster at the same time: the sweep's job
# names are its own (a hash of its directory) and the test waits only on
# the job ids it submitted, with bounded polling. The cluster is stopped at
# the end only when this test started it and no other job is queued.
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
dir=$(mktemp -d)
started=0
cleanup() {
  if [ $started = 1 ] && [ -z "$(squeue -h 2>/dev/null)" ]; then bash "$src/slurm/cluster.sh" stop > /dev/null 2>&1 || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! bash "$src/slurm/cluster.sh" status > /dev/null 2>&1; then
  bash "$src/slurm/cluster.sh" start > "$dir/cluster.log" 2>&1 || { cat "$dir/cluster.log"; fail "cluster start"; }
  started=1
fi

# shellcheck source=tests/eval/sweep_run.sh
source "$src/tests/eval/sweep_run.sh"
make_sweep_run "$RLVR" "$dir"
sweep() { "$RLVR" sweep --checkpoints "$dir/a/checkpoints/step_*.h5" --pool "$dir/a/pool" --samples 4 --seed 5 \
              --split train --shards 4 "$@"; }

# the reference: the same sweep run here
sweep --out "$dir/local" --local > "$dir/local.out" 2> "$dir/local.err" || { cat "$dir/local.err"; fail "local sweep"; }

# Waits (bounded) until none of the given job ids is queued or running.
wait_jobs() {
  local ids=$1
  for _ in $(seq 1 1200); do
    [ -z "$(squeue -h -j "$ids" -o %i 2> /dev/null)" ] && return 0
    sleep 0.5
  done
  squeue -j "$ids" || true
  return 1
}
job_of() { sed -n "s/^sweep: $1 job \([0-9]*\).*/\1/p" "$2"; }

# ---- the whole sweep as an array + aggregation ----
sweep --out "$dir/sl" --max-parallel 3 > "$dir/submit.out" 2> "$dir/submit.err" \
    || { cat "$dir/submit.out" "$dir/submit.err"; fail "submit"; }
array=$(job_of "cells array" "$dir/submit.out")
agg=$(job_of aggregation "$dir/submit.out")
[ -n "$array" ] && [ -n "$agg" ] || { cat "$dir/submit.out"; fail "no job ids"; }
grep -q "cells array job $array: --array=0-11%3 (12 of 12 cells)" "$dir/submit.out" || { cat "$dir/submit.out"; fail "array spec"; }
grep -q "aggregation job $agg (afterok:$array)" "$dir/submit.out" || fail "aggregation dependency"
grep -q "^#SBATCH --job-name=rlvr-sweep-[0-9a-f]*-cell$" "$dir/sl/slurm/sweep-cell.sbatch" || fail "cell script"
wait_jobs "$array,$agg" || fail "jobs $array,$agg did not finish"
[ "$(ls "$dir/sl/logs"/cell-*.out | wc -l)" = 12 ] || fail "not 12 array tasks ran: $(ls "$dir/sl/logs")"
[ -f "$dir/sl/sweep.csv" ] || { cat "$dir/sl/logs"/*; fail "no aggregate"; }
grep -q "pass@1 \[95% CI\]" "$dir/sl/logs/aggregate-$agg.out" || { cat "$dir/sl/logs/aggregate-$agg.out"; fail "no table in the log"; }
cmp "$dir/sl/sweep.csv" "$dir/local/sweep.csv" || fail "Slurm aggregate differs from the local one"

# ---- resubmission: everything finished -> the aggregation only ----
stat -c '%n %y' "$dir"/sl/cells/*.h5 > "$dir/mtimes.before"
rm "$dir/sl/sweep.csv"
sweep --out "$dir/sl" --max-parallel 3 > "$dir/again.out" 2> "$dir/again.err" || { cat "$dir/again.err"; fail "resubmit"; }
grep -q "skipping 12 of 12 finished cells" "$dir/again.err" || { cat "$dir/again.err"; fail "not all skipped"; }
grep -q "all 12 cells are finished: submitting the aggregation only" "$dir/again.out" || fail "more than aggregation"
[ -z "$(job_of "cells array" "$dir/again.out")" ] || fail "an array was submitted"
agg=$(job_of aggregation "$dir/again.out")
wait_jobs "$agg" || fail "aggregation $agg did not finish"
cmp "$dir/sl/sweep.csv" "$dir/local/sweep.csv" || fail "re-aggregated CSV differs"
stat -c '%n %y' "$dir"/sl/cells/*.h5 | cmp -s - "$dir/mtimes.before" || fail "cells were touched"

# ---- two cells missing -> an array of exactly those two ----
rm "$dir/sl/cells/ckpt0_shard1.h5" "$dir/sl/cells/ckpt1_shard3.h5" "$dir/sl/sweep.csv"
rm -r "$dir/sl/logs"
sweep --out "$dir/sl" --max-parallel 3 > "$dir/two.out" 2> "$dir/two.err" || { cat "$dir/two.err"; fail "resubmit two"; }
array=$(job_of "cells array" "$dir/two.out")
agg=$(job_of aggregation "$dir/two.out")
grep -q "cells array job $array: --array=1,7%3 (2 of 12 cells)" "$dir/two.out" || { cat "$dir/two.out"; fail "array of two"; }
wait_jobs "$array,$agg" || fail "jobs $array,$agg did not finish"
(cd "$dir/sl/logs" && ls cell-*.out) > "$dir/ran"
printf 'cell-1.out\ncell-7.out\n' | cmp -s - "$dir/ran" || fail "array tasks that ran: $(cat "$dir/ran")"
stat -c '%n %y' "$dir"/sl/cells/*.h5 | grep -v -e ckpt0_shard1 -e ckpt1_shard3 > "$dir/mtimes.after"
grep -v -e ckpt0_shard1 -e ckpt1_shard3 "$dir/mtimes.before" | cmp -s - "$dir/mtimes.after" || fail "other cells touched"
cmp "$dir/sl/sweep.csv" "$dir/local/sweep.csv" || fail "aggregate after two cells differs"
"$PY" -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r') as f:
    assert f.attrs['n_checkpoints'] == 3 and len(f['table/metric']) > 0
" "$dir/sl/sweep.h5" || fail "sweep.h5"
echo "test_sweep_slurm: ok"
