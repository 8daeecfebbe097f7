"""io/safetensors.h against the safetensors library (the pinned reference,
scripts/pyref.sh) and numpy.

Writes safetensors files with safetensors.numpy.save_file (every dtype numpy
has, 0-d and empty tensors, metadata) and with safetensors.serialize_file
(bfloat16 and float8 tensors, whose bytes numpy holds as uint16 / uint8),
runs safetensors_dump on them and checks names, dtypes, shapes, offsets,
bytes and metadata against the library's reading, and every float tensor's
float32 conversion bit-identical to numpy's astype(np.float32) (bfloat16:
the bits shifted into the top of a float32); then writes corrupt files and
checks that safetensors_dump refuses each, exit 1, with a message naming
the file and the problem, and that the library refuses it too.

Usage: check_safetensors.py SAFETENSORS_DUMP WORKDIR
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import safetensors
from safetensors import safe_open, serialize_file
from safetensors.numpy import save_file

dump, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(4321)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run_dump(path, outdir):
    os.makedirs(outdir, exist_ok=True)
    return subprocess.run([dump, path, outdir], capture_output=True, text=True)


def unhex(s):
    return bytes.fromhex(s).decode("utf-8")


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


# ---- tensors ------------------------------------------------------------

all_f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)  # every bit pattern
f32 = (rng.standard_normal(300) * 10).astype(np.float32)
f32[:8] = [np.inf, -np.inf, np.nan, -0.0, 1e-45, -1e-40, 3.4028235e38, 0.0]
f64 = rng.standard_normal(400) * np.exp(rng.uniform(-200, 200, 400))
f64[:10] = [np.inf, -np.inf, np.nan, -0.0, 1e-320, 1e300, -1e300, 1.401298464324817e-45 / 2,
            1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24]  # ties round to even both ways
f64[10:20] = rng.uniform(-1, 1, 10) * 1e-42  # float32 subnormals

numpy_tensors = {
    "f32.matrix": f32.reshape(20, 15),
    "f16.every_bit_pattern": all_f16.view(np.float16).reshape(256, 256),
    "f64.values": f64.reshape(4, 10, 10),
    "f32.scalar": np.array(2.5, dtype=np.float32),          # 0-d
    "f16.empty": np.zeros((0, 3), dtype=np.float16),         # no elements
    "f32.empty": np.zeros((0,), dtype=np.float32),
    "i64": rng.integers(-2**62, 2**62, size=(3, 5), dtype=np.int64),
    "i32": rng.integers(-2**31, 2**31, size=7, dtype=np.int32),
    "i16": rng.integers(-2**15, 2**15, size=(2, 2, 2), dtype=np.int16),
    "i8": rng.integers(-128, 128, size=9, dtype=np.int8),
    "u8": rng.integers(0, 256, size=(3, 3), dtype=np.uint8),
    "u16": rng.integers(0, 2**16, size=4, dtype=np.uint16),
    "u32": rng.integers(0, 2**32, size=4, dtype=np.uint32),
    "u64": rng.integers(0, 2**63, size=4, dtype=np.uint64),
    "bool": rng.integers(0, 2, size=(2, 3)).astype(bool),
    "name with spaces/and.ünïcode": np.ones(3, dtype=np.float32),
}
metadata = {"format": "pt", "note": "ünïcode ✓", "empty": ""}

main = os.path.join(work, "numpy.safetensors")
save_file(numpy_tensors, main, metadata=metadata)

bf16_bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
f8_bits = np.arange(256, dtype=np.uint16).astype(np.uint8)
raw_tensors = {
    "bf16.every_bit_pattern": {"dtype": "bfloat16", "shape": [16, 4096], "data": bf16_bits.tobytes()},
    "bf16.scalar": {"dtype": "bfloat16", "shape": [], "data": np.array([0x3fc0], np.uint16).tobytes()},
    "f8_e4m3": {"dtype": "float8_e4m3fn", "shape": [256], "data": f8_bits.tobytes()},
    "f8_e5m2": {"dtype": "float8_e5m2", "shape": [2, 128], "data": f8_bits.tobytes()},
}
rawfile = os.path.join(work, "raw.safetensors")
serialize_file(raw_tensors, rawfile, metadata=None)

# expected float32 of each float tensor; None for dtypes rlvr refuses
def bf16_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


expected = {}
with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf
    for k, v in numpy_tensors.items():
        expected[k] = v.astype(np.float32) if v.dtype.kind == "f" else None
expected["bf16.every_bit_pattern"] = bf16_f32(bf16_bits)
expected["bf16.scalar"] = bf16_f32(np.array([0x3fc0], np.uint16))
expected["f8_e4m3"] = None
expected["f8_e5m2"] = None
raw_bytes = {k: v.tobytes() for k, v in numpy_tensors.items()}
raw_bytes.update({k: v["data"] for k, v in raw_tensors.items()})


def check_file(path, label):
    out = os.path.join(work, label + ".out")
    r = run_dump(path, out)
    if r.returncode != 0:
        fail(f"{label}: safetensors_dump exited {r.returncode}: {r.stderr.strip()}")
        return
    meta = json.load(open(os.path.join(out, "meta.json")))
    hdr = header_of(path)
    with safe_open(path, framework="numpy") as lib:
        lib_names = sorted(lib.keys())
        lib_meta = lib.metadata() or {}
        names = [unhex(t["name"]) for t in meta["tensors"]]
        if names != lib_names:
            fail(f"{label}: tensor names {names} != library's {lib_names}")
        for i, t in enumerate(meta["tensors"]):
            name = unhex(t["name"])
            if name not in lib_names:
                continue
            sl = lib.get_slice(name)
            if t["dtype"] != sl.get_dtype():
                fail(f"{label}: {name}: dtype {t['dtype']} != library's {sl.get_dtype()}")
            if t["shape"] != list(sl.get_shape()):
                fail(f"{label}: {name}: shape {t['shape']} != library's {sl.get_shape()}")
            if t["offsets"] != hdr[name]["data_offsets"]:
                fail(f"{label}: {name}: offsets {t['offsets']} != header's {hdr[name]['data_offsets']}")
            if t["n_elements"] != int(np.prod(t["shape"], dtype=np.int64)):
                fail(f"{label}: {name}: n_elements {t['n_elements']}")
            if t["size"] * t["n_elements"] != t["offsets"][1] - t["offsets"][0]:
                fail(f"{label}: {name}: dtype size {t['size']}")
            if not t["found"]:
                fail(f"{label}: {name}: tensor_find does not find it")
            got_raw = open(os.path.join(out, f"{i}.raw"), "rb").read()
            if got_raw != raw_bytes[name]:
                fail(f"{label}: {name}: bytes differ from those written")
            if name in numpy_tensors:  # the library's own read of the tensor
                lt = lib.get_tensor(name)
                if lt.tobytes() != got_raw or lt.shape != tuple(t["shape"]):
                    fail(f"{label}: {name}: library's get_tensor differs")
            want = expected[name]
            if want is None:
                if t["f32"] is True:
                    fail(f"{label}: {name}: dtype {t['dtype']} converted to float32; expected a refusal")
                else:
                    msg = unhex(t["f32"])
                    if t["dtype"] not in msg or path not in msg:
                        fail(f"{label}: {name}: refusal '{msg}' does not name the dtype and file")
                continue
            if t["f32"] is not True:
                fail(f"{label}: {name}: float32 conversion refused: {unhex(t['f32'])}")
                continue
            got = open(os.path.join(out, f"{i}.f32"), "rb").read()
            if got != np.ascontiguousarray(want, dtype=np.float32).tobytes():
                g = np.frombuffer(got, np.float32)
                w = want.reshape(-1)
                bad = np.nonzero(g.view(np.uint32) != w.view(np.uint32))[0] if g.size == w.size else []
                fail(f"{label}: {name}: float32 differs from numpy's astype(np.float32) "
                     f"({len(got)} vs {want.size * 4} bytes; first differing index {bad[:5]})")
        got_meta = {unhex(k): unhex(v) for k, v in meta["metadata"].items()}
        if got_meta != lib_meta:
            fail(f"{label}: metadata {got_meta} != library's {lib_meta}")
    if not meta["absent_tensor"] or not meta["absent_key"]:
        fail(f"{label}: lookups of absent names found something")


check_file(main, "numpy")
check_file(rawfile, "raw")

# ---- corrupt files: refused, exit 1, message names the file and problem --

good_data = np.arange(6, dtype=np.float32).tobytes()  # 24 bytes


def build(header, data=good_data, length=None):
    """A file from a header (dict, or bytes as they are) and data bytes;
    `length` overrides the stored header length."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + data


def T(dtype="F32", shape=(6,), offs=(0, 24)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offs)}


good = build({"a": T()})
with open(main, "rb") as f:
    main_bytes = f.read()
cases = [
    # name, file bytes, what the message must say, library refuses it too
    ("truncated", main_bytes[: len(main_bytes) - 100], "run past the data section", True),
    ("short", good[:5], "too short", True),
    ("header_len_beyond_file", build({"a": T()}, length=10_000), "runs past the end of the file", True),
    ("header_len_huge", build({"a": T()}, length=200_000_000), "exceeds the 100 MB limit", True),
    ("header_not_json", build(b'{"a": {"dtype": "F32",'), "not valid JSON", True),
    ("header_not_object", build(b'[1, 2]   '), "does not start with '{'", True),
    ("header_bad_utf8", build(b'{"\xff": 1}'), "not valid JSON", True),
    ("offsets_beyond_data", build({"a": T(offs=(0, 28)), "b": T(shape=(1,), offs=(24, 28))}),
     "run past the data section", True),
    ("offsets_reversed", build({"a": T(shape=(0,), offs=(24, 0))}), "end before they begin", True),
    ("offset_negative", build({"a": T(offs=(-4, 20))}), "not non-negative integers", True),
    ("shape_size_mismatch", build({"a": T(shape=(5,))}), "span 24 bytes", True),
    ("shape_dtype_mismatch", build({"a": T(dtype="F64")}), "span 24 bytes", True),
    ("shape_negative", build({"a": T(shape=(-6,))}), "shape[0] is not a non-negative integer", True),
    ("shape_overflow", build({"a": T(shape=(2**32, 2**32, 0))}), "overflows 64 bits", True),
    ("overlap", build({"a": T(shape=(4,), offs=(0, 16)), "b": T(shape=(4,), offs=(8, 24))}),
     "overlaps tensor", True),
    ("hole", build({"a": T(shape=(2,), offs=(0, 8)), "b": T(shape=(2,), offs=(16, 24))}),
     "belong to no tensor", True),
    ("trailing_bytes", build({"a": T(shape=(5,), offs=(0, 20))}), "bytes after the last tensor", True),
    ("unknown_dtype", build({"a": T(dtype="F12")}), 'unknown dtype "F12"', True),
    ("dtype_lowercase", build({"a": T(dtype="float32")}), 'unknown dtype "float32"', True),
    ("missing_offsets", build({"a": {"dtype": "F32", "shape": [6]}}), '"data_offsets" missing', True),
    ("metadata_not_string", build({"__metadata__": {"n": 1}, "a": T()}), "is not a string", True),
    ("duplicate_name", build(b'{"a": ' + json.dumps(T()).encode() + b', "a": ' + json.dumps(T()).encode() + b'}'),
     "duplicate object key", False),  # the library keeps the last
]
for name, content, want, lib_refuses in cases:
    path = os.path.join(work, f"bad_{name}.safetensors")
    with open(path, "wb") as f:
        f.write(content)
    r = run_dump(path, os.path.join(work, f"bad_{name}.out"))
    if r.returncode != 1:
        fail(f"corrupt {name}: exit {r.returncode}, expected 1 (stderr: {r.stderr.strip()})")
    elif path not in r.stderr or want not in r.stderr:
        fail(f"corrupt {name}: message does not name the file and '{want}': {r.stderr.strip()}")
    if lib_refuses:
        try:
            with safe_open(path, framework="numpy") as lib:
                for k in lib.keys():
                    lib.get_tensor(k)
            fail(f"corrupt {name}: the safetensors library accepts it; the case tests nothing")
        except Exception:
            pass

# the well-formed base of the corrupt cases opens (so each case fails for its one fault)
path = os.path.join(work, "good.safetensors")
with open(path, "wb") as f:
    f.write(good)
r = run_dump(path, os.path.join(work, "good.out"))
if r.returncode != 0:
    fail(f"good base file refused: {r.stderr.strip()}")

# ---- a sharded checkpoint: model.safetensors.index.json -------------------

shard_dir = os.path.join(work, "sharded")
os.makedirs(shard_dir)
names = sorted(numpy_tensors)
weight_map = {}
for s, part in enumerate((names[::2], names[1::2])):
    fname = f"model-{s + 1:05d}-of-00002.safetensors"
    save_file({k: numpy_tensors[k] for k in part}, os.path.join(shard_dir, fname))
    weight_map.update({k: fname for k in part})
index = os.path.join(shard_dir, "model.safetensors.index.json")
with open(index, "w") as f:
    json.dump({"metadata": {"total_size": sum(v.nbytes for v in numpy_tensors.values())},
               "weight_map": weight_map}, f, indent=2)
out = os.path.join(work, "index.out")
os.makedirs(out)
r = subprocess.run([dump, "--index", index, out], capture_output=True, text=True)
if r.returncode != 0:
    fail(f"index: safetensors_dump --index exited {r.returncode}: {r.stderr.strip()}")
else:
    got = json.load(open(os.path.join(out, "index.json")))
    entries = [(unhex(n), unhex(p)) for n, p in got["entries"]]
    want = [(k, os.path.join(shard_dir, weight_map[k])) for k in sorted(weight_map)]
    if entries != want:
        fail(f"index: entries {entries} != {want}")
    shards = [unhex(p) for p in got["shards"]]
    if shards != sorted({p for _, p in want}):
        fail(f"index: shards {shards}")
    if not got["absent"]:
        fail("index: an absent name was found")
    for n, p in entries:  # every shard named opens and holds its tensor
        with safe_open(p, framework="numpy") as lib:
            if n not in lib.keys():
                fail(f"index: {n} is not in {p}")

bad_index = [
    ("not_json", b'{"weight_map": {', "cannot read the index"),
    ("no_weight_map", b'{"metadata": {}}', '"weight_map" missing'),
    ("not_string", b'{"weight_map": {"a": 3}}', "is not a string"),
    ("path_in_name", b'{"weight_map": {"a": "../x.safetensors"}}', "not a plain file name"),
    ("dot_dot", b'{"weight_map": {"a": ".."}}', "not a plain file name"),
    ("duplicate", b'{"weight_map": {"a": "x", "a": "y"}}', "duplicate object key"),
]
for name, content, want in bad_index:
    path = os.path.join(work, f"bad_index_{name}.json")
    with open(path, "wb") as f:
        f.write(content)
    out = os.path.join(work, f"bad_index_{name}.out")
    os.makedirs(out)
    r = subprocess.run([dump, "--index", path, out], capture_output=True, text=True)
    if r.returncode != 1:
        fail(f"corrupt index {name}: exit {r.returncode}, expected 1 (stderr: {r.stderr.strip()})")
    elif path not in r.stderr or want not in r.stderr:
        fail(f"corrupt index {name}: message does not name the file and '{want}': {r.stderr.strip()}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"safetensors {safetensors.__version__}: {len(numpy_tensors) + len(raw_tensors)} tensors read back, "
      f"every float dtype bit-identical to numpy; {len(cases)} corrupt files refused; a 2-shard index "
      f"read back, {len(bad_index)} corrupt indexes refused")
