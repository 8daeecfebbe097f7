#!/usr/bin/env python3
"""Runs `rlvr bench policy --quick --json` and checks its output: every line
is a JSON object with bench, config, tokens_per_s, gflops, ceiling_gflops and
ratio (numbers > 0, ratio = gflops / ceiling_gflops), except the one
policy_machine line, which has fma_peak_gflops and read_gbps; the decode lines
carry a roofline_tokens_per_s, the shared group's a roofline_speedup equal to
its roofline over batch 1's; every bench appears as often as it should.
The decode pair and one prefill come once per weight format of the sampler
(f32, bf16, q8_0: a "weights" field and "weights=NAME(kernel)" in the
config), the bf16 and q8_0 lines with a vs_f32 equal to their tokens_per_s
over the f32 line of the same config; one policy_pack line per format
(weights, kernel, ms, packed_bytes).
Speed is not judged: no wall-clock limits in tests.

With --model NAME it runs `rlvr bench policy --model NAME --quick --json`
instead: the machine line, per weight format the decode pair and one prefill
and a policy_pack line, and one train step, every one of them but the pack
lines with a roofline_tokens_per_s and a roofline_ratio equal to
tokens_per_s over it.

usage: check_bench_policy.py RLVR_BINARY [--model NAME]"""
import json
import math
import subprocess
import sys

REQUIRED = {"bench": str, "config": str, "tokens_per_s": float, "gflops": float,
            "ceiling_gflops": float, "ratio": float}
MACHINE = {"bench": str, "config": str, "fma_peak_gflops": float, "read_gbps": float}
FORMATS = ("f32", "bf16", "q8_0")
PACK = {"bench": str, "config": str, "weights": str, "kernel": str, "ms": float, "packed_bytes": float}
BENCHES = {"policy_machine": 1, "policy_train_step": 2, "policy_decode": 2 * len(FORMATS) + 2,
           "policy_group_prefill": 2, "policy_prefill": len(FORMATS) + 1, "policy_pack": len(FORMATS)}
WEIGHTS = {"bench": str, "config": str, "params": float, "weights_fnv1a": str}
MODEL_BENCHES = {"policy_weights": 1, "policy_machine": 1, "policy_train_step": 1,
                 "policy_decode": 2 * len(FORMATS), "policy_prefill": len(FORMATS), "policy_pack": len(FORMATS)}


def check_line(n, line, failures):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        failures.append(f"line {n}: not JSON ({e}): {line!r}")
        return None
    if not isinstance(obj, dict):
        failures.append(f"line {n}: not a JSON object")
        return None
    required = {"policy_machine": MACHINE, "policy_weights": WEIGHTS, "policy_pack": PACK}.get(obj.get("bench"),
                                                                                            REQUIRED)
    for key, kind in required.items():
        if key not in obj:
            failures.append(f"line {n}: field {key!r} missing")
        elif kind is float and not (isinstance(obj[key], (int, float)) and math.isfinite(obj[key])
                                    and obj[key] > 0):
            failures.append(f"line {n}: {key} = {obj[key]!r} is not a positive number")
        elif kind is str and not (isinstance(obj[key], str) and obj[key]):
            failures.append(f"line {n}: {key} is not a non-empty string")
    if all(isinstance(obj.get(k), (int, float)) and obj.get(k, 0) > 0 for k in ("gflops", "ceiling_gflops", "ratio")):
        want = obj["gflops"] / obj["ceiling_gflops"]
        if abs(obj["ratio"] - want) > 1e-3 * max(1.0, want):
            failures.append(f"line {n}: ratio {obj['ratio']} != gflops / ceiling_gflops = {want}")
    return obj


def check_formats(lines, failures):
    """Each format's decode and prefill lines: the format named in the
    weights field and the config; bf16 and q8_0 with vs_f32 = tokens_per_s
    over the f32 line of the same config."""
    f32 = {}
    for obj in lines:
        w = obj.get("weights")
        if w not in FORMATS or f"weights={w}(" not in obj["config"]:
            failures.append(f"{obj['config']}: weights {w!r} not one of {FORMATS} named in the config")
            continue
        key = (obj["bench"], obj["config"].split(" weights=")[0])
        if w == "f32":
            f32[key] = obj["tokens_per_s"]
            if "vs_f32" in obj:
                failures.append(f"{obj['config']}: an f32 line with vs_f32")
        elif key not in f32:
            failures.append(f"{obj['config']}: no f32 line of the same config before it")
        elif not (isinstance(obj.get("vs_f32"), (int, float))
                  and abs(obj["vs_f32"] - obj["tokens_per_s"] / f32[key]) <= 1e-3 * obj["vs_f32"]):
            failures.append(f"{obj['config']}: vs_f32 {obj.get('vs_f32')!r} != tokens_per_s / f32's")


def check_rooflines(lines, failures):
    """Each format's d=512 decode pair: positive rooflines, the group's
    speedup bound equal to the ratio of the two rooflines."""
    if len(lines) != 2 * len(FORMATS):
        failures.append(f"expected {2 * len(FORMATS)} policy_decode lines with roofline_tokens_per_s, "
                        f"got {len(lines)}")
        return
    for i in range(0, len(lines), 2):
        check_roofline_pair(lines[i:i + 2], failures)


def check_roofline_pair(lines, failures):
    one, group = lines
    for obj in lines:
        if not (isinstance(obj["roofline_tokens_per_s"], (int, float)) and obj["roofline_tokens_per_s"] > 0):
            failures.append(f"{obj['config']}: roofline_tokens_per_s = {obj['roofline_tokens_per_s']!r}")
            return
    want = group["roofline_tokens_per_s"] / one["roofline_tokens_per_s"]
    got = group.get("roofline_speedup")
    if not isinstance(got, (int, float)) or abs(got - want) > 1e-3 * want:
        failures.append(f"roofline_speedup {got!r} != group roofline / batch-1 roofline = {want}")


def check_roofline_ratio(n, obj, failures):
    """A model-size line: roofline_ratio = tokens_per_s / roofline_tokens_per_s."""
    roof, ratio = obj.get("roofline_tokens_per_s"), obj.get("roofline_ratio")
    if not all(isinstance(x, (int, float)) and x > 0 for x in (roof, ratio)):
        failures.append(f"line {n}: roofline_tokens_per_s {roof!r} or roofline_ratio {ratio!r} missing")
    elif abs(ratio - obj["tokens_per_s"] / roof) > 1e-3 * ratio:
        failures.append(f"line {n}: roofline_ratio {ratio} != tokens_per_s / roofline_tokens_per_s")


def main():
    model = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--model" else None
    cmd = [sys.argv[1], "bench", "policy", "--quick", "--json"] + (["--model", model] if model else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"FAIL: rlvr bench policy exited {proc.returncode}\n{proc.stderr}")
        return 1
    failures, seen, big_decode, formatted = [], {}, [], []
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    for n, line in enumerate(lines, 1):
        obj = check_line(n, line, failures)
        if obj and isinstance(obj.get("bench"), str):
            seen[obj["bench"]] = seen.get(obj["bench"], 0) + 1
            if obj["bench"] == "policy_decode" and "roofline_tokens_per_s" in obj:
                big_decode.append(obj)
            if model and obj["bench"] == "policy_weights" and not obj.get("config", "").startswith("random"):
                failures.append(f"line {n}: --model benches random weights, the line says {obj.get('config')!r}")
            if model and obj["bench"] not in ("policy_machine", "policy_weights", "policy_pack"):
                check_roofline_ratio(n, obj, failures)
            if "weights" in obj and obj["bench"] in ("policy_decode", "policy_prefill"):
                formatted.append(obj)
            if obj["bench"] == "policy_pack" and obj.get("weights") not in FORMATS:
                failures.append(f"line {n}: policy_pack of weights {obj.get('weights')!r}")
            if obj["bench"] in ("policy_decode", "policy_group_prefill") and "shared" in obj.get("config", "") \
                    and "unshared" not in obj["config"] and not obj.get("speedup", 0) > 0:
                failures.append(f"line {n}: the shared {obj['bench']} line has no positive speedup")
    check_rooflines(big_decode, failures)
    check_formats(formatted, failures)
    if len(formatted) != 3 * len(FORMATS):
        failures.append(f"expected {3 * len(FORMATS)} decode and prefill lines naming a format, got {len(formatted)}")
    for bench, count in (MODEL_BENCHES if model else BENCHES).items():
        if seen.get(bench, 0) != count:
            failures.append(f"expected {count} lines of {bench}, got {seen.get(bench, 0)}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_bench_policy: {len(lines)} JSON lines, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
