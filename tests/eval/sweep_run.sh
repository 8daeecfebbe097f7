# tests/eval/sweep_run.sh — sourced by the sweep tests (tests/eval/test_sweep.sh,
# tests/slurm/test_sweep_slurm.sh): make_sweep_run RLVR DIR trains the tiny
# arith run of tests/jobs/test_train.sh (rlvr sft, then rlvr train for 6
# steps with a checkpoint every 2) into DIR/a: checkpoints at steps 2, 4 and
# 6, and its checked pool DIR/a/pool (32 train, 8 eval tasks) with its
# manifest. SFT runs 600 steps at τ = 0.5 so the policy solves part of its
# train tasks (it memorises them; held-out ones stay at 0): the sweeps
# evaluate --split train, where pass@k and its intervals are not all 0.
make_sweep_run() {
  local rlvr=$1 d=$2
  cat > "$d/run.ini" <<INI
[run]
name = a
out_dir = $d
seed = 3

[model]
d_model = 32
n_layers = 1
n_heads = 2
n_kv_heads = 1
d_ff = 64
max_seq = 256

[sampler]
kv_slots = 16
temperature = 0.5
context_tokens = 256
max_new_tokens = 32

[tasks]
family = arith
train_count = 32
eval_count = 8
regression_count = 0
check_runs = 1

[harness]
max_turns = 1
max_policy_tokens = 128
max_context_tokens = 256

[reward]
max_tokens = 128
length_budget = 96
length_slope = 0.05
format_weight = 0

[sft]
steps = 600
batch_sequences = 8
lr = 3e-3

[grpo]
group_size = 4
groups_per_step = 4

[dynamic_sampling]
max_rounds = 2

[train]
steps = 6

[checkpoint]
every = 2
keep = 0
INI
  "$rlvr" sft "$d/run.ini" --out "$d/a" > "$d/sft.log" 2>&1 || { cat "$d/sft.log"; echo "FAIL: sft"; return 1; }
  "$rlvr" train "$d/run.ini" --out "$d/a" > "$d/train.log" 2>&1 || { cat "$d/train.log"; echo "FAIL: train"; return 1; }
  local n
  n=$(ls "$d"/a/checkpoints/step_*.h5 | wc -l)
  [ "$n" = 3 ] || { ls "$d/a/checkpoints"; echo "FAIL: $n checkpoints, expected 3"; return 1; }
}
