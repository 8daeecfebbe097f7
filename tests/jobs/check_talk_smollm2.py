"""`rlvr generate` and `rlvr chat` on SmolLM2-135M-Instruct against transformers.

    check_talk_smollm2.py RLVR CKPT GGUF CHECK_SMOLLM2_PY

CKPT is `rlvr model import GGUF`; the reference is transformers' Llama
holding gguf-py's dequantisation of the GGUF file (check_smollm2.py's
reference_model) and the GGUF's own tokenizer and chat template as
transformers reads them. Checks:
- `generate --temperature 0 --max-new 32 --ignore-stop` gives transformers'
  32 greedy tokens; without --ignore-stop, its tokens up to the first stop
  id, and the printed text is their decoding;
- `--logprobs` values are the reference's log-softmax of the same tokens
  (float32 in another order of operations, so within 2e-3; the 1e-5
  agreement with rlvr's own training forward is test_generate's);
- `--n 4 --seed 1 --json` gives the same samples twice;
- `chat` over a pipe: three lines, three replies, and before each reply the
  ids the model read equal apply_chat_template of the messages so far (the
  replies' text as the assistant's messages); with a small --context the
  oldest turns are left out with a notice, and what is read is still the
  template of the messages kept; /save writes those messages;
- Ctrl-C (SIGINT) during a reply stops that reply, and the chat goes on to
  answer the next line and exits 0 at the end of its input."""
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

import torch
from transformers import AutoTokenizer

PROMPT = "What is the capital of France?"
N_NEW = 32


def run(args, stdin=None):
    r = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL {' '.join(args[1:3])}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def logprobs(model, prompt, ids):
    with torch.no_grad():
        logits = model(torch.tensor([list(prompt) + list(ids)])).logits[0].double()
    lp = torch.log_softmax(logits, dim=-1)
    return [float(lp[len(prompt) + i - 1, t]) for i, t in enumerate(ids)]


def strip_timing(line):
    o = json.loads(line)
    for k in ("seconds", "tokens_per_s"):
        o.pop(k)
    return o


def check_generate(rlvr, ckpt, tok, ref, model, stops):
    fails = 0
    gen = [rlvr, "generate", "--checkpoint", ckpt, "--prompt", PROMPT, "--temperature", "0", "--max-new", str(N_NEW)]
    full = json.loads(run(gen + ["--ignore-stop", "--json"]).stdout)
    prompt = tok.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True)
    want = ref.greedy(model, prompt, N_NEW)  # argmax through the end of turn, as --ignore-stop
    ok = full["token_ids"] == want and full["prompt_tokens"] == len(prompt)
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} generate --temperature 0 --ignore-stop: {len(want)} greedy tokens "
          f"{'equal' if ok else 'differ from'} transformers' ({tok.decode(want)!r})")
    if not ok:
        print(f"     rlvr {full['token_ids']}\n     ref  {want}")
    cut = next((i + 1 for i, t in enumerate(want) if t in stops), len(want))
    stopped = json.loads(run(gen + ["--json"]).stdout)
    ok = stopped["token_ids"] == want[:cut] and stopped["stop"] == ("stop" if cut < len(want) else "length")
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} generate --temperature 0 stops after {len(stopped['token_ids'])} tokens "
          f"(reference: {cut}), stop = {stopped['stop']}")
    text = run(gen).stdout
    body = want[:cut - 1] if want[cut - 1] in stops else want[:cut]
    ok = text == tok.decode(body) + "\n"
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} printed text {text!r} is the decoding of the tokens")

    lp = json.loads(run(gen + ["--ignore-stop", "--json", "--logprobs"]).stdout)
    ref = logprobs(model, prompt, lp["token_ids"])
    worst = max(abs(a - b) for a, b in zip(lp["logprobs"], ref))
    ok = worst <= 2e-3
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} --logprobs: max |rlvr - transformers| = {worst:.2e} over {len(ref)} tokens")

    sampled = gen[:-4] + ["--max-new", "24", "--n", "4", "--seed", "1", "--json"]
    a = [strip_timing(x) for x in run(sampled).stdout.splitlines()]
    b = [strip_timing(x) for x in run(sampled).stdout.splitlines()]
    ok = len(a) == 4 and a == b and len({tuple(x["token_ids"]) for x in a}) > 1
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} --n 4 --seed 1 --json: {len(a)} samples, the same twice, "
          f"{len({tuple(x['token_ids']) for x in a})} distinct")
    return fails


def check_chat(rlvr, ckpt, tok, work, context, lines):
    """One piped conversation; the ids read before each reply against the template."""
    save = os.path.join(work, f"chat-{context}.json")
    args = [rlvr, "chat", "--checkpoint", ckpt, "--temperature", "0", "--max-new", "40", "--json"]
    if context:
        args += ["--context", str(context)]
    r = run(args, "\n".join(lines + [f"/save {save}"]) + "\n")
    turns = [json.loads(x) for x in r.stdout.splitlines()]
    fails = int(len(turns) != len(lines))
    messages, dropped = [], 0
    for line, t in zip(lines, turns):
        messages.append({"role": "user", "content": line})
        dropped += t["dropped"]
        want = tok.apply_chat_template(messages[2 * dropped:], add_generation_prompt=True)
        ok = t["prompt_ids"] == want
        fails += not ok
        print(f"{'ok  ' if ok else 'FAIL'} chat{' --context ' + str(context) if context else ''} turn {t['turn']}: "
              f"{len(want)} ids read = apply_chat_template of {len(messages) - 2 * dropped} messages; "
              f"reply {t['reply']['text']!r}")
        messages.append({"role": "assistant", "content": t["reply"]["text"]})
    with open(save) as f:
        saved = json.load(f)
    ok = saved == messages
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} /save wrote the {len(messages)} messages")
    notice = "is full: left out the oldest" in r.stderr
    if context:
        ok = notice and dropped > 0
        print(f"{'ok  ' if ok else 'FAIL'} --context {context}: {dropped} turns left out, notice: "
              f"{[x for x in r.stderr.splitlines() if 'full' in x]}")
    else:
        ok = not notice and dropped == 0
    fails += not ok
    return fails


def check_interrupt(rlvr, ckpt):
    p = subprocess.Popen([rlvr, "chat", "--checkpoint", ckpt, "--max-new", "400", "--seed", "2"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"Write a long story about a dragon who learns to read.\n")
    p.stdin.flush()
    got = b""
    while len(got) < 40:  # the reply is streaming: interrupt it in the middle
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        got += chunk
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(b"What is 2 + 2?\n", timeout=600)
    out, err = (got + out).decode(errors="replace"), err.decode(errors="replace")
    m = re.search(r"\((\d+) tokens, interrupted", err)
    ok = p.returncode == 0 and m and int(m.group(1)) < 400 and len(out.strip().splitlines()) >= 2
    print(f"{'ok  ' if ok else 'FAIL'} Ctrl-C during a reply: {m.group(0) if m else 'no interrupted line'}, "
          f"then a reply to the next line {out.strip().splitlines()[-1]!r}, exit {p.returncode}")
    if not ok:
        print(f"     stdout {out!r}\n     stderr {err!r}")
    return 0 if ok else 1


def main():
    rlvr, ckpt, gguf_path, check_smollm2 = sys.argv[1:5]
    spec = importlib.util.spec_from_file_location("check_smollm2", check_smollm2)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    tok = AutoTokenizer.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path))
    model = ref.reference_model(gguf_path)
    stops = {tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")}
    fails = check_generate(rlvr, ckpt, tok, ref, model, stops)
    lines = ["What is the capital of France?", "And of Italy?", "Name a river there."]
    with tempfile.TemporaryDirectory() as work:
        fails += check_chat(rlvr, ckpt, tok, work, 0, lines)
        fails += check_chat(rlvr, ckpt, tok, work, 100, lines)
    fails += check_interrupt(rlvr, ckpt)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
