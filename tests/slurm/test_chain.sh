#!/usr/bin/env bash
# tests/slurm/test_chain.sh RLVR [PYTHON] — `rlvr submit` on the real
# single-node Slurm of slurm/cluster.sh (docs/OPERATIONS.md "Slurm chains"):
#   chain A: SFT → train1 → gate1, train2 → gate2 (12 steps in 2 segments
#     of 3 MPI ranks each under srun --mpi=pmix, [checkpoint] keep = 2):
#     - a second `rlvr submit` while the chain is queued is refused;
#     - every job completes; each starts after its predecessors ended
#       (Slurm's start/end times) and checks their markers;
#     - segment 2 resumes from segment 1's checkpoint (step 6, kept for the
#       gate although keep = 2), the final checkpoint is bit-identical to one
#       uninterrupted local `rlvr train` from the same SFT checkpoint;
#     - both gates pass: <run>/promoted names step 12; `rlvr status` shows
#       it all; submitting again finds nothing to do;
#   chain B (SFT finished before: skipped; [gate] tolerance = -0.5):
#     - `rlvr cancel` right after submission cancels its jobs, `rlvr status`
#       says so; submitting again continues the chain;
#     - the gate rejects: no promoted file, the gate job FAILED (exit 1),
#       status shows "reject".
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
# shellcheck source=tests/slurm/chain_common.sh
source "$(dirname "$0")/chain_common.sh"

# ---- chain A ----
write_run_ini "$dir/a.ini" 12 2 2
# [layout] in the file: each segment is 3 MPI ranks under srun --mpi=pmix
# (the same values run as one process locally: the reference run below)
printf '\n[layout]\ntrainer = 1\nverifier = 1\nrollout = 1\n' >> "$dir/a.ini"
printf '\n[gate]\ncompliance_min = 0\n\n[slurm]\nsegments = 2\n' >> "$dir/a.ini"
A=$dir/$tag-a
"$RLVR" submit "$dir/a.ini" --out "$A" > "$dir/a.submit" 2>&1 || { cat "$dir/a.submit"; fail "submit A"; }
ids=$(ids_of "$A")
[ "$(tr ',' '\n' <<< "$ids" | wc -l)" = 5 ] || fail "chain A: 5 jobs expected, got $ids"
for p in sft train1 gate1 train2 gate2; do
  grep -q "^submitted $p .*job $(id_of "$A" "$p") " "$dir/a.submit" || fail "submit did not print $p's job id"
done

# the chain is queued (gate2 cannot start before everything else ended): refused
set +e
"$RLVR" submit "$dir/a.ini" --out "$A" > "$dir/a.resubmit" 2>&1
code=$?
set -e
[ $code = 1 ] && grep -q "still queued or running" "$dir/a.resubmit" && grep -q "gate2 (job $(id_of "$A" gate2)" "$dir/a.resubmit" \
  || { cat "$dir/a.resubmit"; fail "resubmission of a live chain: exit $code"; }

wait_gone "$ids" || fail "chain A did not finish"
"$RLVR" status "$A" > "$dir/a.status" || fail "status A"
cat "$dir/a.status"
for p in sft train1 gate1 train2 gate2; do
  st=$(state_of "$(id_of "$A" $p)")
  [ "$st" = COMPLETED ] || { cat "$A"/chain/logs/*; fail "$p (job $(id_of "$A" $p)) did not complete: squeue says [$st]"; }
  grep -qE "^$p +$(id_of "$A" $p) +COMPLETED +0:0 " "$dir/a.status" || fail "status row of $p"
done
grep -qE '^gate1 .* pass$' "$dir/a.status" && grep -qE '^gate2 .* pass$' "$dir/a.status" || fail "gates did not pass"
grep -q "^promoted: $A/checkpoints/step_00000012.h5$" "$dir/a.status" || fail "status: promoted"
grep -q "^latest checkpoint: $A/checkpoints/step_00000012.h5$" "$dir/a.status" || fail "status: latest"
grep -q "^last metrics (metrics.h5): step 12 " "$dir/a.status" || fail "status: last metrics"
[ "$(cat "$A/promoted")" = "$A/checkpoints/step_00000012.h5" ] || fail "promoted: $(cat "$A/promoted")"

# dependencies held: each part started after the parts it waits for ended
after() { # PART PRED...
  local start pred_end
  start=$(times_of "$(id_of "$A" "$1")" | cut -d' ' -f1)
  for pred in "${@:2}"; do
    pred_end=$(times_of "$(id_of "$A" "$pred")" | cut -d' ' -f2)
    [[ ! "$start" < "$pred_end" ]] || fail "$1 started $start before $pred ended $pred_end"
  done
}
after train1 sft
after gate1 train1
after train2 train1
after gate2 train2 gate1
for p in train1 gate1 train2 gate2; do
  grep -q "^chain $p .*: start: " "$A/chain/logs/$p-$(id_of "$A" $p).log" || fail "$p log has no start line"
done

grep -qx "#SBATCH --ntasks=3" "$A/slurm/train1.sbatch" || fail "segment not 3 tasks"
for p in train1 train2; do
  grep -q "^train: 3 ranks: 1 trainer, 1 verifier, 1 rollout" "$A/chain/logs/$p-$(id_of "$A" $p).log" || fail "$p: not 3 ranks"
done

# segment 2 resumed from segment 1's checkpoint, which retention kept for the gate
grep -q "train: resuming from $A/checkpoints/step_00000006.h5" "$A/chain/logs/train2-$(id_of "$A" train2).log" \
  || { cat "$A/chain/logs/train2-"*.log; fail "segment 2 did not resume from step 6"; }
[ -f "$A/checkpoints/step_00000006.h5" ] && [ -f "$A/checkpoints/step_00000006.h5.keep" ] || fail "step 6 not kept"
[ ! -f "$A/checkpoints/step_00000008.h5" ] || fail "keep = 2 did not apply to other checkpoints"
grep -q "start: rlvr gate $A/checkpoints/step_00000006.h5 against $A/sft/checkpoints/step_00000030.h5" \
  "$A/chain/logs/gate1-$(id_of "$A" gate1).log" || fail "gate1 candidate/baseline"

reference_run "$dir/a.ini" "$A" "$dir/ref"
same_checkpoint "$dir/ref/checkpoints/step_00000012.h5" "$A/checkpoints/step_00000012.h5" \
  || fail "chain's final checkpoint differs from one uninterrupted run"

"$RLVR" submit "$dir/a.ini" --out "$A" > "$dir/a.again" 2>&1 || { cat "$dir/a.again"; fail "submit A again"; }
grep -q "is complete: nothing to submit" "$dir/a.again" || fail "finished chain resubmitted something"

# ---- chain B: SFT done, cancel + resubmit, failing gate ----
write_run_ini "$dir/b.ini" 4 2 0
printf '\n[gate]\ncompliance_min = 0\ntolerance = -0.5\n' >> "$dir/b.ini"
B=$dir/$tag-b
mkdir -p "$B/chain"
cp -r "$A/pool" "$A/pool.manifest.json" "$A/sft" "$B/"
cp "$A/chain/sft.done" "$B/chain/"
"$RLVR" submit "$dir/b.ini" --out "$B" > "$dir/b.submit" 2>&1 || { cat "$dir/b.submit"; fail "submit B"; }
grep -q "^skipping sft " "$dir/b.submit" || fail "finished SFT not skipped"
ids=$(ids_of "$B")
"$RLVR" cancel "$B" > "$dir/b.cancel" 2>&1 || { cat "$dir/b.cancel"; fail "cancel"; }
grep -q "^cancelled: .*gate1 ($(id_of "$B" gate1), " "$dir/b.cancel" || { cat "$dir/b.cancel"; fail "cancel output"; }
wait_gone "$ids" || fail "cancelled chain B still queued"
"$RLVR" status "$B" > "$dir/b.status1" || fail "status B"
grep -qE "^gate1 +$(id_of "$B" gate1) +CANCELLED" "$dir/b.status1" || { cat "$dir/b.status1"; fail "status after cancel"; }
"$RLVR" cancel "$B" | grep -q "nothing to cancel" || fail "second cancel"

"$RLVR" submit "$dir/b.ini" --out "$B" > "$dir/b.submit2" 2>&1 || { cat "$dir/b.submit2"; fail "resubmit B"; }
grep -q "^submitted train1 " "$dir/b.submit2" && grep -q "^submitted gate1 " "$dir/b.submit2" || fail "resubmission"
ids=$(ids_of "$B")
wait_gone "$ids" || fail "chain B did not finish"
"$RLVR" status "$B" > "$dir/b.status" || fail "status B"
cat "$dir/b.status"
grep -qE "^train1 +$(id_of "$B" train1) +COMPLETED .* done$" "$dir/b.status" || fail "B train1"
grep -qE "^gate1 +$(id_of "$B" gate1) +FAILED +1:0 .* reject$" "$dir/b.status" || fail "status does not show the rejection"
grep -q "^promoted: none$" "$dir/b.status" || fail "status: promoted"
[ ! -e "$B/promoted" ] || fail "a rejected gate promoted $(cat "$B/promoted")"
grep -q "^reject $B/checkpoints/step_00000004.h5" "$B/chain/gate1.done" || fail "gate1 marker: $(cat "$B/chain/gate1.done")"
grep -q "rejected: $B/checkpoints/step_00000004.h5 not promoted" "$B/chain/logs/gate1-$(id_of "$B" gate1).log" \
  || fail "gate1 log"
echo "test_chain: ok"
