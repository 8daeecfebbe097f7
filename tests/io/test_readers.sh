#!/usr/bin/env bash
# h5py (Debian's, via /usr/bin/python3) and h5dump read every dataset of
# every kind of rlvr file. Usage: test_readers.sh IO_WRITE_SAMPLES CHECK_READERS_PY WORKDIR
set -eu
samples=$1 checker=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
mapfile -t files < <("$samples" "$work")
[ "${#files[@]}" -eq 4 ] || { echo "FAIL: expected 4 sample files, got ${#files[@]}"; exit 1; }
/usr/bin/python3 "$checker" "${files[@]}"
rm -rf "$work"
