"""`rlvr model info` on SmolLM2-135M-Instruct, against what gguf-py and h5py
read from the files:

    check_smollm2_info.py RLVR GGUF_FILE CHECKPOINT

The GGUF file: context (llama.context_length), parameters (the sum of its
tensors' elements, shown as "134.5 M"), weight types with their tensors and
bytes, tokenizer (hf, the tokens' count), chat family (ChatML markers in
tokenizer.chat_template), bos (tokenizer.ggml.bos_token_id) and the stop ids
(ChatML's turn and episode ends, then the file's eos/eot/eom ids), with
their texts. Its import: the same tokenizer facts, and parameters, weight
types and context as h5py reads the checkpoint."""
import json
import subprocess
import sys

from gguf import GGUFReader
from model_facts import gguf_types, h5_types

rlvr, gguf_path, ckpt = sys.argv[1:4]
failures = []


def expect(what, got, want):
    if got != want:
        failures.append(what)
        print(f"FAIL: {what}: rlvr model info says {got!r}, the file {want!r}")
    else:
        print(f"ok: {what}: {got!r}")


def info(path, *flags):
    r = subprocess.run([rlvr, "model", "info", path, *flags], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"rlvr model info {path}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout) if "--json" in flags else r.stdout


reader = GGUFReader(gguf_path)


def field(key):
    f = reader.get_field(key)
    return None if f is None else f.contents()


tokens = field("tokenizer.ggml.tokens")
types = gguf_types(gguf_path)
n_params = sum(e[1] for e in types.values())
bos = int(field("tokenizer.ggml.bos_token_id"))
# rlvr's stops for ChatML: the turn end, the episode end, then the file's declared ends they are not
stops = [tokens.index("<|im_end|>"), tokens.index("<|endoftext|>")]
for key in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"):
    if field(key) is not None and int(field(key)) not in stops:
        stops.append(int(field(key)))
context = int(field("llama.context_length"))

g = info(gguf_path, "--json")
expect("gguf: architecture", g["architecture"], field("general.architecture"))
expect("gguf: context_length", g["context_length"], context)
expect("gguf: max_seq (the import's cap)", g["max_seq"], min(context, g["max_seq_cap"]))
expect("gguf: parameters", g["parameters"], n_params)
expect("gguf: parameters_text", g["parameters_text"], f"{n_params / 1e6:.1f} M")
expect("gguf: weight types", {t["type"]: [t["tensors"], t["parameters"], t["bytes"]] for t in g["weight_types"]},
       types)
expect("gguf: Q4_1 and F32 among the types", {"Q4_1", "F32"} <= {t["type"] for t in g["weight_types"]}, True)
template = field("tokenizer.chat_template")
expect("gguf: refusals", g["refusals"], [])

h = info(ckpt, "--json")
h5types, max_seq = h5_types(ckpt)
expect("checkpoint: parameters (h5py)", h["parameters"], sum(e[1] for e in h5types.values()))
expect("checkpoint: parameters equal the GGUF's", h["parameters"], n_params)
expect("checkpoint: weight types", {t["type"]: [t["tensors"], t["parameters"], t["bytes"]] for t in h["weight_types"]},
       h5types)
expect("checkpoint: context_length (max_seq)", h["context_length"], max_seq)
expect("checkpoint: refusals", h["refusals"], [])

for name, got in (("gguf", g), ("checkpoint", h)):
    expect(f"{name}: tokenizer kind", got["tokenizer"]["kind"], "hf")
    expect(f"{name}: vocabulary", got["tokenizer"]["vocab_size"], len(tokens))
    expect(f"{name}: chat family", got["chat_family"],
           "chatml" if "<|im_start|>" in template and "<|im_end|>" in template else None)
    expect(f"{name}: bos", got["bos"], {"id": bos, "text": tokens[bos]})
    expect(f"{name}: stops", got["stops"], [{"id": i, "text": tokens[i]} for i in stops])
    expect(f"{name}: a pretrained [model] without init_seed", "init_seed" in got["model"], False)

text = info(gguf_path)
expect("text: context and how to raise the cap",
       f"{context} (llama.context_length)" in text and f"--max-seq {context}" in text, True)
expect("text: parameters", f"{n_params} ({n_params / 1e6:.1f} M)" in text, True)

if failures:
    sys.exit(f"{len(failures)} failures")
print("check_smollm2_info: the facts of SmolLM2's GGUF file and checkpoint equal gguf-py's and h5py's")
