#!/usr/bin/env bash
# rlvr quickstart end to end on a tiny arithmetic configuration:
#   - it writes quickstart.ini, eval_sft.json, eval_rl.json and summary.json;
#   - stderr has one "quickstart: <stage> done in N s" line per stage;
#   - summary.json holds the pass rates, the paired difference with its
#     interval (low ≤ mean ≤ high), the task and sample counts, and the wall
#     seconds of every stage;
#   - a second invocation resumes: no SFT or RL step is trained again.
# Usage: test_quickstart_run.sh RLVR PYTHON
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
export OMP_WAIT_POLICY=passive
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"

tiny_ini "$dir/q.ini" sft run.name=q run.seed=5 tasks.eval_count=12 sft.steps=6 grpo.groups_per_step=2 \
    dynamic_sampling.max_rounds=1 train.steps=2 -checkpoint.keep quickstart.eval_samples=2

"$RLVR" quickstart --config "$dir/q.ini" --out "$dir/run" > "$dir/out1" 2> "$dir/err1" ||
    { cat "$dir/err1"; fail "quickstart"; }
for f in quickstart.ini eval_sft.json eval_rl.json summary.json; do
    [ -f "$dir/run/$f" ] || fail "no $f"
done
cmp -s "$dir/q.ini" "$dir/run/quickstart.ini" || fail "quickstart.ini is not the given configuration"
for stage in pool sft rl eval_sft eval_rl; do
    grep -q "^quickstart: $stage done in [0-9]* s$" "$dir/err1" || { cat "$dir/err1"; fail "no progress line for $stage"; }
done
grep -q "RL − SFT pass@1" "$dir/out1" || { cat "$dir/out1"; fail "no before/after table"; }
grep -q "^wall time: " "$dir/out1" || { cat "$dir/out1"; fail "no wall-time line"; }
"$PY" - "$dir/run/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["n_tasks"] == 12 and s["samples_per_task"] == 2, s
for k in ("sft_pass1", "rl_pass1"):
    assert 0 <= s[k] <= 1, (k, s[k])
assert s["diff_ci_low"] <= s["diff_mean"] <= s["diff_ci_high"], s
assert abs(s["diff_mean"] - (s["rl_pass1"] - s["sft_pass1"])) < 1e-9, s
stages = s["phase_seconds"]
assert sorted(stages) == sorted(["pool", "sft", "rl", "eval_sft", "eval_rl"]), stages
assert all(v >= 0 for v in stages.values()), stages
assert sum(stages.values()) <= s["wall_minutes"] * 60 + 1e-6, (stages, s["wall_minutes"])
EOF

# A second invocation resumes: SFT and RL are finished, only evaluation runs
# again, with the same seeds and so the same pass rates.
cp "$dir/run/summary.json" "$dir/summary1.json"
"$RLVR" quickstart --config "$dir/q.ini" --out "$dir/run" > "$dir/out2" 2> "$dir/err2" ||
    { cat "$dir/err2"; fail "second quickstart"; }
if grep -qE "^(sft|train) step " "$dir/err2"; then cat "$dir/err2"; fail "the second invocation trained again"; fi
"$PY" - "$dir/summary1.json" "$dir/run/summary.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("sft_pass1", "rl_pass1", "diff_mean", "n_tasks"):
    assert a[k] == b[k], (k, a[k], b[k])
EOF
echo "test_quickstart_run: ok"
