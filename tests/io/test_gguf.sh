#!/usr/bin/env bash
# io/gguf.h against gguf-py. Usage: test_gguf.sh PYREF_VENV GGUF_DUMP CHECK_GGUF_PY WORKDIR
set -eu
venv=$1 dump=$2 checker=$3 work=$4
if [ ! -x "$venv/bin/python" ]; then
  echo "FAIL: no Python reference venv at $venv: run scripts/pyref.sh" >&2
  exit 1
fi
if ! "$venv/bin/python" -c "import gguf" 2>/dev/null; then
  echo "FAIL: the venv at $venv has no gguf-py: run scripts/pyref.sh" >&2
  exit 1
fi
rm -rf "$work" && mkdir -p "$work"
"$venv/bin/python" "$checker" "$dump" "$work"
rm -rf "$work"
