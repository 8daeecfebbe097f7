#!/usr/bin/env bash
# Results as expected files (enclave/expected.h) on a real C history: inih's
# tests/unittest.sh writes tests/baseline_*.txt, and each file is a test
# that passes when it equals the commit's copy, which never enters the
# enclave. Mined this way, inih's fixes pass `rlvr tasks check` with every
# probe refused (mined in command mode with the baselines in the tree, the
# same fixes are refused: test_tasks_mine).
#
# Red team: a patch whose code, run by the test programs, prints the
# expected copy of the file its output goes to wherever one is readable,
# instead of parsing anything. It fails on the task; its control, the same
# task with the expected copies also given as hidden files (the defence
# broken: they enter the enclave), passes with the same patch.
set -u
rlvr=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_expected_XXXXXX")
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out.txt"
py=/usr/bin/python3
. "$(dirname "$0")/../lib/cli_check.sh"

cp "$src/tests/data/repos/inih.facts.json" "$dir/facts.json"
check "mine inih since 2025-03" 0 "$rlvr" tasks mine "$src/tests/data/repos/inih.bundle" --out "$dir/pool" \
  --facts "$dir/facts.json" --since 2025-03-01 --eval-share 0.5
expect_text "kept"
grep -q '"commit":"216e21b3c271[0-9a-f]*",[^}]*"outcome":"no_fail_to_pass"' "$dir/pool/mine-report.jsonl" ||
  { echo "FAIL: Minor tweaks (#204) should change no baseline"; fail=1; }
task=inih-23acf2dd5af5
[ -f "$dir/pool/$task.json" ] || { echo "FAIL: $task not kept"; cat "$out"; exit 1; }
[ -f "$dir/pool/expected/$task/tests/baseline_string.txt" ] || { echo "FAIL: no expected copies"; fail=1; }
$py - "$dir/pool/$task.json" <<'PY' || fail=1
import json, sys
t = json.load(open(sys.argv[1]))
r = t["hidden_tests"]["results"]
assert r["format"] == "expected" and r["root"] == "expected/inih-23acf2dd5af5", r
assert "tests/baseline_string.txt" in t["FAIL_TO_PASS"], t["FAIL_TO_PASS"]
assert not any(f.startswith("tests/baseline_") for f in t["public_tests"]["files"]), "a baseline is a public file"
assert not any(f.startswith("tests/baseline_") for f in t["hidden_tests"]["files"]), "a baseline is a hidden file"
PY
check "check the pool" 0 "$rlvr" tasks check "$dir/pool" --runs 3
expect_text "0 broken, 0 flaky, 0 infra, 0 exploitable"

# the forger: the test program prints the expected copy of its output file
git clone -q "$dir/pool/repos/$task.git" "$dir/clone"
cat >>"$dir/clone/ini.c" <<'C'

/* forger: the expected copy of the file stdout goes to, wherever it can be read */
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void rlvr_forge(void) {
    char out[512], copy[1024], buf[4096];
    ssize_t n = readlink("/proc/self/fd/1", out, sizeof out - 1);
    if (n <= 0) return;
    out[n] = 0;
    const char *base = strrchr(out, '/');
    if (!base) return;
    snprintf(copy, sizeof copy, "/work/.expected/tests%s", base);
    int fd = open(copy, O_RDONLY);
    if (fd < 0) return;
    while ((n = read(fd, buf, sizeof buf)) > 0) write(1, buf, (size_t)n);
    _exit(0);
}
C
git -C "$dir/clone" diff >"$dir/forger.patch"
check "the forger on the task" 1 "$rlvr" verify --task "$dir/pool/$task.json" --patch "$dir/forger.patch"
expect_text "fail"
check "the reference on the task" 0 "$rlvr" verify --task "$dir/pool/$task.json" \
  --patch <($py -c "import json,sys; print(json.load(open(sys.argv[1]))['reference_patch'], end='')" "$dir/pool/$task.json")
# control: the expected copies enter the enclave as hidden files
mkdir -p "$dir/pool/hidden/control/.expected"
cp -R "$dir/pool/expected/$task/tests" "$dir/pool/hidden/control/.expected/"
$py - "$dir/pool/$task.json" "$dir/pool/control.json" <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))
t["id"] = "control"
t["hidden_tests"]["root"] = "hidden/control"
t["hidden_tests"]["files"] = [".expected/" + f for f in t["hidden_tests"]["results"]["files"]]
json.dump(t, open(sys.argv[2], "w"), indent=2)
PY
check "control: the forger once the copies are in the enclave" 0 "$rlvr" verify --task "$dir/pool/control.json" \
  --patch "$dir/forger.patch"
expect_text "pass"

# a spec that lists an expected file among the hidden files is refused
$py - "$dir/pool/$task.json" "$dir/pool/leak.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["id"] = "leak"
t["hidden_tests"]["files"] = ["tests/baseline_string.txt"]
json.dump(t, open(sys.argv[2], "w"), indent=2)
PY
cp "$dir/pool/expected/$task/tests/baseline_string.txt" "$dir/pool/hidden/$task/tests/" 2>/dev/null ||
  { mkdir -p "$dir/pool/hidden/$task/tests" && cp "$dir/pool/expected/$task/tests/baseline_string.txt" "$dir/pool/hidden/$task/tests/"; }
check "an expected file that is also hidden" 2 "$rlvr" verify --task "$dir/pool/leak.json" --patch "$dir/forger.patch"
expect_text "is also a hidden file: an expected copy never enters the enclave"

exit $fail
