#!/usr/bin/env bash
# tests/slurm/test_submit_dry.sh RLVR SOURCE_DIR — `rlvr submit --dry-run`
# with no Slurm client on PATH:
#   - examples/slurm-multinode.ini renders SFT → 4 segments with gates: every
#     #SBATCH line carries the config's resources (4 nodes × 8 ranks for the
#     segments, one task for SFT and gates), USR1 lead time, requeue;
#     segments end at ⌊steps·k/segments⌋; dependencies are afterany with
#     --kill-on-invalid-dep; scripts are valid bash with no @KEY@ left;
#     config.ini is a copy; no jobs.tsv is written;
#   - a finished part (its marker) is skipped and its successor has no
#     dependency;
#   - launcher = none runs rlvr in the batch shell with one task;
#   - bad [slurm] settings are usage errors naming the key.
set -euo pipefail
RLVR=$1
SRC=$2
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir "$dir/empty"
# no sbatch, squeue, ...: a dry run must not need them
submit() { env PATH="$dir/empty" "$RLVR" submit "$@"; }

"$RLVR" config check "$SRC/examples/slurm-multinode.ini" > /dev/null || fail "rlvr config check on the example"

run=$dir/mn
submit "$SRC/examples/slurm-multinode.ini" --out "$run" --dry-run > "$dir/dry.out" 2> "$dir/dry.err" \
  || { cat "$dir/dry.out" "$dir/dry.err"; fail "dry run"; }
for p in sft train1 gate1 train2 gate2 train3 gate3 train4 gate4; do
  [ -x "$run/slurm/$p.sbatch" ] || fail "no executable script for $p"
  bash -n "$run/slurm/$p.sbatch" || fail "$p.sbatch is not valid bash"
  ! grep -nE '@[A-Za-z_][A-Za-z0-9_]*@' "$run/slurm/$p.sbatch" || fail "$p.sbatch keeps a placeholder"
done
[ ! -e "$run/chain/jobs.tsv" ] || fail "a dry run wrote jobs.tsv"
cmp -s "$SRC/examples/slurm-multinode.ini" "$run/config.ini" || fail "config.ini is not a copy of the config"

# the #SBATCH lines of a segment, in order
sbatch_lines() { grep '^#SBATCH' "$run/slurm/$1.sbatch" | sed 's/^#SBATCH //'; }
expected_common="--requeue
--cpus-per-task=4
--mem=200G
--time=04:00:00
--partition=cpu
--account=rlvr
--exclusive"
check_lines() { # PART EXPECTED-LINES...
  local part=$1
  shift
  local got
  got=$(sbatch_lines "$part")
  for want in "$@" $expected_common; do
    grep -qxF -- "$want" <<< "$got" || { echo "$got"; fail "$part: no #SBATCH $want"; }
  done
}
check_lines train2 "--job-name=mn.train2" "--output=$run/chain/logs/train2-%j.log" "--open-mode=append" \
  "--chdir=$(pwd)" "--signal=B:USR1@600" "--nodes=4" "--ntasks-per-node=8"
check_lines sft "--job-name=mn.sft" "--signal=B:USR1@600" "--nodes=1" "--ntasks=1"
check_lines gate3 "--job-name=mn.gate3" "--nodes=1" "--ntasks=1"
# rlvr runs on CPUs: the example asks for no GPU and no GPU node
! grep -qiE -- '--gpus|--gres=gpu|--constraint' "$run"/slurm/*.sbatch || fail "the example asks for GPUs or a constraint"
! sbatch_lines gate3 | grep -q -- --signal || fail "a gate asks for USR1 (it keeps no checkpoint)"
# the #SBATCH block comes before the first command
first_cmd=$(grep -nvE '^(#|$)' "$run/slurm/train1.sbatch" | head -1 | cut -d: -f1)
last_sbatch=$(grep -n '^#SBATCH' "$run/slurm/train1.sbatch" | tail -1 | cut -d: -f1)
[ "$last_sbatch" -lt "$first_cmd" ] || fail "#SBATCH lines after the first command"

# segments: 2000 steps in 4 → ends 500, 1000, 1500, the last runs to [train] steps
for k in 1 2 3; do
  grep -q -- "--until-step $((500 * k))\$" "$run/slurm/train$k.sbatch" || fail "train$k does not end at $((500 * k))"
done
! grep -q -- "--until-step" "$run/slurm/train4.sbatch" || fail "the last segment has --until-step"
grep -q 'srun --mpi=pmix "$RLVR" train' "$run/slurm/train1.sbatch" || fail "segment not launched by srun --mpi=pmix"
grep -q "^CANDIDATE='$run/checkpoints/step_00001000.h5'" "$run/slurm/gate2.sbatch" || fail "gate2's candidate"
grep -q "^BASELINE_MODE=promoted" "$run/slurm/gate2.sbatch" || fail "gate baseline mode"
grep -q "^RLVR='$(readlink -f "$RLVR")'" "$run/slurm/sft.sbatch" || fail "scripts do not call this rlvr by absolute path"

# dependencies: ids in submission order DRYRUN-1..9
dep_of() { grep "$run/slurm/$1.sbatch\$" "$dir/dry.out" | grep '^dry-run:' | sed -n 's/.*--dependency=\([^ ]*\).*/\1/p'; }
[ -z "$(dep_of sft)" ] || fail "sft has a dependency"
[ "$(dep_of train1)" = "afterany:DRYRUN-1" ] || fail "train1 dependency: $(dep_of train1)"
[ "$(dep_of gate1)" = "afterany:DRYRUN-2" ] || fail "gate1 dependency: $(dep_of gate1)"
[ "$(dep_of train2)" = "afterany:DRYRUN-2" ] || fail "train2 dependency: $(dep_of train2)"
[ "$(dep_of gate2)" = "afterany:DRYRUN-4:DRYRUN-3" ] || fail "gate2 dependency: $(dep_of gate2)"
[ "$(grep -c -- '--kill-on-invalid-dep=yes' "$dir/dry.out")" = 8 ] || fail "--kill-on-invalid-dep missing"
grep -q "need_done train2$" "$run/slurm/gate2.sbatch" || fail "gate2 does not check train2's marker"
grep -q "need_done train1$" "$run/slurm/train2.sbatch" || fail "train2 does not check train1's marker"

# a finished part is skipped; its successor waits for nothing
echo "done job 1" > "$run/chain/sft.done"
submit "$SRC/examples/slurm-multinode.ini" --out "$run" --dry-run > "$dir/dry2.out" 2>&1 || { cat "$dir/dry2.out"; fail "dry run 2"; }
grep -q "^skipping sft " "$dir/dry2.out" || fail "finished sft not skipped"
grep "train1.sbatch\$" "$dir/dry2.out" | grep '^dry-run:' | grep -q -- --dependency && fail "train1 depends on a finished part"

# a one-process layout with launcher = none
base=$dir/base.ini
sed -n '/^\[run\]/,/^\[layout\]/p' "$SRC/examples/slurm-multinode.ini" | sed '$d' > "$base"
small=$dir/small.ini
{ cat "$base"; printf '[train]\nsteps = 10\n\n[slurm]\nlauncher = none\nsegments = 3\ngate = false\ntime = 30\n'
  printf 'gpus_per_node = 2\nextra = --constraint=avx512; --exclusive\n'; } > "$small"
submit "$small" --out "$dir/small" --dry-run > "$dir/small.out" 2>&1 || { cat "$dir/small.out"; fail "launcher none"; }
grep -q '^run_child  "$RLVR" train' "$dir/small/slurm/train1.sbatch" || fail "launcher none still uses srun"
grep -qx '#SBATCH --ntasks=1' "$dir/small/slurm/train1.sbatch" || fail "launcher none: not one task"
grep -qx '#SBATCH --time=30' "$dir/small/slurm/train1.sbatch" || fail "time"
# keys the example leaves out still reach every job's #SBATCH lines
for want in --gpus-per-node=2 --constraint=avx512 --exclusive; do
  grep -qx -- "#SBATCH $want" "$dir/small/slurm/train1.sbatch" || fail "launcher none: no #SBATCH $want"
  grep -qx -- "#SBATCH $want" "$dir/small/slurm/sft.sbatch" || fail "sft: no #SBATCH $want"
done
grep -q -- "--until-step 3\$" "$dir/small/slurm/train1.sbatch" && grep -q -- "--until-step 6\$" "$dir/small/slurm/train2.sbatch" \
  || fail "10 steps in 3 segments should end at 3, 6, 10"
[ ! -e "$dir/small/slurm/gate1.sbatch" ] || fail "gate = false still writes gates"

# refusals: exit 2, the key named
refuse() { # WHAT KEY-TEXT EXTRA-INI ([train] steps = 10 unless EXTRA has [train])
  local what=$1 key=$2
  { cat "$base"; grep -q '^\[train\]' <<< "$(printf '%b' "$3")" || printf '[train]\nsteps = 10\n'; printf '%b' "$3"; } > "$dir/bad.ini"
  set +e
  submit "$dir/bad.ini" --out "$dir/bad" --dry-run > "$dir/bad.out" 2>&1
  local code=$?
  set -e
  [ $code -eq 2 ] || { cat "$dir/bad.out"; fail "$what: exit $code, not 2"; }
  grep -q -- "$key" "$dir/bad.out" || { cat "$dir/bad.out"; fail "$what: message does not name $key"; }
}
refuse "segments > steps" "segments" '[slurm]\nsegments = 11\n'
refuse "bad time" "time" '[slurm]\ntime = 1:2:3:4\n'
refuse "grace >= time" "grace_s" '[slurm]\ntime = 00:01:00\ngrace_s = 60\n'
refuse "ranks != layout" "ntasks_per_node" '[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n[slurm]\nnodes = 2\nntasks_per_node = 3\n'
refuse "launcher none with ranks" "launcher" '[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n[slurm]\nlauncher = none\n'
refuse "baseline sft without sft" "baseline" '[train]\nsteps = 10\ninit = scratch\n[slurm]\ngate = true\n'
refuse "unknown key" "did you mean" '[slurm]\nsegment = 2\n'

# status of a run without a chain
set +e
"$RLVR" status "$dir/small" > "$dir/status.out" 2>&1
code=$?
set -e
[ $code -eq 1 ] && grep -q "has no chain" "$dir/status.out" || { cat "$dir/status.out"; fail "status without a chain: $code"; }
"$RLVR" submit --help | grep -q "usage: rlvr submit" || fail "submit --help"
"$RLVR" help | grep -q "rlvr submit" || fail "submit not in rlvr help"
echo "test_submit_dry: ok"
