#!/usr/bin/env bash
# rlvr model import/export against transformers, safetensors and gguf-py.
# Usage: test_model_port.sh PYREF_VENV RLVR MODEL_LOGPROBS CHECK_PY CASE WORKDIR
set -eu
venv=$1 rlvr=$2 logprobs=$3 checker=$4 case=$5 work=$6
if [ ! -x "$venv/bin/python" ]; then
  echo "FAIL: no Python reference venv at $venv: run scripts/pyref.sh" >&2
  exit 1
fi
if ! "$venv/bin/python" -c "import transformers, gguf, safetensors" 2>/dev/null; then
  echo "FAIL: the venv at $venv lacks transformers, gguf or safetensors: run scripts/pyref.sh" >&2
  exit 1
fi
rm -rf "$work" && mkdir -p "$work"
"$venv/bin/python" "$checker" "$rlvr" "$logprobs" "$case" "$work"
rm -rf "$work"
