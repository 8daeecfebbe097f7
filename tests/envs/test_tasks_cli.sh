#!/usr/bin/env bash
# `rlvr tasks`: gen and list, their messages and exit statuses.
set -u
rlvr=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_tasks_cli_XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out.txt"
. "$(dirname "$0")/../lib/cli_check.sh"

check "help" 0 "$rlvr" tasks --help
expect_text "rlvr tasks gen FAMILY"
check "no sub-verb" 2 "$rlvr" tasks
check "gen without options" 2 "$rlvr" tasks gen arith
expect_text "--n, --seed and --out are required"
check "unknown family" 2 "$rlvr" tasks gen arithm --n 1 --seed 1 --out "$dir/x"
expect_text 'did you mean "arith"'
check "bad split" 2 "$rlvr" tasks gen arith --n 1 --seed 1 --out "$dir/x" --split tran
expect_text 'did you mean "train"'
check "bad difficulty" 2 "$rlvr" tasks gen arith --n 1 --seed 1 --out "$dir/x" --difficulty 5
check "bad count" 2 "$rlvr" tasks gen arith --n 0 --seed 1 --out "$dir/x"
check "unknown option" 2 "$rlvr" tasks gen arith --n 1 --seed 1 --out "$dir/x" --colour red

check "gen arith train" 0 "$rlvr" tasks gen arith --n 5 --seed 3 --out "$dir/pool"
expect_text "wrote 5 arith tasks (split train, difficulty 1, seed 3)"
check "gen arith eval" 0 "$rlvr" tasks gen arith --n 3 --seed 3 --out "$dir/pool" --split eval --difficulty 2
check "gen bugfix-c regression" 0 "$rlvr" tasks gen bugfix-c --n 2 --seed 3 --out "$dir/pool" --split regression
[ -d "$dir/pool/repos/bugfix-c-regression-d1-s3-000001/.git" ] || { echo "FAIL: no repository"; fail=1; }
check "gen over existing output" 1 "$rlvr" tasks gen arith --n 1 --seed 3 --out "$dir/pool"
expect_text "already exists"

# the bugfix-c compiler: written into the Makefile, refused when it is no bare
# command name or cannot be found, and tasks built with tcc pass validation
# in real enclaves
check "gen bugfix-c with tcc" 0 "$rlvr" tasks gen bugfix-c --n 2 --seed 4 --out "$dir/tcc" --compiler tcc
grep -qx "CC = tcc" "$dir/tcc/repos/bugfix-c-train-d1-s4-000001/Makefile" || { echo "FAIL: no CC = tcc"; fail=1; }
check "tcc pool validates" 0 "$rlvr" tasks check "$dir/tcc" --runs 1
expect_text "checked 2 tasks: 2 ok, 0 broken, 0 flaky, 0 infra, 0 exploitable"
check "compiler with a shell word" 1 "$rlvr" tasks gen bugfix-c --n 1 --seed 4 --out "$dir/cc1" --compiler 'cc;true'
expect_text 'bugfix compiler "cc;true": give a command name'
check "compiler not installed" 1 "$rlvr" tasks gen bugfix-c --n 1 --seed 4 --out "$dir/cc2" --compiler no-such-cc
expect_text 'bugfix compiler "no-such-cc" is not in /usr/local/bin, /usr/bin or /bin'

check "list" 0 "$rlvr" tasks list "$dir/pool"
expect_text "10 tasks (train 5, eval 3, regression 2); split hygiene ok"
expect_text "arith-eval-d2-s3-000002"

# a train task and an eval task sharing a split key are refused
sed -e 's/"split": "eval"/"split": "train"/' -e 's/arith-eval-d2-s3-000000/leak/' \
  "$dir/pool/arith-eval-d2-s3-000000.json" > "$dir/pool/leak.json"
check "split hygiene" 1 "$rlvr" tasks list "$dir/pool"
expect_text "split hygiene: split key"
rm "$dir/pool/leak.json"

echo '{"format": "rlvr-task/1", "id": "x"}' > "$dir/pool/broken.json"
check "broken spec" 1 "$rlvr" tasks list "$dir/pool"
expect_text 'broken.json: field "family" missing'
check "missing pool" 1 "$rlvr" tasks list "$dir/nowhere"

# check: an arith pool needs no enclave; a planted wrong answer that is right is caught
check "gen arith for check" 0 "$rlvr" tasks gen arith --n 4 --seed 9 --out "$dir/ap"
check "check arith pool" 0 "$rlvr" tasks check "$dir/ap" --runs 2 --jobs 2
expect_text "checked 4 tasks: 4 ok, 0 broken, 0 flaky, 0 infra, 0 exploitable; manifest $dir/ap.manifest.json"
[ -f "$dir/ap.manifest.json" ] || { echo "FAIL: no manifest"; fail=1; }
sed -e 's/"id": "arith-train-d1-s9-000000"/"id": "planted"/' \
    -e 's/"wrong_answers": \[/"wrong_answers": [REF, /' "$dir/ap/arith-train-d1-s9-000000.json" > "$dir/planted.tmp"
ref=$(grep -o '"reference_answer": "[^"]*"' "$dir/planted.tmp" | sed 's/.*: //')
sed "s/REF/$ref/" "$dir/planted.tmp" > "$dir/ap/planted.json"
check "check catches a planted task" 1 "$rlvr" tasks check "$dir/ap" --json --manifest "$dir/m.json"
expect_text '"id":"planted","status":"broken","reason":"wrong answer 0'
expect_text '"summary": {"tasks": 5, "ok": 4, "broken": 1'
[ -f "$dir/m.json" ] || { echo "FAIL: --manifest ignored"; fail=1; }
check "check bad option" 2 "$rlvr" tasks check "$dir/ap" --runs zero
check "check missing pool" 1 "$rlvr" tasks check "$dir/nowhere"

[ $fail = 0 ] && echo "test_tasks_cli: all passed"
exit $fail
