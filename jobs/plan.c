/* jobs/plan.c — `rlvr plan CONFIG [--json]`: the capacity planner.
 *
 * Loads the run configuration (rl/ sections and [plan]), validates it, asks
 * rl/plan.h for the figures and prints them, formatted by rl/plan.h too, as
 * a table or as JSON: parse, call, print. */
#include "core/config.h"
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "rl/config.h"
#include "rl/plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define B(name) char name[48]
#define SZ(name) name, sizeof name

/* ---- table ------------------------------------------------------------- */

static void print_table(const char *path, const rlvr_plan_inputs *in, const rlvr_plan_report *r) {
    B(a); B(b); B(c); B(d); B(e); B(f); B(g);
    printf("rlvr plan: %s\n\n", path);

    printf("Group signal (typical task p = %s, hard task p = %s, flaky-test pass rate %s; advantage %s, eps %g)\n",
           rlvr_plan_fmt_prob(SZ(a), in->success_rate), rlvr_plan_fmt_prob(SZ(b), in->hard_success_rate), rlvr_plan_fmt_prob(SZ(c), in->flaky_pass_rate),
           rlvr_config_enum_name(rlvr_rl_config_keys, "grpo", "advantage", (int)in->advantage, SZ(d)), in->std_eps);
    printf("  %5s  %8s  %12s  %19s  %12s  %13s  %18s\n", "G", "pass@G", "P(no signal)", "hard: P(no success)",
           "1 win: mean", "its advantage", "P(lucky flaky pass)");
    for (int32_t i = 0; i < r->n_groups; i++) {
        const rlvr_plan_group_row *row = &r->groups[i];
        char pass[56];
        snprintf(pass, sizeof pass, "%s %%", rlvr_plan_fmt_pct(SZ(a), row->pass_at_g));
        printf("  %5d  %8s  %12s  %19s  %12s  %13.2f  %18s\n", row->G, pass, rlvr_plan_fmt_prob(SZ(b), row->zero_signal),
               rlvr_plan_fmt_prob(SZ(c), row->hard_no_success), rlvr_plan_fmt_prob(SZ(d), row->lone_winner_mean), row->lone_winner_advantage,
               rlvr_plan_fmt_prob(SZ(e), row->flaky_lucky_pass));
    }
    printf("  group-size rule: a hard task (p = %s) gets G = %d, P(at least one success) = %s "
           "(target %s, at most %d)\n\n",
           rlvr_plan_fmt_prob(SZ(a), in->hard_success_rate), r->hard_group_size, rlvr_plan_fmt_prob(SZ(b), r->hard_group_success),
           rlvr_plan_fmt_prob(SZ(c), in->group_target), in->max_group_size);

    printf("Verifier false positives (%d groups × %d = %s rollouts per step)\n", in->groups_per_step,
           in->group_size, rlvr_plan_fmt_int(SZ(a), r->rollouts_per_step));
    printf("  true success %s %% → %s true positives; the verifier accepts %s %% of %s failures → %s false\n",
           rlvr_plan_fmt_pct(SZ(b), in->true_success_rate), rlvr_plan_fmt_int(SZ(c), r->true_positives), rlvr_plan_fmt_pct(SZ(d), in->false_accept_rate),
           rlvr_plan_fmt_int(SZ(e), r->failures), rlvr_plan_fmt_int(SZ(f), r->false_positives));
    printf("  %s / %s = %s %% of positive rewards teach the exploit\n\n", rlvr_plan_fmt_int(SZ(a), r->false_positives),
           rlvr_plan_fmt_int(SZ(b), r->true_positives + r->false_positives), rlvr_plan_fmt_pct(SZ(c), r->false_positive_share));

    printf("Flaky-test consensus\n");
    printf("  a broken patch passes a flaky test with %s; it counts only if all %d fresh runs pass: %s^%d = %s\n\n",
           rlvr_plan_fmt_prob(SZ(a), in->flaky_pass_rate), in->consensus_runs, rlvr_plan_fmt_prob(SZ(b), in->flaky_pass_rate),
           in->consensus_runs, rlvr_plan_fmt_prob(SZ(c), r->consensus_false_pass));

    const rlvr_mc_cost *m = &r->mc_full;
    printf("Monte-Carlo turn credit (T = %d turns × L = %s tokens, K = %d forks)\n", in->mc_turns,
           rlvr_plan_fmt_int(SZ(a), in->mc_tokens_per_turn), in->forks);
    printf("  forks at every intermediate turn: base %s + MC %d × %s × %s = %s → total %s tokens = %s× the "
           "trajectory\n",
           rlvr_plan_fmt_int(SZ(a), m->base_tokens), in->forks, rlvr_plan_fmt_int(SZ(b), in->mc_tokens_per_turn),
           rlvr_plan_fmt_int(SZ(c), m->turn_sum), rlvr_plan_fmt_int(SZ(d), m->mc_tokens), rlvr_plan_fmt_int(SZ(e), m->total_tokens),
           rlvr_plan_fmt_dec(SZ(f), m->ratio, 2, 1));
    printf("  %d branch points per trajectory (expected): MC %s tokens → %s× the trajectory\n",
           in->max_branch_points, rlvr_plan_fmt_int(SZ(a), llround(r->mc_selective_tokens)),
           rlvr_plan_fmt_dec(SZ(b), r->mc_selective_ratio, 2, 1));
    printf("  example turn: V̂(s_t) = %.2f → V̂(s_t+1) = %.2f gives Â = %+.2f\n\n", in->value_before,
           in->value_after, r->turn_advantage);

    printf("Rollout throughput (%d environments; %d turns × (%s s model + %s s tool) + %s s verify = %s s useful)\n",
           in->environments, in->turns, rlvr_plan_fmt_dec(SZ(a), in->model_s_per_turn, 3, 3),
           rlvr_plan_fmt_dec(SZ(b), in->tool_s_per_turn, 3, 3), rlvr_plan_fmt_dec(SZ(c), in->verify_s, 3, 3),
           rlvr_plan_fmt_dec(SZ(d), r->useful_s, 3, 3));
    printf("  %-17s %10s %9s %13s\n", "reset", "cycle", "useful", "rollouts/h");
    const struct {
        const char *name;
        double reset, cycle, useful, per_h;
    } rows[] = {{"cold rebuild", in->cold_reset_s, r->cold_cycle_s, r->cold_useful, r->cold_rollouts_per_h},
                {"snapshot restore", in->snapshot_reset_s, r->snapshot_cycle_s, r->snapshot_useful,
                 r->snapshot_rollouts_per_h}};
    for (int i = 0; i < 2; i++) {
        char cycle[64], useful[64], per_h[64];
        snprintf(cycle, sizeof cycle, "%s s", rlvr_plan_fmt_dec(SZ(a), rows[i].cycle, 3, 3));
        snprintf(useful, sizeof useful, "%s %%", rlvr_plan_fmt_pct(SZ(b), rows[i].useful));
        bool exact = fabs(rows[i].per_h - round(rows[i].per_h)) < 1e-6;
        snprintf(per_h, sizeof per_h, "%s%s", exact ? "" : "≈ ", rlvr_plan_fmt_int(SZ(c), llround(rows[i].per_h)));
        printf("  %-17s %10s %9s %*s\n", rows[i].name, cycle, useful, exact ? 13 : 15, per_h);
    }
    printf("  snapshot / cold = %s× the rollouts per hour on the same model\n\n",
           rlvr_plan_fmt_dec(SZ(a), r->reset_speedup, 2, 2));

    printf("Step time under heavy-tailed rollouts (%s per step; lognormal sigma %g, median %s s, mean %s s; "
           "train %s s)\n",
           rlvr_plan_fmt_int(SZ(a), r->rollouts_per_step), in->rollout_time_sigma, rlvr_plan_fmt_dec(SZ(b), r->snapshot_cycle_s, 3, 3),
           rlvr_plan_fmt_dec(SZ(c), r->rollout_mean_s, 2, 2), rlvr_plan_fmt_dec(SZ(d), in->train_step_s, 1, 1));
    printf("  synchronous:   %d waves × E[slowest of a wave] %s s + train = %s s per step\n", r->waves,
           rlvr_plan_fmt_dec(SZ(a), r->expected_wave_max_s, 1, 1), rlvr_plan_fmt_dec(SZ(b), r->sync_step_s, 0, 0));
    printf("  bounded-async: max(generation, train) = %s s per step → %s× faster\n\n",
           rlvr_plan_fmt_dec(SZ(a), r->async_step_s, 0, 0), rlvr_plan_fmt_dec(SZ(b), r->async_speedup, 1, 1));

    printf("Verifier capacity\n");
    printf("  %s rollouts/s × %s enclave runs each (consensus on the %s %% that pass) × %s s = %s enclave slots "
           "busy\n",
           rlvr_plan_fmt_dec(SZ(a), r->rollouts_per_s, 1, 1), rlvr_plan_fmt_dec(SZ(b), r->enclave_runs_per_rollout, 2, 2),
           rlvr_plan_fmt_pct(SZ(c), in->success_rate), rlvr_plan_fmt_dec(SZ(d), in->verify_s + in->snapshot_reset_s, 3, 3),
           rlvr_plan_fmt_dec(SZ(g), r->verifier_slots, 1, 1));
}

/* ---- JSON -------------------------------------------------------------- */

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

#define JNUM(name, v) printf("\"%s\": %.15g", name, (double)(v))
#define JINT(name, v) printf("\"%s\": %" PRId64, name, (int64_t)(v))

static void print_json(const char *path, const rlvr_plan_inputs *in, const rlvr_plan_report *r) {
    printf("{\"config\": ");
    json_string(path);
    printf(",\n \"group_signal\": {");
    JNUM("success_rate", in->success_rate), printf(", ");
    JNUM("hard_success_rate", in->hard_success_rate), printf(", ");
    JNUM("flaky_pass_rate", in->flaky_pass_rate), printf(", \"rows\": [");
    for (int32_t i = 0; i < r->n_groups; i++) {
        const rlvr_plan_group_row *row = &r->groups[i];
        printf("%s\n   {", i ? "," : "");
        JINT("G", row->G), printf(", ");
        JNUM("pass_at_g", row->pass_at_g), printf(", ");
        JNUM("zero_signal", row->zero_signal), printf(", ");
        JNUM("hard_no_success", row->hard_no_success), printf(", ");
        JNUM("lone_winner_mean", row->lone_winner_mean), printf(", ");
        JNUM("lone_winner_advantage", row->lone_winner_advantage), printf(", ");
        JNUM("flaky_lucky_pass", row->flaky_lucky_pass), printf("}");
    }
    printf("],\n  ");
    JINT("hard_group_size", r->hard_group_size), printf(", ");
    JNUM("hard_group_success", r->hard_group_success), printf("},\n \"false_positives\": {");
    JINT("rollouts_per_step", r->rollouts_per_step), printf(", ");
    JINT("true_positives", r->true_positives), printf(", ");
    JINT("failures", r->failures), printf(", ");
    JINT("false_positives", r->false_positives), printf(", ");
    JNUM("share", r->false_positive_share), printf("},\n \"consensus\": {");
    JNUM("flaky_pass_rate", in->flaky_pass_rate), printf(", ");
    JINT("runs", in->consensus_runs), printf(", ");
    JNUM("false_pass", r->consensus_false_pass), printf("},\n \"mc_credit\": {");
    JINT("turns", in->mc_turns), printf(", ");
    JINT("tokens_per_turn", in->mc_tokens_per_turn), printf(", ");
    JINT("forks", in->forks), printf(", ");
    JINT("base_tokens", r->mc_full.base_tokens), printf(", ");
    JINT("turn_sum", r->mc_full.turn_sum), printf(", ");
    JINT("mc_tokens", r->mc_full.mc_tokens), printf(", ");
    JINT("total_tokens", r->mc_full.total_tokens), printf(", ");
    JNUM("ratio", r->mc_full.ratio), printf(",\n  ");
    JINT("branch_points", in->max_branch_points), printf(", ");
    JNUM("selective_mc_tokens", r->mc_selective_tokens), printf(", ");
    JNUM("selective_ratio", r->mc_selective_ratio), printf(", ");
    JNUM("value_before", in->value_before), printf(", ");
    JNUM("value_after", in->value_after), printf(", ");
    JNUM("turn_advantage", r->turn_advantage), printf("},\n \"throughput\": {");
    JINT("environments", in->environments), printf(", ");
    JNUM("useful_s", r->useful_s), printf(",\n  \"cold\": {");
    JNUM("cycle_s", r->cold_cycle_s), printf(", ");
    JNUM("useful", r->cold_useful), printf(", ");
    JNUM("rollouts_per_h", r->cold_rollouts_per_h), printf("},\n  \"snapshot\": {");
    JNUM("cycle_s", r->snapshot_cycle_s), printf(", ");
    JNUM("useful", r->snapshot_useful), printf(", ");
    JNUM("rollouts_per_h", r->snapshot_rollouts_per_h), printf("},\n  ");
    JNUM("speedup", r->reset_speedup), printf("},\n \"step_time\": {");
    JINT("rollouts_per_step", r->rollouts_per_step), printf(", ");
    JNUM("rollout_time_sigma", in->rollout_time_sigma), printf(", ");
    JNUM("rollout_mean_s", r->rollout_mean_s), printf(", ");
    JINT("waves", r->waves), printf(", ");
    JNUM("expected_wave_max_s", r->expected_wave_max_s), printf(", ");
    JNUM("sync_step_s", r->sync_step_s), printf(", ");
    JNUM("async_step_s", r->async_step_s), printf(", ");
    JNUM("async_speedup", r->async_speedup), printf("},\n \"verifier\": {");
    JNUM("rollouts_per_s", r->rollouts_per_s), printf(", ");
    JNUM("enclave_runs_per_rollout", r->enclave_runs_per_rollout), printf(", ");
    JNUM("enclave_slots", r->verifier_slots), printf("}}\n");
}

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr plan CONFIG [--json]\n"
                 "  prints pass@G coverage, zero-signal groups, false positives, MC credit cost,\n"
                 "  throughput, step time and verifier capacity for a run configuration\n"
                 "  (example: rlvr plan examples/plan-worked-examples.ini)\n");
}

int rlvr_cmd_plan(int argc, char **argv) {
    const char *path = NULL;
    bool json = false;
    const rlvr_opt opts[] = {
        RLVR_OPT("--json", RLVR_OPT_FLAG, &json, NULL),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &path, "CONFIG", .required = true),
        {0},
    };
    int early = rlvr_args_parse("plan", opts, usage, argc, argv);
    if (early != RLVR_ARGS_CONTINUE) return early;
    /* every module's keys, so a whole run configuration loads (docs/CONFIG.md) */
    rlvr_config *cfg;
    int rc = rlvr_config_load(&cfg, path, rlvr_all_config_schemas);
    if (rc < 0) return rlvr_cmd_fail("plan", rc);
    rlvr_rl_config rl;
    rlvr_plan_inputs in;
    rlvr_plan_report report;
    rc = rlvr_rl_config_load(&rl, cfg);
    if (rc == 0) rc = rlvr_rl_plan_inputs_load(&in, cfg);
    if (rc == 0) rc = rlvr_rl_plan(&report, &in);
    rlvr_config_free(cfg);
    if (rc < 0) return rlvr_cmd_fail("plan", rc);
    if (json) print_json(path, &in, &report);
    else print_table(path, &in, &report);
    return RLVR_EXIT_OK;
}
