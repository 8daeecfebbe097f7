#!/usr/bin/env bash
# io/safetensors.h against the safetensors library and numpy.
# Usage: test_safetensors.sh PYREF_VENV SAFETENSORS_DUMP CHECK_SAFETENSORS_PY WORKDIR
set -eu
venv=$1 dump=$2 checker=$3 work=$4
if [ ! -x "$venv/bin/python" ]; then
  echo "FAIL: no Python reference venv at $venv: run scripts/pyref.sh" >&2
  exit 1
fi
if ! "$venv/bin/python" -c "import safetensors" 2>/dev/null; then
  echo "FAIL: the venv at $venv has no safetensors: run scripts/pyref.sh" >&2
  exit 1
fi
rm -rf "$work" && mkdir -p "$work"
"$venv/bin/python" "$checker" "$dump" "$work"
rm -rf "$work"
