"""`rlvr plan examples/plan-worked-examples.ini` prints every worked example
of docs/RL.md "Worked examples", and `--json` gives the same figures.

usage: python3 check_plan.py RLVR_BINARY CONFIG   (standard library only)
"""
import json
import subprocess
import sys


def main():
    rlvr, config = sys.argv[1], sys.argv[2]
    failures = []
    table = subprocess.run([rlvr, "plan", config], capture_output=True, text=True)
    if table.returncode != 0:
        print("rlvr plan failed:", table.returncode, table.stderr)
        return 1
    out = table.stdout
    # the worked examples' figures as the table prints them
    for figure in ["79.6 %", "95.8 %", "18.3 %", "184 / 1003", "819 true", "1 797 120", "1 781 760", "15 360",
                   "117×", "3.87", "0.0625", "0.66", "0.2^3 = 0.008", "0.97", "56.25 %", "99.7 %", "115 200",
                   "≈ 204 120", "1.77×", "Â = +0.55", "4.5 s useful", "8192 rollouts"]:
        if figure not in out:
            failures.append("table lacks %r" % figure)

    js = subprocess.run([rlvr, "plan", config, "--json"], capture_output=True, text=True)
    if js.returncode != 0:
        print("rlvr plan --json failed:", js.returncode, js.stderr)
        return 1
    try:
        d = json.loads(js.stdout)
    except ValueError as e:
        print("rlvr plan --json is not JSON:", e, js.stdout[:500])
        return 1
    rows = {r["G"]: r for r in d["group_signal"]["rows"]}
    checks = [
        ("pass@8", round(100 * rows[8]["pass_at_g"], 1), 79.6),
        ("pass@16", round(100 * rows[16]["pass_at_g"], 1), 95.8),
        ("0.95^8", round(rows[8]["hard_no_success"], 2), 0.66),
        ("lone winner mean", rows[16]["lone_winner_mean"], 0.0625),
        ("sqrt(15)", round(rows[16]["lone_winner_advantage"], 2), 3.87),
        ("1 - 0.8^16", round(rows[16]["flaky_lucky_pass"], 2), 0.97),
        ("rollouts", d["false_positives"]["rollouts_per_step"], 8192),
        ("true positives", d["false_positives"]["true_positives"], 819),
        ("false positives", d["false_positives"]["false_positives"], 184),
        ("false-positive share", round(100 * d["false_positives"]["share"], 1), 18.3),
        ("0.2^3", round(d["consensus"]["false_pass"], 3), 0.008),
        ("MC base", d["mc_credit"]["base_tokens"], 15360),
        ("MC sum", d["mc_credit"]["turn_sum"], 435),
        ("MC tokens", d["mc_credit"]["mc_tokens"], 1781760),
        ("MC total", d["mc_credit"]["total_tokens"], 1797120),
        ("MC ratio", d["mc_credit"]["ratio"], 117),
        ("turn advantage", round(d["mc_credit"]["turn_advantage"], 2), 0.55),
        ("useful", d["throughput"]["useful_s"], 4.5),
        ("cold useful", round(100 * d["throughput"]["cold"]["useful"], 2), 56.25),
        ("cold rollouts/h", round(d["throughput"]["cold"]["rollouts_per_h"]), 115200),
        ("snapshot useful", round(100 * d["throughput"]["snapshot"]["useful"], 1), 99.7),
        ("snapshot rollouts/h", round(d["throughput"]["snapshot"]["rollouts_per_h"]), 204120),
        ("speedup", round(d["throughput"]["speedup"], 2), 1.77),
    ]
    for name, got, want in checks:
        if got != want:
            failures.append("json %s: %r, docs/RL.md %r" % (name, got, want))
    for f in failures:
        print("FAIL:", f)
    print("check_plan: %d table figures and %d JSON figures checked, %d failed" % (22, len(checks), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
