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
chmod 755 "$dir" # the sandboxes bind the image from under it
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out.txt"
py=/usr/bin/python3
. "$(dirname "$0")/../lib/cli_check.sh"

# ---- SWE-bench -------------------------------------------------------------------
cp "$src/tests/data/repos/cachetools.facts.json" "$dir/facts.json"
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
expect_text "unknown source \"swebench\" (swe-bench or harbor)"

# ---- Harbor ----------------------------------------------------------------------
# an image with sh, bash, python3, a C compiler and the shell's tools, /app
# its working directory
sh "$src/tests/enclave/make_env_root.sh" "$dir/image" --cc || { echo "FAIL: building the image"; exit 1; }
mkdir -p "$dir/image/app"
h="$dir/harbor"
mk() { mkdir -p "$h/$1/environment" "$h/$1/solution" "$h/$1/tests"; }
toml() {
  cat >"$h/$1/task.toml" <<TOML
version = "1.0"

[metadata]
author_name = "rlvr tests"
difficulty = "easy"
category = "$2"
tags = ["rlvr", "test"]

[verifier]
timeout_sec = 90.0

[agent]
timeout_sec = 300.0   # the whole agent

[environment]
cpus = 1
memory_mb = 512
TOML
}
# C: the program skips its last argument
mk c-sum; toml c-sum programming
printf 'FROM debian:12\nWORKDIR /app\nCOPY sum.c /app/sum.c\n' >"$h/c-sum/environment/Dockerfile"
cat >"$h/c-sum/environment/sum.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long s = 0;
    for (int i = 1; i < argc - 1; i++) s += atol(argv[i]);
    printf("%ld\n", s);
    return 0;
}
C
echo 'sum.c should print the sum of its integer arguments (`sum 1 2 3` prints 6), but it skips the last one. Fix /app/sum.c.' >"$h/c-sum/instruction.md"
printf '#!/bin/bash\nsed -i "s/i < argc - 1/i < argc/" sum.c\n' >"$h/c-sum/solution/solve.sh"
cat >"$h/c-sum/tests/test.sh" <<'SH'
#!/bin/bash
cd /app && cc -o /tmp/sum sum.c || { echo 0 > /logs/verifier/reward.txt; exit 0; }
if [ "$(/tmp/sum 1 2 3)" = 6 ] && [ "$(/tmp/sum 5)" = 5 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
SH
# Python: the tests live beside test.sh and are named by Harbor's /tests path
mk py-slug; toml py-slug python
printf 'FROM python:3.11-slim\nWORKDIR /app\nCOPY slug.py .\n' >"$h/py-slug/environment/Dockerfile"
printf 'def slugify(text):\n    return text.lower()\n' >"$h/py-slug/environment/slug.py"
echo 'slugify() in /app/slug.py must turn "Hello World" into "hello-world": lower case, words joined by one hyphen.' >"$h/py-slug/instruction.md"
printf '#!/bin/bash\ncat > slug.py <<EOF\ndef slugify(text):\n    return "-".join(text.lower().split())\nEOF\n' >"$h/py-slug/solution/solve.sh"
cat >"$h/py-slug/tests/test_outputs.py" <<'PY'
import sys
sys.path.insert(0, "/app")
from slug import slugify
assert slugify("Hello World") == "hello-world"
assert slugify("  A  b ") == "a-b"
PY
printf '#!/bin/bash\nif python3 /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n' >"$h/py-slug/tests/test.sh"
# a file the agent must create, scored through reward.json
mk data-sum; toml data-sum data
printf 'FROM debian:12\nWORKDIR /app\nCOPY data.csv /app/\n' >"$h/data-sum/environment/Dockerfile"
printf 'item,amount\napples,12\npears,30\n' >"$h/data-sum/environment/data.csv"
echo 'Write the sum of the amount column of /app/data.csv to /app/answer.txt (just the number).' >"$h/data-sum/instruction.md"
printf '#!/bin/bash\nawk -F, '"'"'NR > 1 { s += $2 } END { print s }'"'"' data.csv > answer.txt\n' >"$h/data-sum/solution/solve.sh"
printf '#!/bin/bash\nif [ "$(cat /app/answer.txt 2>/dev/null)" = 42 ]; then echo "{\\"reward\\": 1.0}" > /logs/verifier/reward.json; else echo "{\\"reward\\": 0.0}" > /logs/verifier/reward.json; fi\n' >"$h/data-sum/tests/test.sh"

check "import harbor" 0 "$rlvr" tasks import harbor "$h/c-sum" "$h/py-slug" "$h/data-sum" --image "$dir/image" --out "$dir/hb"
expect_text "3 read, 3 imported, 0 refused"
grep -q '"verify_timeout_s": 90' "$dir/hb/harbor-c-sum.json" || { echo "FAIL: no verifier timeout"; fail=1; }
grep -q '"workdir": "/app"' "$dir/hb/harbor-py-slug.json" || { echo "FAIL: no working directory"; fail=1; }
grep -q '/work/.harbor/tests/test_outputs.py' "$dir/hb/hidden/harbor-py-slug/.harbor/tests/test.sh" || { echo "FAIL: /tests not rewritten"; fail=1; }
[ -f "$dir/hb/repos/harbor-data-sum/data.csv" ] || { echo "FAIL: the Dockerfile's COPY did not reach the tree"; fail=1; }
grep -q 'answer.txt' "$dir/hb/harbor-data-sum.json" || { echo "FAIL: the reference does not create answer.txt"; fail=1; }
check "check the harbor pool" 1 "$rlvr" tasks check "$dir/hb" --runs 3
cat "$out"
# scored on a file nothing runs: every probe refused
expect_text "ok     harbor-data-sum"
# the agent's own code runs while the tests are readable: refused for that alone
for t in c-sum py-slug; do
  grep -q "exploitable harbor-$t .*rewarded without a fix: hidden files at run time [^;]*$" "$out" ||
    { echo "FAIL: harbor-$t: a phase other than the hidden files failed"; fail=1; }
done

# refusals naming the file
mkdir -p "$h/no-tests" && cp -R "$h/data-sum/." "$h/no-tests/" && rm "$h/no-tests/tests/test.sh"
check "harbor task without tests/test.sh" 1 "$rlvr" tasks import harbor "$h/no-tests" --image "$dir/image" --out "$dir/hb2"
expect_text "no-tests: \"tests/test.sh\": missing"
check "Dockerfile without an image" 1 "$rlvr" tasks import harbor "$h/c-sum" --out "$dir/hb3"
expect_text "c-sum/environment/Dockerfile: the task's environment is a Dockerfile"
expect_text "--image IMAGE"
mkdir -p "$h/bad-toml" && cp -R "$h/data-sum/." "$h/bad-toml/" && printf '[verifier]\ntimeout_sec = {x = 1}\n' >"$h/bad-toml/task.toml"
check "unreadable task.toml" 1 "$rlvr" tasks import harbor "$h/bad-toml" --image "$dir/image" --out "$dir/hb4"
expect_text "bad-toml/task.toml:2:"
[ -z "$(find "$dir/hb2/repos" "$dir/hb2/hidden" "$dir/hb3/repos" "$dir/hb4/repos" -mindepth 1)" ] ||
  { echo "FAIL: refused tasks left files"; fail=1; }

exit $fail
