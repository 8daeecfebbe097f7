"""A model file's weight types as the reference readers see them, for the
`rlvr model info` checks (check_model_info.py, check_smollm2_info.py):
{type: [tensors, parameters, bytes in the file]}."""
from collections import defaultdict

import h5py
from gguf import GGUFReader


def gguf_types(path):
    types = defaultdict(lambda: [0, 0, 0])
    for t in GGUFReader(path).tensors:
        e = types[t.tensor_type.name]
        e[0], e[1], e[2] = e[0] + 1, e[1] + int(t.n_elements), e[2] + int(t.n_bytes)
    return dict(types)


def h5_types(path):
    """A checkpoint's /model/params datasets (bytes: their storage), and its max_seq."""
    types = defaultdict(lambda: [0, 0, 0])
    with h5py.File(path, "r") as f:
        for ds in f["model/params"].values():
            e = types[{"float32": "F32"}[str(ds.dtype)]]
            e[0], e[1], e[2] = e[0] + 1, e[1] + ds.size, e[2] + ds.id.get_storage_size()
        max_seq = int(f["model"].attrs["max_seq"])
    return dict(types), max_seq
