#!/usr/bin/env bash
# rlvr report on a tiny real arithmetic run (sft, then 3 train steps), with a
# gate report pair and sweep tables written into the run as fixtures:
#   - the page is written, self-contained (no http(s) URL, no external file);
#   - headless Chromium loads it without a console or JavaScript error, and
#     the DOM holds every expected chart, each with its series non-empty (the
#     page's own check sets data-charts-ok on <body>);
#   - an SFT-only run gets its chart and a note for the missing RL metrics;
#   - a directory without metrics is exit 1 naming what is missing; bad
#     arguments are exit 2.
# Usage: test_report.sh RLVR [PYTHON]
set -euo pipefail
RLVR=$1
PY=${2:-$(command -v python3)} # standard library only
# shellcheck source=tests/lib/tiny_run.sh
. "$(dirname "$0")/../lib/tiny_run.sh"
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
tiny_tmpdir
tiny_ini "$dir/run.ini" sft sft.steps=12 entropy.target_low=0.25 entropy.target_high=0.75 train.steps=3

run=$dir/a
"$RLVR" sft "$dir/run.ini" --out "$run" > "$dir/sft.log" 2>&1 || { cat "$dir/sft.log"; fail "sft"; }
"$RLVR" train "$dir/run.ini" --out "$run" > "$dir/train.log" 2>&1 || { cat "$dir/train.log"; fail "train"; }

# ---- fixtures: two gate reports (one promoted, one rejected) and sweeps ----
mkdir -p "$run/gate" "$run/sweep_main" "$dir/extra_sweep"
gate_json() { # STEP PASSED CAND DIFF LOW HIGH
    cat <<EOF
{"format":"rlvr-gate/1","candidate":"$run/checkpoints/step_0000000$1.h5","baseline":"$run/sft/checkpoints/step_00000012.h5",
 "candidate_step":$1,"candidate_version":$1,"passed":$2,
 "criteria":{"target":{"passed":$2,"split":"eval","n_tasks":8,"base_pass1":0.25,"cand_pass1":$3,"mean_diff":$4,"low":$5,"high":$6,"tolerance":0.02},
  "regression":{"passed":true,"tolerance":0.05,"families":[{"name":"arith <reg>","split":"regression","n_tasks":4,"base_pass1":0.5,"cand_pass1":0.5,"mean_diff":0,"low":-0.04,"high":0.04,"passed":true}]},
  "compliance":{"passed":true,"value":1.0,"threshold":1.0}},
 "baseline_eval":{},"candidate_eval":{},"samples":4,"seed":1,"time_unix":1700000000}
EOF
}
gate_json 2 true 0.3125 0.0625 -0.01 0.14 > "$run/gate/step_00000002.json"
gate_json 3 false 0.1875 -0.0625 -0.15 0.02 > "$run/gate/step_00000003.json"
echo '{"format":"something-else"}' > "$run/gate/other.json"
cat > "$run/sweep_main/sweep.csv" <<'EOF'
checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high
a/checkpoints/step_00000002.h5,2,arith,8,4,1,0.25,0.1,0.4
a/checkpoints/step_00000002.h5,2,arith,8,4,4,0.5,0.3,0.7
a/checkpoints/step_00000002.h5,2,"bug,fix",8,4,1,0.1,0.0,0.2
a/checkpoints/step_00000002.h5,2,"bug,fix",8,4,4,0.3,0.1,0.5
a/checkpoints/step_00000003.h5,3,arith,8,4,1,0.3,0.15,0.45
a/checkpoints/step_00000003.h5,3,arith,8,4,4,nan,nan,nan
a/checkpoints/step_00000003.h5,3,"bug,fix",8,4,1,0.2,0.05,0.35
a/checkpoints/step_00000003.h5,3,"bug,fix",8,4,4,0.35,0.2,0.5
EOF
cat > "$dir/extra_sweep/sweep.csv" <<'EOF'
checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high
x/step_00000001.h5,1,arith,8,4,1,0.2,0.1,0.3
x/step_00000002.h5,2,arith,8,4,1,0.25,0.15,0.35
x/step_00000003.h5,3,arith,8,4,1,0.35,0.2,0.5
EOF

# ---- the page ----
"$RLVR" report "$run" --sweep "$dir/extra_sweep" > "$dir/report.out" 2> "$dir/report.err" \
    || { cat "$dir/report.out" "$dir/report.err"; fail "rlvr report"; }
page=$run/report.html
[ -s "$page" ] || fail "no $page"
grep -q "report: wrote $page (15 charts" "$dir/report.out" || { cat "$dir/report.out"; fail "summary line"; }
if grep -Eio 'https?:[^" )]*' "$page"; then fail "the page references a URL"; fi
if grep -Eio '<(link|img|iframe)[^>]*>|<script [^>]*src=' "$page"; then fail "the page loads an external file"; fi

# Expected charts: id and the fewest series each must draw.
expected="reward:2 groups:2 entropy:2 length:3 staleness:4 clip-kl:2 grad-logprob:2 throughput:2 time:6
sft-loss:2 gate-pass1:2 gate-diff:2 sweep-0-k1:2 sweep-0-k4:2 sweep-1-k1:1"

check_dom() { # FILE static|browser: chart ids, series counts, non-empty series, header, gate table, notes
    "$PY" - "$1" "$2" "$expected" <<'EOF'
import sys
from html.parser import HTMLParser
path, mode, expected = sys.argv[1], sys.argv[2], dict(kv.split(":") for kv in sys.argv[3].split())
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.charts = {}; self.cur = None; self.body = {}; self.stack = []
        self.gate_rows = 0; self.in_gate = False; self.text = []; self.hbands = {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body": self.body = a
        if tag == "svg" and "chart" in (a.get("class") or "").split():
            self.cur = a["id"]; self.charts[self.cur] = {"declared": int(a["data-series"]), "series": []}
        if tag == "g" and self.cur and (a.get("class") or "").startswith("series"):
            self.charts[self.cur]["series"].append((a.get("data-name"), int(a["data-points"])))
        if tag == "rect" and self.cur and a.get("class") == "hband": self.hbands[self.cur] = True
        if tag == "table" and a.get("id") == "gate-table": self.in_gate = True
        if tag == "tr" and self.in_gate: self.gate_rows += 1
    def handle_endtag(self, tag):
        if tag == "svg": self.cur = None
        if tag == "table": self.in_gate = False
    def handle_data(self, d): self.text.append(d)
p = P(); p.feed(open(path, encoding="utf-8").read())
bad = []
if mode == "browser" and (p.body.get("data-charts-ok") != p.body.get("data-charts") or p.body.get("data-charts-bad")):
    bad.append("page check: ok=%s of %s, bad=%r" % (p.body.get("data-charts-ok"), p.body.get("data-charts"), p.body.get("data-charts-bad")))
if int(p.body.get("data-charts", -1)) != len(p.charts): bad.append("data-charts %s but %d charts" % (p.body.get("data-charts"), len(p.charts)))
for cid, want in expected.items():
    c = p.charts.get("chart-" + cid)
    if not c: bad.append("chart %s missing" % cid); continue
    if len(c["series"]) < int(want) or c["declared"] != len(c["series"]):
        bad.append("chart %s: %d series drawn (declared %d), want >= %s" % (cid, len(c["series"]), c["declared"], want))
    for name, n in c["series"]:
        if n <= 0: bad.append("chart %s: series %s empty" % (cid, name))
extra = set(p.charts) - {"chart-" + c for c in expected}
if extra: bad.append("unexpected charts %s" % sorted(extra))
if not p.hbands.get("chart-entropy"): bad.append("no entropy target band")
text = " ".join(p.text)
for want in ("rlvr report: a", "config hash", "target band 0.25", "arith <reg>", "FAIL", "other.json skipped"):
    if want not in text: bad.append("text %r missing" % want)
if p.gate_rows != 3: bad.append("gate table has %d rows, want header + 2" % p.gate_rows)
print("\n".join(bad) if bad else "DOM ok: %d charts" % len(p.charts))
sys.exit(1 if bad else 0)
EOF
}
check_dom "$page" static || fail "page structure (static)"

chromium=$(command -v chromium || true)
if [ -z "$chromium" ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    apt-get install -y chromium > "$dir/apt.log" 2>&1 || true
    chromium=$(command -v chromium || true)
fi
if [ -z "$chromium" ]; then
    echo "SKIP (browser part): chromium is not installed and could not be installed (see scripts/deps.sh)"
else
    HOME=$dir "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chrome" --enable-logging=stderr \
        --v=0 --dump-dom "file://$page" > "$dir/dom.html" 2> "$dir/chrome.err" \
        || { tail -20 "$dir/chrome.err"; fail "chromium could not load the page"; }
    if grep -E ':CONSOLE|Uncaught' "$dir/chrome.err"; then fail "console or JavaScript errors in chromium"; fi
    grep -q 'data-charts-ok="15"' "$dir/dom.html" || { grep -o '<body[^>]*>' "$dir/dom.html"; fail "page check in chromium"; }
    check_dom "$dir/dom.html" browser || fail "page structure in chromium"
    if grep -Eio 'https?:[^" )]*' "$dir/dom.html"; then fail "the DOM references a URL"; fi
fi

# ---- an SFT-only run: its chart, and notes for what is missing ----
mkdir -p "$dir/b" && cp -r "$run/sft" "$dir/b/"
"$RLVR" report "$dir/b" --out "$dir/b.html" > "$dir/b.out" 2>&1 || { cat "$dir/b.out"; fail "report of an SFT-only run"; }
grep -q "(1 charts" "$dir/b.out" || { cat "$dir/b.out"; fail "SFT-only: one chart"; }
grep -q 'id="chart-sft-loss"' "$dir/b.html" || fail "SFT-only: no SFT chart"
grep -q "metrics.h5 (rlvr train has not run here)" "$dir/b.html" || fail "SFT-only: no note on the missing RL metrics"

# ---- refusals ----
mkdir -p "$dir/empty"
set +e
"$RLVR" report "$dir/empty" > "$dir/e.out" 2>&1; rc=$?
set -e
[ $rc = 1 ] || { cat "$dir/e.out"; fail "no metrics: exit $rc, want 1"; }
grep -q "has no metrics: neither $dir/empty/metrics.h5" "$dir/e.out" || { cat "$dir/e.out"; fail "no metrics: message"; }
[ ! -e "$dir/empty/report.html" ] || fail "a page was written for a run without metrics"
for args in "" "--bogus $run" "$run --out" "$run $dir/b"; do
    set +e
    # shellcheck disable=SC2086
    "$RLVR" report $args > "$dir/u.out" 2>&1; rc=$?
    set -e
    [ $rc = 2 ] || { cat "$dir/u.out"; fail "rlvr report $args: exit $rc, want 2"; }
done
"$RLVR" report --help | grep -q "usage: rlvr report RUN" || fail "--help"
"$RLVR" help | grep -q "rlvr report" || fail "not in rlvr help"
echo "test_report: ok"
