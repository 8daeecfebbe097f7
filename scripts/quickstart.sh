#!/usr/bin/env bash
# The quickstart (README): installs what is missing, builds, and runs the
# embedded default end to end: `rlvr quickstart` generates and validates a
# bugfix-c task pool, runs SFT, then RL, evaluates both checkpoints on
# held-out tasks and prints a before/after table (runs/quickstart/summary.json).
# Idempotent: run it again and finished SFT and RL stages are not redone, an
# interrupted one resumes from its checkpoint (the evaluations run again).
# Extra arguments go to `rlvr quickstart`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
./build/rlvr quickstart --out runs/quickstart "$@"
