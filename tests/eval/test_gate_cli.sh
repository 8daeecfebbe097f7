#!/usr/bin/env bash
# tests/eval/test_gate_cli.sh RLVR CHECKPOINT_TOOL — `rlvr gate` end to end on a
# checked arith pool (eval + regression splits) laid out like a run directory
# (<run>/pool, <run>/pool.manifest.json, <run>/checkpoints/step_N.h5), with a
# random-weights checkpoint (tests/jobs/agent_checkpoint) as both candidate and
# baseline, invoked the way the Slurm chain does:
#   candidate == baseline, default tolerance      → exit 0, `promoted` written
#   --tolerance -0.01 (an improvement required)   → exit 1, `promoted` untouched
#   --compliance 1 over [gate] compliance_min      → exit 1 (random weights write
#                                                    calls that do not parse)
# the JSON report (--json, --report), the HDF5 report read by h5dump and h5py,
# a pool without regression tasks ("no tasks"), and errors → exit 2.
set -euo pipefail
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
rlvr=$1
make_ckpt=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"

run=$tmp/run
mkdir -p "$run"
"$rlvr" tasks gen arith --n 5 --seed 4 --split eval --out "$run/pool" >/dev/null
"$rlvr" tasks gen arith --n 3 --seed 5 --split regression --out "$run/pool" >/dev/null
"$rlvr" tasks check "$run/pool" >/dev/null
[ -f "$run/pool.manifest.json" ] || fail "no manifest at the run's default place"
ckpt=$("$make_ckpt" "$run/checkpoints")
case "$ckpt" in "$run/checkpoints/step_"*.h5) ;; *) fail "checkpoint at $ckpt" ;; esac
base=$("$make_ckpt" "$tmp/baseline")
tiny_ini "$tmp/run.ini" eval gate.compliance_min=0.0 gate.samples=2

# 1. promote: the Slurm chain's command line
set +e
"$rlvr" gate --candidate "$ckpt" --baseline "$base" --pool "$run/pool" --config "$tmp/run.ini" --promote "$run" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 0 ] || fail "same weights: exit $rc: $(cat "$tmp/out" "$tmp/err")"
grep -q "^gate: PROMOTE$" "$tmp/out" || fail "no PROMOTE line: $(cat "$tmp/out")"
grep -Eq "^  target +PASS +eval/all: 5 tasks" "$tmp/out" || fail "target row: $(cat "$tmp/out")"
grep -Eq "^  regression +PASS +regression/arith: 3 tasks" "$tmp/out" || fail "regression row: $(cat "$tmp/out")"
grep -Eq "^  compliance +PASS" "$tmp/out" || fail "compliance row: $(cat "$tmp/out")"
grep -Eq "^  eval/arith +5 " "$tmp/out" || fail "per-family table: $(cat "$tmp/out")"
[ -f "$run/promoted" ] || fail "no $run/promoted"
[ "$(cat "$run/promoted")" = "$(realpath "$ckpt")" ] || fail "promoted holds $(cat "$run/promoted")"
[ "$(wc -l <"$run/promoted")" -eq 1 ] || fail "promoted is not one line"
[ -f "$ckpt.keep" ] || fail "the promoted checkpoint is not marked for retention ($ckpt.keep)"
stem=$(basename "$ckpt" .h5)
[ -f "$run/gate/$stem.json" ] && [ -f "$run/gate/$stem.h5" ] || fail "no report in $run/gate: $(ls "$run/gate")"
ls "$run" | grep -q '\.part$' && fail "a .part file was left in $run"

# the HDF5 report: h5dump and h5py read it
h5dump -a /format "$run/gate/$stem.h5" | grep -q '"rlvr.gate_report"' || fail "h5dump: format"
h5dump -d /criteria/passed "$run/gate/$stem.h5" >"$tmp/dump" || fail "h5dump /criteria/passed"
grep -q "(0): 1, 1, 1" "$tmp/dump" || fail "criteria flags: $(cat "$tmp/dump")"
/usr/bin/python3 - "$run/gate/$stem.h5" "$run/gate/$stem.json" "$(realpath "$ckpt")" <<'PY'
import h5py, json, sys
f = h5py.File(sys.argv[1], "r")
doc = json.load(open(sys.argv[2]))
assert f.attrs["format"] == "rlvr.gate_report" and f.attrs["format_version"] == 1
assert f.attrs["passed"] == 1 and f.attrs["candidate"] == sys.argv[3] and f.attrs["samples"] == 2
assert [x.decode() for x in f["criteria/name"][:]] == ["target", "regression", "compliance"]
assert [x.decode() for x in f["tests/criterion"][:]] == ["target", "regression"]
assert [x.decode() for x in f["tests/family"][:]] == ["all", "arith"]
assert list(f["tests/n_tasks"][:]) == [5, 3]
ks = [(c.decode(), s.decode(), fam.decode(), m.decode(), int(k)) for c, s, fam, m, k in
      zip(f["estimates/checkpoint"], f["estimates/split"], f["estimates/family"], f["estimates/metric"], f["estimates/k"])]
assert ("candidate", "regression", "arith", "pass^k", 2) in ks and ("baseline", "eval", "all", "pass@k", 1) in ks
assert json.loads(f["report_json"][0].decode()) == doc, "report_json differs from the .json file"
# the JSON report: the names other tools read
assert doc["format"] == "rlvr-gate/1" and doc["passed"] is True and doc["candidate"] == sys.argv[3]
assert doc["candidate_step"] == 0 and isinstance(doc["candidate_version"], int)
t = doc["criteria"]["target"]
assert t["passed"] and t["split"] == "eval" and t["n_tasks"] == 5 and t["tolerance"] == 0.02
assert t["mean_diff"] == 0 and t["low"] == 0 and t["high"] == 0, "the same weights and seeds must not differ"
r = doc["criteria"]["regression"]
assert r["passed"] and r["tolerance"] == 0.05 and [x["name"] for x in r["families"]] == ["arith"]
assert r["families"][0]["split"] == "regression" and r["families"][0]["n_tasks"] == 3
c = doc["criteria"]["compliance"]
assert c["passed"] and c["threshold"] == 0 and 0 <= c["value"] <= 1
for who in ("baseline_eval", "candidate_eval"):
    assert set(doc[who]) == {"eval", "regression"} and doc[who]["eval"]["format"] == "rlvr-eval/1"
    g = doc[who]["eval"]["groups"][0]
    assert g["family"] == "all" and [p["k"] for p in g["pass_at_k"]] == [1, 2] and len(g["pass_hat_k"]) == 2
assert doc["baseline_eval"]["eval"]["tasks"] == doc["candidate_eval"]["eval"]["tasks"]
assert doc["samples"] == 2 and doc["seed"] == 1 and doc["time_unix"] > 1.6e9
PY

# 2. the candidate as its own baseline, an improvement required: reject, `promoted`
# untouched (here and in a fresh run directory)
before=$(stat -c '%Y %s %i' "$run/promoted")
mkdir -p "$tmp/run2"
cp -r "$run/pool" "$tmp/run2/pool"
cp "$run/pool.manifest.json" "$tmp/run2/"
for dir in "$run" "$tmp/run2"; do
    set +e
    # no --pool: the run's built-in pool <run>/pool is the default
    "$rlvr" gate --candidate "$ckpt" --baseline "$ckpt" --config "$tmp/run.ini" --promote "$dir" --tolerance -0.01 \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
    [ $rc -eq 1 ] || fail "--tolerance -0.01 in $dir: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    grep -q "^gate: REJECT (target)$" "$tmp/out" || fail "no REJECT (target): $(cat "$tmp/out")"
    grep -Eq "^  target +FAIL .*needs low >= \+0\.010" "$tmp/out" || fail "target row: $(cat "$tmp/out")"
    [ -f "$dir/gate/$stem.json" ] || fail "no report in $dir/gate on reject"
done
[ "$(stat -c '%Y %s %i' "$run/promoted")" = "$before" ] || fail "promoted changed on reject"
[ "$(cat "$run/promoted")" = "$(realpath "$ckpt")" ] || fail "promoted content changed on reject"
[ ! -e "$tmp/run2/promoted" ] || fail "promoted written on reject"
[ ! -e "$base.keep" ] || fail "the baseline was marked"
grep -q '"passed": false' "$tmp/run2/gate/$stem.json" || fail "rejected report says passed"

# 3. the flag over [gate] compliance_min: random weights write calls that do not parse
set +e
"$rlvr" gate --candidate "$ckpt" --baseline "$base" --pool "$run/pool" --config "$tmp/run.ini" --compliance 1 \
    --json --report "$tmp/rep" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "--compliance 1: exit $rc: $(cat "$tmp/err")"
grep -q "^gate: REJECT (compliance)$" "$tmp/err" || fail "--json: decision line on stderr: $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/out" "$tmp/rep.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc == json.load(open(sys.argv[2])), "--json and --report differ"
c = doc["criteria"]["compliance"]
assert not doc["passed"] and not c["passed"] and c["threshold"] == 1 and c["value"] < 1 and c["calls"] > 0
assert doc["criteria"]["target"]["passed"] and doc["criteria"]["regression"]["passed"]
PY
[ -f "$tmp/rep.h5" ] || fail "--report: no $tmp/rep.h5"

# 4. a pool without regression tasks: the criterion passes as "no tasks"
"$rlvr" tasks gen arith --n 3 --seed 6 --split eval --out "$tmp/pool2" >/dev/null
"$rlvr" tasks check "$tmp/pool2" >/dev/null
"$rlvr" gate --candidate "$ckpt" --baseline "$base" --pool "$tmp/pool2" --config "$tmp/run.ini" --samples 1 \
    --seed 3 >"$tmp/out" 2>"$tmp/err" || fail "no regression tasks: $(cat "$tmp/out" "$tmp/err")"
grep -Eq "^  regression +PASS +no tasks" "$tmp/out" || fail "no-tasks row: $(cat "$tmp/out")"
grep -q "^gate: PROMOTE$" "$tmp/out" || fail "no regression tasks: $(cat "$tmp/out")"

# --regression "": no regression check configured, the same "no tasks"
"$rlvr" gate --candidate "$ckpt" --baseline "$base" --pool "$run/pool" --config "$tmp/run.ini" --regression "" \
    --limit 2 >"$tmp/out" 2>"$tmp/err" || fail "--regression \"\": $(cat "$tmp/out" "$tmp/err")"
grep -Eq "^  regression +PASS +no tasks" "$tmp/out" || fail "--regression \"\": $(cat "$tmp/out")"
grep -Eq "^  target +PASS +eval/all: 2 tasks" "$tmp/out" || fail "--limit 2: $(cat "$tmp/out")"

# 5. errors: exit 2 with a message, never 0 or 1
expect2() { # expect2 PATTERN ARGS...
    local pattern=$1
    shift
    set +e
    "$rlvr" gate "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    set -e
    [ $rc -eq 2 ] || fail "gate $*: exit $rc (want 2): $(cat "$tmp/err")"
    grep -q -- "$pattern" "$tmp/err" || fail "gate $*: message: $(cat "$tmp/err")"
}
expect2 "rlvr gate: missing --baseline B" --candidate "$ckpt"
expect2 "--tolerance T wants a number" --candidate "$ckpt" --baseline "$base" --tolerance abc
expect2 "--compliance P wants a number in 0..1" --candidate "$ckpt" --baseline "$base" --compliance 2
expect2 "unknown option --bogus" --candidate "$ckpt" --baseline "$base" --bogus 1
expect2 "cannot open $tmp/nope.h5" --candidate "$tmp/nope.h5" --baseline "$base" --pool "$run/pool"
expect2 "no task pool" --candidate "$ckpt" --baseline "$base" --config "$tmp/run.ini"
expect2 "$tmp/missing" --candidate "$ckpt" --baseline "$base" --pool "$tmp/missing" --config "$tmp/run.ini"
"$rlvr" tasks gen arith --n 2 --seed 7 --split eval --out "$tmp/unchecked" >/dev/null
expect2 "rlvr tasks check" --candidate "$ckpt" --baseline "$base" --pool "$tmp/unchecked" --config "$tmp/run.ini"
expect2 "has no eval task of family nosuch" --candidate "$ckpt" --baseline "$base" --pool "$run/pool" \
    --config "$tmp/run.ini" --regression eval:nosuch
expect2 "has no train task" --candidate "$ckpt" --baseline "$base" --pool "$run/pool" --config "$tmp/run.ini" \
    --split train
printf '[gate]\nsplits = holdout\n' >"$tmp/bad.ini"
expect2 "bad.ini:2" --candidate "$ckpt" --baseline "$base" --pool "$run/pool" --config "$tmp/bad.ini"
"$rlvr" gate --help | grep -q "exit status: 0 promote, 1 reject, 2" || fail "--help"
"$rlvr" help | grep -q "rlvr gate" || fail "rlvr help does not list gate"
echo "test_gate_cli: ok"
