"""`rlvr model info --json` against the files themselves, on a tiny chat model:

    check_model_info.py RLVR MAKE_TINY_CHAT_MODEL TEMPLATES_DIR WORKDIR

A Hugging Face directory (tests/jobs/make_tiny_chat_model.py, ChatML), its
import, and that checkpoint exported as a GGUF file: parameters, tensors,
weight types and their bytes as safetensors / gguf-py / h5py read them;
the context; the tokenizer's vocabulary and the bos and stop ids as
transformers reads them (stop texts as `rlvr model import` prints them).
Then the stop set through export: the exported generation_config.json lists
every stop id and importing the export again keeps the same stop set. And
a directory rlvr cannot import (another architecture, a template of no
family) reports each refusal, with the facts still given."""
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

from gguf import GGUFReader
from model_facts import gguf_types, h5_types
from safetensors import safe_open
from transformers import AutoTokenizer, GenerationConfig

rlvr, maker, templates, work = sys.argv[1:5]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    r = subprocess.run([rlvr, *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"rlvr {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def info(path, *flags, refused=False):
    """The facts as JSON; exit 1 when import would refuse SRC (refused), else 0."""
    r = subprocess.run([rlvr, "model", "info", path, "--json", *flags], capture_output=True, text=True)
    if r.returncode != (1 if refused else 0) or (refused and "would be refused" not in r.stderr):
        fail(f"rlvr model info {path}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout) if r.stdout else None


def expect(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, expected {want!r}")


def check_weights(name, got, types):
    """types: {type: [tensors, parameters, bytes]} as the reference reads the file."""
    expect(f"{name}: parameters", got["parameters"], sum(t[1] for t in types.values()))
    expect(f"{name}: tensors", got["tensors"], sum(t[0] for t in types.values()))
    expect(f"{name}: weight types", {t["type"]: [t["tensors"], t["parameters"], t["bytes"]] for t in got["weight_types"]},
           dict(types))


def safetensors_types(d):
    types = defaultdict(lambda: [0, 0, 0])
    with safe_open(os.path.join(d, "model.safetensors"), "np") as f:
        for k in f.keys():
            t = f.get_tensor(k)
            e = types[{"float32": "F32", "float16": "F16"}[str(t.dtype)]]
            e[0], e[1], e[2] = e[0] + 1, e[1] + t.size, e[2] + t.nbytes
    return types


def stop_texts(import_stdout):
    """The texts `rlvr model import` prints after "replies stop at"."""
    tail = import_stdout.split("replies stop at ", 1)[1]
    return tail.rsplit(" -> ", 1)[0].split(" ")


os.makedirs(work, exist_ok=True)
hf = os.path.join(work, "hf")
subprocess.run([sys.executable, maker, hf, os.path.join(templates, "smollm2.jinja")], check=True, capture_output=True)
ckpt, gguf, back_hf, back = (os.path.join(work, n) for n in ("model.h5", "model.gguf", "back_hf", "back.h5"))
imported = run("model", "import", hf, "--out", ckpt)
run("model", "export", ckpt, "--gguf", gguf)

tok = AutoTokenizer.from_pretrained(hf)
gen = GenerationConfig.from_pretrained(hf)
cfg = json.load(open(os.path.join(hf, "config.json")))
im_end, endoftext = tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")
eos = gen.eos_token_id if isinstance(gen.eos_token_id, list) else [gen.eos_token_id]
# rlvr's stops: the ChatML turn end, its episode end, then the declared eos ids they are not
want_stops = [im_end, endoftext] + [e for e in eos if e not in (im_end, endoftext)]

a, b, c = info(hf), info(ckpt), info(gguf)
if a and b and c:
    check_weights("hf", a, safetensors_types(hf))
    check_weights("gguf", c, gguf_types(gguf))
    h5types, h5max = h5_types(ckpt)
    check_weights("checkpoint", b, h5types)
    expect("hf: architecture", a["architecture"], cfg["model_type"])
    expect("gguf: architecture", c["architecture"], str(GGUFReader(gguf).get_field("general.architecture").contents()))
    expect("hf: context", a["context_length"], cfg["max_position_embeddings"])
    expect("gguf: context", c["context_length"], int(GGUFReader(gguf).get_field("llama.context_length").contents()))
    expect("checkpoint: context", b["context_length"], h5max)
    expect("hf: max_seq", a["max_seq"], min(cfg["max_position_embeddings"], 4096))
    expect("hf --max-seq 100: max_seq", info(hf, "--max-seq", "100")["max_seq"], 100)
    for name, got in (("hf", a), ("checkpoint", b), ("gguf", c)):
        expect(f"{name}: tokenizer", got["tokenizer"] and got["tokenizer"]["kind"], "hf")
        expect(f"{name}: vocabulary", got["tokenizer"] and got["tokenizer"]["vocab_size"], len(tok))
        expect(f"{name}: chat family", got["chat_family"], "chatml" if "<|im_start|>" in tok.chat_template else None)
        expect(f"{name}: refusals", got["refusals"], [])
    for name, got in (("hf", a), ("checkpoint", b)):
        expect(f"{name}: bos", got["bos"], {"id": gen.bos_token_id, "text": tok.convert_ids_to_tokens(gen.bos_token_id)})
        expect(f"{name}: stop ids", [s["id"] for s in got["stops"]], want_stops)
        expect(f"{name}: stop texts", [s["text"] for s in got["stops"]], tok.convert_ids_to_tokens(want_stops))
    if imported.returncode == 0:
        expect("import's stop texts", stop_texts(imported.stdout), [s["text"] for s in b["stops"]])
    expect("checkpoint: [model] vocab", b["model"]["vocab"], cfg["vocab_size"])
    if "init_seed" in b["model"] or "init_seed" in a["model"]:
        fail("a pretrained model's [model] section lists init_seed")

    # the stop set through export: generation_config.json lists it, a new import keeps it
    if run("model", "export", ckpt, "--out", back_hf).returncode == 0:
        exported = GenerationConfig.from_pretrained(back_hf).eos_token_id
        expect("export: generation_config.json eos_token_id", exported, want_stops)
        printed = run("model", "import", back_hf, "--out", back)
        if printed.returncode == 0:
            expect("import of the export: stop ids", [s["id"] for s in info(back)["stops"]], want_stops)
            expect("import of the export: printed stop texts", stop_texts(printed.stdout), stop_texts(imported.stdout))

# what rlvr would refuse, all of it: another architecture and a template of no family
bad = os.path.join(work, "bad")
shutil.copytree(hf, bad)
cfg_bad = dict(cfg, model_type="gpt2", architectures=["GPT2LMHeadModel"])
json.dump(cfg_bad, open(os.path.join(bad, "config.json"), "w"))
tc = json.load(open(os.path.join(bad, "tokenizer_config.json")))
tc["chat_template"] = open(os.path.join(templates, "unknown.jinja")).read()
json.dump(tc, open(os.path.join(bad, "tokenizer_config.json"), "w"))
d = info(bad, refused=True)
if d:
    joined = "\n".join(d["refusals"])
    if len(d["refusals"]) < 2 or "GPT2LMHeadModel" not in joined or "template" not in joined:
        fail(f"bad directory: refusals {d['refusals']}, expected the architecture and the chat template")
    expect("bad directory: chat family", d["chat_family"], None)
    expect("bad directory: parameters", d["parameters"], a and a["parameters"])
    expect("bad directory: tokenizer", d["tokenizer"] and d["tokenizer"]["kind"], "hf")
    expect("bad directory: stop ids (declared)", [s["id"] for s in d["stops"]], eos)
    text = subprocess.run([rlvr, "model", "info", bad], capture_output=True, text=True).stdout
    if "none recognised" not in text or "--template" not in text or "would refuse" not in text:
        fail(f"bad directory: the text does not say what to do:\n{text}")
    fixed = info(bad, "--template", "chatml", refused=True)  # the architecture still is
    if fixed and any("template" in r for r in fixed["refusals"]):
        fail(f"--template chatml: still refused: {fixed['refusals']}")

if failures:
    sys.exit(f"{len(failures)} failures")
shutil.rmtree(work)
print("check_model_info: hf, checkpoint, gguf facts as the files say; stop set kept through export; refusals listed")
