#!/usr/bin/env bash
# `rlvr verify`: the verdict of one patch or answer, and its exit status
# (0 pass; 1 fail, rejected; 2 usage, unreadable input), on a generated
# bugfix-c task (judge mode), a bugfix-py task (judge mode, Python behind
# the C judge) and an arith task. The output never names a
# hidden test.
set -u
rlvr=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_verify_cli_XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out"
. "$(dirname "$0")/../lib/cli_check.sh"

"$rlvr" tasks gen bugfix-c --n 1 --seed 5 --out "$dir/pool" >/dev/null || { echo "FAIL: gen bugfix-c"; exit 1; }
"$rlvr" tasks gen arith --n 1 --seed 3 --out "$dir/pool" >/dev/null || { echo "FAIL: gen arith"; exit 1; }
"$rlvr" tasks gen bugfix-py --n 1 --seed 5 --out "$dir/pool" >/dev/null || { echo "FAIL: gen bugfix-py"; exit 1; }
pytask="$dir/pool/bugfix-py-train-d1-s5-000000.json"
task="$dir/pool/bugfix-c-train-d1-s5-000000.json"
arith="$dir/pool/arith-train-d1-s3-000000.json"
py=/usr/bin/python3
$py - "$task" "$arith" "$dir" "$pytask" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2])); d = sys.argv[3]
p = json.load(open(sys.argv[4]))
open(d + "/ref.diff", "w").write(t["reference_patch"])
open(d + "/wrong.diff", "w").write(t["wrong_patches"][1])
open(d + "/py-ref.diff", "w").write(p["reference_patch"])
open(d + "/py-wrong.diff", "w").write(p["wrong_patches"][0])
open(d + "/names", "w").write("\n".join(t["FAIL_TO_PASS"] + t["PASS_TO_PASS"] + p["FAIL_TO_PASS"] + p["PASS_TO_PASS"]) + "\n")
open(d + "/answer", "w").write(a["reference_answer"])
PY
printf 'not a patch\n' > "$dir/garbage.diff"

check "--help" 0 "$rlvr" verify --help
expect_text "usage: rlvr verify --task TASK --patch FILE"
check "no --patch" 2 "$rlvr" verify --task "$task"
expect_text "rlvr verify: missing --patch FILE"
check "a task file that is not there" 2 "$rlvr" verify --task "$dir/none.json" --patch "$dir/ref.diff"
expect_text "$dir/none.json"
check "a patch file that is not there" 2 "$rlvr" verify --task "$task" --patch "$dir/none.diff"
expect_text "$dir/none.diff"
check "--runs out of range" 2 "$rlvr" verify --task "$task" --patch "$dir/ref.diff" --runs 0

check "the reference" 0 "$rlvr" verify --task "$task" --patch "$dir/ref.diff"
expect_text "(tests, judge mode): pass"
expect_text "runs: 3 in"
check "a wrong patch" 1 "$rlvr" verify --task "$task" --patch "$dir/wrong.diff"
expect_text ": fail"
expect_text "reason: tests_failed (300)"
check "a malformed patch" 1 "$rlvr" verify --task "$task" --patch "$dir/garbage.diff"
expect_text ": rejected"
expect_text "reason: patch_parse (100)"
check "the reference from standard input, one run, JSON" 0 sh -c "\"\$0\" verify --task \"\$1\" --patch - --runs 1 --json < \"\$2\"" "$rlvr" "$task" "$dir/ref.diff"
$py -c 'import json, sys; v = json.load(open(sys.argv[1])); assert v["verdict"] == "pass" and v["runs"] == 1 and v["outcome"] == 1, v' "$out" \
  || { echo "FAIL: JSON verdict"; cat "$out"; fail=1; }
# the reward's view of a no-op under each [reward] outcome
printf '[reward]\noutcome = partial\n' > "$dir/partial.ini"
printf '[reward]\noutcome = fail_to_pass\n' > "$dir/f2p.ini"
check "a no-op, binary" 1 "$rlvr" verify --task "$task" --patch /dev/null
expect_text "outcome as the reward takes it: 0.000"
check "a no-op, partial" 1 "$rlvr" verify --task "$task" --patch /dev/null --config "$dir/partial.ini"
expect_text "outcome as the reward takes it: 0.667"
check "a no-op, fail_to_pass" 1 "$rlvr" verify --task "$task" --patch /dev/null --config "$dir/f2p.ini"
expect_text "outcome as the reward takes it: 0.000"
printf '[reward]\noutcome = most\n' > "$dir/bad.ini"
check "a configuration it refuses" 2 "$rlvr" verify --task "$task" --patch /dev/null --config "$dir/bad.ini"
expect_text "outcome"

# bugfix-py: the same verdicts for Python code
check "bugfix-py: the reference" 0 "$rlvr" verify --task "$pytask" --patch "$dir/py-ref.diff"
expect_text "(tests, judge mode): pass"
check "bugfix-py: the public case special-cased" 1 "$rlvr" verify --task "$pytask" --patch "$dir/py-wrong.diff"
expect_text "reason: tests_failed (300)"
check "bugfix-py: a malformed patch" 1 "$rlvr" verify --task "$pytask" --patch "$dir/garbage.diff"
expect_text "reason: patch_parse (100)"
check "bugfix-py: a task file that is not there" 2 "$rlvr" verify --task "$dir/none-py.json" --patch "$dir/py-ref.diff"
expect_text "$dir/none-py.json"

# arith: the answer in process
check "arith: the reference answer" 0 "$rlvr" verify --task "$arith" --patch "$dir/answer"
expect_text "(arith): pass"
check "arith: a wrong answer" 1 sh -c "echo 'answer: 99999' | \"\$0\" verify --task \"\$1\" --patch -" "$rlvr" "$arith"
expect_text "(arith): fail"

# nothing of the hidden tests leaves: no test name in any output above
for f in "$dir"/ref.diff "$dir"/wrong.diff "$dir"/py-ref.diff "$dir"/py-wrong.diff; do
  case $f in *py-*) t=$pytask ;; *) t=$task ;; esac
  "$rlvr" verify --task "$t" --patch "$f" --json >"$out" 2>&1
  while read -r name; do
    [ -n "$name" ] && grep -qw -- "$name" "$out" && { echo "FAIL: the output names test $name"; cat "$out"; fail=1; }
  done < "$dir/names"
done

[ $fail = 0 ] && echo "test_verify_cli: all passed"
exit $fail
