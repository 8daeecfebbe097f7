#!/usr/bin/env bash
# The configuration compiled into `rlvr quickstart` is examples/quickstart.ini
# byte for byte, and it (and the arithmetic variant) passes `rlvr config check`.
# Usage: test_quickstart_config.sh RLVR SOURCE_DIR
set -euo pipefail
RLVR=$1
SRC=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$RLVR" quickstart --print-config > "$out"
cmp "$out" "$SRC/examples/quickstart.ini" || { echo "FAIL: embedded config differs from examples/quickstart.ini"; exit 1; }
"$RLVR" config check "$SRC/examples/quickstart.ini"
"$RLVR" config check "$SRC/examples/quickstart-arith.ini"
"$RLVR" config check "$SRC/examples/quickstart-py.ini"
echo "test_quickstart_config: ok"
