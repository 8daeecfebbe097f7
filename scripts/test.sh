#!/usr/bin/env bash
# The test command (README): installs what is missing, builds, and runs every
# test under ctest, then the unit tests again under ASan+UBSan.
# Services the tests need (munge, slurmctld, slurmd) are started by the tests'
# own fixtures. Exit status: 0 only when every test passed.
#
#   scripts/test.sh          everything (what CI runs)
#   scripts/test.sh --fast   the inner loop: build/ incrementally, then the
#                            tests labelled `fast` (no dependency check, no
#                            ASan build); about two minutes on two cores
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  echo "== build (Release, -Werror)"
  bash scripts/build.sh build
  export OMP_WAIT_POLICY=passive
  if [ -c /dev/fuse ] && [ "$(id -u)" -eq 0 ]; then chmod 0666 /dev/fuse; fi
  echo "== ctest: fast tests"
  exec ctest --test-dir build --output-on-failure -j2 -L fast
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/test.sh [--fast]" >&2
  exit 2
fi
bash scripts/deps.sh
# gguf-py, the reference the GGUF reader's test compares with (a venv
# outside the repository; the build's RLVR_PYREF names it).
bash scripts/pyref.sh

echo "== build (Release, -Werror)"
bash scripts/build.sh build
# Passive OpenMP waiting: two tests run at once on few cores, and spinning
# thread pools would starve each other and the sandboxed tools (jobs/main.c).
export OMP_WAIT_POLICY=passive
# Unprivileged task environments mount SquashFS images with squashfuse,
# which opens /dev/fuse: udev makes it 0666 on a standard Debian system, a
# bare VM or container may leave it 0600 (root only).
if [ -c /dev/fuse ] && [ "$(id -u)" -eq 0 ]; then chmod 0666 /dev/fuse; fi
echo "== ctest: all tests"
status=0
ctest --test-dir build --output-on-failure -j2 || status=1

echo "== build (ASan + UBSan)"
bash scripts/build.sh build-asan -DRLVR_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== ctest: unit tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j2 -L unit || status=1
exit $status
