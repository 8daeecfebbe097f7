"""io/gguf.h against gguf-py (the pinned reference, scripts/pyref.sh).

Writes GGUF files with gguf.GGUFWriter — one tensor per type rlvr
dequantises, metadata of every value type — runs gguf_dump on them and
checks that every tensor is bit-identical to gguf.quants.dequantize and
every metadata value reads back; then corrupts copies and checks that
gguf_dump refuses each with a message naming the problem.

Usage: check_gguf.py GGUF_DUMP WORKDIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V
from gguf.quants import dequantize, quantize

dump, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(1234)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def finite_f16(n, scale):
    """n finite float16 scale fields as bytes, some of them subnormal, zero
    or negative, so every path of the half conversion is taken."""
    v = (rng.standard_normal(n) * scale).astype(np.float16)
    v[::7] = np.float16(3e-6)   # subnormal
    v[::11] = np.float16(0.0)
    v[::13] = -v[::13]
    assert np.all(np.isfinite(v))
    return v.view(np.uint8).reshape(n, 2)


def random_blocks(qtype, rows, n_blocks_per_row, scale_fields):
    """Raw blocks of random bytes whose float16 fields (byte offsets in
    scale_fields) hold finite values; shape (rows, bytes per row) as
    GGUFWriter takes raw quantised tensors."""
    block, type_size = gguf.GGML_QUANT_SIZES[qtype]
    n = rows * n_blocks_per_row
    b = rng.integers(0, 256, size=(n, type_size), dtype=np.uint8)
    for off in scale_fields:
        b[:, off:off + 2] = finite_f16(n, 0.05)
    return b.reshape(rows, n_blocks_per_row * type_size)


def run_dump(path, outdir):
    os.makedirs(outdir, exist_ok=True)
    return subprocess.run([dump, path, outdir], capture_output=True, text=True)


# ---- the main file: every dequantised type, every metadata type ----------

main = os.path.join(work, "model.gguf")
w = gguf.GGUFWriter(main, "rlvrtest")
w.add_custom_alignment(64)
meta = {  # key: (type, value as written)
    "t.u8": (V.UINT8, 200), "t.i8": (V.INT8, -100), "t.u16": (V.UINT16, 60000),
    "t.i16": (V.INT16, -30000), "t.u32": (V.UINT32, 4000000000), "t.i32": (V.INT32, -2000000000),
    "t.f32": (V.FLOAT32, 3.14159), "t.bool": (V.BOOL, True), "t.bool0": (V.BOOL, False),
    "t.string": (V.STRING, "héllo, gguf"), "t.empty": (V.STRING, ""),
    "t.u64": (V.UINT64, 2**63 + 5), "t.i64": (V.INT64, -2**62 - 3), "t.f64": (V.FLOAT64, 2.718281828459045),
}
for k, (t, v) in meta.items():
    w.add_key_value(k, v, t)
arrays = {  # key: (element type, values)
    "a.u8": (V.UINT8, [0, 1, 255]), "a.i8": (V.INT8, [-128, 127]), "a.u16": (V.UINT16, [65535, 7]),
    "a.i16": (V.INT16, [-32768, 5]), "a.u32": (V.UINT32, [1, 2**32 - 1]), "a.i32": (V.INT32, [-1, 2**31 - 1]),
    "a.f32": (V.FLOAT32, [0.5, -1.25e-3, 1e30]), "a.bool": (V.BOOL, [True, False, True]),
    "a.string": (V.STRING, ["a", "", "tok\u00e9n", "x" * 300]), "a.u64": (V.UINT64, [2**64 - 1]),
    "a.i64": (V.INT64, [-2**63, 2**63 - 1]), "a.f64": (V.FLOAT64, [1e-300, -0.1]),
}
for k, (et, vals) in arrays.items():
    w.add_key_value(k, vals, V.ARRAY, sub_type=et)
# arrays of arrays: gguf-py types the inner arrays from their values
nested = {"a.nested": [[1, 2, 3], [4]], "a.nested_str": [["x", "yz"], ["w"]],
          "a.nested2": [[[1.5], [2.5, 3.5]], [[4.5]]]}
for k, v in nested.items():
    w.add_key_value(k, v, V.ARRAY)

tensors = []  # (name, expected type)
x = rng.standard_normal((4, 256)).astype(np.float32)
w.add_tensor("f32", x); tensors.append(("f32", Q.F32))
w.add_tensor("f16", quantize(x, Q.F16)); tensors.append(("f16", Q.F16))
# every float16 and every bfloat16 bit pattern, NaNs and infinities included
w.add_tensor("f16.all", np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256))
tensors.append(("f16.all", Q.F16))
w.add_tensor("bf16", quantize(x, Q.BF16), raw_dtype=Q.BF16); tensors.append(("bf16", Q.BF16))
w.add_tensor("bf16.all", np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.uint8).reshape(256, 512),
             raw_dtype=Q.BF16)
tensors.append(("bf16.all", Q.BF16))
for qt in (Q.Q8_0, Q.Q4_0, Q.Q4_1):
    w.add_tensor(qt.name.lower(), quantize(x, qt), raw_dtype=qt); tensors.append((qt.name.lower(), qt))
# random blocks as well: negative and subnormal scales, every code
w.add_tensor("q8_0.raw", random_blocks(Q.Q8_0, 3, 4, [0]), raw_dtype=Q.Q8_0); tensors.append(("q8_0.raw", Q.Q8_0))
w.add_tensor("q4_0.raw", random_blocks(Q.Q4_0, 3, 4, [0]), raw_dtype=Q.Q4_0); tensors.append(("q4_0.raw", Q.Q4_0))
w.add_tensor("q4_1.raw", random_blocks(Q.Q4_1, 3, 4, [0, 2]), raw_dtype=Q.Q4_1); tensors.append(("q4_1.raw", Q.Q4_1))
# the K-quants: gguf-py does not quantise them, so raw blocks with valid
# float16 d (and dmin) fields; byte offsets per the layouts in quants.py
kq = {Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}
for qt, fields in kq.items():
    try:
        quantize(x, qt)
        fail(f"gguf-py now quantises {qt.name}; use quantize() for it")
    except NotImplementedError:
        pass
    name = qt.name.lower()
    w.add_tensor(name, random_blocks(qt, 3, 2, fields), raw_dtype=qt); tensors.append((name, qt))
# a 3-D tensor: dims and order
w.add_tensor("q8_0.3d", quantize(rng.standard_normal((2, 3, 64)).astype(np.float32), Q.Q8_0), raw_dtype=Q.Q8_0)
tensors.append(("q8_0.3d", Q.Q8_0))

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()


def check_value(key, t, want, got):
    """got is what gguf_dump printed for a value of type t."""
    if t == V.STRING:
        ok = bytes.fromhex(got) == want.encode("utf-8")
    elif t == V.FLOAT32:
        ok = np.float32(got).view(np.uint32) == np.float32(want).view(np.uint32)
    elif t == V.FLOAT64:
        ok = np.float64(got).view(np.uint64) == np.float64(want).view(np.uint64)
    elif t == V.BOOL:
        ok = got is want
    elif t == V.ARRAY:
        et, vals = got
        ok = len(vals) == len(want)
        if ok:
            want_et = V.get_type(want[0]) if not isinstance(want, tuple) else want[0]
            for i, (g, wv) in enumerate(zip(vals, want)):
                check_value(f"{key}[{i}]", V(et), wv, g)
        if et != (want_et if ok else et):
            fail(f"{key}: element type {et}, wanted {want_et}")
        return
    else:
        ok = got == want
    if not ok:
        fail(f"{key}: read {got!r}, wrote {want!r}")


out = os.path.join(work, "out")
r = run_dump(main, out)
if r.returncode != 0:
    fail(f"gguf_dump {main} exit {r.returncode}: {r.stderr.strip()}")
    sys.exit(1)
got = json.load(open(os.path.join(out, "meta.json")))
if got["version"] != 3 or got["alignment"] != 64:
    fail(f"version/alignment {got['version']}/{got['alignment']}, wanted 3/64")

reader = gguf.GGUFReader(main)
file_keys = {k for k in reader.fields if not k.startswith("GGUF.")}  # gguf-py's header pseudo-fields
if set(got["meta"]) != file_keys:
    fail(f"keys differ: rlvr {sorted(got['meta'])}, gguf-py {sorted(reader.fields)}")
for k, (t, v) in meta.items():
    gt, gv = got["meta"][k]
    if gt != t:
        fail(f"{k}: type {gt}, wanted {int(t)}")
    check_value(k, t, v, gv)
for k, (et, vals) in arrays.items():
    gt, (get, gvals) = got["meta"][k]
    if gt != V.ARRAY or get != et or len(gvals) != len(vals):
        fail(f"{k}: type {gt}/{get} with {len(gvals)} elements, wanted array of {int(et)} x {len(vals)}")
        continue
    for i, (g, wv) in enumerate(zip(gvals, vals)):
        check_value(f"{k}[{i}]", et, wv, g)


def check_nested(key, want, got):
    et, vals = got
    if len(vals) != len(want):
        fail(f"{key}: {len(vals)} elements, wanted {len(want)}")
        return
    want_et = V.get_type(want[0])
    if et != want_et:
        fail(f"{key}: element type {et}, wanted {int(want_et)}")
        return
    for i, (g, wv) in enumerate(zip(vals, want)):
        if et == V.ARRAY:
            check_nested(f"{key}[{i}]", wv, g)
        else:
            check_value(f"{key}[{i}]", V(et), wv, g)


for k, v in nested.items():
    gt, gv = got["meta"][k]
    if gt != V.ARRAY:
        fail(f"{k}: type {gt}, wanted array")
    else:
        check_nested(k, v, gv)
# typed getters: which conversions each value type allows (widening by type
# only where no value can be lost), and that they give the value written
allowed = {
    V.UINT8: {"u32", "i32", "u64", "i64"}, V.UINT16: {"u32", "i32", "u64", "i64"},
    V.UINT32: {"u32", "u64", "i64"}, V.UINT64: {"u64"},
    V.INT8: {"i32", "i64"}, V.INT16: {"i32", "i64"}, V.INT32: {"i32", "i64"}, V.INT64: {"i64"},
    V.FLOAT32: {"f32", "f64"}, V.FLOAT64: {"f64"}, V.BOOL: {"bool"}, V.STRING: {"string"}, V.ARRAY: {"array"},
}


def check_conv(key, t, want, conv):
    if set(conv) != allowed[t]:
        fail(f"{key}: getters {sorted(conv)} succeed on {t.name}, wanted {sorted(allowed[t])}")
        return
    for name, v in conv.items():
        if name in ("f32", "f64"):
            ok = np.float32(v) == np.float32(want) if t == V.FLOAT32 else v == want
        elif name == "string":
            ok = v == len(want.encode("utf-8"))
        elif name == "array":
            ok = v == len(want)
        elif name == "bool":
            ok = v == int(want)
        else:
            ok = v == want
        if not ok:
            fail(f"{key}: getter {name} gives {v!r}, wrote {want!r}")


for k, (t, v) in meta.items():
    check_conv(k, t, v, got["conv"][k])
for k, (et, vals) in arrays.items():
    check_conv(k, V.ARRAY, vals, got["conv"][k])
    check_conv(f"{k}[0]", et, vals[0], got["elem_conv"][k])
for k, v in nested.items():
    check_conv(f"{k}[0]", V.ARRAY, v[0], got["elem_conv"][k])
if got["absent"] != [-15, "RLVR_ENOTFOUND"] or got["find_absent"] != 1:
    fail(f"absent key: get_u32 gives {got['absent']}, find gives {got['find_absent']}")
if got["past_end"] != -1:
    fail(f"array element past the end: {got['past_end']}, wanted RLVR_EINVAL (-1)")

gt, gv = got["meta"]["general.architecture"]
check_value("general.architecture", V.STRING, "rlvrtest", gv)

# tensors: names, types, dims, and the dequantised bits
by_name = {t.name: t for t in reader.tensors}
if [t["name"] for t in got["tensors"]] != [n for n, _ in tensors]:
    fail(f"tensor names {[t['name'] for t in got['tensors']]}")
identical = []
for i, (name, qt) in enumerate(tensors):
    gt = got["tensors"][i]
    rt = by_name[name]
    if gt["type"] != qt.name or rt.tensor_type != qt:
        fail(f"{name}: type {gt['type']}, wanted {qt.name}")
    if gt["dims"] != [int(d) for d in rt.shape]:
        fail(f"{name}: dims {gt['dims']}, gguf-py {list(rt.shape)}")
    ref = np.ascontiguousarray(dequantize(rt.data, rt.tensor_type), dtype=np.float32).ravel()
    mine = np.fromfile(os.path.join(out, f"{i}.f32"), dtype=np.float32)
    if mine.shape != ref.shape:
        fail(f"{name}: {mine.size} values, gguf-py {ref.size}")
    elif not np.array_equal(mine.view(np.uint32), ref.view(np.uint32)):
        bad = np.nonzero(mine.view(np.uint32) != ref.view(np.uint32))[0]
        fail(f"{name} ({qt.name}): {bad.size} values differ from gguf.quants.dequantize, first at {bad[0]}: "
             f"{mine[bad[0]]!r} vs {ref[bad[0]]!r}")
    else:
        identical.append(name)
print("bit-identical to gguf.quants.dequantize:", ", ".join(identical))

# ---- version 2 (same layout little-endian) reads too ---------------------

data = open(main, "rb").read()
v2 = os.path.join(work, "v2.gguf")
open(v2, "wb").write(data[:4] + (2).to_bytes(4, "little") + data[8:])
r = run_dump(v2, os.path.join(work, "out_v2"))
if r.returncode != 0 or json.load(open(os.path.join(work, "out_v2", "meta.json")))["version"] != 2:
    fail(f"version 2 file: exit {r.returncode}: {r.stderr.strip()}")

# ---- corrupt copies: refused, with a message naming the problem ----------


def part_offset(field, index):
    """Byte offset in the file of field.parts[index]."""
    return field.offset + sum(p.nbytes for p in field.parts[:index])


def patched(edits):
    b = bytearray(data)
    for off, raw in edits:
        b[off:off + len(raw)] = raw
    return bytes(b)


u64 = lambda v: int(v).to_bytes(8, "little")
u32 = lambda v: int(v).to_bytes(4, "little")
last = reader.tensors[-1]
first = reader.tensors[0]
q80 = by_name["q8_0"]
sfield = reader.fields["t.string"]
afield = reader.fields["a.string"]
cases = [  # (name, file bytes, words the message must contain)
    ("truncated in the data", data[:last.data_offset + last.n_bytes - 1],
     ["q8_0.3d", "data ends at byte", f"has {last.data_offset + last.n_bytes - 1} bytes"]),
    ("truncated in the metadata", data[:part_offset(reader.fields["a.f64"], 5) + 3], ["a.f64", "remain"]),
    ("truncated in a string", data[:part_offset(afield, len(afield.parts) - 1) + 10],
     ["a.string", "claims 300 bytes but only 10 remain", "truncated"]),
    ("truncated in the tensor infos", data[:part_offset(last.field, 5) + 4], ["tensor offset", "truncated"]),
    ("too short", data[:10], ["too short"]),
    ("not gguf", b"GGML" + data[4:], ["not a GGUF file"]),
    ("version 4", data[:4] + u32(4) + data[8:], ["version 4"]),
    ("tensor offset beyond the end", patched([(part_offset(last.field, 5), u64(1 << 40))]),
     ["q8_0.3d", "data ends at byte", f"has {len(data)} bytes"]),
    ("offset overflows", patched([(part_offset(last.field, 5), u64(2**64 - 64))]), ["q8_0.3d", "beyond"]),
    ("misaligned tensor", patched([(part_offset(first.field, 5), u64(first.data_offset - reader.data_offset + 32))]),
     ["f32", "not a multiple of the alignment 64"]),
    ("overlapping tensors", patched([(part_offset(by_name["f16"].field, 5), u64(0))]), ["overlap"]),
    ("string length that lies", patched([(part_offset(sfield, 3), u64(1 << 62))]),
     ["t.string", "claims", "bytes"]),
    ("array string length that lies", patched([(part_offset(afield, 5), u64(len(data)))]),
     ["a.string", "claims"]),
    ("array count that lies", patched([(part_offset(reader.fields["a.u64"], 4), u64(1 << 61))]),
     ["a.u64", "array of"]),
    ("metadata count that lies", data[:16] + u64(1 << 40) + data[24:], ["metadata entries"]),
    ("tensor count that lies", data[:8] + u64(1 << 40) + data[16:], ["tensors"]),
    ("unknown tensor type", patched([(part_offset(q80.field, 4), u32(5))]), ["q8_0", "unknown tensor type 5"]),
    ("unknown value type", patched([(part_offset(reader.fields["t.u8"], 2), u32(13))]),
     ["t.u8", "unknown value type 13"]),
    ("5 dimensions", patched([(part_offset(q80.field, 2), u32(5))]), ["q8_0", "5 dimensions"]),
    ("row not a multiple of the block", patched([(part_offset(q80.field, 3), u64(31))]),
     ["q8_0", "not a multiple of the block size 32"]),
    ("duplicate key", patched([(part_offset(reader.fields["t.u8"], 1), b"t.i8")]), ["'t.i8' appears twice"]),
    ("duplicate tensor name", patched([(part_offset(by_name["q4_k"].field, 1), b"q5_k")]),
     ["tensor name 'q5_k' appears twice"]),
    ("bad alignment", patched([(part_offset(reader.fields["general.alignment"], 3), u32(48))]),
     ["general.alignment 48"]),
]
for name, blob, words in cases:
    path = os.path.join(work, "bad.gguf")
    open(path, "wb").write(blob)
    r = run_dump(path, os.path.join(work, "out_bad"))
    msg = r.stderr.strip()
    if r.returncode == 0:
        fail(f"{name}: accepted")
    elif r.returncode != 1 or path not in msg or not all(wd in msg for wd in words):
        fail(f"{name}: exit {r.returncode}, message {msg!r} lacks the file or one of {words}")
    else:
        print(f"ok: {name}: {msg}")

# a type the file may hold but rlvr does not dequantise: refused by name
other = os.path.join(work, "q5_0.gguf")
w = gguf.GGUFWriter(other, "rlvrtest")
w.add_tensor("w", quantize(x, Q.Q5_0), raw_dtype=Q.Q5_0)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
r = run_dump(other, os.path.join(work, "out_q5"))
if r.returncode != 1 or "Q5_0" not in r.stderr or "cannot dequantise" not in r.stderr:
    fail(f"Q5_0 tensor: exit {r.returncode}, message {r.stderr.strip()!r}")
else:
    print("ok: Q5_0 refused:", r.stderr.strip())

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all GGUF checks passed")
