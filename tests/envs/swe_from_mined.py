"""Writes SWE-bench instances (JSONL) from a mined rlvr pool, as the field
stores them: pytest node ids, FAIL_TO_PASS and PASS_TO_PASS as JSON arrays
on odd lines and as strings holding arrays on even ones, test_patch the diff
of the hidden test files between the base and the fix (git on a clone).

usage: swe_from_mined.py POOL CLONE OUT.jsonl"""
import glob
import json
import subprocess
import sys


def node_id(name):
    # "tests.test_x.Class.test_y" (JUnit classname.name) -> "tests/test_x.py::Class::test_y"
    parts = name.split(".")
    return "/".join(parts[:2]) + ".py::" + "::".join(parts[2:])


def main():
    pool, clone, out = sys.argv[1:4]
    lines = []
    for i, path in enumerate(sorted(glob.glob(pool + "/*.json"))):
        t = json.load(open(path))
        fix = t["metadata"]["fix_commit"]
        test_patch = subprocess.run(["git", "-C", clone, "diff", t["base_commit"], fix, "--"] + t["hidden_tests"]["files"],
                                    capture_output=True, text=True, check=True).stdout
        f2p = [node_id(n) for n in t["FAIL_TO_PASS"]]
        p2p = [node_id(n) for n in t["PASS_TO_PASS"]]
        lines.append(json.dumps({
            "instance_id": "tkem__cachetools-" + fix[:12], "repo": "tkem/cachetools",
            "base_commit": t["base_commit"], "patch": t["reference_patch"], "test_patch": test_patch,
            "FAIL_TO_PASS": json.dumps(f2p) if i % 2 else f2p, "PASS_TO_PASS": json.dumps(p2p) if i % 2 else p2p,
            "problem_statement": t["prompt"].split("\n\nMake this change")[0], "created_at": t["created_at"],
            "version": "7.0", "hints_text": ""}))
    open(out, "w").write("\n".join(lines) + "\n")
    print(len(lines), "instances")


def corrupt(src, out):
    """Four bad instances from a good one: no patch, an unknown repository, a
    test_patch whose context is not in the file, FAIL_TO_PASS passing at the base."""
    good = [json.loads(line) for line in open(src)]
    a = dict(good[0]); del a["patch"]; a["instance_id"] = "no-patch"
    b = dict(good[0]); b["repo"] = "nobody/nothing"; b["instance_id"] = "unknown-repo"
    c = dict(good[0]); c["instance_id"] = "bad-test-patch"
    lines = c["test_patch"].split("\n")
    first = next(k for k, line in enumerate(lines) if line.startswith(" ") and len(line) > 10)
    lines[first] = " this context line is not in the file"
    c["test_patch"] = "\n".join(lines)
    d = dict(good[0]); d["instance_id"] = "f2p-passes"
    p2p = d["PASS_TO_PASS"] if isinstance(d["PASS_TO_PASS"], list) else json.loads(d["PASS_TO_PASS"])
    d["FAIL_TO_PASS"] = [p2p[0]]
    open(out, "w").write("\n".join(json.dumps(x) for x in (a, b, c, d)) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--corrupt":
        corrupt(sys.argv[2], sys.argv[3])
    else:
        main()
