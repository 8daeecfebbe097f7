#!/usr/bin/env bash
# Task environments from the command line: a pool of 100 command-mode
# pytest tasks whose tests pass only inside a SquashFS image (the host's
# Python with pytest and a package the host lacks) checks with one mount
# (`rlvr tasks check` says how many; each task refused for the hidden test
# it can read in command mode, and for nothing else); `rlvr verify` passes the reference and
# fails the bug inside the image; the same task as a SIF file; refusals that
# name the file: at load (a file that is no image, a truncated image, a
# working directory the sandbox owns), at check time (an image without
# /bin/sh is broken, naming it).
set -u
rlvr=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rlvr_tasks_env_XXXXXX")
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
fail=0
out="$dir/out"
. "$(dirname "$0")/../lib/cli_check.sh"
py=/usr/bin/python3

sh "$src/tests/enclave/make_env_root.sh" "$dir/root" || { echo "FAIL: building the root"; exit 1; }
mksquashfs "$dir/root" "$dir/env.sqfs" -quiet -noappend -all-root -no-progress >/dev/null || { echo "FAIL: mksquashfs"; exit 1; }
mkdir -p "$dir/nosh/usr" && echo x > "$dir/nosh/usr/README"
mksquashfs "$dir/nosh" "$dir/nosh.sqfs" -quiet -noappend -all-root -no-progress >/dev/null
head -c 100000 "$dir/env.sqfs" > "$dir/half.sqfs"
echo "not an image" > "$dir/plain.txt"

# the repository, its hidden tests, the patches, and the pools
mkdir -p "$dir/repo" "$dir/hidden/tests"
printf 'def mul(a, b):\n    return a + b\n' > "$dir/repo/calc.py"
git -C "$dir/repo" init -q && git -C "$dir/repo" add -A &&
  git -C "$dir/repo" -c user.name=t -c user.email=t@t commit -qm base || { echo "FAIL: git"; exit 1; }
base=$(git -C "$dir/repo" rev-parse HEAD)
cat > "$dir/hidden/tests/test_calc.py" <<'PYTEST'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import calc
def test_environment():
    import rlvr_env_marker
    assert rlvr_env_marker.VERSION == "7.3.1" and os.getcwd() == "/testbed"
def test_mul():
    assert calc.mul(2, 3) == 6
PYTEST
$py - "$dir" "$base" <<'PY'
import json, os, struct, sys
d, base = sys.argv[1], sys.argv[2]
ref = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def mul(a, b):\n-    return a + b\n+    return a * b\n")
wrong = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def mul(a, b):\n-    return a + b\n+    return a - b\n")
open(d + "/ref.diff", "w").write(ref)
open(d + "/wrong.diff", "w").write(wrong)

def task(i, image, workdir="/testbed", split="train"):
    return {"format": "rlvr-task/1", "id": "calc-env-%03d" % i, "family": "calc-env", "split": split,
            "split_key": "calc-env", "prompt": "mul adds; make it multiply",
            "repository": "../repo", "base_commit": base,
            "public_tests": {"command": "python3 -I -c 'import calc'", "files": []},
            "hidden_tests": {"root": "../hidden", "files": ["tests/test_calc.py"],
                             "command": "python3 -I -m pytest -p no:cacheprovider -q --junitxml=report.xml tests",
                             "results": {"format": "junit", "path": "report.xml"}},
            "FAIL_TO_PASS": ["tests/test_calc.py::test_mul"],
            "PASS_TO_PASS": ["tests/test_calc.py::test_environment"],
            "reference_patch": ref, "wrong_patches": [wrong], "editable_paths": ["/calc.py"],
            "environment": {"image": image, "workdir": workdir, "env": {"PYTHONDONTWRITEBYTECODE": "1"}}}

def pool(name, tasks):
    os.makedirs(d + "/" + name, exist_ok=True)
    for t in tasks:
        json.dump(t, open("%s/%s/%s.json" % (d, name, t["id"]), "w"), indent=1)

pool("pool100", [task(i, "../env.sqfs") for i in range(100)])
pool("one", [task(0, "../env.sqfs")])
pool("sif", [task(0, "../env.sif")])
pool("plain", [task(0, "../plain.txt")])
pool("half", [task(0, "../half.sqfs")])
pool("proc", [task(0, "../env.sqfs", workdir="/proc/x")])
pool("nosh", [task(0, "../nosh.sqfs")])

# the image as a SIF file: the global header, one SquashFS system partition
sq = open(d + "/env.sqfs", "rb").read()
hdr = bytearray(128)
hdr[0:31] = b"#!/usr/bin/env run-singularity\n"
hdr[32:41] = b"SIF_MAGIC"
hdr[42:44] = b"01"
hdr[45:47] = b"02"
struct.pack_into("<qqqqqqqq", hdr, 64, 0, 0, 3, 4, 4096, 4 * 585, 8192, len(sq))
descr = bytearray(4 * 585)
struct.pack_into("<iBIIIqqq", descr, 0, 0x4004, 1, 1, 0, 0, 8192, len(sq), len(sq))
struct.pack_into("<ii", descr, 201, 1, 2)
f = bytearray(8192)
f[0:128] = hdr
f[4096:4096 + len(descr)] = descr
open(d + "/env.sif", "wb").write(bytes(f) + sq)
PY

# the pool of 100, one mount for all of them. Command-mode pytest shares a
# process with the code under test, which can read the hidden test file:
# every task is exploitable through that probe (docs/ENCLAVE.md), and
# through nothing else: no Python lookup, no restart wins inside the image
check "a pool of 100 tasks in one image" 1 "$rlvr" tasks check "$dir/pool100" --runs 1 --wall-s 60
expect_text "checked 100 tasks: 0 ok, 0 broken, 0 flaky, 0 infra, 100 exploitable"
expect_text "environments: 100 task(s) ran in images; 1 image mount(s)"
n=$(grep -c 'exploitable calc-env-[0-9]* .*rewarded without a fix: hidden files at run time tests/test_calc.py, /work/tests/test_calc.py$' "$out")
[ "$n" = 100 ] || { echo "FAIL: $n of 100 tasks refused for the hidden test alone"; grep exploitable "$out" | head -3; fail=1; }

# one task by hand, in the image and as SIF
check "verify: the reference inside the image" 0 "$rlvr" verify --task "$dir/one/calc-env-000.json" --patch "$dir/ref.diff"
expect_text ": pass"
check "verify: a wrong patch inside the image" 1 "$rlvr" verify --task "$dir/one/calc-env-000.json" --patch "$dir/wrong.diff"
expect_text "reason: tests_failed (300)"
check "verify: the reference inside the SIF file" 0 "$rlvr" verify --task "$dir/sif/calc-env-000.json" --patch "$dir/ref.diff"
expect_text ": pass"

# refusals that name the file
check "an environment that is no image" 1 "$rlvr" tasks list "$dir/plain"
expect_text "$dir/plain/../plain.txt is neither a directory nor a SquashFS or SIF image"
check "a truncated image" 1 "$rlvr" tasks list "$dir/half"
expect_text "is truncated"
expect_text "half.sqfs"
check "a working directory the sandbox owns" 1 "$rlvr" tasks list "$dir/proc"
expect_text "environment.workdir"
check "an image without /bin/sh" 1 "$rlvr" tasks check "$dir/nosh" --runs 1
expect_text "broken"
expect_text "nosh.sqfs has no executable /bin/sh"

exit $fail
