"""Reference for rl/objective.h: the GRPO token objective in float64 PyTorch
autograd.

usage: /usr/bin/python3 ref_objective.py INPUT OUTPUT

INPUT (written by test_rl_reference.c) holds cases, one field per line,
floats as C99 hex (%a) so both sides see identical numbers:

    case K
    opts clip_low clip_high is_cap kl_beta entropy_coef aggregation normaliser
    offsets o_0 ... o_S          (S sequences)
    mask m_0 ... m_{T-1}
    logp ... / logp_sample ... / logp_prox ... / logp_ref ... / entropy ...
    advantage ... / token_advantage ...
    end

An optional array line may read "none". OUTPUT gets, per case:

    case K
    loss X
    dlogp ...       (d loss / d logp)
    dentropy ...    (d loss / d entropy)

Exit status 77 when torch is not installed (ctest SKIP_RETURN_CODE).
"""
import sys

try:
    import torch
except ImportError:
    print("ref_objective.py: torch is not installed (Debian python3-torch)", file=sys.stderr)
    sys.exit(77)

AGG_TOKENS, AGG_CONSTANT, AGG_SEQUENCE = 0, 1, 2


def read_cases(path):
    cases, cur = [], None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            name, vals = parts[0], parts[1:]
            if name == "case":
                cur = {"id": int(vals[0])}
            elif name == "end":
                cases.append(cur)
                cur = None
            elif name == "offsets":
                cur[name] = [int(v) for v in vals]
            elif vals == ["none"]:
                cur[name] = None
            else:
                cur[name] = [float.fromhex(v) for v in vals]
    return cases


def objective(c):
    t = lambda xs: None if xs is None else torch.tensor(xs, dtype=torch.float64)
    clip_low, clip_high, cap, beta, alpha, agg, norm = c["opts"]
    agg = int(agg)
    offsets = c["offsets"]
    n_seqs = len(offsets) - 1
    mask = t(c["mask"])
    T = mask.numel()
    seq = torch.empty(T, dtype=torch.long)
    for s in range(n_seqs):
        seq[offsets[s]:offsets[s + 1]] = s

    logp = torch.tensor(c["logp"], dtype=torch.float64, requires_grad=True)
    sample, prox, ref = t(c["logp_sample"]), t(c["logp_prox"]), t(c["logp_ref"])
    ent_in = c["entropy"] if c["entropy"] is not None else [0.0] * T
    entropy = torch.tensor(ent_in, dtype=torch.float64, requires_grad=True)
    if c["token_advantage"] is not None:
        A = t(c["token_advantage"])
    else:
        A = t(c["advantage"])[seq]

    if prox is not None:  # decoupled: ratio to the proximal policy, constant truncated IS weight
        ratio = torch.exp(logp - prox)
        weight = torch.clamp(torch.exp(prox - sample), max=cap)
    else:  # behaviour: the ratio itself is truncated at C
        ratio = torch.clamp(torch.exp(logp - sample), max=cap)
        weight = torch.ones(T, dtype=torch.float64)
    surrogate = weight * torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * A)
    if ref is not None:
        x = ref - logp
        kl = torch.exp(x) - x - 1
    else:
        kl = torch.zeros(T, dtype=torch.float64)
    J = surrogate - beta * kl + alpha * entropy

    counts = torch.zeros(n_seqs, dtype=torch.float64).index_add_(0, seq, mask)
    if agg == AGG_SEQUENCE:
        S = norm if norm > 0 else float((counts > 0).sum())
        per_token = torch.where(mask > 0, 1.0 / (S * counts[seq].clamp(min=1)), torch.zeros(T, dtype=torch.float64))
    else:
        N = norm if (agg == AGG_CONSTANT or norm > 0) else float(mask.sum())
        per_token = mask / N
    loss = -(per_token * J).sum()
    loss.backward()
    return loss.item(), logp.grad.tolist(), entropy.grad.tolist()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cases = read_cases(sys.argv[1])
    with open(sys.argv[2], "w") as out:
        for c in cases:
            loss, dlogp, dentropy = objective(c)
            out.write("case %d\n" % c["id"])
            out.write("loss %s\n" % float(loss).hex())
            out.write("dlogp %s\n" % " ".join(float(v).hex() for v in dlogp))
            out.write("dentropy %s\n" % " ".join(float(v).hex() for v in dentropy))
    print("ref_objective.py: %d cases, torch %s" % (len(cases), torch.__version__))


if __name__ == "__main__":
    main()
