#!/usr/bin/env bash
# `rlvr bench harness --quick` prints one well-formed JSON line per run (1
# and 64 environments) with every field, consistent with itself (rates from
# wall times, the ideal from the largest of its three terms, ratio = rate /
# ideal rate), then the table. No speed thresholds: the machine is shared.
# Usage: test_bench_harness.sh RLVR
set -u
rlvr=$1
out=$("$rlvr" bench harness --quick) || { echo "FAIL: rlvr bench harness --quick exited $?"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import json, sys
lines = sys.argv[1].splitlines()
rows = [json.loads(l) for l in lines if l.startswith("{")]
fail = []
def close(a, b):
    return abs(a - b) <= 2e-3 * max(abs(a), abs(b), 1e-9)
fields = ("bench", "config", "envs", "rollouts", "turns", "policy_tokens", "prompts_shared", "tool_waits",
          "latency_mean_s", "latency_p99_s", "wall_s", "rollouts_per_s", "ideal_rollouts_per_s", "ratio", "bound",
          "generation_bound_s", "latency_bound_s", "longest_chain_s", "decode_step_1_s", "decode_step_s",
          "prefill_token_s", "quick")
for r in rows:
    for k in fields:
        if k not in r:
            fail.append(f"envs={r.get('envs')}: no field {k}")
    if any(k not in r for k in fields):
        continue
    if r["bench"] != "harness_rollouts" or r["quick"] is not True:
        fail.append(f"{r}: bench/quick")
    positive = [k for k in fields if k not in ("bench", "config", "prompts_shared", "bound", "quick")]
    for k in positive:
        if not (isinstance(r[k], (int, float)) and r[k] > 0):
            fail.append(f"envs={r['envs']}: {k} = {r[k]} is not a positive number")
    if fail:
        continue
    if not close(r["rollouts_per_s"], r["rollouts"] / r["wall_s"]):
        fail.append(f"envs={r['envs']}: rollouts_per_s is not rollouts / wall_s")
    terms = {"generation": r["generation_bound_s"], "latency": r["latency_bound_s"], "longest": r["longest_chain_s"]}
    ideal = max(terms.values())
    if not close(r["ideal_rollouts_per_s"], r["rollouts"] / ideal) or terms[r["bound"]] != ideal:
        fail.append(f"envs={r['envs']}: the ideal is not rollouts / the largest term ({r['bound']})")
    if not close(r["ratio"], r["rollouts_per_s"] / r["ideal_rollouts_per_s"]):
        fail.append(f"envs={r['envs']}: ratio is not rollouts_per_s / ideal_rollouts_per_s")
    if r["latency_p99_s"] > 30 * 0.020 * 1.0001 or r["tool_waits"] > r["turns"]:
        fail.append(f"envs={r['envs']}: latencies past the cut or more waits than turns")
envs = [r.get("envs") for r in rows]
if envs != [1, 64]:
    fail.append(f"runs for envs {envs}, want [1, 64]")
elif "speedup" not in rows[1] or rows[1]["prompts_shared"] < rows[1]["rollouts"] // 2:
    fail.append("64 environments: no speedup field, or group prompts were not shared")
elif not close(rows[1]["speedup"], rows[1]["rollouts_per_s"] / rows[0]["rollouts_per_s"]):
    fail.append("speedup is not the ratio of the two rates")
if not any(l.lstrip().startswith("envs ") for l in lines) or not any("harness benchmark" in l for l in lines):
    fail.append("no human table")
for f in fail:
    print("FAIL:", f)
print(f"test_bench_harness: {len(rows)} JSON lines, {len(fail)} problems")
for r in rows:
    print(f"  envs={r.get('envs')}: {r.get('rollouts_per_s')} rollouts/s, ratio {r.get('ratio')} ({r.get('bound')})")
sys.exit(1 if fail else 0)
PY
