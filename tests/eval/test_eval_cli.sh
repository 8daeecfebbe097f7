#!/usr/bin/env bash
# tests/eval/test_eval_cli.sh RLVR CHECKPOINT_TOOL — `rlvr eval` end to end on
# a checked arith pool with a random-weights checkpoint (written by
# tests/jobs/agent_checkpoint): refusal without a manifest, the table, the
# JSON document (--json and --out agree), two checkpoints with their paired
# difference, usage errors.
set -euo pipefail
rlvr=$1
make_ckpt=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"

"$rlvr" tasks gen arith --n 5 --seed 4 --split eval --out "$tmp/pool" >/dev/null
ckpt=$("$make_ckpt" "$tmp/ckpt")
tiny_ini "$tmp/run.ini" eval

# no manifest: refused with what to do
set +e
"$rlvr" eval --checkpoint "$ckpt" --pool "$tmp/pool" --config "$tmp/run.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "unchecked pool: exit $rc"
grep -q "rlvr tasks check" "$tmp/err" || fail "unchecked pool: $(cat "$tmp/err")"

"$rlvr" tasks check "$tmp/pool" >/dev/null

# the table
"$rlvr" eval --checkpoint "$ckpt" --pool "$tmp/pool" --config "$tmp/run.ini" --samples 2 >"$tmp/out" 2>"$tmp/err" \
    || fail "eval: $(cat "$tmp/err")"
grep -q "pass@1 \[95% CI\]" "$tmp/out" || fail "no table header: $(cat "$tmp/out")"
grep -Eq "^  arith +5 +10 " "$tmp/out" || fail "no arith row: $(cat "$tmp/out")"
grep -Eq "^  all +5 +10 " "$tmp/out" || fail "no all row: $(cat "$tmp/out")"
grep -q "^eval: 5/5 tasks" "$tmp/err" || fail "no progress line: $(cat "$tmp/err")"

# two checkpoints (the same weights), JSON on stdout and in a file
"$rlvr" eval --checkpoint "$ckpt" --checkpoint "$ckpt" --pool "$tmp/pool" --config "$tmp/run.ini" --samples 4 \
    --limit 3 --seed 9 --json --out "$tmp/report.json" >"$tmp/out" 2>"$tmp/err" || fail "eval --json: $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/out" "$tmp/report.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc == json.load(open(sys.argv[2])), "--json and --out differ"
assert doc["format"] == "rlvr-eval-report/1" and doc["split"] == "eval"
assert len(doc["checkpoints"]) == 2
a, b = (c["result"] for c in doc["checkpoints"])
assert a["format"] == "rlvr-eval/1" and a["samples"] == 4 and a["seed"] == "9"
assert len(a["tasks"]) == 3 and [t["n"] + t["infra"] for t in a["tasks"]] == [4, 4, 4]
assert a["tasks"] == b["tasks"], "the same weights and seed must give the same counts"
g = a["groups"][0]
assert g["family"] == "all" and [p["k"] for p in g["pass_at_k"]] == [1, 2, 4]
assert g["pass1"]["value"] == g["pass_at_k"][0]["value"] == 0
assert 0 <= g["compliance"] <= 1
c = doc["comparison"]
assert c["tasks"] == 3 and c["mean_diff"] == 0 and c["low"] == 0 and c["high"] == 0
PY

# usage errors
set +e
"$rlvr" eval --pool "$tmp/pool" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing --checkpoint"
"$rlvr" eval --checkpoint "$ckpt" --pool "$tmp/pool" --samples 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--samples 0"
"$rlvr" eval --checkpoint "$ckpt" --pool "$tmp/pool" --bogus 1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--bogus"
"$rlvr" eval --checkpoint "$ckpt" --pool "$tmp/pool" --split regression >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no regression task" "$tmp/err" || fail "empty split: exit $rc, $(cat "$tmp/err")"
echo "test_eval_cli: ok"
