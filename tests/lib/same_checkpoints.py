"""same_checkpoints.py [--config] REF OTHER...

Every dataset of each OTHER checkpoint (HDF5) equal to REF's bit for bit:
the same names, dtypes, shapes and bytes. run/config (the stored INI text)
is left out unless --config is given: runs on different MPI layouts differ
only there. Exit 0 and one summary line when all are equal; an
AssertionError naming the file and dataset otherwise; exit 2 on bad usage.
"""
import sys

import h5py
import numpy as np


def datasets(path, with_config):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f.visititems(visit)
    if not with_config:
        out.pop("run/config", None)
    return out


def main(argv):
    with_config = argv[:1] == ["--config"]
    paths = argv[1:] if with_config else argv
    if len(paths) < 2:
        print("usage: same_checkpoints.py [--config] REF OTHER...", file=sys.stderr)
        return 2
    ref = datasets(paths[0], with_config)
    assert any(k.startswith("model/params/") for k in ref), (paths[0], sorted(ref))
    for path in paths[1:]:
        got = datasets(path, with_config)
        assert sorted(got) == sorted(ref), (path, sorted(set(got) ^ set(ref)))
        for k in ref:
            a, b = np.asarray(ref[k]), np.asarray(got[k])
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (path, k)
    print(f"{len(ref)} datasets bit-identical: {paths[0]} = {' '.join(paths[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
