# tests/slurm/chain_common.sh — sourced by test_chain.sh and
# test_chain_preempt.sh: the cluster (started with slurm/cluster.sh when it
# is not up, stopped at the end only when this test started it and nothing
# else is queued), a tiny arithmetic run (seconds per job), bounded waits on
# this test's own job ids, and the checkpoint comparison (tests/lib/tiny_run.sh).
# Expects RLVR and PY set; sets dir, src.
set -euo pipefail
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d)
started=0
own_ids=""   # every job this test submitted (chains' and scheduler kicks)
tag=rlvrchain$$ # run names (so job names) of this test: <tag>-a.train1, ...
cleanup() {
  local live
  live=$(live_of "$own_ids" 2> /dev/null || true)
  [ -z "$live" ] || scancel $(tr ',' ' ' <<< "$live") 2> /dev/null || true
  if [ $started = 1 ]; then
    for _ in $(seq 1 100); do
      [ -z "$(squeue -h 2> /dev/null)" ] && break
      sleep 0.2
    done
    [ -z "$(squeue -h 2> /dev/null)" ] && { bash "$src/slurm/cluster.sh" stop > /dev/null 2>&1 || true; }
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null; then
  echo "SKIP: needs root and Slurm (scripts/deps.sh: slurm-wlm, munge)"
  exit 77
fi
if ! bash "$src/slurm/cluster.sh" status > /dev/null 2>&1; then
  bash "$src/slurm/cluster.sh" start > "$dir/cluster.log" 2>&1 || { cat "$dir/cluster.log"; fail "cluster start"; }
  started=1
fi

# write_run_ini FILE STEPS EVERY KEEP: the tiny arithmetic run of
# tests/jobs/test_train.sh ([train] steps, [checkpoint] every and keep).
write_run_ini() {
  tiny_ini "$1" sft run.name=chain train.steps="$2" checkpoint.every="$3" checkpoint.keep="$4"
}

# ids_of RUN: the chain's job ids, comma-separated (and remembered for cleanup)
ids_of() {
  local ids
  ids=$(awk -F'\t' '$2 != "-" { printf "%s%s", (n++ ? "," : ""), $2 }' "$1/chain/jobs.tsv")
  own_ids=${own_ids:+$own_ids,}$ids
  echo "$ids"
}
# id_of RUN PART
id_of() { awk -F'\t' -v p="$2" '$1 == p { print $2 }' "$1/chain/jobs.tsv"; }

# live_of IDS: those of IDS still queued or running (squeue lists only those)
live_of() {
  [ -n "$1" ] || return 0
  squeue -h -j "$1" -o %i 2> /dev/null | paste -sd, - || true
}

# state_of ID: Slurm's state of one job (squeue keeps finished jobs MinJobAge s)
# An empty answer is squeue failing (slurmctld busy under load: "socket
# timed out"), never a job of this test, which Slurm keeps that long: ask again.
state_of() {
  local s="" try
  for try in 1 2 3 4 5; do
    s=$(squeue -h -t all -j "$1" -o %T 2> /dev/null || true)
    [ -n "$s" ] && break
    sleep 2
  done
  printf '%s\n' "$s"
}

# kick: a trivial job of this test; submitting it makes slurmctld run its
# main scheduling pass now, instead of up to 60 s (sched_interval) after a
# requeued job became eligible again (backfill does not start those here).
kick() {
  local k
  k=$(sbatch --parsable -J "$tag.kick" -o /dev/null --wrap true) || return 0
  own_ids=${own_ids:+$own_ids,}${k%%;*}
}

# wait_gone IDS [POLLS]: until none of IDS is queued or running (0.5 s polls);
# a job left pending is kicked every 20 polls.
wait_gone() {
  local ids=$1 polls=${2:-800} i=0
  while [ $i -lt "$polls" ]; do
    [ -z "$(live_of "$ids")" ] && return 0
    i=$((i + 1))
    if [ $((i % 20)) = 0 ] && squeue -h -j "$ids" -o %T 2> /dev/null | grep -q PENDING; then kick; fi
    sleep 0.5
  done
  squeue -j "$ids" || true
  return 1
}

# times_of ID: "START END" of a finished job (ISO 8601, seconds)
times_of() { squeue -h -t all -j "$1" -o "%S %e" 2> /dev/null || true; }

# same_checkpoint A B: every dataset of two checkpoint files (run/config too)
# equal byte for byte
same_checkpoint() { same_checkpoints --config "$1" "$2"; }

# reference_run CONFIG CHAIN_RUN OUT: one uninterrupted local `rlvr train`
# from the chain's own pool and SFT checkpoint.
reference_run() {
  mkdir -p "$3"
  cp -r "$2/pool" "$2/pool.manifest.json" "$2/sft" "$3/"
  rm -f "$3/sft/metrics.h5"
  "$RLVR" train "$1" --out "$3" > "$3.log" 2>&1 || { cat "$3.log"; fail "reference run"; }
}
