#!/usr/bin/env bash
# A run that starts from an imported model ([pretrained] checkpoint), one
# process, on a tiny Hugging Face chat model made by the test (a byte-level
# BPE tokenizer with ChatML markers and SmolLM2's chat template, random
# float32 weights):
#   - `rlvr model import` stores the model, its tokenizer and its chat
#     family (chatml) and template;
#   - `rlvr sft` and `rlvr train` use the model's shape, weights, tokenizer
#     and chat format, not [model]'s shape keys nor [tokenizer]: their
#     checkpoints hold 2 layers and vocabulary 320 (the run's [model] says 1
#     layer), the same tokenizer.json and template, and SFT starts from the
#     imported weights (4 small steps move w_up by under 5 % of its scale;
#     a fresh random model would differ entirely);
#   - `rlvr eval` and `rlvr agent` read it all from the run's checkpoint,
#     and the agent's prompt is ChatML;
#   - refused, naming what to change: [tokenizer] kind = bpe with a
#     pretrained checkpoint, [template] family = llama3 on a vocabulary
#     without Llama 3's markers, an import with --template native, an
#     import of a directory without tokenizer.json.
# Usage: test_pretrained_run.sh RLVR PYREF_PYTHON TEMPLATES_DIR
set -euo pipefail
RLVR=$1
PY=$2
TEMPLATES=$3
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive
tiny_tmpdir

"$PY" "$(dirname "$0")/make_tiny_chat_model.py" "$dir/hf" "$TEMPLATES/smollm2.jinja" > "$dir/make.log" 2>&1 ||
  { cat "$dir/make.log"; fail "making the HF model"; }
"$RLVR" model import "$dir/hf" --out "$dir/pre.h5" > "$dir/import.log" 2>&1 || { cat "$dir/import.log"; fail "import"; }

tiny_ini "$dir/run.ini" sft "pretrained.checkpoint=$dir/pre.h5" sft.steps=4 sft.lr=1e-4 train.steps=2 \
  harness.max_policy_tokens=16 sampler.max_new_tokens=16
"$RLVR" sft "$dir/run.ini" --out "$dir/run" > "$dir/sft.log" 2>&1 || { cat "$dir/sft.log"; fail "sft"; }
"$RLVR" train "$dir/run.ini" --out "$dir/run" > "$dir/train.log" 2>&1 || { cat "$dir/train.log"; fail "train"; }
ck=$dir/run/checkpoints/step_00000002.h5
sft_ck=$(ls "$dir"/run/sft/checkpoints/step_*.h5 | tail -1)
"$PY" - "$dir/pre.h5" "$sft_ck" "$ck" "$dir/hf/tokenizer.json" "$TEMPLATES/smollm2.jinja" << 'PYEOF' || fail "checkpoints"
import sys, h5py, numpy as np
pre, sft, rl, tok_json, template = sys.argv[1:6]
def text(d):
    v = d[()]
    v = v[0] if getattr(v, "shape", ()) else v
    return v.decode() if isinstance(v, bytes) else v
with h5py.File(pre) as p:
    want_json = text(p["tokenizer/json"])
    assert want_json == open(tok_json).read(), "import: tokenizer.json not kept verbatim"
for path in (sft, rl):
    with h5py.File(path) as f:
        m = f["model"].attrs
        assert int(m["n_layers"]) == 2 and int(m["vocab"]) == 320 and int(m["d_model"]) == 32, dict(m)
        t = f["tokenizer"]
        kind = t.attrs["kind"]
        assert kind in (b"hf", "hf"), kind
        assert t.attrs["chat_family"] in (b"chatml", "chatml"), t.attrs["chat_family"]
        assert text(t["json"]) == want_json, path
        assert text(t["chat_template"]) == open(template).read(), path
with h5py.File(pre) as p, h5py.File(sft) as s:
    # transformers initialises norms to 1.0 as rlvr does: a matrix tells the weights apart
    wa, wb = p["model/params/w_up"][()], s["model/params/w_up"][()]
    rel = np.abs(wa - wb).max() / np.abs(wa).max()
    assert rel < 0.05, f"SFT did not start from the imported weights (relative change {rel})"
print(f"pretrained run: sft and train checkpoints hold the imported model (2 layers, vocab 320), its tokenizer "
      f"and ChatML template; SFT moved w_up by {rel:.4f} of its scale")
PYEOF

"$RLVR" eval --checkpoint "$ck" --pool "$dir/run/pool" --samples 1 > "$dir/eval.txt" 2> "$dir/eval.err" ||
  { cat "$dir/eval.err"; fail "eval of the pretrained run's checkpoint"; }
task=$(ls "$dir"/run/pool/arith-eval-*.json | head -1)
"$RLVR" agent --task "$task" --checkpoint "$ck" --no-color > "$dir/agent.txt" 2>&1 || { cat "$dir/agent.txt"; fail "agent"; }
grep -q "<|im_start|>" "$dir/agent.txt" || { cat "$dir/agent.txt"; fail "agent: the prompt is not ChatML"; }
echo "eval and agent read the pretrained run's checkpoint"

# ---- refusals ----
tiny_ini "$dir/bpe.ini" sft "pretrained.checkpoint=$dir/pre.h5" tokenizer.kind=bpe
if "$RLVR" sft "$dir/bpe.ini" --out "$dir/b" > "$dir/b.log" 2>&1; then fail "bpe with a pretrained model"; fi
expect_fail "bpe with a pretrained model" "$dir/b.log" "[pretrained] checkpoint brings the model's own"
tiny_ini "$dir/l3.ini" sft "pretrained.checkpoint=$dir/pre.h5" template.family=llama3
if "$RLVR" sft "$dir/l3.ini" --out "$dir/c" > "$dir/c.log" 2>&1; then fail "llama3 on a ChatML vocabulary"; fi
expect_fail "llama3 on a ChatML vocabulary" "$dir/c.log" "needs the token <|begin_of_text|>"
if "$RLVR" model import "$dir/hf" --out "$dir/native.h5" --template native > "$dir/n.log" 2>&1; then
  fail "import with --template native"
fi
expect_fail "import with --template native" "$dir/n.log" "--template native renders rlvr's own special tokens"
mkdir -p "$dir/notok" && cp "$dir/hf/config.json" "$dir/hf/model.safetensors" "$dir/notok/"
if "$RLVR" model import "$dir/notok" --out "$dir/notok.h5" > "$dir/d.log" 2>&1; then fail "import without tokenizer"; fi
expect_fail "import without tokenizer.json" "$dir/d.log" "tokenizer.json does not exist"
[ ! -e "$dir/notok.h5" ] || fail "a failed import left $dir/notok.h5"
echo "test_pretrained_run: ok"
