#!/usr/bin/env bash
# A run survives environments that fail: a validated bugfix-c pool whose
# task repository disappears afterwards (the workspace sandbox cannot be
# built) still trains to its last step; those rollouts are counted as infra
# errors and excluded from the loss, never scored as failures.
# Usage: test_train_faults.sh RLVR PYTHON
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive
tiny_tmpdir

"$RLVR" tasks gen bugfix-c --n 3 --seed 5 --out "$dir/pool" > /dev/null
"$RLVR" tasks check "$dir/pool" --runs 1 > "$dir/check.log" 2>&1 || { cat "$dir/check.log"; fail "check"; }
victim=$(ls "$dir/pool/repos" | head -1)
rm -rf "$dir/pool/repos/$victim" && git init -q "$dir/pool/repos/$victim" # a repository without the base commit

tiny_ini "$dir/run.ini" scratch run.name=f run.seed=1 model.max_seq=2048 sampler.kv_slots=8 sampler.context_tokens=2048 \
  sampler.max_new_tokens=16 -tasks tasks.pool="$dir/pool" harness.tool_prompt=compact harness.max_turns=2 \
  harness.max_policy_tokens=32 harness.max_context_tokens=2048 reward.max_tokens=1024 reward.length_budget=512 \
  reward.length_slope=0.01 grpo.group_size=2 grpo.groups_per_step=3 dynamic_sampling.max_rounds=1 train.steps=2 -checkpoint

"$RLVR" train "$dir/run.ini" > "$dir/train.log" 2>&1 || { cat "$dir/train.log"; fail "train did not survive a broken environment"; }
grep -q "train step 2/2" "$dir/train.log" || fail "no last step"
"$PY" - "$dir/f/metrics.h5" <<'EOF' || { cat "$dir/train.log"; fail "infra errors not counted"; }
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    g = f["steps"] if "steps" in f else f
    infra = np.asarray(g["infra_errors"][()])
assert np.nansum(infra) > 0, infra
print("infra errors counted per step:", infra)
EOF
echo "test_train_faults: ok"
