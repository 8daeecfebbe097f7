#!/usr/bin/env bash
# The quickstart (README): installs what is missing, builds, and runs the main
# job on the embedded default. Until the RL runtime lands that job is the
# policy engine benchmark: a real train step and KV-cache decoding.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
./build/rlvr bench policy --quick
