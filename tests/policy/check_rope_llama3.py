"""rlvr's Llama-3 RoPE frequencies against transformers' own.

usage: PYTHON check_rope_llama3.py ROPE_FREQS

For Llama 3.1 and 3.2's parameters and the test models', every inverse
frequency rope_freqs prints (rlvr's rope_inv_freq, double) must agree with
ROPE_INIT_FUNCTIONS["llama3"] (float32) within 1e-6 relative: a few float32
ulps, far less than the smallest step between bands would cause. Exit 77
(skipped) when transformers is missing (scripts/pyref.sh makes the venv).
"""
import logging
import subprocess
import sys

try:
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
except ImportError:
    sys.stderr.write("check_rope_llama3.py: transformers is not installed for this interpreter; skipping\n")
    sys.exit(77)

# theta, head_dim, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings
CASES = [
    (500000.0, 128, 8.0, 1.0, 4.0, 8192),   # Llama 3.1 8B / 70B / 405B
    (500000.0, 64, 32.0, 1.0, 4.0, 8192),   # Llama 3.2 1B
    (500000.0, 128, 32.0, 1.0, 4.0, 8192),  # Llama 3.2 3B
    (10000.0, 16, 8.0, 1.0, 8.0, 256),      # test_model_ref, test_sampler
    (10000.0, 32, 4.0, 1.0, 4.0, 128),      # test_sampler_determinism
    (1000000.0, 96, 2.5, 0.5, 6.0, 3000),   # fractional factors, an odd context
]


def transformers_freqs(theta, hd, factor, low, high, orig):
    cfg = LlamaConfig(hidden_size=2 * hd, num_attention_heads=2, rope_theta=theta,
                      max_position_embeddings=4 * orig,
                      rope_scaling={"rope_type": "llama3", "factor": factor, "low_freq_factor": low,
                                    "high_freq_factor": high, "original_max_position_embeddings": orig})
    inv_freq, _ = ROPE_INIT_FUNCTIONS["llama3"](cfg, "cpu")
    return [float(x) for x in inv_freq]


def main():
    logging.getLogger("transformers").setLevel(logging.ERROR)
    exe, fail = sys.argv[1], 0
    for case in CASES:
        out = subprocess.run([exe] + [str(x) for x in case], check=True, capture_output=True, text=True).stdout
        ours = [float(x) for x in out.split()]
        ref = transformers_freqs(*case)
        assert len(ours) == len(ref) == case[1] // 2, (len(ours), len(ref))
        worst = max(abs(a - b) / b for a, b in zip(ours, ref))
        ok = worst <= 1e-6
        fail += not ok
        print("%s %s: max relative difference %.3g" % ("ok  " if ok else "FAIL", case, worst))
    print("check_rope_llama3: %d of %d cases agree" % (len(CASES) - fail, len(CASES)))
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()
