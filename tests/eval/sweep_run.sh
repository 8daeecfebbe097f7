# tests/eval/sweep_run.sh — sourced by the sweep tests (tests/eval/test_sweep.sh,
# tests/slurm/test_sweep_slurm.sh): make_sweep_run RLVR DIR trains the tiny
# arith run of tests/jobs/test_train.sh (rlvr sft, then rlvr train for 6
# steps with a checkpoint every 2) into DIR/a: checkpoints at steps 2, 4 and
# 6, and its checked pool DIR/a/pool (32 train, 8 eval tasks) with its
# manifest. SFT runs 600 steps at τ = 0.5 so the policy solves part of its
# train tasks (it memorises them; held-out ones stay at 0): the sweeps
# evaluate --split train, where pass@k and its intervals are not all 0.
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tiny_run.sh"
make_sweep_run() {
  local rlvr=$1 d=$2
  tiny_ini "$d/run.ini" sft sampler.temperature=0.5 sft.steps=600 train.steps=6
  "$rlvr" sft "$d/run.ini" --out "$d/a" > "$d/sft.log" 2>&1 || { cat "$d/sft.log"; echo "FAIL: sft"; return 1; }
  "$rlvr" train "$d/run.ini" --out "$d/a" > "$d/train.log" 2>&1 || { cat "$d/train.log"; echo "FAIL: train"; return 1; }
  local n
  n=$(ls "$d"/a/checkpoints/step_*.h5 | wc -l)
  [ "$n" = 3 ] || { ls "$d/a/checkpoints"; echo "FAIL: $n checkpoints, expected 3"; return 1; }
}
