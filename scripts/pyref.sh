#!/usr/bin/env bash
# The Python reference readers the tests compare against, kept outside the
# repository: a venv at ${RLVR_PYREF:-/var/cache/rlvr/pyref} that sees
# Debian's numpy (--system-site-packages) and adds gguf-py from PyPI, pinned
# so the dequantised values the GGUF test checks cannot drift.
# Idempotent: does nothing when the venv already has the pinned version.
set -euo pipefail
venv=${RLVR_PYREF:-/var/cache/rlvr/pyref}
gguf_version=0.19.0

if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('gguf') != '$gguf_version')" 2>/dev/null; then
  echo "pyref: gguf==$gguf_version present in $venv"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "pyref: creating $venv"
  mkdir -p "$(dirname "$venv")"
  if ! /usr/bin/python3 -m venv --system-site-packages "$venv"; then
    echo "pyref: could not create the venv; scripts/deps.sh installs python3-venv" >&2
    exit 1
  fi
fi
echo "pyref: installing gguf==$gguf_version into $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "gguf==$gguf_version"
