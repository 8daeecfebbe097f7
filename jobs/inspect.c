/* jobs/inspect.c — `rlvr inspect FILE`: summarises any file rlvr writes. A
 * rollout shard gets a table of its rollouts and the chosen ones as text
 * (train/inspect.h); checkpoints, metrics tables and run manifests their
 * headers, columns or datasets. --verify checks every checksum. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/file.h"
#include "io/manifest.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "train/inspect.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *path;
    bool color, no_color, verify, all, tokens, config;
    rlvr_opt_list chosen; /* --rollout N, as given */
    int64_t rows;         /* metrics rows shown */
} inspect_opts;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr inspect FILE [--rollout N]... [--all] [--tokens] [--rows N] [--config] [--verify]\n"
            "                         [--color | --no-color]\n"
            "  FILE          any file rlvr writes: rollout shard, checkpoint, metrics.h5, manifest.h5\n"
            "  --rollout N   shard: render rollout N as text (repeatable)\n"
            "  --all         shard: render every rollout\n"
            "  --tokens      shard: also list each rendered token (id, who, logprob, entropy)\n"
            "  --rows N      metrics: show the last N rows (default 5)\n"
            "  --config      checkpoint, manifest: print the stored configuration text\n"
            "  --verify      read every dataset in full and check every checksum\n"
            "  --color, --no-color   force colour on or off (default: on when stdout is a terminal)\n");
}

static int parse_args(inspect_opts *o, int argc, char **argv) {
    *o = (inspect_opts){.rows = 5};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &o->path, "FILE", .required = true),
        RLVR_OPT("--rollout", RLVR_OPT_LIST, &o->chosen, "N"),
        RLVR_OPT("--all", RLVR_OPT_FLAG, &o->all, NULL),
        RLVR_OPT("--tokens", RLVR_OPT_FLAG, &o->tokens, NULL),
        RLVR_OPT("--rows", RLVR_OPT_INT, &o->rows, "N", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--config", RLVR_OPT_FLAG, &o->config, NULL),
        RLVR_OPT("--verify", RLVR_OPT_FLAG, &o->verify, NULL),
        RLVR_OPT("--color", RLVR_OPT_FLAG, &o->color, NULL),
        RLVR_OPT("--no-color", RLVR_OPT_FLAG, &o->no_color, NULL),
        {0},
    };
    int parsed = rlvr_args_parse("inspect", opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    for (size_t k = 0; k < o->chosen.n; k++) {
        char *end;
        long long n = strtoll(o->chosen.items[k], &end, 10);
        if (*end || end == o->chosen.items[k] || n < 0)
            return rlvr_args_error("inspect", usage, "--rollout wants a rollout number, got \"%s\"",
                                   o->chosen.items[k]);
    }
    if (!o->color) o->color = !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    return RLVR_ARGS_CONTINUE;
}

/* ---- shards ------------------------------------------------------------------ */

static int render_rollout(const inspect_opts *o, const rlvr_tokenizer *tok, int64_t i, const rlvr_rollout *r,
                          float adv) {
    char *text = NULL;
    RLVR_TRY(rlvr_inspect_rollout(r, i, adv, tok, o->color, o->tokens, &text));
    fputs(text, stdout);
    free(text);
    return 0;
}

static int inspect_shard(const inspect_opts *o) {
    rlvr_shard *s;
    RLVR_TRY(rlvr_shard_open(&s, o->path));
    const rlvr_shard_info *info = rlvr_shard_info_of(s);
    rlvr_rollout r;
    int rc = rlvr_rollout_init(&r, 256, 8);
    if (rc < 0) {
        rlvr_shard_close(s);
        return rc;
    }
    rlvr_tokenizer *tok = NULL;
    char tok_path[4200];
    rc = rlvr_inspect_shard_tokenizer(o->path, &tok, tok_path, sizeof tok_path);
    if (tok_path[0]) printf("(tokens decoded with %s)\n", tok_path);
    printf("%s: rollout shard, format %d: step %lld, rank %d, written %s\n", o->path, info->format_version,
           (long long)info->step, info->rank, info->created_utc);
    /* a step has one shard per trainer rank: say which of them this is */
    rlvr_shard_step_files sf;
    if (rlvr_shard_list_step(o->path, info->step, &sf) == 0 && sf.files > 1)
        printf("step %lld has %d shard files in %s (trainer ranks %d … %d, each holds the rollouts that rank "
               "trained on): this is rank %d's\n",
               (long long)info->step, sf.files, sf.dir, sf.lo_rank, sf.hi_rank, info->rank);
    rlvr_shard_totals tot;
    if (rc == 0) rc = rlvr_shard_totals_of(s, &tot);
    printf("\n%5s  %-20s %7s %4s %5s %5s %9s %8s  %-10s %-11s %7s %6s %5s\n", "#", "task", "group", "idx", "ver",
           "stale", "reward", "adv", "verdict", "stop", "tokens", "policy", "turns");
    for (int64_t i = 0; i < info->n_rollouts && rc == 0; i++) {
        float adv = 0;
        if ((rc = rlvr_shard_read(s, i, &r, &adv)) < 0) break;
        printf("%5lld  %-20.20s %7lld %4d %5lld %5lld %9.4f %+8.3f  %-10s %-11s %7d %6d %5d\n", (long long)i, r.task_id,
               (long long)r.group_id, r.rollout_index, (long long)r.policy_version, (long long)r.staleness,
               r.reward.total, adv, rlvr_verdict_name(r.verdict), rlvr_stop_reason_name(r.stop), r.n_tokens,
               rlvr_rollout_policy_tokens(&r), r.n_turns);
    }
    if (rc == 0) {
        printf("\n%lld rollouts, %lld tokens (%lld policy), %lld turns; mean reward %.4f; verdicts:",
               (long long)info->n_rollouts, (long long)info->n_tokens, (long long)tot.policy_tokens,
               (long long)info->n_turns, tot.mean_reward);
        for (int v = 0; v < RLVR_VERDICT_COUNT; v++)
            if (tot.verdicts[v]) printf(" %s %lld", rlvr_verdict_name((rlvr_verdict)v), (long long)tot.verdicts[v]);
        printf("\n");
    }
    for (int64_t i = 0; rc == 0 && o->all && i < info->n_rollouts; i++) {
        float adv;
        if ((rc = rlvr_shard_read(s, i, &r, &adv)) == 0) rc = render_rollout(o, tok, i, &r, adv);
    }
    for (size_t k = 0; rc == 0 && !o->all && k < o->chosen.n; k++) {
        float adv;
        int64_t i = strtoll(o->chosen.items[k], NULL, 10);
        if ((rc = rlvr_shard_read(s, i, &r, &adv)) == 0) rc = render_rollout(o, tok, i, &r, adv);
    }
    if (rc == 0 && !o->all && o->chosen.n == 0 && info->n_rollouts > 0)
        printf("(rlvr inspect %s --rollout N renders rollout N as text)\n", o->path);
    rlvr_tokenizer_free(tok);
    rlvr_rollout_free(&r);
    rlvr_shard_close(s);
    return rc;
}

/* ---- checkpoints, metrics, manifests ---------------------------------------- */

static int print_dataset(const rlvr_io_dataset_info *d, void *user) {
    (void)user;
    char shape[96];
    rlvr_io_shape_text(d, shape, sizeof shape);
    printf("  %-36s %-12s %-18s %10.1f KiB stored\n", d->path, d->type, shape, (double)d->stored_bytes / 1024.0);
    return 0;
}

static int inspect_checkpoint(const inspect_opts *o) {
    rlvr_checkpoint *ck;
    RLVR_TRY(rlvr_checkpoint_open(&ck, o->path));
    const rlvr_checkpoint_info *info = rlvr_checkpoint_info_of(ck);
    printf("%s: checkpoint, format %d: step %lld, policy version %lld, written %s\n", o->path, info->format_version,
           (long long)info->step, (long long)info->policy_version, info->created_utc);
    printf("run configuration: %zu bytes, hash %016llx\n", strlen(info->config_text),
           (unsigned long long)info->config_hash);
    int rc = 0;
    if (info->has_model) {
        rlvr_model_config c;
        if ((rc = rlvr_checkpoint_model_config(ck, &c)) == 0)
            printf("model: vocab %d, d_model %d, %d layers, %d heads (%d kv), d_ff %d, max_seq %d, rope_theta %g, "
                   "tied embeddings %s; AdamW moments %s\n",
                   c.vocab, c.d_model, c.n_layers, c.n_heads, c.n_kv_heads, c.d_ff, c.max_seq, (double)c.rope_theta,
                   c.tie_embeddings ? "yes" : "no", info->has_moments ? "stored" : "not stored");
    } else {
        printf("model: none stored\n");
    }
    rlvr_tokenizer *tok = NULL;
    if (rc == 0 && (rc = rlvr_checkpoint_read_tokenizer(ck, &tok)) == 0) {
        char d[64];
        rlvr_tokenizer_describe(tok, d, sizeof d);
        printf("tokenizer: %s, %d ids\n", d, (int)rlvr_tokenizer_vocab_size(tok));
    }
    rlvr_tokenizer_free(tok);
    if (rc == 0 && o->config) printf("\n%s%s", info->config_text, strlen(info->config_text) ? "" : "(empty)\n");
    rlvr_checkpoint_close(ck);
    if (rc == 0) {
        printf("\ndatasets:\n");
        rc = rlvr_io_list(o->path, print_dataset, NULL);
    }
    return rc;
}

static int inspect_metrics(const inspect_opts *o) {
    rlvr_metrics_table t;
    RLVR_TRY(rlvr_metrics_read(&t, o->path));
    printf("%s: metrics table: %lld rows", o->path, (long long)t.n_rows);
    if (t.n_rows) printf(", steps %lld .. %lld", (long long)t.step[0], (long long)t.step[t.n_rows - 1]);
    printf("\n\n  %-20s %9s %14s %14s %14s\n", "column", "measured", "last", "min", "max");
    int never = 0;
    rlvr_metric_stats st[RLVR_METRIC_COUNT];
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        rlvr_metrics_column_stats(&t, (rlvr_metric)i, &st[i]);
        if (st[i].measured == 0) {
            never++;
            continue;
        }
        printf("  %-20s %9lld %14.6g %14.6g %14.6g\n", rlvr_metric_name((rlvr_metric)i), (long long)st[i].measured,
               st[i].last, st[i].min, st[i].max);
    }
    if (never) {
        printf("  (never measured:");
        for (int i = 0; i < RLVR_METRIC_COUNT; i++)
            if (st[i].measured == 0) printf(" %s", rlvr_metric_name((rlvr_metric)i));
        printf(")\n");
    }
    int64_t first = t.n_rows > o->rows ? t.n_rows - o->rows : 0;
    if (o->rows > 0 && t.n_rows > 0) {
        printf("\nlast %lld rows (measured columns):\n", (long long)(t.n_rows - first));
        for (int64_t r = first; r < t.n_rows; r++) {
            printf("  step %lld:", (long long)t.step[r]);
            for (int i = 0; i < RLVR_METRIC_COUNT; i++)
                if (t.value[i] && !isnan(t.value[i][r]))
                    printf(" %s=%.6g", rlvr_metric_name((rlvr_metric)i), t.value[i][r]);
            printf("\n");
        }
    }
    rlvr_metrics_table_free(&t);
    return 0;
}

static int print_attr(const char *name, const char *value, void *user) {
    (void)user;
    printf("  %-22s %s\n", name, value);
    return 0;
}

static int print_host(const char *s, void *user) {
    printf("%s%s", *(int *)user ? ", " : "  ", s);
    (*(int *)user)++;
    return 0;
}

static int inspect_manifest(const inspect_opts *o) {
    printf("%s: run manifest\n", o->path);
    RLVR_TRY(rlvr_io_list_attributes(o->path, "/", print_attr, NULL));
    printf("SLURM environment:\n");
    RLVR_TRY(rlvr_io_list_attributes(o->path, "/slurm", print_attr, NULL));
    printf("hosts:\n");
    int n = 0;
    RLVR_TRY(rlvr_io_read_strings(o->path, "/hosts", print_host, &n));
    printf("%s\n", n ? "" : "  (none recorded)");
    if (o->config) {
        char *text;
        RLVR_TRY(rlvr_io_read_text(o->path, "/run/config", &text));
        printf("\nconfiguration:\n%s", text);
        free(text);
    }
    return 0;
}

int rlvr_cmd_inspect(int argc, char **argv) {
    inspect_opts o;
    int parsed = parse_args(&o, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) {
        rlvr_opt_list_free(&o.chosen);
        return parsed;
    }
    rlvr_file_kind kind;
    int version = 0;
    int rc = rlvr_io_identify(o.path, &kind, &version);
    if (rc == 0) {
        switch (kind) {
        case RLVR_FILE_SHARD: rc = inspect_shard(&o); break;
        case RLVR_FILE_CHECKPOINT: rc = inspect_checkpoint(&o); break;
        case RLVR_FILE_METRICS: rc = inspect_metrics(&o); break;
        case RLVR_FILE_MANIFEST: rc = inspect_manifest(&o); break;
        default: rc = rlvr_error_set(RLVR_EFORMAT, "%s: not a kind of file rlvr inspect knows", o.path);
        }
    }
    if (rc == 0 && o.verify) {
        int64_t datasets = 0, bytes = 0;
        rc = rlvr_io_verify(o.path, &datasets, &bytes);
        if (rc == 0)
            printf("\nverified: %lld datasets, %.3f MB read, every checksum matches\n", (long long)datasets,
                   (double)bytes / 1e6);
    }
    rlvr_opt_list_free(&o.chosen);
    return rc < 0 ? rlvr_cmd_fail("inspect", rc) : RLVR_EXIT_OK;
}
