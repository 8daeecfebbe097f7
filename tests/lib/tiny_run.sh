# shellcheck shell=bash
# tests/lib/tiny_run.sh — sourced by the integration tests that train tiny
# runs (tests/jobs/test_train*.sh, test_report.sh, test_bench_pipeline.sh,
# tests/slurm/chain_common.sh, tests/eval/sweep_run.sh):
#   . "$(dirname "$0")/../lib/tiny_run.sh"
# It defines functions only; the test keeps its own `set -euo pipefail` and
# OMP_* exports.
#
# fail MSG...
#   Prints "FAIL: MSG" and exits 1.
# expect_fail WHAT LOG TEXT
#   Fails (printing LOG) unless LOG holds TEXT: a refusal's message.
# tiny_tmpdir
#   Sets dir to a new temporary directory, removed when the shell exits.
# tiny_ini FILE PRESET [OVERRIDE...]
#   Writes a tiny run configuration to FILE; [run] out_dir is FILE's
#   directory. PRESET is one of
#     sft      arith (32 train, 8 eval tasks, checked once), seed 3: rlvr sft
#              30 steps, then 12 synchronous GRPO steps from the SFT
#              checkpoint, a checkpoint every 2 steps, all kept;
#     scratch  arith (32 train, no eval tasks), seed 11: 8 GRPO steps from
#              random weights, a checkpoint every step, all kept (the MPI
#              tests' run);
#     bugfix   scratch on 4 bugfix-c tasks with the quickstart's tools
#              (read_file, replace_in_file, submit) and compact prompt, 6
#              turns, a 1536-token context, 8 KV slots, seed 5: 40 sft steps,
#              then 2 GRPO steps (G = 2, 2 groups, one round) from the SFT
#              checkpoint, every checkpoint kept;
#   both: d_model 32, 1 layer, 2 heads, 256-token context, 4 groups of 4;
#     eval     [harness] and [sampler] only, for `rlvr eval` / `rlvr gate`
#              --config (2 turns, 1024-token context, 4 KV slots).
#   Each OVERRIDE, applied in order:
#     SECTION.KEY=VALUE  replaces KEY's value, or adds KEY at the end of
#                        SECTION (a new SECTION goes at the end of the file);
#     -SECTION.KEY       removes KEY;
#     -SECTION           removes every key of SECTION.
#   A section left without keys is not written. Overrides replace values,
#   so no key is ever written twice (the config parser refuses that).
# mpi_env
#   Exports what Open MPI needs here: running as root, oversubscribed ranks,
#   shared memory without single-copy (containers).
# mpi NP ARGS...
#   Runs "$MPIRUN" --oversubscribe -np NP "$RLVR" ARGS... (MPIRUN and RLVR
#   set by the test).
# rank_pid PID RANK
#   Prints the pid of MPI rank RANK among the descendants of process PID.
# wait_checkpoint PID RUN_DIR
#   Waits (bounded: 1500 polls of 20 ms) until RUN_DIR has a checkpoint;
#   status 1 when process PID ended first or the polls ran out.
# mpi_test_init RLVR [MPIEXEC [PYTHON]]
#   The MPI tests' start: sets RLVR, MPIRUN (default mpirun) and PY (default
#   /usr/bin/python3), exports OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 and
#   mpi_env, and makes dir (tiny_tmpdir).
# sigterm_and_resume NP INI RUN RANK WHO
#   `mpi NP train INI --out RUN` in the background; as soon as its first
#   checkpoint exists, SIGTERM to MPI rank RANK (looked up before; WHO
#   names it in messages, e.g. "rollout rank"). The job must exit 3 with
#   "stopped by signal 15 after a checkpoint", before INI's last [train]
#   step; then `--resume` on NP ranks must finish and say where it resumed
#   from. Logs: RUN1.log, RUN2.log.
# same_checkpoints [--config] REF OTHER...
#   Every dataset of each OTHER checkpoint equal to REF's bit for bit
#   (tests/lib/same_checkpoints.py, run with "$PY"); run/config is compared
#   only with --config.

tiny_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() {
  echo "FAIL: $*"
  exit 1
}

expect_fail() {
  grep -qF -- "$3" "$2" || { cat "$2"; fail "$1: the message lacks [$3]"; }
}

tiny_tmpdir() {
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
}

# tiny_preset OUT_DIR PRESET: the preset's text.
tiny_preset() {
  case $2 in
    sft)
      cat << EOF
[run]
name = a
out_dir = $1
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
steps = 30
batch_sequences = 8
lr = 3e-3

[grpo]
group_size = 4
groups_per_step = 4

[dynamic_sampling]
max_rounds = 2

[train]
steps = 12

[checkpoint]
every = 2
keep = 0
EOF
      ;;
    eval)
      cat << EOF
[harness]
max_turns = 2
max_policy_tokens = 128
max_context_tokens = 1024

[sampler]
kv_slots = 4
EOF
      ;;
    *)
      echo "tiny_ini: unknown preset '$2' (sft, scratch or eval)" >&2
      return 2
      ;;
  esac
}

# scratch: the sft preset without SFT, eval tasks or length limits of its own
tiny_scratch_overrides=(run.seed=11 -sampler.kv_slots -sampler.max_new_tokens tasks.eval_count=0 -tasks.check_runs
  -harness.max_turns harness.max_policy_tokens=64 -reward.format_weight -sft train.steps=8 train.init=scratch
  checkpoint.every=1)

# bugfix: scratch on bugfix-c tasks verified in enclaves (after a short sft)
tiny_bugfix_overrides=(run.seed=5 model.max_seq=1536 sampler.kv_slots=8 sampler.context_tokens=1536
  tasks.family=bugfix-c tasks.train_count=4 tasks.check_runs=1 tasks.tools=read_file,replace_in_file,submit
  harness.tool_prompt=compact harness.max_turns=6 harness.max_policy_tokens=64 harness.max_context_tokens=1536
  reward.max_tokens=1024 reward.length_budget=768 reward.length_slope=0.01 sft.steps=40 sft.batch_sequences=8
  sft.lr=3e-3 grpo.group_size=2 grpo.groups_per_step=2 dynamic_sampling.max_rounds=1 train.steps=2 train.init=sft
  -checkpoint.keep)

tiny_ini() {
  local file=$1 preset=$2 text
  shift 2
  if [ "$preset" = bugfix ]; then
    preset=scratch
    set -- "${tiny_bugfix_overrides[@]}" "$@"
  fi
  if [ "$preset" = scratch ]; then
    preset=sft
    set -- "${tiny_scratch_overrides[@]}" "$@"
  fi
  text=$(tiny_preset "$(dirname "$file")" "$preset") || return
  # the overrides go in one per line (values hold no newline)
  awk -v overrides="$(printf '%s\n' "$@")" '
    function add_key(s, k) {
      if (!(s in nkeys)) { sections[++nsections] = s; nkeys[s] = 0 }
      if (!((s, k) in value)) keys[s, ++nkeys[s]] = k
    }
    /^\[.*\]$/ { cur = substr($0, 2, length($0) - 2); add_key(cur, ""); next }
    /^$/ { next }
    {
      eq = index($0, " = ")
      k = substr($0, 1, eq - 1)
      add_key(cur, k); value[cur, k] = substr($0, eq + 3); live[cur, k] = 1
    }
    END {
      n = split(overrides, ov, "\n")
      for (i = 1; i <= n; i++) {
        o = ov[i]
        if (o == "") continue
        if (substr(o, 1, 1) == "-") {
          o = substr(o, 2); dot = index(o, ".")
          if (dot) { live[substr(o, 1, dot - 1), substr(o, dot + 1)] = 0; continue }
          for (j = 1; j <= nkeys[o]; j++) live[o, keys[o, j]] = 0
          continue
        }
        eq = index(o, "="); dot = index(o, ".")
        if (!eq || !dot || dot > eq) { print "tiny_ini: bad override \"" o "\" (SECTION.KEY=VALUE)" > "/dev/stderr"; exit 2 }
        s = substr(o, 1, dot - 1); k = substr(o, dot + 1, eq - dot - 1)
        add_key(s, k); value[s, k] = substr(o, eq + 1); live[s, k] = 1
      }
      written = 0
      for (i = 1; i <= nsections; i++) {
        s = sections[i]; body = ""
        for (j = 1; j <= nkeys[s]; j++)
          if (keys[s, j] != "" && live[s, keys[s, j]]) body = body keys[s, j] " = " value[s, keys[s, j]] "\n"
        if (body == "") continue
        printf "%s[%s]\n%s", (written++ ? "\n" : ""), s, body
      }
    }' <<< "$text" > "$file"
}

mpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
}

mpi() {
  local np=$1
  shift
  "$MPIRUN" --oversubscribe -np "$np" "$RLVR" "$@"
}

rank_pid() {
  local queue=("$1") p r
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    r=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p' || true)
    if [ "$r" = "$2" ]; then
      echo "$p"
      return 0
    fi
    # shellcheck disable=SC2207 # pids: one word each
    queue+=($(pgrep -P "$p" || true))
  done
  return 1
}

wait_checkpoint() {
  for _ in $(seq 1 1500); do
    [ -f "$2/checkpoints/latest" ] && return 0
    kill -0 "$1" 2> /dev/null || return 1
    sleep 0.02
  done
  return 1
}

mpi_test_init() {
  RLVR=$1
  MPIRUN=${2:-mpirun}
  PY=${3:-/usr/bin/python3}
  export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
  mpi_env
  tiny_tmpdir
}

sigterm_and_resume() {
  local np=$1 ini=$2 run=$3 rank=$4 who=$5 job code last pid
  last=$(awk -F' = ' '/^\[/ { s = $0 } s == "[train]" && $1 == "steps" { print $2 }' "$ini")
  mpi "$np" train "$ini" --out "$run" > "${run}1.log" 2>&1 &
  job=$!
  # find the rank first: walking /proc under load can take longer than the
  # tiny run's remaining steps, so the signal goes out right at the checkpoint
  pid=""
  for _ in $(seq 1 1500); do
    pid=$(rank_pid $job "$rank") && break
    kill -0 $job 2> /dev/null || break
    sleep 0.02
  done
  [ -n "$pid" ] || { cat "${run}1.log"; fail "$who not found"; }
  wait_checkpoint $job "$run" || { cat "${run}1.log"; fail "no first checkpoint"; }
  kill -TERM "$pid" || fail "$who ended before the signal"
  set +e
  wait $job
  code=$?
  set -e
  [ $code -eq 3 ] || { cat "${run}1.log"; fail "SIGTERM run exited $code, not 3"; }
  grep -q "stopped by signal 15 after a checkpoint" "${run}1.log" || { cat "${run}1.log"; fail "no stop message"; }
  [ ! -f "$run/checkpoints/$(printf 'step_%08d.h5' "$last")" ] || fail "the SIGTERM run did not stop early"
  mpi "$np" train "$ini" --out "$run" --resume > "${run}2.log" 2>&1 || { cat "${run}2.log"; fail "resume"; }
  grep -q "resuming from" "${run}2.log" || fail "resume did not say where from"
}

same_checkpoints() {
  "$PY" "$tiny_lib_dir/same_checkpoints.py" "$@"
}
