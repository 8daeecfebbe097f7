#!/usr/bin/env bash
# `rlvr tasks import`: SWE-bench instances of real cachetools fixes (made
# from a mined pool, as the field stores them) import and check; bad
# instances are refused naming FILE:LINE and the field. Harbor task
# directories (a C task, a Python task, a task scored on a file the agent
# creates) import and check; a directory without tests/test.sh and a
# Dockerfile environment without an image are refused.
set -u
rlvr=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_tasks_import_XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out.txt"
py=/usr/bin/python3
. "$(dirname "$0")/../lib/cli_check.sh"

# ---- SWE-bench -------------------------------------------------------------------
cat >"$dir/facts.json" <<'JSON'
{"test_command": "python3 -I -m pytest -c /dev/null --rootdir . -q -p no:cacheprovider -o \"pythonpath=$PWD/src\" --junitxml=report.xml tests",
 "results": {"format": "junit", "path": "report.xml"},
 "tests": ["/tests"], "protected_paths": ["/pyproject.toml", "/setup.cfg", "/setup.py", "/tox.ini"]}
JSON
check "mine cachetools since 2025-03" 0 "$rlvr" tasks mine "$src/tests/data/repos/cachetools.bundle" \
  --out "$dir/mined" --facts "$dir/facts.json" --since 2025-03-01
expect_text "split by time:"
git clone -q "$src/tests/data/repos/cachetools.bundle" "$dir/clone"
$py "$src/tests/envs/swe_from_mined.py" "$dir/mined" "$dir/clone" "$dir/instances.jsonl" >/dev/null
n=$(wc -l <"$dir/instances.jsonl")
[ "$n" -ge 5 ] || { echo "FAIL: $n instances, expected at least 5"; fail=1; }
$py -c "import json,sys; json.dump({'tkem/cachetools': json.load(open(sys.argv[1]))}, open(sys.argv[2], 'w'))" \
  "$dir/facts.json" "$dir/specs.json"
mkdir "$dir/repos" && cp "$src/tests/data/repos/cachetools.bundle" "$dir/repos/"

check "import swe-bench" 0 "$rlvr" tasks import swe-bench "$dir/instances.jsonl" --specs "$dir/specs.json" \
  --repos "$dir/repos" --out "$dir/swe" --split eval
expect_text "$n read, $n imported, 0 refused"
check "list the imported pool" 0 "$rlvr" tasks list "$dir/swe"
expect_text "eval $n"
# every check passes but the one command mode cannot hold: pytest reads the
# hidden tests from files the code under test can read as well
check "check the imported pool" 1 "$rlvr" tasks check "$dir/swe" --runs 3
expect_text "checked $n tasks: 0 ok, 0 broken, 0 flaky, 0 infra, $n exploitable"
bad=$(grep -c "exploitable" "$out")
only=$(grep "exploitable tkem" "$out" | grep -c "rewarded without a fix: hidden files at run time [^;]*$")
[ "$bad" -eq "$((n + 1))" ] && [ "$only" -eq "$n" ] || { echo "FAIL: a probe other than the hidden files won"; cat "$out"; fail=1; }
check "import over existing tasks" 1 "$rlvr" tasks import swe-bench "$dir/instances.jsonl" --specs "$dir/specs.json" \
  --repos "$dir/repos" --out "$dir/swe"
expect_text "exists already"

$py "$src/tests/envs/swe_from_mined.py" --corrupt "$dir/instances.jsonl" "$dir/bad.jsonl"
check "bad instances" 1 "$rlvr" tasks import swe-bench "$dir/bad.jsonl" --specs "$dir/specs.json" \
  --repos "$dir/repos" --out "$dir/bad"
expect_text "bad.jsonl:1: field \"patch\": missing"
expect_text "bad.jsonl:2: field \"repo\": unknown repository \"nobody/nothing\""
expect_text "bad.jsonl:3: field \"test_patch\": does not apply"
expect_text "bad.jsonl:4: field \"FAIL_TO_PASS\": test \"tests/"
expect_text "passes at base_commit"
expect_text "4 read, 0 imported, 4 refused"
[ -z "$(find "$dir/bad/hidden" "$dir/bad/repos" -mindepth 1)" ] || { echo "FAIL: refused instances left files"; fail=1; }
check "missing spec table" 2 "$rlvr" tasks import swe-bench "$dir/bad.jsonl" --repos "$dir/repos" --out "$dir/bad2"
expect_text "missing --specs SPECS.json"
check "unknown source" 2 "$rlvr" tasks import swebench "$dir/bad.jsonl"
expect_text "the source is swe-bench or harbor"

exit $fail
