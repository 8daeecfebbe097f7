#!/usr/bin/env python3
"""tests/repo/check_design_paths.py — docs/DESIGN.md names only files that exist.

The architecture page points a reader at files (train/trainer.c,
enclave/sandbox_host.c, tests/repo/check_jobs_thin.py, ...). A file moved or
removed without the page following is a false claim; this fails naming it.

  check_design_paths.py SOURCE_DIR              check the page
  check_design_paths.py SOURCE_DIR --self-test  the same on a copy of the page
      with a path to a file that does not exist added: it must be named
"""
import glob
import os
import re
import shutil
import sys
import tempfile

FOLDERS = "core|policy|rl|enclave|envs|mpi|io|eval|slurm|train|report|bench|jobs|tests|docs|cmake|scripts|examples"
PATH = re.compile(r"\b((?:%s)/[A-Za-z0-9_./*-]+\.(?:cmake|ini|md|py|sh|c|h))\b" % FOLDERS)
# the sandbox paragraph names its files without their folder
SANDBOX = re.compile(r"(?<![/A-Za-z0-9_])(sandbox_[a-z_]+\.c)\b")


def missing(root, page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    names = {p for p in PATH.findall(text)}
    names |= {"enclave/" + p for p in SANDBOX.findall(text)}
    return sorted(n for n in names if not glob.glob(os.path.join(root, n)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    page = os.path.join(root, "docs/DESIGN.md")
    if "--self-test" in sys.argv[2:]:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "page.md")
            shutil.copy(page, copy)
            with open(copy, "a", encoding="utf-8") as f:
                f.write("\nSee train/no_such_file.c and sandbox_nothing.c.\n")
            found = missing(root, copy)
            if found != sorted(set(missing(root, page)) | {"train/no_such_file.c", "enclave/sandbox_nothing.c"}):
                print(f"FAIL: two paths to nothing added, the check named {found}")
                return 1
        print("self-test: the paths to nothing were named")
        return 0
    found = missing(root, page)
    for n in found:
        print(f"docs/DESIGN.md names {n}, which does not exist")
    if found:
        print(f"FAIL: {len(found)} path(s) in docs/DESIGN.md lead nowhere")
        return 1
    print("docs/DESIGN.md: every file it names exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
