#!/usr/bin/env bash
# tests/slurm/test_chain_preempt.sh RLVR [PYTHON] — preemption of a chain's
# RL segments on the real single-node Slurm (docs/OPERATIONS.md "Slurm
# chains"); SFT → train1 → train2, 160 steps, a checkpoint every 5:
#   - USR1 to train1's batch shell (`scancel --signal=USR1 --batch`, what
#     --signal=B:USR1@grace sends before the time limit): the shell forwards
#     it, rlvr finishes its step, checkpoints, exits 3, the job requeues
#     itself and resumes from exactly that checkpoint;
#   - `scontrol requeue` of running train2 (Slurm sends TERM): it resumes
#     from the last checkpoint the interrupted attempt wrote;
#   - train2 waited for train1's requeued attempt (it started after train1
#     ended for good); both jobs show Restarts=1;
#   - the metrics hold steps 1..160 once each, and the final checkpoint is
#     bit-identical to one uninterrupted local run from the same SFT.
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
# shellcheck source=tests/slurm/chain_common.sh
source "$(dirname "$0")/chain_common.sh"

steps=160
write_run_ini "$dir/p.ini" $steps 5 0
printf '\n[slurm]\nsegments = 2\ngate = false\n' >> "$dir/p.ini"
P=$dir/$tag-p
"$RLVR" submit "$dir/p.ini" --out "$P" > "$dir/submit.out" 2>&1 || { cat "$dir/submit.out"; fail "submit"; }
ids=$(ids_of "$P")
t1=$(id_of "$P" train1)
t2=$(id_of "$P" train2)
log1=$P/chain/logs/train1-$t1.log
log2=$P/chain/logs/train2-$t2.log

latest_step() { sed -n 's/^step_0*\([0-9][0-9]*\)\.h5$/\1/p' "$P/checkpoints/latest" 2> /dev/null || true; }
# wait_running JOB MIN_STEP: until JOB runs and the run's latest checkpoint is past MIN_STEP
wait_running() {
  for _ in $(seq 1 3000); do
    local s
    s=$(latest_step)
    [ "$(state_of "$1")" = RUNNING ] && [ -n "$s" ] && [ "$s" -gt "$2" ] && return 0
    case $(state_of "$1") in COMPLETED | FAILED | CANCELLED) return 1 ;; esac
    sleep 0.2
  done
  return 1
}
# wait_restarted LOG: until the log shows the requeued attempt's start line
wait_restarted() {
  for i in $(seq 1 1200); do
    grep -q "restart 1\] .*: start: " "$1" 2> /dev/null && return 0
    [ $((i % 40)) = 0 ] && kick
    sleep 0.25
  done
  return 1
}
# resumed_where_stopped LOG: the requeued attempt resumed from the last
# checkpoint the first attempt wrote (no step lost, none trained twice)
resumed_where_stopped() {
  local last resumed
  last=$(awk '/restart 1\] .*: start: /{exit} /^train: checkpoint /{c=$3} END{print c}' "$1")
  resumed=$(awk '/restart 1\] .*: start: /{on=1} on && /^train: resuming from /{print $4; exit}' "$1")
  [ -n "$last" ] && [ "$last" = "$resumed" ] || fail "$1: stopped at checkpoint '$last', resumed from '$resumed'"
  echo "$1: stopped after $last, resumed from it"
}

# ---- USR1 to train1 ----
wait_running "$t1" 4 || { cat "$log1"; fail "train1 finished or failed before it could be signalled"; }
scancel --signal=USR1 --batch "$t1"
wait_restarted "$log1" || { cat "$log1"; fail "train1 was not requeued after USR1"; }
grep -q "USR1: asking the job to checkpoint and stop" "$log1" || fail "the batch shell did not forward USR1"
grep -q "train: stopped by signal 10 after a checkpoint" "$log1" || { cat "$log1"; fail "rlvr did not stop on USR1"; }
grep -q "requeueing (restart 1 of at most 20)" "$log1" || fail "train1 did not requeue itself"

# ---- scontrol requeue of train2 ----
half=$((steps / 2))
wait_running "$t2" $((half + 5)) || { cat "$log2"; fail "train2 finished or failed before it could be requeued"; }
scontrol requeue "$t2"
wait_restarted "$log2" || { cat "$log2"; fail "train2 did not restart after scontrol requeue"; }

wait_gone "$ids" || fail "the chain did not finish"
"$RLVR" status "$P" > "$dir/status.out" || fail "status"
cat "$dir/status.out"
for p in sft train1 train2; do
  st=$(state_of "$(id_of "$P" $p)")
  [ "$st" = COMPLETED ] || { cat "$P"/chain/logs/*; fail "$p (job $(id_of "$P" $p)) did not complete: squeue says [$st]"; }
  [ -f "$P/chain/$p.done" ] || fail "no marker for $p"
done
for j in "$t1" "$t2"; do
  scontrol show job "$j" | grep -q "Restarts=1 " || fail "job $j: $(scontrol show job "$j" | grep -o 'Restarts=[0-9]*')"
done
resumed_where_stopped "$log1"
resumed_where_stopped "$log2"
grep -q "train: resuming from $P/checkpoints/step_00000080.h5" "$log2" || fail "train2 did not start from step 80"
t1_end=$(times_of "$t1" | cut -d' ' -f2)
t2_start=$(grep -m1 "^chain train2 .*: start: " "$log2" | sed 's/.*\] \([^ ]*\): start.*/\1/')
[[ ! "${t2_start%Z}" < "$t1_end" ]] || fail "train2 started ($t2_start) before requeued train1 ended ($t1_end)"

"$PY" - "$P/metrics.h5" $steps << 'EOF' || fail "metrics rows"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r", libver="latest", swmr=True) as f:
    steps = list(np.asarray(f["steps"]["step"][()]))
assert steps == list(range(1, int(sys.argv[2]) + 1)), steps
print("metrics: steps 1..%s, each once" % sys.argv[2])
EOF

reference_run "$dir/p.ini" "$P" "$dir/ref"
same_checkpoint "$dir/ref/checkpoints/step_00000160.h5" "$P/checkpoints/step_00000160.h5" \
  || fail "final checkpoint differs from the uninterrupted run"
echo "test_chain_preempt: ok"
