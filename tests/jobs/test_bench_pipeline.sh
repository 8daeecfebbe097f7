#!/usr/bin/env bash
# rlvr bench pipeline --quick (bench/bench_pipeline.c): synchronous and
# bounded-async (Δv_max = 2) training on one MPI layout with heavy-tailed
# environment latency. Checked: both modes trained every step, no admitted
# rollout exceeds its Δv_max (sync: 0), the figures are consistent. The
# speed ratio is reported, not asserted: a noisy machine may miss the
# bench's own 1.5× target (exit 1 with that message only).
# Usage: test_bench_pipeline.sh RLVR MPIEXEC
set -euo pipefail
RLVR=$1
export MPIEXEC=${2:-mpirun}
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
mpi_env
tiny_tmpdir

set +e
"$RLVR" bench pipeline --quick > "$dir/out" 2> "$dir/err"
code=$?
set -e
cat "$dir/out" "$dir/err"
if [ $code -ne 0 ]; then
  grep -q "below the target" "$dir/err" || fail "bench pipeline exited $code"
  echo "note: the async / sync ratio missed the bench's target on this machine (not asserted here)"
fi
/usr/bin/python3 - "$dir/out" <<'CHECK'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
modes = {r["mode"]: r for r in rows if "mode" in r}
summary = [r for r in rows if "ratio" in r]
assert set(modes) == {"sync", "async"} and len(summary) == 1, rows
sync, asyn, s = modes["sync"], modes["async"], summary[0]
steps = int(s["config"].split("steps=")[1].split()[0])
for m in (sync, asyn):
    assert m["steps"] == steps, (m["mode"], m["steps"], steps)
    assert m["rollouts"] > 0 and m["wall_s"] > 0 and m["admitted"] > 0, m
    assert abs(m["rollouts_per_s"] - m["rollouts"] / m["wall_s"]) <= 1e-3 * m["rollouts_per_s"], m
    assert 0 <= m["staleness_max"] <= m["max_staleness"], m
assert sync["max_staleness"] == 0 and sync["staleness_max"] == 0 and sync["dropped"] == 0, sync
assert asyn["max_staleness"] == 2, asyn
assert s["staleness_bound_ok"] is True and s["steps_ok"] is True, s
assert abs(s["ratio"] - asyn["rollouts_per_s"] / sync["rollouts_per_s"]) <= 1e-3 * s["ratio"], s
print(f"both modes trained {steps} steps; largest admitted staleness: sync 0, async {asyn['staleness_max']} (bound 2); "
      f"async / sync = {s['ratio']:.2f}")
CHECK
echo "test_bench_pipeline: ok"
