#!/usr/bin/env bash
# `rlvr inspect` on every kind of file: summaries, a rendered rollout with
# policy / observation markers (and colours when asked), --verify, and clear
# refusals of a corrupt, a missing and a foreign file.
# Usage: test_inspect.sh RLVR IO_WRITE_SAMPLES WORKDIR
set -u
rlvr=$1 samples=$2 work=$3
fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
rm -rf "$work" && mkdir -p "$work"
mapfile -t files < <(SLURM_JOB_ID=4242 "$samples" "$work")
shard=${files[0]} ckpt=${files[1]} metrics=${files[2]} manifest=${files[3]}

out=$("$rlvr" inspect "$shard" --rollout 1 --no-color --verify); rc=$?
check "shard: exit 0" test $rc = 0
check "shard: header" grep -q "rollout shard, format 1: step 5, rank 1" <<<"$out"
check "shard: table row" grep -qE "^ +1 +task-000 +1000 +1 " <<<"$out"
check "shard: verdict counts" grep -q "verdicts: none 2 pass 2 fail 2" <<<"$out"
check "shard: rendered rollout" grep -q "── rollout 1: task task-000, group 1000, index 1" <<<"$out"
check "shard: verdict line" grep -q "verdict pass (reason 1), stop max_tokens" <<<"$out"
check "shard: policy marker" grep -q "{{" <<<"$out"
check "shard: observation marker" grep -q "\[\[" <<<"$out"
check "shard: turn line" grep -q "tool edit_file exit -1" <<<"$out"
check "shard: verified" grep -q "every checksum matches" <<<"$out"
check "shard: no colour codes with --no-color" bash -c '! grep -q $'"'"'\033'"'"' <<<"$0"' "$out"
out=$("$rlvr" inspect "$shard" --rollout 2 --color --tokens)
check "shard: colour codes with --color" grep -q $'\033\[32m' <<<"$out"
check "shard: token listing" grep -qE "^ +[0-9]+ +[0-9]+ +policy " <<<"$out"
out=$("$rlvr" inspect "$shard" --rollout 99 2>&1); rc=$?
check "shard: out-of-range rollout refused" test $rc = 1
check "shard: out-of-range message" grep -q "rollout 99 does not exist" <<<"$out"

out=$("$rlvr" inspect "$ckpt" --config); rc=$?
check "checkpoint: exit 0" test $rc = 0
check "checkpoint: header" grep -q "checkpoint, format 1: step 3, policy version 3" <<<"$out"
check "checkpoint: model" grep -q "model: vocab 40, d_model 16, 2 layers" <<<"$out"
check "checkpoint: tensors" grep -q "/model/params/wq" <<<"$out"
check "checkpoint: state" grep -q "/state/difficulty/table" <<<"$out"
check "checkpoint: config" grep -q "name = sample" <<<"$out"

out=$("$rlvr" inspect "$metrics" --rows 2); rc=$?
check "metrics: exit 0" test $rc = 0
check "metrics: rows" grep -q "metrics table: 30 rows, steps 1 .. 30" <<<"$out"
check "metrics: column" grep -qE "^ +reward_mean +30 +3 " <<<"$out"
check "metrics: last rows" grep -q "step 30: reward_mean=3 loss=0.0333333" <<<"$out"

out=$("$rlvr" inspect "$manifest"); rc=$?
check "manifest: exit 0" test $rc = 0
check "manifest: commit" grep -qE "git_commit +([0-9a-f]{40}|unknown)" <<<"$out"
check "manifest: versions" grep -q "hdf5_version" <<<"$out"
check "manifest: slurm" grep -qE "SLURM_JOB_ID +4242" <<<"$out"
check "manifest: hosts" grep -q "nodeA, nodeB" <<<"$out"

# a flipped byte inside a chunk of /tokens/logprob
/usr/bin/python3 - "$shard" "$work/bad.h5" <<'PY'
import sys, h5py
src, dst = sys.argv[1], sys.argv[2]
with h5py.File(src, "r") as f:
    info = f["tokens/logprob"].id.get_chunk_info(0)
data = bytearray(open(src, "rb").read())
data[info.byte_offset + info.size // 2] ^= 0xFF
open(dst, "wb").write(data)
PY
out=$("$rlvr" inspect "$work/bad.h5" 2>&1); rc=$?
check "corrupt: exit 1" test $rc = 1
check "corrupt: names the dataset and the checksum" grep -q "tokens/logprob: stored data failed its checksum" <<<"$out"
head -c 5000 "$shard" >"$work/cut.h5"
out=$("$rlvr" inspect "$work/cut.h5" 2>&1); rc=$?
check "truncated: exit 1" test $rc = 1
check "truncated: message" grep -q "truncated" <<<"$out"
out=$("$rlvr" inspect "$work/none.h5" 2>&1); rc=$?
check "missing: exit 1" test $rc = 1
check "missing: message" grep -q "No such file" <<<"$out"
echo "not hdf5" >"$work/x.txt"
out=$("$rlvr" inspect "$work/x.txt" 2>&1); rc=$?
check "foreign: refused" test $rc = 1
check "foreign: message" grep -q "no HDF5 signature" <<<"$out"
"$rlvr" inspect >/dev/null 2>&1; rc=$?
check "no file: usage exit 2" test $rc = 2

rm -rf "$work"
[ $fail = 0 ] && echo "test_inspect: all checks passed"
exit $fail
