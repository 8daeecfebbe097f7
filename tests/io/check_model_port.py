"""rlvr model import / export against transformers, safetensors and gguf-py
(the pinned reference venv, scripts/pyref.sh).

One case per run (a separate ctest each):
  llama2   LlamaForCausalLM, untied, rope_theta 10000, saved sharded (index)
  llama3   LlamaForCausalLM, rope_scaling llama3, rope_theta 500000
  smollm2  LlamaForCausalLM, tied embeddings
  qwen2    Qwen2ForCausalLM, q/k/v biases
  mistral  MistralForCausalLM, sliding_window null, saved in bfloat16
  bad      inputs rlvr must refuse, each with a message naming file and field

For a model case: a tiny random model is saved with save_pretrained
(safetensors), imported with `rlvr model import`, and rlvr's per-token
log-probs of a random sequence (model_logprobs) are compared with
transformers' float32 log_softmax (max abs diff <= 1e-4). The checkpoint is
exported back (`rlvr model export --out`, F32 and BF16), loaded with
AutoModelForCausalLM.from_pretrained and compared again (weights exact;
BF16 equal to torch's rounding). GGUF exports (F32, F16) are read back with
gguf-py: F32 tensors exact, F16 ones equal to numpy's float16 rounding, q/k
rows in llama.cpp's order ("llama" permuted, "qwen2" not). GGUF files gguf-py
writes from the same weights (F32, F16, BF16, Q8_0, Q4_0, Q4_1) are imported
and their weights compared with gguf-py's dequantisation (F32: equal to the
safetensors import).

Usage: check_model_port.py RLVR MODEL_LOGPROBS CASE WORKDIR
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import torch
import gguf
from gguf.quants import dequantize, quantize
from safetensors.numpy import load_file, save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM, MistralConfig,
                          MistralForCausalLM, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM)

rlvr, logprobs_bin, case, work = sys.argv[1:5]
Q = gguf.GGMLQuantizationType
TOL = 1e-4
failures = []
torch.manual_seed(1234)
rng = np.random.default_rng(99)


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


COMMON = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, vocab_size=300, max_position_embeddings=128, rms_norm_eps=1e-5)


def make_model(name):
    """A tiny model of the case's architecture with every weight random
    (biases included: transformers initialises them to zero)."""
    if name in ("llama2", "bad"):
        m = LlamaForCausalLM(LlamaConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=False))
    elif name == "llama3":
        m = LlamaForCausalLM(LlamaConfig(**COMMON, rope_theta=500000.0, tie_word_embeddings=False, rope_scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}))
    elif name == "smollm2":
        m = LlamaForCausalLM(LlamaConfig(**COMMON, rope_theta=100000.0, tie_word_embeddings=True))
    elif name == "qwen2":
        m = Qwen2ForCausalLM(Qwen2Config(**COMMON, rope_theta=1000000.0, tie_word_embeddings=False,
                                         use_sliding_window=False))
    else:
        m = MistralForCausalLM(MistralConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=False,
                                             sliding_window=None))
    with torch.no_grad():
        for pname, p in m.named_parameters():
            if "norm" in pname:
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.1 if "bias" in pname else 0.08)
    return m.eval()


def save(m, path, name):
    if name == "llama2":
        m.save_pretrained(path, safe_serialization=True, max_shard_size="200KB")
        assert os.path.exists(os.path.join(path, "model.safetensors.index.json")), "expected a sharded save"
    elif name == "mistral":
        m.to(torch.bfloat16).save_pretrained(path, safe_serialization=True)
    else:
        m.save_pretrained(path, safe_serialization=True)
    add_tokenizer(path)


# ---- the model's tokenizer and chat template (an import stores them) ----

TEMPLATE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "policy", "chat_templates",
                             "smollm2.jinja")).read()
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_tokenizer = []


def tiny_tokenizer():
    """A byte-level BPE tokenizer of exactly the models' vocabulary size."""
    if not _tokenizer:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        text = [f"What is {a} + {b}? The answer is {a + b}." for a in range(30) for b in range(30)]
        tok.train_from_iterator(text, trainers.BpeTrainer(
            vocab_size=COMMON["vocab_size"], special_tokens=SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        _tokenizer.append(tok)
    return _tokenizer[0]


def add_tokenizer(path):
    fast = PreTrainedTokenizerFast(tokenizer_object=tiny_tokenizer(), eos_token="<|im_end|>")
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)


def tokenizer_lists():
    """The tiny tokenizer as llama.cpp's converter lists it: tokens, token types, merges."""
    j = json.loads(tiny_tokenizer().to_str())
    vocab = sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
    return [t for t, _ in vocab], [3 if t in SPECIALS else 1 for t, _ in vocab], merges


def gguf_tokenizer_metadata(w, eos_id=None):
    """The same tokenizer as llama.cpp's converter writes it (another
    eos id when given)."""
    j = json.loads(tiny_tokenizer().to_str())
    tokens, types, merges = tokenizer_lists()
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(j["model"]["vocab"]["<|im_start|>"])
    w.add_eos_token_id(j["model"]["vocab"]["<|im_end|>"] if eos_id is None else eos_id)
    w.add_chat_template(TEMPLATE)


def expected_declared(src):
    """The ids a directory declares for generation, as transformers reads
    them: generation_config.json, else config.json, else the tokenizer's
    bos/eos texts; eos as a list without repeats."""
    bos = eos = None
    for name in ("generation_config.json", "config.json"):
        path = os.path.join(src, name)
        if os.path.exists(path):
            with open(path) as f:
                j = json.load(f)
            bos = j.get("bos_token_id") if bos is None else bos
            eos = j.get("eos_token_id") if eos is None else eos
    tok = AutoTokenizer.from_pretrained(src)
    bos = tok.bos_token_id if bos is None else bos
    eos = tok.eos_token_id if eos is None else eos
    eos = [] if eos is None else eos if isinstance(eos, list) else [eos]
    return (-1 if bos is None else bos), list(dict.fromkeys(eos))


def stored_declared(ckpt):
    with h5py.File(ckpt, "r") as h5:
        g = h5["tokenizer"]
        bos = int(g.attrs["bos_token_id"]) if "bos_token_id" in g.attrs else -1
        eos = [int(x) for x in g["eos_token_ids"][...]] if "eos_token_ids" in g else []
    return bos, eos


def check_declared(ckpt, want, what):
    got = stored_declared(ckpt)
    if got != want:
        fail(f"{what}: declared bos/eos ids {got}, expected {want}")
    else:
        print(f"{case}: {what}: declared bos {got[0]}, eos {got[1]}")


def check_chat(src, out, declared=None):
    """The exported tokenizer renders a conversation as the source's does;
    generation_config.json carries the declared ids, the turn end first
    when they lack it, then ChatML's episode end (<|endoftext|>) when they
    lack it: every id rlvr's replies stop at."""
    msgs = [{"role": "user", "content": "What is 2 + 3?"}]
    a = AutoTokenizer.from_pretrained(src).apply_chat_template(msgs, add_generation_prompt=True)
    b = AutoTokenizer.from_pretrained(out).apply_chat_template(msgs, add_generation_prompt=True)
    if a != b:
        fail(f"HF export: the exported tokenizer renders {b}, the source {a}")
    gen = GenerationConfig.from_pretrained(out)
    bos, eos = declared or expected_declared(src)
    turn_end = tiny_tokenizer().token_to_id("<|im_end|>")
    episode_end = tiny_tokenizer().token_to_id("<|endoftext|>")
    want = eos if turn_end in eos else [turn_end] + eos
    want = want if episode_end in want else want + [episode_end]
    got = gen.eos_token_id if isinstance(gen.eos_token_id, list) else [gen.eos_token_id]
    if got != want or (bos >= 0 and gen.bos_token_id != bos):
        fail(f"HF export: generation_config.json bos {gen.bos_token_id} eos {got}, expected bos {bos} eos {want}")


def reference_logprobs(path, ids):
    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        logits = m(torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits, dim=-1)
    return np.array([lp[t, ids[t + 1]].item() for t in range(len(ids) - 1)]), m


def rlvr_logprobs(ckpt, ids):
    r = run(logprobs_bin, ckpt, ",".join(map(str, ids)))
    if r.returncode != 0:
        fail(f"model_logprobs {ckpt}: {r.stderr.strip()}")
        return None
    return np.array(json.loads(r.stdout)["logprobs"])


def rope_inv_freq(cfg):
    """RoPE frequencies as policy/model.h defines them (LLAMA3 scaling included)."""
    hd = cfg.hidden_size // cfg.num_attention_heads
    f = cfg.rope_theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
    rs = getattr(cfg, "rope_scaling", None)
    if rs:
        orig, lo, hi, factor = (rs["original_max_position_embeddings"], rs["low_freq_factor"],
                                rs["high_freq_factor"], rs["factor"])
        wave = 2 * np.pi / f
        s = np.clip((orig / wave - lo) / (hi - lo), 0.0, 1.0)
        f = np.where(wave < orig / hi, f, np.where(wave > orig / lo, f / factor, (1 - s) * f / factor + s * f))
    return f


def numpy_logprobs(ckpt, cfg, ids):
    """rlvr's forward written out in numpy (float64) from the checkpoint's
    tensors: interleaved RoPE pairs, q/k/v biases, grouped-query attention.
    It checks the import's layout against the model's definition, whether or
    not this build's forward computes the architecture yet."""
    with h5py.File(ckpt, "r") as h5:
        p = {k: h5["model/params/" + k][...].astype(np.float64) for k in h5["model/params"]}
    H, KV = cfg.num_attention_heads, cfg.num_key_value_heads
    hd, T, eps = cfg.hidden_size // H, len(ids), cfg.rms_norm_eps
    ang = np.arange(T)[:, None] * rope_inv_freq(cfg)[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]

    def norm(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(x, n):
        x = x.reshape(T, n, hd // 2, 2)
        a, b = x[..., 0], x[..., 1]
        return np.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(T, n, hd)

    x = p["embed"][ids]
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for layer in range(cfg.num_hidden_layers):
        h = norm(x, p["attn_norm"][layer])
        q, k, v = (h @ p[w][layer].T + (p["b" + w[1]][layer] if "b" + w[1] in p else 0) for w in ("wq", "wk", "wv"))
        q, k, v = rope(q, H), rope(k, KV), v.reshape(T, KV, hd)
        out = np.empty((T, H, hd))
        for head in range(H):
            kvh = head // (H // KV)
            a = q[:, head] @ k[:, kvh].T / np.sqrt(hd) + mask
            a = np.exp(a - a.max(-1, keepdims=True))
            out[:, head] = (a / a.sum(-1, keepdims=True)) @ v[:, kvh]
        x = x + out.reshape(T, H * hd) @ p["wo"][layer].T
        h = norm(x, p["mlp_norm"][layer])
        g = h @ p["w_gate"][layer].T
        x = x + (g / (1 + np.exp(-g)) * (h @ p["w_up"][layer].T)) @ p["w_down"][layer].T
    logits = norm(x, p["final_norm"]) @ p.get("lm_head", p["embed"]).T
    lp = logits - logits.max(-1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    return np.array([lp[t, ids[t + 1]] for t in range(T - 1)])


def compare_logprobs(what, got, want):
    if got is None:
        return
    diff = float(np.max(np.abs(got - want)))
    print(f"{case}: {what}: max |log-prob diff| = {diff:.3g} over {len(want)} tokens")
    if not diff <= TOL:
        fail(f"{what}: log-probs differ by {diff} (> {TOL})")




def rlvr_import(src, ckpt, extra=()):
    r = run(rlvr, "model", "import", src, "--out", ckpt, *extra)
    if r.returncode != 0:
        fail(f"rlvr model import {src}: exit {r.returncode}: {r.stderr.strip()}")
        return False
    return True


def permute(w, n_head):
    """llama.cpp's converter: half-split RoPE rows to interleaved pairs."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape))


def hf_weights(path):
    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}, m.config


GGUF_NAMES = {"embed_tokens": "token_embd", "input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
              "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
              "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
              "mlp.down_proj": "ffn_down"}


def gguf_tensors(weights, cfg, arch):
    """HF weights under llama.cpp's names and row order."""
    out = {}
    for k, v in weights.items():
        if k == "lm_head.weight":
            if not cfg.tie_word_embeddings:
                out["output.weight"] = v
            continue
        if k == "model.norm.weight":
            out["output_norm.weight"] = v
            continue
        if k == "model.embed_tokens.weight":
            out["token_embd.weight"] = v
            continue
        parts = k.split(".")  # model.layers.N.<mod>.<sub>.weight
        layer, mod, kind = parts[2], ".".join(parts[3:-1]), parts[-1]
        if arch == "llama" and mod in ("self_attn.q_proj", "self_attn.k_proj"):
            heads = cfg.num_attention_heads if mod.endswith("q_proj") else cfg.num_key_value_heads
            v = permute(v, heads)
        out[f"blk.{layer}.{GGUF_NAMES[mod]}.{kind}"] = v
    return out


def gguf_metadata(w, cfg, arch):
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_theta)
    w.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)


def write_gguf(path, tensors, cfg, arch, qtype, extra=None, eos_id=None):
    w = gguf.GGUFWriter(path, arch)
    gguf_metadata(w, cfg, arch)
    gguf_tokenizer_metadata(w, eos_id)
    for name, v in tensors.items():
        if v.ndim == 1 or qtype == Q.F32:
            w.add_tensor(name, v.astype(np.float32))
        else:
            w.add_tensor(name, quantize(v.astype(np.float32), qtype), raw_dtype=qtype)
    for name, v in (extra or {}).items():
        w.add_tensor(name, v)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


RLVR_OF = {"token_embd": "embed", "attn_norm": "attn_norm", "attn_q": "wq", "attn_k": "wk", "attn_v": "wv",
           "attn_output": "wo", "ffn_norm": "mlp_norm", "ffn_gate": "w_gate", "ffn_up": "w_up",
           "ffn_down": "w_down", "output_norm": "final_norm", "output": "lm_head"}


def rlvr_tensor(h5, gname):
    """The slice of an rlvr checkpoint's parameters a GGUF tensor maps to."""
    parts = gname.split(".")
    if parts[0] == "blk":
        base, kind, layer = parts[2], parts[3], int(parts[1])
        name = {"attn_q": "bq", "attn_k": "bk", "attn_v": "bv"}[base] if kind == "bias" else RLVR_OF[base]
        return h5["model/params/" + name][layer]
    return h5["model/params/" + RLVR_OF[parts[0]]][...]


def to_rlvr_order(v, gname, cfg, arch):
    """GGUF rows to rlvr's: qwen2 q/k rows are half-split (NEOX)."""
    if arch == "qwen2" and any(s in gname for s in ("attn_q.", "attn_k.")):
        heads = cfg.num_attention_heads if "attn_q." in gname else cfg.num_key_value_heads
        return permute(v, heads)
    return v


def check_gguf_import(base_ckpt, weights, cfg, arch, ids, want, extra=None):
    tensors = gguf_tensors(weights, cfg, arch)
    for qt in (Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1):
        path = os.path.join(work, f"in_{qt.name}.gguf")
        ckpt = os.path.join(work, f"in_{qt.name}.h5")
        write_gguf(path, tensors, cfg, arch, qt, extra)
        if not rlvr_import(path, ckpt):
            continue
        bad = []
        with h5py.File(ckpt, "r") as h5:
            for name, v in tensors.items():
                deq = v.astype(np.float32) if v.ndim == 1 or qt == Q.F32 else dequantize(
                    quantize(v.astype(np.float32), qt), qt)
                got = rlvr_tensor(h5, name)
                if not np.array_equal(got, to_rlvr_order(deq, name, cfg, arch)):
                    bad.append(name)
        if bad:
            fail(f"GGUF {qt.name} import: tensors differ from gguf-py's dequantisation: {bad[:4]}")
        else:
            print(f"{case}: GGUF {qt.name} import: every tensor equals gguf-py's dequantisation")
        if qt == Q.F32:
            with h5py.File(ckpt, "r") as a, h5py.File(base_ckpt, "r") as b:
                for k in a["model/params"]:
                    if not np.array_equal(a["model/params/" + k][...], b["model/params/" + k][...]):
                        fail(f"GGUF F32 import: {k} differs from the safetensors import")
            compare_logprobs("GGUF F32 import", rlvr_logprobs(ckpt, ids), want)
            t = tiny_tokenizer()
            check_declared(ckpt, (t.token_to_id("<|im_start|>"), [t.token_to_id("<|im_end|>")]), "GGUF import")
            a, b = ({k: v for k, v in json.loads(run(rlvr, "model", "info", c, "--json").stdout).items()
                     if k in ("parameters", "model")} for c in (ckpt, base_ckpt))
            if a != b:
                fail(f"GGUF F32 import: model info differs from the safetensors import: {a} vs {b}")


def rlvr_export(ckpt, flag, path, dtype):
    r = run(rlvr, "model", "export", ckpt, flag, path, "--dtype", dtype)
    if r.returncode != 0:
        fail(f"rlvr model export {flag} --dtype {dtype}: {r.stderr.strip()}")
    return r.returncode == 0


def check_hf_export(ckpt, weights, ids, want):
    for dtype in ("f32", "bf16"):
        out = os.path.join(work, f"export_{dtype}")
        if not rlvr_export(ckpt, "--out", out, dtype):
            continue
        got, _ = hf_weights(out)
        for k, v in weights.items():
            expect = v if dtype == "f32" else torch.from_numpy(v).to(torch.bfloat16).float().numpy()
            if k not in got or not np.array_equal(got[k], expect):
                fail(f"HF export {dtype}: tensor {k} differs from the source ({'missing' if k not in got else 'values'})")
        if dtype == "f32":
            lp, _ = reference_logprobs(out, ids)
            compare_logprobs("HF export reloaded by transformers", lp, want)
            check_chat(os.path.join(work, "src"), out)
        print(f"{case}: HF export {dtype}: {len(weights)} tensors checked")


def rope_freqs(cfg, original=None):
    """llama.cpp converter's rope_freqs.weight for llama3 scaling (of
    another original context when given)."""
    import math
    rs = dict(cfg.rope_scaling)
    if original:
        rs["original_max_position_embeddings"] = original
    dim = cfg.hidden_size // cfg.num_attention_heads
    freqs = 1.0 / (cfg.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    lo, hi, old = rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
    out = []
    for f in freqs:
        wave = 2 * math.pi / f
        if wave < old / hi:
            out.append(1)
        elif wave > old / lo:
            out.append(rs["factor"])
        else:
            s = (old / wave - lo) / (hi - lo)
            out.append(1 / ((1 - s) / rs["factor"] + s))
    return np.array(out, dtype=np.float32)


def check_gguf_export(ckpt, weights, cfg, arch):
    expect = gguf_tensors(weights, cfg, arch)
    if getattr(cfg, "rope_scaling", None):
        expect["rope_freqs.weight"] = rope_freqs(cfg)
    for dtype in ("f32", "f16"):
        path = os.path.join(work, f"export_{dtype}.gguf")
        if not rlvr_export(ckpt, "--gguf", path, dtype):
            continue
        rd = gguf.GGUFReader(path)
        a = rd.fields["general.architecture"]
        if bytes(a.parts[a.data[0]]).decode() != arch:
            fail(f"GGUF export: general.architecture is not {arch}")
        got = {t.name: t for t in rd.tensors}
        if set(got) != set(expect):
            fail(f"GGUF export {dtype}: tensors {sorted(set(got) ^ set(expect))} differ in presence")
        for name, v in expect.items():
            if name not in got:
                continue
            t = got[name]
            want_type = Q.F16 if dtype == "f16" and v.ndim == 2 else Q.F32
            vals = dequantize(t.data, t.tensor_type).reshape(v.shape)
            want = v.astype(np.float16).astype(np.float32) if want_type == Q.F16 else v
            if t.tensor_type != want_type or not np.array_equal(vals, want):
                if name == "rope_freqs.weight" and np.allclose(vals, want, rtol=1e-6):
                    continue
                fail(f"GGUF export {dtype}: tensor {name} ({t.tensor_type.name}) differs")
        print(f"{case}: GGUF export {dtype}: {len(expect)} tensors read back by gguf-py")
        if dtype == "f32":
            check_gguf_export_tokenizer(ckpt, path)


def gguf_kv(path):
    """The metadata of a GGUF file as gguf-py reads it (strings, ints, lists)."""
    out = {}
    for name, f in gguf.GGUFReader(path).fields.items():
        def value(i, t):
            return bytes(f.parts[i]).decode("utf-8") if t == gguf.GGUFValueType.STRING else f.parts[i][0].item()
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            out[name] = [value(i, f.types[-1]) for i in f.data]
        else:
            out[name] = value(f.data[0], f.types[0])
    return out


def check_gguf_export_tokenizer(ckpt, path):
    """A pretrained model's GGUF export carries its tokenizer as the
    converter writes it (pre "gpt-2" for the tiny GPT-2-style tokenizer),
    the chat template and the ids; rlvr reads the file back to the same
    tokenizer (its HF export renders a chat as the source does), and
    --no-tokenizer leaves the tokenizer out."""
    kv = gguf_kv(path)
    tokens, types, merges = tokenizer_lists()
    bos, eos = stored_declared(ckpt)
    turn_end = tiny_tokenizer().token_to_id("<|im_end|>")
    want = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": types, "tokenizer.ggml.merges": merges, "tokenizer.chat_template": TEMPLATE,
            "tokenizer.ggml.eos_token_id": eos[0] if turn_end in eos else turn_end,
            "tokenizer.ggml.add_bos_token": False}  # ChatML opens with no bos
    if bos >= 0:
        want["tokenizer.ggml.bos_token_id"] = bos
    got = {k: v for k, v in kv.items() if k.startswith("tokenizer.")}
    if got != want:
        fail(f"GGUF export: tokenizer keys {sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))} "
             f"differ from the converter's")
    back = os.path.join(work, "gguf_back.h5")
    if rlvr_import(path, back):
        out = os.path.join(work, "gguf_back_hf")
        # a GGUF holds one eos id (and an eot id when the turn end is another)
        if rlvr_export(back, "--out", out, "f32"):
            check_chat(os.path.join(work, "src"), out, (bos, [want["tokenizer.ggml.eos_token_id"]]))
    bare = os.path.join(work, "bare.gguf")
    r = run(rlvr, "model", "export", ckpt, "--gguf", bare, "--no-tokenizer")
    if r.returncode != 0 or any(k.startswith("tokenizer.") for k in gguf_kv(bare)):
        fail(f"GGUF export --no-tokenizer: exit {r.returncode}, keys {sorted(gguf_kv(bare)) if r.returncode == 0 else ''}")
    print(f"{case}: GGUF export: tokenizer keys as the converter's ({len(tokens)} tokens); read back by rlvr; "
          f"--no-tokenizer leaves them out")


def check_info(ckpt):
    """`rlvr model info` prints a [model] section `rlvr config check` accepts,
    with the case's biases and RoPE scaling."""
    info = run(rlvr, "model", "info", ckpt)
    ini = os.path.join(work, "model.ini")
    with open(ini, "w") as f:  # the section and its comment line, after the facts
        f.write(info.stdout[info.stdout.find("# the [model] section"):])
    lines = {"qwen2": ["qkv_bias = true"], "llama3": ["rope_scaling = llama3", "rope_scaling_factor = 8",
                                                      "rope_original_max_seq = 8192", "rope_theta = 500000"],
             "smollm2": ["tie_embeddings = true"]}.get(case, ["qkv_bias = false", "rope_scaling = none"])
    missing = [x for x in lines if x not in info.stdout.splitlines()]
    if info.returncode != 0 or missing:
        fail(f"model info {ckpt}: exit {info.returncode}, lacks {missing}: {info.stdout!r}")
    r = run(rlvr, "config", "check", ini)
    if r.returncode != 0:
        fail(f"rlvr config check of model info's [model]: {r.stderr.strip()}")
    print(f"{case}: model info: a [model] section rlvr config check accepts")


def model_case():
    src = os.path.join(work, "src")
    m = make_model(case)
    save(m, src, case)
    if case == "llama3":  # Llama 3.1 declares several ids generation ends at
        t = tiny_tokenizer()
        GenerationConfig(bos_token_id=t.token_to_id("<|im_start|>"), eos_token_id=[
            t.token_to_id("<|im_end|>"), t.token_to_id("<|endoftext|>")]).save_pretrained(src)
    ids = [int(x) for x in rng.integers(0, COMMON["vocab_size"], size=40)]
    want, _ = reference_logprobs(src, ids)
    ckpt = os.path.join(work, "model.h5")
    if not rlvr_import(src, ckpt):
        return
    check_declared(ckpt, expected_declared(src), "safetensors import")
    if os.path.exists(ckpt + ".tmp"):
        fail("import left its temporary directory behind")
    check_info(ckpt)
    weights, cfg = hf_weights(src)
    compare_logprobs("checkpoint tensors through a numpy forward", numpy_logprobs(ckpt, cfg, ids), want)
    compare_logprobs("safetensors import", rlvr_logprobs(ckpt, ids), want)
    if cfg.tie_word_embeddings:
        weights.pop("lm_head.weight", None)
    check_hf_export(ckpt, weights, ids, want)
    arch = "qwen2" if case == "qwen2" else "llama"
    check_gguf_export(ckpt, weights, cfg, arch)
    extra = None
    if case == "llama3":
        # divisors Llama 3.x's parameters do not give: refused
        path = os.path.join(work, "scaled.gguf")
        write_gguf(path, gguf_tensors(weights, cfg, arch), cfg, arch, Q.F32,
                   {"rope_freqs.weight": rope_freqs(cfg, original=64)})
        expect_refusal("GGUF rope_freqs of other llama3 parameters", [path], [path, "rope_freqs.weight"])
        extra = {"rope_freqs.weight": rope_freqs(cfg)}
    check_gguf_import(ckpt, weights, cfg, arch, ids, want, extra)


# ---- bad inputs ------------------------------------------------------------------------------


def expect_refusal(what, src, needles):
    ckpt = os.path.join(work, "refused.h5")
    r = run(rlvr, "model", "import", *src, "--out", ckpt)
    msg = r.stderr.strip()
    if r.returncode == 0:
        fail(f"{what}: imported, expected a refusal")
    elif r.returncode != 1:
        fail(f"{what}: exit {r.returncode}, expected 1: {msg}")
    missing = [n for n in needles if n not in msg]
    if missing:
        fail(f"{what}: message lacks {missing}: {msg}")
    if os.path.exists(ckpt) or os.path.exists(ckpt + ".tmp"):
        fail(f"{what}: a refused import left {ckpt} behind")
    print(f"{case}: {what}: refused: {msg}")


def variant(name, edit_config=None, edit_tensors=None, edit_file=None):
    src = os.path.join(work, "src")
    dst = os.path.join(work, name)
    os.makedirs(dst)
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    if edit_config:
        edit_config(cfg)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f)
    tensors = load_file(os.path.join(src, "model.safetensors"))
    if edit_tensors:
        edit_tensors(tensors)
    st = os.path.join(dst, "model.safetensors")
    save_file(tensors, st, metadata={"format": "pt"})
    if edit_file:
        edit_file(st)
    add_tokenizer(dst)
    return dst


def windows(d):
    """A Mistral window below the context is refused; --max-seq within the
    window imports; `model info` shows it; an existing --out is refused."""
    expect_refusal("Mistral sliding_window below the context", [d], [d + "/config.json", "sliding_window"])
    info = run(rlvr, "model", "info", d)
    if info.returncode == 0:
        fail("model info: a refused directory gave exit 0")
    ckpt = os.path.join(work, "window.h5")
    if not rlvr_import(d, ckpt, ["--max-seq", "64"]):
        return
    info = run(rlvr, "model", "info", ckpt)
    for line in ("[model]", "max_seq = 64", "d_model = 64", "n_kv_heads = 2", "tie_embeddings = false"):
        if line not in info.stdout:
            fail(f"model info {ckpt}: no line {line!r} in {info.stdout!r}")
    r = run(rlvr, "inspect", ckpt)
    if r.returncode != 0:
        fail(f"rlvr inspect {ckpt}: exit {r.returncode}: {r.stderr.strip()}")
    r = run(rlvr, "model", "import", d, "--out", ckpt, "--max-seq", "64")
    if r.returncode != 1 or "exists" not in r.stderr:
        fail(f"import over an existing checkpoint: exit {r.returncode}: {r.stderr.strip()}")
    print(f"{case}: --max-seq 64 within the window imports; model info; no overwrite")


def usage_errors():
    """Bad command lines: exit 2, nothing written."""
    for args in ([], ["import", "x"], ["export", "x.h5"], ["export", "x.h5", "--out", "d", "--gguf", "f.gguf"],
                 ["export", "x.h5", "--out", "d", "--dtype", "f64"], ["export", "x.h5", "--out", "d", "--no-tokenizer"], ["export", "x.h5", "--gguf", "f.gguf", "--dtype",
                                                                       "bf16"], ["import", "x", "--out", "y",
                                                                                 "--max-seq", "0"], ["frobnicate"]):
        r = run(rlvr, "model", *args)
        if r.returncode != 2:
            fail(f"rlvr model {' '.join(args)}: exit {r.returncode}, expected 2")


def declared_refusals():
    """Malformed generation ids: refused naming the file and the field."""
    for name, text, needles in (
            ("gen_json", "{", ["generation_config.json"]),
            ("gen_range", '{"eos_token_id": [2, 5000]}', ["generation_config.json", "eos_token_id", "5000"]),
            ("gen_type", '{"bos_token_id": "x"}', ["generation_config.json", "bos_token_id", "token id"])):
        d = variant(name)
        with open(os.path.join(d, "generation_config.json"), "w") as f:
            f.write(text)
        expect_refusal(f"generation_config.json {text}", [d], [d + "/" + n for n in needles[:1]] + needles[1:])
    d = variant("config_eos", lambda c: c.update(eos_token_id=-3))
    expect_refusal("config.json eos_token_id -3", [d], [d + "/config.json", "eos_token_id"])
    d = variant("tok_eos")
    path = os.path.join(d, "tokenizer_config.json")
    with open(path) as f:
        j = json.load(f)
    j["eos_token"] = "<|nope|>"
    with open(path, "w") as f:
        json.dump(j, f)
    expect_refusal("tokenizer_config.json eos_token not an added token", [d], [path, "eos_token", "<|nope|>"])


def bad_case():
    usage_errors()
    src = os.path.join(work, "src")
    make_model("bad").save_pretrained(src, safe_serialization=True)
    add_tokenizer(src)

    def gpt2(c):
        c["architectures"], c["model_type"] = ["GPT2LMHeadModel"], "gpt2"
    d = variant("gpt2", gpt2)
    expect_refusal("GPT2LMHeadModel", [d], [d + "/config.json", "architectures", "GPT2LMHeadModel",
                                            "LlamaForCausalLM"])
    d = variant("head_dim", lambda c: c.update(head_dim=32))
    expect_refusal("head_dim mismatch", [d], [d + "/config.json", "head_dim"])
    d = variant("yarn", lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    expect_refusal("rope_scaling yarn", [d], [d + "/config.json", "rope_scaling", "yarn"])
    d = variant("bias", lambda c: c.update(attention_bias=True))
    expect_refusal("attention_bias on llama", [d], [d + "/config.json", "attention_bias"])
    d = variant("act", lambda c: c.update(hidden_act="gelu"))
    expect_refusal("hidden_act gelu", [d], [d + "/config.json", "hidden_act"])
    d = variant("nofield", lambda c: c.pop("num_hidden_layers"))
    expect_refusal("missing field", [d], [d + "/config.json", "num_hidden_layers"])
    name = "model.layers.1.mlp.up_proj.weight"
    d = variant("missing", edit_tensors=lambda t: t.pop(name))
    expect_refusal("missing tensor", [d], [d + "/model.safetensors", name])
    d = variant("shape", edit_tensors=lambda t: t.update({name: np.zeros((160, 32), np.float32)}))
    expect_refusal("misshapen tensor", [d], [d + "/model.safetensors", name, "160, 32"])

    def truncate(path):
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 100)
    d = variant("truncated", edit_file=truncate)
    expect_refusal("truncated safetensors", [d], [d + "/model.safetensors"])
    windows(variant("window", lambda c: c.update(architectures=["MistralForCausalLM"], model_type="mistral",
                                                  sliding_window=64)))
    d = variant("qwen_window", lambda c: c.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                                                  use_sliding_window=True))
    expect_refusal("Qwen2 use_sliding_window", [d], [d + "/config.json", "use_sliding_window"])
    declared_refusals()
    weights, cfg = hf_weights(src)
    path = os.path.join(work, "bad_eos.gguf")
    write_gguf(path, gguf_tensors(weights, cfg, "llama"), cfg, "llama", Q.F32, eos_id=5000)
    expect_refusal("GGUF eos id outside the vocabulary", [path], [path, "tokenizer.ggml.eos_token_id", "5000"])
    path = os.path.join(work, "gpt2.gguf")
    write_gguf(path, gguf_tensors(weights, cfg, "llama"), cfg, "gpt2", Q.F32)
    expect_refusal("GGUF architecture gpt2", [path], [path, "general.architecture", "gpt2"])
    tensors = gguf_tensors(weights, cfg, "llama")
    tensors.pop("blk.0.ffn_down.weight")
    path = os.path.join(work, "missing.gguf")
    write_gguf(path, tensors, cfg, "llama", Q.F32)
    expect_refusal("GGUF missing tensor", [path], [path, "blk.0.ffn_down.weight"])


if case == "bad":
    bad_case()
else:
    model_case()
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"{case}: all checks passed")
