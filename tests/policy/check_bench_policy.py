#!/usr/bin/env python3
"""Runs `rlvr bench policy --quick --json` and checks its output: every line
is a JSON object with bench, config, tokens_per_s, gflops, ceiling_gflops and
ratio (numbers > 0, ratio = gflops / ceiling_gflops), and every bench appears
as often as it should. Speed is not judged: no wall-clock limits in tests.

usage: check_bench_policy.py RLVR_BINARY"""
import json
import math
import subprocess
import sys

REQUIRED = {"bench": str, "config": str, "tokens_per_s": float, "gflops": float,
            "ceiling_gflops": float, "ratio": float}
BENCHES = {"policy_train_step": 2, "policy_decode": 4, "policy_group_prefill": 2, "policy_prefill": 1}


def check_line(n, line, failures):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        failures.append(f"line {n}: not JSON ({e}): {line!r}")
        return None
    if not isinstance(obj, dict):
        failures.append(f"line {n}: not a JSON object")
        return None
    for key, kind in REQUIRED.items():
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


def main():
    proc = subprocess.run([sys.argv[1], "bench", "policy", "--quick", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"FAIL: rlvr bench policy exited {proc.returncode}\n{proc.stderr}")
        return 1
    failures, seen = [], {}
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    for n, line in enumerate(lines, 1):
        obj = check_line(n, line, failures)
        if obj and isinstance(obj.get("bench"), str):
            seen[obj["bench"]] = seen.get(obj["bench"], 0) + 1
            if obj["bench"] in ("policy_decode", "policy_group_prefill") and "shared" in obj.get("config", "") \
                    and "unshared" not in obj["config"] and not obj.get("speedup", 0) > 0:
                failures.append(f"line {n}: the shared {obj['bench']} line has no positive speedup")
    for bench, count in BENCHES.items():
        if seen.get(bench, 0) != count:
            failures.append(f"expected {count} lines of {bench}, got {seen.get(bench, 0)}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_bench_policy: {len(lines)} JSON lines, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
