/* tests/enclave/test_bench_enclave.c — `rlvr bench enclave --quick --json`
 * runs and prints the documented fields with sane values (the bugfix-c
 * rows in command and judge mode and the judge's build among them, and the
 * environment image's first, pooled and fresh verifications) (no speed
 * thresholds: the machine is shared), and the workspace-state rows (a fresh
 * workspace, a snapshot, a restore, a fresh workspace with the restore),
 * each with its ratio to the fresh workspace's median. argv[1] is the rlvr
 * binary. */
#include "test.h"

#include <stdio.h>

/* The number after "\"key\":" in `line`, or NAN. */
static double field(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_bench_enclave RLVR_BINARY\n");
        return 2;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s bench enclave --quick --json", argv[1]);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return test_summary("test_bench_enclave");
    char line[4096];
    int verify = 0, throughput = 0, host = 0, judge_build = 0, other = 0;
    const char *configs[] = {"overlay_pooled", "overlay_fresh", "overlay_big", "copy_big", "bugfix_command",
                             "bugfix_judge", "image_first", "image_pooled", "image_fresh"};
    enum { N_CONFIGS = sizeof configs / sizeof *configs };
    int seen[N_CONFIGS] = {0};
    const char *state_configs[] = {"fresh", "snapshot", "restore", "new_restore"};
    int state_seen[4] = {0}, states = 0;
    double fresh_s = NAN, state_median[4] = {NAN, NAN, NAN, NAN}, state_ratio[4] = {NAN, NAN, NAN, NAN};
    while (fgets(line, sizeof line, p)) {
        CHECK_MSG(line[0] == '{' && strstr(line, "\"bench\":\"enclave\""), "not a JSON line: %s", line);
        CHECK(strstr(line, "\"quick\":true") != NULL);
        if (strstr(line, "\"case\":\"verify\"")) {
            verify++;
            for (int i = 0; i < N_CONFIGS; i++) {
                char c[64];
                snprintf(c, sizeof c, "\"config\":\"%s\"", configs[i]);
                if (strstr(line, c)) seen[i]++;
            }
            double med = field(line, "median_ms"), p99 = field(line, "p99_ms"), ceil = field(line, "ceiling_ms");
            CHECK_MSG(med > 0 && p99 >= med && ceil > 0, "bad latency line: %s", line);
            CHECK_NEAR(field(line, "ratio"), med / ceil, 0.01 * med / ceil + 1e-3);
            CHECK(field(line, "samples") >= 5 && field(line, "repo_mb") >= 0);
        } else if (strstr(line, "\"case\":\"throughput\"")) {
            throughput++;
            double n = field(line, "verifications"), s = field(line, "seconds"), per_s = field(line, "per_s");
            CHECK_MSG(n > 0 && s > 0 && field(line, "workers") >= 1, "bad throughput line: %s", line);
            CHECK_NEAR(per_s, n / s, 0.01 * per_s + 1e-3);
            CHECK(field(line, "ceiling_per_s") > 0 && field(line, "copy_vs_overlay") > 0);
        } else if (strstr(line, "\"case\":\"host\"")) {
            host++;
        } else if (strstr(line, "\"case\":\"workspace_state\"")) {
            states++;
            double med = field(line, "median_s"), p99 = field(line, "p99_s");
            CHECK_MSG(med > 0 && p99 >= med && field(line, "samples") >= 5 && field(line, "ratio") > 0,
                      "bad workspace state line: %s", line);
            CHECK_MSG(field(line, "state_files") >= 1 && field(line, "state_bytes") > 54, "no state measured: %s", line);
            for (int i = 0; i < 4; i++) {
                char c[64];
                snprintf(c, sizeof c, "\"config\":\"%s\"", state_configs[i]);
                if (!strstr(line, c)) continue;
                state_seen[i]++;
                state_median[i] = med;
                state_ratio[i] = field(line, "ratio");
                if (i == 0) fresh_s = med;
            }
        } else if (strstr(line, "\"case\":\"judge_build\"")) {
            judge_build++;
            double med = field(line, "median_ms"), p99 = field(line, "p99_ms");
            CHECK_MSG(med > 0 && p99 >= med && field(line, "samples") >= 5, "bad judge build line: %s", line);
        } else {
            other++;
        }
    }
    int status = pclose(p);
    CHECK_MSG(status == 0, "rlvr bench enclave exited with %d", status);
    CHECK(verify == N_CONFIGS && throughput == 1 && host == 1 && judge_build == 1 && other == 0);
    for (int i = 0; i < N_CONFIGS; i++) CHECK_MSG(seen[i] == 1, "config %s seen %d times", configs[i], seen[i]);
    CHECK(states == 4);
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(state_seen[i] == 1, "workspace state %s seen %d times", state_configs[i], state_seen[i]);
        CHECK_NEAR(state_ratio[i], state_median[i] / fresh_s, 0.01 * state_median[i] / fresh_s + 1e-3);
    }
    return test_summary("test_bench_enclave");
}
