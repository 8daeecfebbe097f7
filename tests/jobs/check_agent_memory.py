"""Peak memory of `rlvr agent` on a checkpoint by sampler weight format.

    python3 check_agent_memory.py RLVR CHECKPOINT

Makes one arith task (`rlvr tasks gen arith`), plays it greedily with
`rlvr agent --weights W` for W = f32, bf16 and q8_0, and reads each child's
peak resident set (ru_maxrss from wait4). With f32 the process holds the
float32 model and the sampler's float32 panels; with q8_0 the checkpoint is
streamed tensor by tensor into the packed copy and the float32 matrices are
given back as they are packed (train/sampling.h), so its peak must be at
most half of f32's. Every run must also finish its rollout."""
import os
import subprocess
import sys
import tempfile


def peak_rss_mb(argv):
    """Runs argv, returns (exit status, stdout, peak RSS in MiB)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return proc.returncode, out.read().decode(errors="replace"), usage.ru_maxrss / 1024.0


def main():
    rlvr, checkpoint = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        pool = os.path.join(tmp, "pool")
        subprocess.run([rlvr, "tasks", "gen", "arith", "--n", "1", "--seed", "4", "--out", pool], check=True,
                       stdout=subprocess.DEVNULL)
        task = os.path.join(pool, sorted(os.listdir(pool))[0])
        peaks = {}
        for w in ("f32", "bf16", "q8_0"):
            rc, text, mb = peak_rss_mb([rlvr, "agent", "--task", task, "--checkpoint", checkpoint, "--temperature",
                                        "0", "--weights", w, "--no-color"])
            if rc != 0 or "agent: task " not in text:
                sys.exit(f"rlvr agent --weights {w} failed (exit {rc}):\n{text}")
            peaks[w] = mb
            print(f"rlvr agent --weights {w}: peak RSS {mb:.0f} MiB ({mb / peaks['f32']:.2f} of f32)")
    if not peaks["q8_0"] <= 0.5 * peaks["f32"]:
        sys.exit(f"q8_0 peak {peaks['q8_0']:.0f} MiB is more than half of f32's {peaks['f32']:.0f} MiB")
    if not peaks["bf16"] < peaks["f32"]:
        sys.exit(f"bf16 peak {peaks['bf16']:.0f} MiB is not below f32's {peaks['f32']:.0f} MiB")
    print("ok")


if __name__ == "__main__":
    main()
