#!/usr/bin/env bash
# The rlvr command's own surface: help, version, unknown verbs, bad options.
set -u
rlvr=$1
src=${2:-}
fail=0
check() { # description, expected status, command...
  local what=$1 want=$2; shift 2
  "$@" >/tmp/rlvr_cli_out.$$ 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat /tmp/rlvr_cli_out.$$; fail=1
  fi
}
check "help" 0 "$rlvr" help
grep -q "usage: rlvr VERB" /tmp/rlvr_cli_out.$$ || { echo "FAIL: help text"; fail=1; }
check "no verb" 2 "$rlvr"
check "--version" 0 "$rlvr" --version
grep -qE "^rlvr [0-9]+\.[0-9]+\.[0-9]+" /tmp/rlvr_cli_out.$$ || { echo "FAIL: version text"; fail=1; }
for field in commit compiler build BLAS HDF5 MPI libgit2 CPU; do
  grep -q "^$field: " /tmp/rlvr_cli_out.$$ || { echo "FAIL: --version has no $field line"; fail=1; }
done
# the binary's commit is the source tree's (when the tree is a git work tree of its own)
if [ -n "$src" ] && [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src" && pwd -P)" ]; then
  want=$(git -C "$src" rev-parse --short HEAD)
  git -C "$src" diff --quiet HEAD -- || want="$want-dirty"
  grep -qx "commit: *$want" /tmp/rlvr_cli_out.$$ ||
    { echo "FAIL: --version shows $(grep ^commit: /tmp/rlvr_cli_out.$$), the source tree is at $want"; fail=1; }
fi
check "unknown verb" 2 "$rlvr" bnch
grep -q 'did you mean "bench"' /tmp/rlvr_cli_out.$$ || { echo "FAIL: did-you-mean"; fail=1; }
check "bench without name" 2 "$rlvr" bench
check "unknown bench" 2 "$rlvr" bench nothing
check "unknown bench model" 2 "$rlvr" bench policy --model smollm2
grep -q 'known: smollm2-135m, smollm2-135m-instruct' /tmp/rlvr_cli_out.$$ || { echo "FAIL: known models"; fail=1; }
rm -f /tmp/rlvr_cli_out.$$
[ $fail = 0 ] && echo "test_cli: all passed"
exit $fail
