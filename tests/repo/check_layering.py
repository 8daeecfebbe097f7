#!/usr/bin/env python3
"""tests/repo/check_layering.py — the folder dependency rules of docs/DESIGN.md.

Reads the table under the heading "Folders and what each may include" in
docs/DESIGN.md (one row per folder: `folder/` | what it is | the folders it
may include, or "—") and every #include "folder/..." line of every .c and .h
file under those folders. Fails, naming file:line and the rule, on an include
of a folder the row does not allow.

  check_layering.py SOURCE_DIR              check the tree
  check_layering.py SOURCE_DIR --self-test  prove the check fails: copy the
      tree's sources to a temporary directory, add a forbidden include to one
      file of each folder that has a rule forbidding something, and expect a
      failure naming exactly that file
"""
import os
import re
import shutil
import sys
import tempfile

HEADING = "## Folders and what each may include"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/')


def read_rules(design_md):
    """{folder: set of folders it may include} from the table under HEADING."""
    with open(design_md, encoding="utf-8") as f:
        text = f.read()
    start = text.find(HEADING)
    if start < 0:
        sys.exit(f"{design_md}: no heading '{HEADING}': the layering rules live there")
    rules = {}
    for line in text[start + len(HEADING):].splitlines():
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`").rstrip("/")
        allowed = set()
        for name in re.split(r"[,\s]+", cells[-1]):
            name = name.strip("`").rstrip("/")
            if name and name not in ("—", "-", "nothing"):
                allowed.add(name)
        rules[folder] = allowed
    if not rules:
        sys.exit(f"{design_md}: the table under '{HEADING}' has no rows")
    for folder, allowed in rules.items():
        unknown = allowed - rules.keys()
        if unknown:
            sys.exit(f"{design_md}: row {folder}/ allows unknown folders {sorted(unknown)}")
    return rules


def sources(root, folder):
    for base, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(base, name)


def violations(root, rules):
    """Lines "path:line: folder/ includes other/ ..." for every forbidden include."""
    found = []
    for folder, allowed in sorted(rules.items()):
        for path in sources(root, folder):
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target == folder or target not in rules or target in allowed:
                        continue
                    rel = os.path.relpath(path, root)
                    may = ", ".join(sorted(allowed)) or "nothing"
                    found.append(f"{rel}:{n}: {folder}/ includes {target}/ ({line.strip()}); "
                                 f"docs/DESIGN.md lets {folder}/ include only: {may}")
    return found


def self_test(root, rules):
    """Each folder with a forbidden neighbour gets one forbidden include in a
    copy of the tree; the check must name that file and nothing else new."""
    tried = 0
    before = set(violations(root, rules))  # only the added include may be new
    for folder, allowed in sorted(rules.items()):
        forbidden = sorted(rules.keys() - allowed - {folder})
        files = list(sources(root, folder))
        if not forbidden or not files:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for other in rules:
                if os.path.isdir(os.path.join(root, other)):
                    shutil.copytree(os.path.join(root, other), os.path.join(tmp, other),
                                    ignore=shutil.ignore_patterns("*.py", "*.sh", "*.in", "*.ini"))
            victim = os.path.join(tmp, os.path.relpath(files[0], root))
            with open(victim, "a", encoding="utf-8") as f:
                f.write(f'\n#include "{forbidden[0]}/forbidden.h"\n')
            found = [v for v in violations(tmp, rules) if v not in before]
            rel = os.path.relpath(victim, tmp)
            if len(found) != 1 or not found[0].startswith(rel + ":"):
                print(f"FAIL: a forbidden include of {forbidden[0]}/ added to {rel} gave: {found}")
                return 1
            print(f"caught: {found[0]}")
            tried += 1
    if tried == 0:
        print("FAIL: no folder has a forbidden neighbour; the rules forbid nothing")
        return 1
    print(f"self-test: {tried} forbidden includes added, {tried} caught")
    return 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    rules = read_rules(os.path.join(root, "docs/DESIGN.md"))
    if "--self-test" in sys.argv[2:]:
        return self_test(root, rules)
    found = violations(root, rules)
    for v in found:
        print(v)
    if found:
        print(f"FAIL: {len(found)} include(s) break the layering of docs/DESIGN.md")
        return 1
    print(f"layering: {len(rules)} folders, every include allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
