#!/usr/bin/env bash
# The Python reference readers the tests compare against, kept outside the
# repository: a venv at ${RLVR_PYREF:-/var/cache/rlvr/pyref} that sees
# Debian's numpy and torch 1.13 (--system-site-packages) and adds, from
# PyPI, gguf-py, the safetensors library, HF tokenizers and transformers
# (4.45.2: the last line that runs on torch 1.13) with jinja2 for chat
# templates, pinned so the values the reference tests check cannot drift.
# Idempotent: installs only the pinned packages the venv lacks (or holds at
# another version); does nothing when all are present.
set -euo pipefail
venv=${RLVR_PYREF:-/var/cache/rlvr/pyref}
pins=(gguf==0.19.0 safetensors==0.4.5 tokenizers==0.20.3 huggingface_hub==0.36.2 jinja2==3.1.4
      transformers==4.45.2)

if [ ! -x "$venv/bin/python" ]; then
  echo "pyref: creating $venv"
  mkdir -p "$(dirname "$venv")"
  if ! /usr/bin/python3 -m venv --system-site-packages "$venv"; then
    echo "pyref: could not create the venv; scripts/deps.sh installs python3-venv" >&2
    exit 1
  fi
fi

missing=()
for pin in "${pins[@]}"; do
  name=${pin%%==*} version=${pin#*==}
  if "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$name') != '$version')" 2>/dev/null; then
    echo "pyref: $pin present in $venv"
  else
    missing+=("$pin")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pyref: installing ${missing[*]} into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi
