/* jobs/quickstart.c — `rlvr quickstart [--out DIR] [--config FILE]`: the
 * embedded default (examples/quickstart.ini), or the given configuration,
 * end to end on one machine (train/quickstart.h): pool, SFT, RL, held-out
 * evaluation; then a before/after table. Rerunning it resumes whatever
 * stage was interrupted. */
#include "core/error.h"
#include "enclave/fsutil.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/quickstart.h"
#include "train/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* examples/quickstart.ini, kept identical by tests/jobs/test_quickstart_config.sh */
static const char quickstart_ini[] =
#include "quickstart_ini.inc"
    ;

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr quickstart [--out DIR] [--config FILE] [--print-config]\n"
                 "  --out DIR       the run directory (default runs/quickstart)\n"
                 "  --config FILE   run these stages on another configuration (e.g.\n"
                 "                  examples/quickstart-arith.ini) instead of the embedded default\n"
                 "  --print-config  print the embedded default configuration\n");
}

/* Progress lines on stderr as they come. */
static void progress(void *arg, const char *line) {
    (void)arg;
    fprintf(stderr, "%s\n", line);
}

static void print_row(const char *name, const rlvr_eval_group *g) {
    printf("  %-5s  %.3f [%.3f, %.3f]", name, g->pass_at[0].value, g->pass_at[0].low, g->pass_at[0].high);
    for (int i = 1; i < g->n_k; i++)
        printf("   pass@%lld %.3f [%.3f, %.3f]", (long long)g->k[i], g->pass_at[i].value, g->pass_at[i].low,
               g->pass_at[i].high);
    printf("   compliance %.3f\n", g->compliance);
}

static void print_summary(const rlvr_quickstart_result *q) {
    const rlvr_eval_comparison *c = &q->diff;
    printf("\nheld-out pass rates (%d tasks × %d samples, 95 %% bootstrap intervals over tasks)\n", c->n_tasks,
           q->sft->samples);
    printf("  model  pass@1\n");
    print_row("SFT", rlvr_eval_result_group(q->sft, "all"));
    print_row("RL", rlvr_eval_result_group(q->rl, "all"));
    printf("  RL − SFT pass@1: %+.3f [%+.3f, %+.3f] (paired bootstrap over tasks)%s\n", c->mean_diff, c->low, c->high,
           c->low > 0 ? "  — RL is better" : "");
    printf("\nrun directory: %s (summary.json, eval_sft.json, eval_rl.json, metrics.h5, checkpoints/, shards/)\n",
           q->run_dir);
    printf("wall time: %.1f min (", q->minutes);
    for (int i = 0; i < RLVR_QUICKSTART_STAGES; i++)
        printf("%s%s %.0f s", i ? ", " : "", rlvr_quickstart_stage_name((rlvr_quickstart_stage)i), q->stage_s[i]);
    printf(")\n");
}

int rlvr_cmd_quickstart(int argc, char **argv) {
    const char *out = "runs/quickstart", *config = NULL;
    bool print_config = false;
    const rlvr_opt opts[] = {
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "DIR"),
        RLVR_OPT("--config", RLVR_OPT_STRING, &config, "FILE"),
        RLVR_OPT("--print-config", RLVR_OPT_FLAG, &print_config, NULL),
        {0},
    };
    int parsed = rlvr_args_parse("quickstart", opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    if (print_config) {
        fputs(quickstart_ini, stdout);
        return RLVR_EXIT_OK;
    }
    char *text = NULL;
    size_t len = strlen(quickstart_ini);
    int rc = config ? rlvr_fs_read_file(config, &text, &len) : 0;
    rlvr_quickstart_options o = {.progress = progress};
    rlvr_quickstart_result q;
    rlvr_run_install_signals();
    if (rc == 0) rc = rlvr_quickstart_run(text ? text : quickstart_ini, len, out, rlvr_all_config_schemas, &o, &q);
    free(text);
    if (rc == 1) {
        fprintf(stderr, "quickstart: stopped by signal %d after a checkpoint; run it again to resume\n",
                (int)rlvr_run_stop_flag);
        return RLVR_EXIT_STOPPED;
    }
    if (rc < 0) return rlvr_cmd_fail("quickstart", rc);
    print_summary(&q);
    rlvr_quickstart_result_clear(&q);
    return RLVR_EXIT_OK;
}
