#!/usr/bin/env bash
# Configures and builds rlvr into DIR (default build/). Extra arguments go to
# cmake's configure step, e.g. scripts/build.sh build-asan -DRLVR_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
