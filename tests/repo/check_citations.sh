#!/usr/bin/env bash
# tests/repo/check_citations.sh SOURCE_DIR — the repository cites no file or
# tracker that is not in it. Fails, naming file:line, on a line of a tracked
# text file (sources, docs, scripts, examples) that cites
#   - a spec by name ("SPEC §6", "SPEC.md", "the SPEC's examples"),
#   - a section sign with a number ("§5.6") — a section of no file here,
#   - DESIGN.md other than docs/DESIGN.md,
#   - an issue or acceptance point by number ("issue 7", "acceptance 3").
# Identifiers such as RLVR_SPECIAL_BOS or *_SPEC_VERSION are not citations.
set -euo pipefail
root=${1:?usage: check_citations.sh SOURCE_DIR}
cd "$root"
pattern='\bSPEC\b|§ ?[0-9]|(?<!docs/)DESIGN\.md|\b[Ii]ssues? #?[0-9]|\b[Aa]cceptance (points? )?[0-9]'
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  list() { git ls-files -z; }
else
  list() { find . -path ./build -prune -o -type f -print0 | sed -z 's|^\./||'; }
fi
hits=$(list | grep -zvE '^(build[^/]*/|tests/repo/check_citations\.sh$)' |
  xargs -0 grep -nIP "$pattern" -- 2> /dev/null || true)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "FAIL: $(printf '%s\n' "$hits" | wc -l) line(s) cite a file or tracker that is not in the repository;"
  echo "      point to the docs/ section that holds the content instead"
  exit 1
fi
echo "citations: none outside the repository"
