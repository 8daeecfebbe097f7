#!/usr/bin/python3
"""Reference numerics for tests/policy/test_model_ref.c, in float64 PyTorch.

usage: ref_model.py IN OUT

IN (written by the C test, little-endian):
  b"RLVRREF2"
  int32  vocab, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings
  int32  qkv_bias, rope_scaling (0 none, 1 llama3), rope_original_max_seq
  f64    rope_scaling_factor, rope_low_freq_factor, rope_high_freq_factor
  f64    rope_theta, norm_eps, temperature
  f64    lr, beta1, beta2, eps, weight_decay, grad_clip, min_lr_ratio
  int32  warmup_steps, total_steps, schedule (0 constant, 1 cosine), n_steps
  int32  n_seqs, offsets[n_seqs + 1], tokens[T]
  f32    params[P]                      the C model's flat buffer (no lm_head when tied; bq, bk, bv
                                        last with qkv_bias)
  f32    w_sft[T], w_rl[T], e_rl[T]     per-token weights of the two objectives
  f32    grads[n_steps][P]              gradients the C trainer fed to AdamW

OUT (float64):
  logits[T][V], logprob_next[T], entropy[T], J_sft, J_rl,
  grad_sft[P], grad_rl[P], params_after[n_steps][P]

Exit status 77 when torch is missing (ctest reports the test as skipped).
"""
import math
import struct
import sys

try:
    import torch
except ImportError:
    sys.stderr.write("ref_model.py: PyTorch is not installed for this interpreter "
                     "(Debian: apt-get install python3-torch); skipping\n")
    sys.exit(77)

DECAYS = {"embed", "wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head"}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt, n=1):
        size = struct.calcsize("<" + fmt) * n
        vals = struct.unpack_from("<%d%s" % (n, fmt), self.data, self.pos)
        self.pos += size
        return vals

    def tensor(self, n):
        t = torch.frombuffer(bytearray(self.data[self.pos:self.pos + 4 * n]), dtype=torch.float32)
        self.pos += 4 * n
        return t.to(torch.float64)


def shapes(c):
    V, C, L, H, KVH, F = c["V"], c["C"], c["L"], c["H"], c["KVH"], c["F"]
    kv = C // H * KVH
    s = {"embed": (V, C), "attn_norm": (L, C), "wq": (L, C, C), "wk": (L, kv, C), "wv": (L, kv, C),
         "wo": (L, C, C), "mlp_norm": (L, C), "w_gate": (L, F, C), "w_up": (L, F, C), "w_down": (L, C, F),
         "final_norm": (C,), "lm_head": (V, C)}
    if c["tie"]:
        del s["lm_head"]
    if c["qkv_bias"]:
        s.update({"bq": (L, C), "bk": (L, kv), "bv": (L, kv)})
    return s


def unflatten(flat, c):
    out, off = {}, 0
    for name, shape in shapes(c).items():
        n = math.prod(shape)
        out[name] = flat[off:off + n].reshape(shape).clone()
        off += n
    assert off == flat.numel()
    return out


def flatten(d, c):
    return torch.cat([d[name].reshape(-1) for name in shapes(c)])


def rmsnorm(x, w, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def inv_freq(hd, c):
    """theta^(-2i/hd) per pair, rescaled by Llama 3.1's rule when c["scaling"] is llama3."""
    i = torch.arange(hd // 2, dtype=torch.float64)
    f = c["theta"] ** (-2.0 * i / hd)
    sc = c["scaling"]
    if sc is None:
        return f
    wavelen = 2 * math.pi / f
    smooth = (sc["orig"] / wavelen - sc["low"]) / (sc["high"] - sc["low"])
    mid = (1 - smooth) * f / sc["factor"] + smooth * f
    out = torch.where(wavelen > sc["orig"] / sc["low"], f / sc["factor"], mid)
    return torch.where(wavelen < sc["orig"] / sc["high"], f, out)


def rope(x, pos, c):
    """Interleaved pairs (2i, 2i+1) rotated by pos * inv_freq(i); x (T, heads, hd)."""
    hd = x.shape[-1]
    ang = pos[:, None].to(torch.float64) * inv_freq(hd, c)  # (T, hd/2)
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).reshape(x.shape)


def forward(p, c, tokens, offsets):
    T, C, H, KVH = len(tokens), c["C"], c["H"], c["KVH"]
    hd = C // H
    seq = torch.zeros(T, dtype=torch.long)
    pos = torch.zeros(T, dtype=torch.long)
    for s in range(len(offsets) - 1):
        seq[offsets[s]:offsets[s + 1]] = s
        pos[offsets[s]:offsets[s + 1]] = torch.arange(offsets[s + 1] - offsets[s])
    idx = torch.arange(T)
    allowed = (seq[:, None] == seq[None, :]) & (idx[None, :] <= idx[:, None])  # (query, key)
    x = p["embed"][torch.tensor(tokens)]
    for l in range(c["L"]):
        h = rmsnorm(x, p["attn_norm"][l], c["eps"])
        q, k, v = h @ p["wq"][l].T, h @ p["wk"][l].T, h @ p["wv"][l].T
        if c["qkv_bias"]:  # before RoPE, as in Qwen2
            q, k, v = q + p["bq"][l], k + p["bk"][l], v + p["bv"][l]
        q = rope(q.reshape(T, H, hd), pos, c)
        k = rope(k.reshape(T, KVH, hd), pos, c)
        v = v.reshape(T, KVH, hd)
        k = k.repeat_interleave(H // KVH, dim=1)
        v = v.repeat_interleave(H // KVH, dim=1)
        att = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        att = att.masked_fill(~allowed[None], float("-inf")).softmax(-1)
        o = torch.einsum("hts,shd->thd", att, v).reshape(T, C)
        x = x + o @ p["wo"][l].T
        h = rmsnorm(x, p["mlp_norm"][l], c["eps"])
        x = x + (torch.nn.functional.silu(h @ p["w_gate"][l].T) * (h @ p["w_up"][l].T)) @ p["w_down"][l].T
    x = rmsnorm(x, p["final_norm"], c["eps"])
    head = p["embed"] if c["tie"] else p["lm_head"]
    return x @ head.T


def head_outputs(logits, tokens, offsets, temperature):
    T = logits.shape[0]
    logp = torch.log_softmax(logits / temperature, dim=-1)
    entropy = -(logp.exp() * logp).sum(-1)
    targets = torch.full((T,), -1, dtype=torch.long)
    for s in range(len(offsets) - 1):
        for t in range(offsets[s], offsets[s + 1] - 1):
            targets[t] = tokens[t + 1]
    has = targets >= 0
    lp = torch.zeros(T, dtype=torch.float64)
    lp[has] = logp[has.nonzero().squeeze(1), targets[has]]
    return lp, entropy


def objective(flat, c, tokens, offsets, temperature, w, e):
    p = unflatten(flat, c)
    logits = forward(p, c, tokens, offsets)
    lp, ent = head_outputs(logits, tokens, offsets, temperature)
    return (w * lp).sum() + (e * ent).sum(), logits, lp, ent


def gradient(params0, c, tokens, offsets, temperature, w, e):
    flat = params0.clone().requires_grad_(True)
    J, logits, lp, ent = objective(flat, c, tokens, offsets, temperature, w, e)
    J.backward()
    return J.item(), flat.grad.clone(), logits.detach(), lp.detach(), ent.detach()


def lr_lambda(o):
    """Multiplier of the peak lr at optimizer step `step` (1-based)."""
    def f(step0):
        step = step0 + 1  # LambdaLR counts from 0
        if o["warmup"] > 0 and step <= o["warmup"]:
            return step / o["warmup"]
        if o["schedule"] == 0:
            return 1.0
        span = o["total"] - o["warmup"]
        progress = min(1.0, (step - o["warmup"]) / span) if span > 0 else 1.0
        return o["min_lr_ratio"] + (1 - o["min_lr_ratio"]) * 0.5 * (1 + math.cos(math.pi * progress))
    return f


def adamw_steps(params0, c, o, grads):
    p = unflatten(params0, c)
    leaves = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    groups = [{"params": [leaves[k] for k in leaves if k in DECAYS], "weight_decay": o["wd"]},
              {"params": [leaves[k] for k in leaves if k not in DECAYS], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(o))
    out = []
    for g in grads:
        gd = unflatten(g, c)
        for k, leaf in leaves.items():
            leaf.grad = gd[k].clone()
        if o["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(list(leaves.values()), o["clip"])
        opt.step()
        sched.step()
        out.append(flatten({k: v.detach() for k, v in leaves.items()}, c))
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    r = Reader(open(src, "rb").read())
    if r.data[:8] != b"RLVRREF2":
        sys.exit("ref_model.py: %s is not a RLVRREF2 file" % src)
    r.pos = 8
    V, C, L, H, KVH, F, tie = r.take("i", 7)
    qkv_bias, scaling_kind, orig = r.take("i", 3)
    factor, low, high = r.take("d", 3)
    theta, eps, temperature = r.take("d", 3)
    lr, b1, b2, aeps, wd, clip, min_ratio = r.take("d", 7)
    warmup, total, schedule, n_steps = r.take("i", 4)
    (n_seqs,) = r.take("i")
    offsets = list(r.take("i", n_seqs + 1))
    T = offsets[-1]
    tokens = list(r.take("i", T))
    scaling = {"factor": factor, "low": low, "high": high, "orig": orig} if scaling_kind == 1 else None
    c = {"V": V, "C": C, "L": L, "H": H, "KVH": KVH, "F": F, "tie": bool(tie), "theta": theta, "eps": eps,
         "qkv_bias": bool(qkv_bias), "scaling": scaling}
    o = {"lr": lr, "beta1": b1, "beta2": b2, "eps": aeps, "wd": wd, "clip": clip, "min_lr_ratio": min_ratio,
         "warmup": warmup, "total": total, "schedule": schedule}
    P = sum(math.prod(s) for s in shapes(c).values())
    params0 = r.tensor(P)
    w_sft, w_rl, e_rl = r.tensor(T), r.tensor(T), r.tensor(T)
    grads = [r.tensor(P) for _ in range(n_steps)]
    assert r.pos == len(r.data), "trailing bytes in %s" % src

    zero = torch.zeros(T, dtype=torch.float64)
    J_sft, g_sft, logits, lp, ent = gradient(params0, c, tokens, offsets, temperature, w_sft, zero)
    J_rl, g_rl, _, _, _ = gradient(params0, c, tokens, offsets, temperature, w_rl, e_rl)
    after = adamw_steps(params0, c, o, grads)

    parts = [logits.reshape(-1), lp, ent, torch.tensor([J_sft, J_rl], dtype=torch.float64), g_sft, g_rl] + after
    with open(dst, "wb") as f:
        f.write(torch.cat(parts).numpy().tobytes())


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
