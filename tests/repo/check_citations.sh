#!/usr/bin/env bash
# tests/repo/check_citations.sh SOURCE_DIR — the repository cites no file or
# tracker that is not in it. Fails, naming file:line, on a line of a tracked
# text file (sources, docs, scripts, examples) that cites
#   - the specification the project was first written from, by name,
#   - a section sign followed by a number — a section of no file here,
#   - a design document other than docs/DESIGN.md,
#   - an issue or acceptance point of the tracker, by number,
#   - a path into the folder beside the repository that held those files.
# The words are assembled below from pieces, so this script passes its own
# check. Identifiers that merely contain the name (RLVR_..._VERSION
# constants) are not citations: the name must stand as a word.
set -euo pipefail
root=${1:?usage: check_citations.sh SOURCE_DIR}
cd "$root"
spec='S''PEC' section='§' design='DES''IGN' tracker='[Ii]ssues?' point='[Aa]cceptance' outside='\.\./sh''ared/'
pattern="\\b$spec\\b|$section ?[0-9]|(?<!docs/)$design\\.md|\\b$tracker #?[0-9]|\\b$point (points? )?[0-9]|$outside"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  list() { git ls-files -z; }
else
  list() { find . -path ./build -prune -o -type f -print0 | sed -z 's|^\./||'; }
fi
hits=$(list | grep -zvE '^build[^/]*/' |
  xargs -0 grep -nIP "$pattern" -- 2> /dev/null || true)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "FAIL: $(printf '%s\n' "$hits" | wc -l) line(s) cite a file or tracker that is not in the repository;"
  echo "      point to the docs/ section that holds the content instead"
  exit 1
fi
echo "citations: none outside the repository"
