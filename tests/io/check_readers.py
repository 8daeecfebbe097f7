"""Every dataset of every kind of rlvr file reads with h5py and with h5dump.

Usage: /usr/bin/python3 check_readers.py FILE...   (Debian's python3-h5py)
Checks each file's format attributes, reads every dataset in full (which
verifies its Fletcher32 checksums), checks that every dataset is chunked and
checksummed, cross-checks a few values per kind, and runs h5dump on it.
"""
import subprocess
import sys

import h5py
import numpy as np

FORMATS = {"rlvr.rollout_shard", "rlvr.checkpoint", "rlvr.metrics", "rlvr.manifest"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def datasets_of(f):
    names = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def check_shard(path, f):
    n = int(f.attrs["n_rollouts"])
    off = f["rollouts/token_offset"][()]
    check(len(off) == n + 1 and off[0] == 0, f"{path}: token_offset has n+1 entries from 0")
    check(off[-1] == len(f["tokens/id"]) == int(f.attrs["n_tokens"]), f"{path}: offsets span the tokens")
    check(set(np.unique(f["tokens/mask"][()])) <= {0, 1, 2}, f"{path}: mask values")
    check(f["tokens/id"].dtype == np.int32 and f["tokens/logprob"].dtype == np.float32, f"{path}: token dtypes")
    check(bool(np.all(f["turns/rollout"][()] < n)), f"{path}: turns point at rollouts")
    check(text(f["rollouts/task_id"][0]).startswith("task-"), f"{path}: task ids read as strings")


def check_checkpoint(path, f):
    m = f["model"].attrs
    L, C = int(m["n_layers"]), int(m["d_model"])
    check(f["model/params/wq"].shape == (L, C, C), f"{path}: wq shape")
    check(f["optimizer/adam_m/wq"].shape == (L, C, C), f"{path}: moment shape")
    check(f["state/rng/tasks"].shape == (10,), f"{path}: rng state")
    check(text(f["run/config"][0]).startswith("[run]"), f"{path}: config text")
    check(int(f.attrs["step"]) == 3, f"{path}: step")


def check_metrics(path, f):
    steps = f["steps/step"][()]
    check(list(steps) == list(range(1, len(steps) + 1)), f"{path}: steps 1..N")
    check(np.allclose(f["steps/reward_mean"][()], 0.1 * steps), f"{path}: reward_mean")
    check(bool(np.all(np.isnan(f["steps/kl"][()]))), f"{path}: unmeasured metric is NaN")
    check("doc" in f["steps/loss"].attrs, f"{path}: column doc")


def check_manifest(path, f):
    check(len(text(f.attrs["git_commit"])) in (7, 40) or text(f.attrs["git_commit"]) == "unknown",
          f"{path}: git_commit")
    check([text(h) for h in f["hosts"][()]] == ["nodeA", "nodeB"], f"{path}: hosts")
    check(text(f.attrs["status"]) == "finished", f"{path}: status")


KIND = {"rlvr.rollout_shard": check_shard, "rlvr.checkpoint": check_checkpoint,
        "rlvr.metrics": check_metrics, "rlvr.manifest": check_manifest}


def main(paths):
    seen = set()
    for path in paths:
        with h5py.File(path, "r") as f:
            fmt = text(f.attrs.get("format", b""))
            check(fmt in FORMATS, f"{path}: format attribute {fmt!r}")
            check(int(f.attrs.get("format_version", 0)) >= 1, f"{path}: format_version")
            names = datasets_of(f)
            check(len(names) > 0, f"{path}: has datasets")
            for name in names:
                d = f[name]
                d[()]  # every byte, every checksum
                check(d.chunks is not None, f"{path}: /{name} is chunked")
                check(d.fletcher32, f"{path}: /{name} has a Fletcher32 checksum")
            if fmt in KIND:
                KIND[fmt](path, f)
            seen.add(fmt)
            print(f"h5py: {path}: {fmt}, {len(names)} datasets read")
        out = subprocess.run(["h5dump", path], capture_output=True, text=True)
        check(out.returncode == 0, f"{path}: h5dump exit {out.returncode}: {out.stderr[:300]}")
        for name in names:
            check(f'DATASET "{name.split("/")[-1]}"' in out.stdout, f"{path}: h5dump shows /{name}")
        print(f"h5dump: {path}: {len(out.stdout)} bytes of output")
    check(seen == FORMATS, f"every kind of file was checked (saw {sorted(seen)})")
    print(f"check_readers: {len(paths)} files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
