#!/usr/bin/env bash
# h5py (Debian's, via /usr/bin/python3) and h5dump read the shard chunks of
# every deflate level (0..9; igzip at 1..3, libdeflate at 4..9) back into
# exactly the values written. Usage: test_chunk_levels_readers.sh TEST_CHUNK_LEVELS WORKDIR
set -eu
writer=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
"$writer" "$work" >/dev/null || { echo "FAIL: $writer $work exited $?"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import re, subprocess, sys
import h5py
import numpy as np

work = sys.argv[1]
dtypes = {"tokens": np.int32, "noise": np.uint8, "logprob": np.float32}
want = {name: np.fromfile(f"{work}/{name}.bin", dtype=t) for name, t in dtypes.items()}
fail = []
for level in range(10):
    path = f"{work}/level{level}.h5"
    with h5py.File(path, "r") as f:
        for name in dtypes:
            d = f[name]
            got = d[()]
            if d.compression != ("gzip" if level else None) or (level and d.compression_opts != level):
                fail.append(f"{path}:{name}: compression {d.compression} {d.compression_opts}")
            if not d.fletcher32:
                fail.append(f"{path}:{name}: no fletcher32")
            if got.dtype != want[name].dtype or not np.array_equal(got, want[name]):
                fail.append(f"{path}:{name}: values differ from those written")
    # h5dump decodes (and checksums) every chunk with HDF5's filters
    dump = subprocess.run(["h5dump", "-d", "/noise", "-s", "299990", "-c", "17", path],
                          capture_output=True, text=True)
    data = re.sub(r"\(\d+\):", "", dump.stdout.split("DATA {")[-1])
    values = [int(v) for v in re.findall(r"\d+", data)]
    if dump.returncode != 0 or values != [int(v) for v in want["noise"][299990:]]:
        fail.append(f"{path}: h5dump exit {dump.returncode}, values {values}")
for f in fail:
    print("FAIL:", f)
print(f"test_chunk_levels_readers: 10 levels, {len(fail)} problems")
sys.exit(1 if fail else 0)
PY
rm -rf "$work"
