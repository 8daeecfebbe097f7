#!/usr/bin/env bash
# The KL penalty to a frozen reference ([grpo] kl_beta > 0, train/trainer.c) on a
# tiny arithmetic run that starts from a checkpoint (the reference = [train]
# init):
#   - the run finishes; the metrics' kl column is finite, >= 0, exactly 0 at
#     step 1 (the policy starts at the reference) and > 0 after; two runs are
#     bit-identical; at kl_beta = 0 the column is 0, no reference is loaded
#     and the weights differ from the beta > 0 run (the term is in the gradient);
#   - --until-step 3 then --resume ends bit-identical (the reference is reloaded
#     from its path, not from the checkpoint); resuming against another
#     reference is refused;
#   - 2 trainer ranks (the reference broadcast with the weights): the KL
#     column agrees with one rank to 1% (relative: the KL is small and the
#     gradient is summed in another float order).
# Usage: test_train_kl.sh RLVR MPIEXEC [PYTHON]
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
mpi_test_init "$@"
tiny_ini "$dir/run.ini" scratch train.steps=2

# base: two plain steps, whose checkpoints serve as [train] init (and reference)
base_ck=$dir/base/checkpoints/step_00000001.h5
klini() { tiny_ini "$dir/$3" scratch train.steps=6 grpo.kl_beta="$1" train.init="$2"; } # KL_BETA INIT FILE
"$RLVR" train "$dir/run.ini" --out "$dir/base" > "$dir/base.log" 2>&1 || { cat "$dir/base.log"; fail "base run"; }
klini 0.1 "$base_ck" kl.ini
klini 0 "$base_ck" kl0.ini
klini 0.1 "$dir/base/checkpoints/step_00000002.h5" kl_other.ini
printf '\n[layout]\ntrainer = 2\n' | cat "$dir/kl.ini" - > "$dir/kl_dp.ini"

# ---- beta > 0: finishes, the kl column, reproducible ----
for run in kla klb; do
  "$RLVR" train "$dir/kl.ini" --out "$dir/$run" > "$dir/$run.log" 2>&1 || { cat "$dir/$run.log"; fail "kl run $run"; }
done
grep -q "train: KL reference (kl_beta = 0.1): $base_ck, hash [0-9a-f]\{16\}" "$dir/kla.log" ||
  { cat "$dir/kla.log"; fail "the reference was not named"; }
"$RLVR" train "$dir/kl0.ini" --out "$dir/kl0" > "$dir/kl0.log" 2>&1 || { cat "$dir/kl0.log"; fail "kl_beta = 0 run"; }
if grep -q "KL reference" "$dir/kl0.log"; then fail "kl_beta = 0 loaded a reference"; fi
same_checkpoints "$dir/kla/checkpoints/step_00000006.h5" "$dir/klb/checkpoints/step_00000006.h5" ||
  fail "two kl_beta > 0 runs differ"
"$PY" - "$dir/kla" "$dir/klb" "$dir/kl0" <<'EOF' || fail "KL metrics"
import sys, h5py, numpy as np
def col(run, k):
    with h5py.File(f"{run}/metrics.h5", "r") as f:
        return f["steps"][k][()]
kl, kl2, kl0 = col(sys.argv[1], "kl"), col(sys.argv[2], "kl"), col(sys.argv[3], "kl")
assert len(kl) == 6 and np.all(np.isfinite(kl)) and np.all(kl >= 0), kl
assert kl[0] == 0.0, f"step 1 starts at the reference, KL {kl[0]}"
assert np.all(kl[1:] > 0), kl          # the policy moved away from the reference
assert kl.tobytes() == kl2.tobytes(), (kl, kl2)
assert np.all(kl0 == 0), kl0            # no reference: no KL term, 0
# the KL term is in the gradient: same data and start, other weights
with h5py.File(f"{sys.argv[1]}/checkpoints/step_00000006.h5", "r") as f, \
     h5py.File(f"{sys.argv[3]}/checkpoints/step_00000006.h5", "r") as g:
    diff = max(float(np.max(np.abs(f["model/params"][n][()].astype(np.float64) - g["model/params"][n][()])))
               for n in f["model/params"])
assert diff > 0, "kl_beta = 0.1 and 0 trained the same weights"
print("kl by step:", " ".join(f"{x:.3g}" for x in kl), f"; params vs beta = 0 differ by up to {diff:.2e}")
EOF
echo "kl_beta > 0: finishes, KL 0 at step 1 then > 0, finite, bit-identical twice, 0 at beta = 0"

# ---- resume: the reference is reloaded and checked ----
"$RLVR" train "$dir/kl.ini" --out "$dir/klr" --until-step 3 > "$dir/klr1.log" 2>&1 || { cat "$dir/klr1.log"; fail "until-step 3"; }
cp -r "$dir/klr" "$dir/klx"
"$RLVR" train "$dir/kl.ini" --out "$dir/klr" --resume > "$dir/klr2.log" 2>&1 || { cat "$dir/klr2.log"; fail "kl resume"; }
same_checkpoints "$dir/kla/checkpoints/step_00000006.h5" "$dir/klr/checkpoints/step_00000006.h5" ||
  fail "kl: resumed run differs from the uninterrupted one"
set +e
"$RLVR" train "$dir/kl_other.ini" --out "$dir/klx" --resume > "$dir/klx.log" 2>&1
code=$?
set -e
[ $code -ne 0 ] && grep -q "the KL reference changed since .*step_00000003.h5 was written" "$dir/klx.log" ||
  { cat "$dir/klx.log"; fail "a changed reference was not refused (exit $code)"; }
echo "kl_beta > 0: resume bit-identical; a changed reference refused"

# ---- 2 trainer ranks, the reference broadcast from the leader ----
mpi 4 train "$dir/kl_dp.ini" --out "$dir/kldp" > "$dir/kldp.log" 2>&1 || { cat "$dir/kldp.log"; fail "kl, 2 trainers"; }
"$PY" - "$dir/kla" "$dir/kldp" <<'EOF' || fail "kl with 2 trainer ranks is not close to one"
import sys, h5py, numpy as np
def col(run):
    with h5py.File(f"{run}/metrics.h5", "r") as f:
        return f["steps"]["kl"][()]
a, b = col(sys.argv[1]), col(sys.argv[2])
assert b[0] == 0.0 and np.all(b[1:] > 0) and np.all(np.abs(a - b) <= 1e-2 * a + 1e-12), (a, b)
print("kl, 1 vs 2 trainer ranks, largest relative difference:", float(np.max(np.abs(a - b)[1:] / a[1:])))
EOF
echo "kl_beta > 0 with 2 trainer ranks: KL within 1% of one rank"

echo "test_train_kl: ok"
