# tests/lib/cli_check.sh — sourced by the command-line tests: run a command,
# compare its exit status, look for text in what it printed. The caller sets
# `out` (a file for the output) and `fail=0`; both helpers set fail=1 and
# print what they saw when a check does not hold.

# check DESCRIPTION STATUS COMMAND...: runs COMMAND into $out.
check() {
  local what=$1 want=$2; shift 2
  "$@" >"$out" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$out"; fail=1
  fi
}

# expect_text TEXT: the last command's output holds TEXT.
expect_text() { grep -qF -- "$1" "$out" || { echo "FAIL: output lacks [$1]:"; cat "$out"; fail=1; }; }
