#!/usr/bin/env bash
# [tokenizer] kind = bpe on a tiny arithmetic run (one process):
#   - rlvr sft learns the merges from its demonstrations, says so, writes
#     <run>/tokenizer.json, and stores the tokenizer in every checkpoint
#     (the same merges, read back with h5py); the demonstrations are shorter
#     in ids than the byte tokenizer's;
#   - two runs learn the same tokenizer and end with bit-identical
#     checkpoints; --until-step then --resume ends bit-identical too;
#   - rlvr inspect names the tokenizer of a checkpoint and decodes a shard's
#     rollout with the run's tokenizer.json; rlvr eval and rlvr agent take
#     the tokenizer from the checkpoint;
#   - refused, naming what to change: a byte run starting from a BPE
#     checkpoint, RL in a BPE run with no tokenizer yet, [model] vocab too
#     small for the merges, a tokenizer.json that is not one.
# Usage: test_tokenizer_run.sh RLVR PYTHON
set -euo pipefail
RLVR=$1
PY=${2:-/usr/bin/python3}
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive
tiny_tmpdir
bpe=(tokenizer.kind=bpe tokenizer.merges=48 tokenizer.corpus_demos=24 model.vocab=315 train.steps=4)
tiny_ini "$dir/bpe.ini" sft "${bpe[@]}"

# ---- learning, files, determinism ----
for run in a b; do
  "$RLVR" sft "$dir/bpe.ini" --out "$dir/$run" > "$dir/sft_$run.log" 2>&1 || { cat "$dir/sft_$run.log"; fail "sft $run"; }
done
line=$(grep "sft: learned a BPE tokenizer of" "$dir/sft_a.log") || { cat "$dir/sft_a.log"; fail "no tokenizer learned"; }
echo "$line"
# "a demonstration takes X ids instead of Y": fewer ids than bytes
awk '{ for (i = 1; i <= NF; i++) if ($i == "takes") x = $(i + 1); else if ($i == "of" && $(i - 1) == "instead") y = $(i + 1) }
     END { exit !(x > 0 && x < y) }' <<< "$line" || fail "the BPE demonstrations are not shorter: $line"
[ -f "$dir/a/tokenizer.json" ] || fail "no tokenizer.json"
cmp -s "$dir/a/tokenizer.json" "$dir/b/tokenizer.json" || fail "two runs learned different tokenizers"
"$RLVR" train "$dir/bpe.ini" --out "$dir/a" > "$dir/train_a.log" 2>&1 || { cat "$dir/train_a.log"; fail "train a"; }
"$RLVR" train "$dir/bpe.ini" --out "$dir/b" --until-step 2 > "$dir/train_b1.log" 2>&1 || { cat "$dir/train_b1.log"; fail "train b to 2"; }
"$RLVR" train "$dir/bpe.ini" --out "$dir/b" --resume > "$dir/train_b2.log" 2>&1 || { cat "$dir/train_b2.log"; fail "train b resumed"; }
ck=$dir/a/checkpoints/step_00000004.h5
same_checkpoints "$ck" "$dir/b/checkpoints/step_00000004.h5" || fail "a BPE run stopped and resumed differs"
"$PY" - "$dir/a/tokenizer.json" "$ck" "$(ls "$dir"/a/sft/checkpoints/step_*.h5 | tail -1)" << 'EOF' || fail "stored tokenizer"
import json, sys, h5py, numpy as np
t = json.load(open(sys.argv[1]))
assert t["format"] == "rlvr-tokenizer/1" and t["kind"] == "bpe" and t["pieces"] == "rlvr-pieces/1", t
merges = np.array(t["merges"], dtype=np.int32)
assert 0 < len(merges) <= 48 and merges.shape[1] == 2, merges.shape
for path in sys.argv[2:]:
    with h5py.File(path, "r") as f:
        g = f["tokenizer"]
        assert g.attrs["kind"] in (b"bpe", "bpe"), g.attrs["kind"]
        assert np.array_equal(g["merges"][()], merges), path
print(f"tokenizer: {len(merges)} merges in tokenizer.json and both checkpoints")
EOF

# ---- the tools take the tokenizer from the checkpoint or the run ----
"$RLVR" inspect "$ck" > "$dir/inspect.txt" || fail "inspect checkpoint"
grep -q "^tokenizer: bpe ([0-9]* merges), [0-9]* ids" "$dir/inspect.txt" || { cat "$dir/inspect.txt"; fail "inspect: no tokenizer line"; }
"$RLVR" inspect "$dir/a/shards/step_00000004.rank_0000.h5" --rollout 0 > "$dir/shard.txt" ||
  { cat "$dir/shard.txt"; fail "inspect shard"; }
grep -q "tokens decoded with $dir/a/tokenizer.json" "$dir/shard.txt" || { cat "$dir/shard.txt"; fail "inspect: shard tokenizer"; }
grep -q "<|user|>" "$dir/shard.txt" || { cat "$dir/shard.txt"; fail "inspect: the rollout was not decoded"; }
"$RLVR" eval --checkpoint "$ck" --pool "$dir/a/pool" --samples 2 > "$dir/eval.txt" 2> "$dir/eval.err" ||
  { cat "$dir/eval.err"; fail "eval of a BPE checkpoint"; }
task=$(ls "$dir"/a/pool/arith-eval-*.json | head -1)
"$RLVR" agent --task "$task" --checkpoint "$ck" --no-color > "$dir/agent.txt" 2>&1 || { cat "$dir/agent.txt"; fail "agent"; }
grep -q "^==== end" "$dir/agent.txt" || { cat "$dir/agent.txt"; fail "agent: no end"; }
echo "inspect, eval and agent read the BPE checkpoint"

# ---- refusals ----
tiny_ini "$dir/byte.ini" sft train.steps=2 train.init="$ck"
if "$RLVR" train "$dir/byte.ini" --out "$dir/c" > "$dir/c.log" 2>&1; then fail "a byte run took a BPE checkpoint"; fi
expect_fail "byte run from a BPE checkpoint" "$dir/c.log" "uses the tokenizer bpe ("
tiny_ini "$dir/scratch.ini" scratch "${bpe[@]}"
if "$RLVR" train "$dir/scratch.ini" --out "$dir/d" > "$dir/d.log" 2>&1; then fail "RL without a tokenizer"; fi
expect_fail "RL in a BPE run without a tokenizer" "$dir/d.log" "has no tokenizer yet"
tiny_ini "$dir/small.ini" sft tokenizer.kind=bpe tokenizer.merges=48
if "$RLVR" sft "$dir/small.ini" --out "$dir/e" > "$dir/e.log" 2>&1; then fail "vocab too small"; fi
expect_fail "vocab too small" "$dir/e.log" "set vocab = 315"
mkdir -p "$dir/f" && echo '{"format": "rlvr-tokenizer/1"}' > "$dir/f/tokenizer.json"
if "$RLVR" sft "$dir/bpe.ini" --out "$dir/f" > "$dir/f.log" 2>&1; then fail "a broken tokenizer.json"; fi
expect_fail "broken tokenizer.json" "$dir/f.log" "$dir/f/tokenizer.json: not a tokenizer file"
echo "test_tokenizer_run: ok"
