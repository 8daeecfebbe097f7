#!/usr/bin/env python3
"""tests/repo/check_jobs_thin.py — the command line stays parse, call, print.

docs/DESIGN.md says jobs/ holds one thin file per verb that parses its
arguments, calls the library and prints; what a verb does lives in a library
folder with C tests of its own. This keeps that true:
  - no jobs/*.c longer than 300 lines;
  - no file opened, created, renamed or removed in jobs/ (fopen, open,
    opendir, mkdir, rename, unlink, ... — the library does that), and no
    printing to a stream other than stdout and stderr.

  check_jobs_thin.py SOURCE_DIR              check the tree
  check_jobs_thin.py SOURCE_DIR --self-test  copy jobs/ to a temporary
      directory, add a 301-line file and a file that opens one, and expect
      exactly those two to be named
"""
import os
import re
import shutil
import sys
import tempfile

MAX_LINES = 300
# calls that touch the file system by name or open a file
FILE_CALL = re.compile(r"\b(fopen|freopen|fdopen|open|openat|creat|opendir|mkdir|mkdirat|rename|renameat|unlink|"
                       r"unlinkat|rmdir|remove|truncate|ftruncate|symlink|link|chmod|mkdtemp|mkstemp|tmpfile)\s*\(")
# printing to a FILE * that is not stdout or stderr
STREAM_CALL = re.compile(r"\b(fprintf|vfprintf|fputs|fputc|putc|fwrite|fflush)\s*\((.*)")
# stdout, stderr, or a stream named `out` (a usage(FILE *out) parameter or a
# printer's `p->out`, by convention always one of the two); fflush(NULL)
STD = re.compile(r"stdout|stderr|(\w+->)?out|NULL")


def strip_comments_and_strings(text):
    """The code without comments or string literals (their words are not calls)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def stream_argument(name, rest):
    """The FILE * argument of a stream call: the first for fprintf/fflush, the
    last for fputs/fputc/putc/fwrite."""
    depth, args, cur = 0, [], ""
    for ch in rest:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
            continue
        cur += ch
    args.append(cur)
    args = [a.strip() for a in args]
    return args[0] if name in ("fprintf", "vfprintf", "fflush") else args[-1]


def violations(root):
    found = []
    jobs = os.path.join(root, "jobs")
    for name in sorted(os.listdir(jobs)):
        if not name.endswith((".c", ".h")):
            continue
        path = os.path.join(jobs, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rel = os.path.relpath(path, root)
        lines = text.count("\n")
        if name.endswith(".c") and lines > MAX_LINES:
            found.append(f"{rel}: {lines} lines, more than {MAX_LINES}: move its logic into a library folder")
        code = strip_comments_and_strings(text)
        for n, line in enumerate(code.split("\n"), 1):
            m = FILE_CALL.search(line)
            if m:
                found.append(f"{rel}:{n}: {m.group(1)}() in jobs/: files are opened by the library")
            m = STREAM_CALL.search(line)
            if m:
                stream = stream_argument(m.group(1), m.group(2))
                if stream and not STD.fullmatch(stream):
                    found.append(f"{rel}:{n}: {m.group(1)}() to {stream}: jobs/ prints to stdout and stderr only")
    return found


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "jobs"), os.path.join(tmp, "jobs"))
        before = set(violations(tmp))
        with open(os.path.join(tmp, "jobs", "long.c"), "w") as f:
            f.write("int x;\n" * (MAX_LINES + 1))
        with open(os.path.join(tmp, "jobs", "opener.c"), "w") as f:
            f.write('#include <stdio.h>\nvoid f(void) {\n    FILE *g = fopen("x", "w");\n'
                    '    fprintf(g, "y");\n    fprintf(stderr, "fine");\n}\n')
        found = [v for v in violations(tmp) if v not in before]
        want = ["jobs/long.c: 301 lines", "jobs/opener.c:3: fopen()", "jobs/opener.c:4: fprintf() to g"]
        missing = [w for w in want if not any(v.startswith(w) for v in found)]
        if missing or len(found) != len(want):
            print(f"FAIL: expected {want}, got {found}")
            return 1
        for v in found:
            print(f"caught: {v}")
    print("self-test: a long file, an fopen and a print to a file were caught")
    return 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    if "--self-test" in sys.argv[2:]:
        return self_test(root)
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"FAIL: {len(found)} place(s) where jobs/ is not parse, call, print")
        return 1
    print("jobs/: every file under 300 lines, no file opened, printing to stdout and stderr only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
