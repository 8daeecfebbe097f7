"""SmolLM2-135M-Instruct in rlvr against transformers on the same weights.

    check_smollm2.py GREEDY_DECODE CKPT GGUF [RLVR]

CKPT is `rlvr model import GGUF`. The reference is transformers'
LlamaForCausalLM holding gguf-py's dequantisation of every tensor of the
GGUF file (q/k rows put back in HF's rotate-half order, which llama.cpp's
converter had interleaved). For three chat prompts: rlvr's rendered prompt
ids equal apply_chat_template's (the GGUF's own tokenizer and template, as
transformers reads them), and rlvr's first 32 greedy tokens equal
transformers' greedy tokens. With RLVR, also `rlvr model export CKPT
--gguf` (F16): its tokenizer keys equal those of the GGUF file the
model came in (written by llama.cpp's converter) but for the padding and
unknown token ids, which rlvr does not keep. Exit 0 when all hold."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
from gguf import GGUFReader
from gguf.quants import dequantize
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

PROMPTS = [
    "What is 17 + 25? Answer with the number only.",
    "Write a C function that returns the larger of two ints.",
    "Name three colours of the rainbow.",
]
N_NEW = 32


def field(reader, key):
    return reader.fields[key].contents()


def unpermute(w, n_head):
    """llama.cpp's converter interleaves each head's rotary halves; undo it."""
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def reference_model(path):
    r = GGUFReader(path)
    heads, kv = field(r, "llama.attention.head_count"), field(r, "llama.attention.head_count_kv")
    tensors = {}
    for t in r.tensors:
        shape = [int(x) for x in reversed(t.shape.tolist())]
        tensors[t.name] = dequantize(t.data, t.tensor_type).reshape(shape).astype(np.float32)
    cfg = LlamaConfig(vocab_size=tensors["token_embd.weight"].shape[0],
                      hidden_size=field(r, "llama.embedding_length"),
                      intermediate_size=field(r, "llama.feed_forward_length"),
                      num_hidden_layers=field(r, "llama.block_count"), num_attention_heads=heads,
                      num_key_value_heads=kv, rms_norm_eps=field(r, "llama.attention.layer_norm_rms_epsilon"),
                      rope_theta=field(r, "llama.rope.freq_base"),
                      max_position_embeddings=field(r, "llama.context_length"),
                      tie_word_embeddings="output.weight" not in tensors)
    sd = {"model.embed_tokens.weight": tensors["token_embd.weight"], "model.norm.weight": tensors["output_norm.weight"]}
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_q": "self_attn.q_proj",
             "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    for i in range(cfg.num_hidden_layers):
        for g, h in names.items():
            w = tensors[f"blk.{i}.{g}.weight"]
            if g == "attn_q":
                w = unpermute(w, heads)
            elif g == "attn_k":
                w = unpermute(w, kv)
            sd[f"model.layers.{i}.{h}.weight"] = w
    if "output.weight" in tensors:
        sd["lm_head.weight"] = tensors["output.weight"]
    model = LlamaForCausalLM(cfg).float().eval()
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()},
                                                strict=False)
    missing = [m for m in missing if m != "lm_head.weight"]
    assert not missing and not unexpected, (missing, unexpected)
    if cfg.tie_word_embeddings:
        model.tie_weights()
    return model


def greedy(model, ids, n):
    """n argmax tokens, not stopping at the end of turn (rlvr's driver does not)."""
    out = []
    with torch.no_grad():
        res = model(torch.tensor([list(ids)]), use_cache=True)
        for _ in range(n):
            nxt = int(torch.argmax(res.logits[0, -1]))
            out.append(nxt)
            res = model(torch.tensor([[nxt]]), past_key_values=res.past_key_values, use_cache=True)
    return out


def tokenizer_keys(path):
    out = {}
    for name, f in GGUFReader(path).fields.items():
        if name.startswith("tokenizer.") and name not in ("tokenizer.ggml.padding_token_id",
                                                            "tokenizer.ggml.unknown_token_id",
                                                            "tokenizer.ggml.add_space_prefix"):
            out[name] = f.contents()
    return out


def check_gguf_export(rlvr, ckpt, gguf_path, work):
    """The GGUF export's tokenizer keys against the converter's own file."""
    out = os.path.join(work, "smollm2_export.gguf")
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run([rlvr, "model", "export", ckpt, "--gguf", out, "--dtype", "f16"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("FAIL rlvr model export --gguf:", r.stderr.strip())
        return 1
    got, want = tokenizer_keys(out), tokenizer_keys(gguf_path)
    os.unlink(out)
    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    if diff:
        print(f"FAIL GGUF export: tokenizer keys {diff} differ from the converter's file")
        return 1
    print(f"ok   GGUF export: {len(got)} tokenizer keys equal the converter's file "
          f"({len(got['tokenizer.ggml.tokens'])} tokens, pre {got['tokenizer.ggml.pre']})")
    return 0


def main():
    driver, ckpt, gguf_path = sys.argv[1:4]
    t0 = time.time()
    run = subprocess.run([driver, ckpt, str(N_NEW)] + PROMPTS, capture_output=True, text=True)
    if run.returncode != 0:
        print("FAIL greedy_decode:", run.stderr.strip())
        return 1
    t_rlvr = time.time() - t0
    ours = [json.loads(line) for line in run.stdout.splitlines()]
    tok = AutoTokenizer.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path))
    t0 = time.time()
    model = reference_model(gguf_path)
    failures = 0
    for prompt, got in zip(PROMPTS, ours):
        want_prompt = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True)
        if got["prompt"] != want_prompt:
            failures += 1
            print(f"FAIL prompt ids differ for {prompt!r}:\n  rlvr {got['prompt']}\n  ref  {want_prompt}")
        want = greedy(model, got["prompt"], N_NEW)
        same = got["generated"] == want
        failures += not same
        print(f"{'ok  ' if same else 'FAIL'} {prompt!r}: rlvr {tok.decode(got['generated'])!r}")
        if not same:
            print(f"     transformers {tok.decode(want)!r}\n  rlvr {got['generated']}\n  ref  {want}")
    print(f"rlvr {t_rlvr:.1f} s for {len(PROMPTS)} x {N_NEW} greedy tokens (full forward per token); "
          f"transformers {time.time() - t0:.1f} s incl. dequantisation")
    if len(sys.argv) > 4:
        failures += check_gguf_export(sys.argv[4], ckpt, gguf_path, os.path.dirname(os.path.abspath(driver)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
