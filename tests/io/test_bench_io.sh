#!/usr/bin/env bash
# `rlvr bench io --quick` prints well-formed JSON lines with every case and
# field, then the table (no speed thresholds: the machine is shared).
# Usage: test_bench_io.sh RLVR
set -u
rlvr=$1
out=$("$rlvr" bench io --quick) || { echo "FAIL: rlvr bench io --quick exited $?"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import json, sys
lines = sys.argv[1].splitlines()
rows = [json.loads(l) for l in lines if l.startswith("{")]
fail = []
cases = {}
for r in rows:
    cases.setdefault(r["case"], []).append(r)
    for k in ("bench", "case", "config", "mb", "mb_per_s", "ceiling_mb_per_s", "ratio", "stored_mb", "quick"):
        if k not in r:
            fail.append(f"{r.get('case')}: no field {k}")
    if r.get("bench") != "io" or r.get("quick") is not True:
        fail.append(f"{r}: bench/quick")
    for k in ("mb", "mb_per_s", "ceiling_mb_per_s", "ratio", "stored_mb"):
        if not (isinstance(r.get(k), (int, float)) and r[k] > 0):
            fail.append(f"{r['case']}: {k} = {r.get(k)} is not a positive number")
    if all(isinstance(r.get(k), (int, float)) and r.get(k) for k in ("mb_per_s", "ceiling_mb_per_s", "ratio")):
        if abs(r["ratio"] - r["mb_per_s"] / r["ceiling_mb_per_s"]) > 1e-3 * max(1.0, r["ratio"]):
            fail.append(f"{r['case']}: ratio is not mb_per_s / ceiling")
for c in ("shard_write", "shard_read", "checkpoint_save", "checkpoint_load"):
    if c not in cases:
        fail.append(f"case {c} missing")
levels = sorted(r["config"].split()[0] for r in cases.get("shard_write", []))
if levels != ["deflate=0", "deflate=1", "deflate=4"]:
    fail.append(f"shard_write levels {levels}")
for c in ("checkpoint_save", "checkpoint_load"):
    if "rss_growth_mb" not in (cases.get(c) or [{}])[0]:
        fail.append(f"{c}: no rss_growth_mb")
if not any(l.startswith("case ") for l in lines) or not any("ceiling:" in l for l in lines):
    fail.append("no human table")
for f in fail:
    print("FAIL:", f)
print(f"test_bench_io: {len(rows)} JSON lines, {len(fail)} problems")
sys.exit(1 if fail else 0)
PY
