/* jobs/inspect.c — `rlvr inspect FILE`: summarises any file rlvr writes.
 *
 * A rollout shard gets a table of its rollouts, and the rollouts chosen with
 * --rollout are rendered as text: prompt plain, policy tokens and
 * observation tokens told apart by colour on a terminal and by markers
 * otherwise ({{policy}} [[observation]]), with rewards, verdicts and turns.
 * Checkpoints, metrics tables and run manifests get their headers, columns
 * or datasets. --verify reads every byte and checks every checksum. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/file.h"
#include "io/manifest.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "jobs/commands.h"
#include "policy/tokenizer.h"
#include "train/run.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CHOSEN 64

typedef struct {
    const char *path;
    bool color, verify, all, tokens, config;
    int64_t chosen[MAX_CHOSEN];
    int n_chosen;
    int rows; /* metrics rows shown */
} inspect_opts;

static const char *const C_POLICY = "\033[32m", *const C_OBS = "\033[36m", *const C_DIM = "\033[2m",
                         *const C_BOLD = "\033[1m", *const C_RESET = "\033[0m";

static const char *col(const inspect_opts *o, const char *code) { return o->color ? code : ""; }

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
    memset(o, 0, sizeof *o);
    o->rows = 5;
    o->color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--rollout") == 0 && i + 1 < argc) {
            char *end;
            long long n = strtoll(argv[++i], &end, 10);
            if (*end || n < 0 || o->n_chosen == MAX_CHOSEN) {
                fprintf(stderr, "rlvr inspect: --rollout wants a rollout number (at most %d of them)\n", MAX_CHOSEN);
                return -1;
            }
            o->chosen[o->n_chosen++] = n;
        } else if (strcmp(a, "--rows") == 0 && i + 1 < argc) {
            o->rows = atoi(argv[++i]);
        } else if (strcmp(a, "--all") == 0) {
            o->all = true;
        } else if (strcmp(a, "--tokens") == 0) {
            o->tokens = true;
        } else if (strcmp(a, "--config") == 0) {
            o->config = true;
        } else if (strcmp(a, "--verify") == 0) {
            o->verify = true;
        } else if (strcmp(a, "--color") == 0) {
            o->color = true;
        } else if (strcmp(a, "--no-color") == 0) {
            o->color = false;
        } else if (a[0] == '-' || o->path) {
            fprintf(stderr, "rlvr inspect: unexpected argument \"%s\"\n", a);
            return -1;
        } else {
            o->path = a;
        }
    }
    if (!o->path) {
        fprintf(stderr, "rlvr inspect: which file?\n");
        return -1;
    }
    return 0;
}

/* ---- shards ------------------------------------------------------------------ */

/* Writes token `id` as text: the tokenizer's bytes (specials by name);
 * control bytes other than newline and tab escaped; ids outside the
 * tokenizer's vocabulary as <id>. */
static void put_token(const rlvr_tokenizer *tok, int32_t id) {
    char buf[64];
    size_t len = 0;
    if (!tok || rlvr_tokenizer_decode(tok, &id, 1, true, buf, sizeof buf, &len) < 0) {
        printf("<%d>", id);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n' || c == '\t' || c >= 0x20) putchar(c);
        else printf("\\x%02x", c);
    }
}

static void render_text(const inspect_opts *o, const rlvr_tokenizer *tok, const rlvr_rollout *r) {
    int who = -1;
    for (int32_t t = 0; t < r->n_tokens; t++) {
        int m = r->mask[t];
        if (m != who) {
            /* close the previous segment, open the next */
            if (who == RLVR_TOKEN_POLICY) printf("%s", o->color ? C_RESET : "}}");
            if (who == RLVR_TOKEN_OBSERVATION) printf("%s", o->color ? C_RESET : "]]");
            if (m == RLVR_TOKEN_POLICY) printf("%s", o->color ? C_POLICY : "{{");
            if (m == RLVR_TOKEN_OBSERVATION) printf("%s", o->color ? C_OBS : "[[");
            who = m;
        }
        put_token(tok, r->tokens[t]);
    }
    if (who == RLVR_TOKEN_POLICY) printf("%s", o->color ? C_RESET : "}}");
    if (who == RLVR_TOKEN_OBSERVATION) printf("%s", o->color ? C_RESET : "]]");
    printf("\n");
}

static void render_rollout(const inspect_opts *o, const rlvr_tokenizer *tok, int64_t i, const rlvr_rollout *r,
                           float adv) {
    printf("\n%s── rollout %lld: task %s, group %lld, index %d, policy version %lld (staleness %lld)%s\n",
           col(o, C_BOLD), (long long)i, r->task_id, (long long)r->group_id, r->rollout_index,
           (long long)r->policy_version, (long long)r->staleness, col(o, C_RESET));
    printf("   verdict %s (reason %d), stop %s, advantage %+.4f\n", rlvr_verdict_name(r->verdict), r->verdict_reason,
           rlvr_stop_reason_name(r->stop), adv);
    printf("   reward %.4f = outcome %.4f, format %.4f, length penalty %.4f\n", r->reward.total, r->reward.outcome,
           r->reward.format, r->reward.length_penalty);
    printf("   tokens %d (prompt %d, policy %d), turns %d; seconds: generate %.3f, tool %.3f, verify %.3f, "
           "queue %.3f\n",
           r->n_tokens, r->prompt_tokens, rlvr_rollout_policy_tokens(r), r->n_turns, r->timings.generate_s,
           r->timings.tool_s, r->timings.verify_s, r->timings.queue_s);
    printf("   seed %llu, sample sequence %u\n", (unsigned long long)r->seed, r->sample_sequence);
    for (int32_t k = 0; k < r->n_turns; k++) {
        const rlvr_turn *u = &r->turns[k];
        printf("   turn %d: policy [%d, %d)", k, u->policy_start, u->policy_end);
        if (u->tool_name[0])
            printf(", tool %s exit %d in %.3f s%s%s, observation [%d, %d)", u->tool_name, u->exit_status,
                   u->duration_s, u->call_parsed ? "" : ", call did not parse",
                   u->output_truncated ? ", output truncated" : "", u->observation_start, u->observation_end);
        printf("\n");
    }
    printf("   %s(prompt plain, %spolicy%s%s, %sobservation%s%s)%s\n", col(o, C_DIM), col(o, C_POLICY),
           o->color ? "" : " in {{ }}", col(o, C_RESET), col(o, C_OBS), o->color ? "" : " in [[ ]]", col(o, C_RESET),
           col(o, C_RESET));
    render_text(o, tok, r);
    if (o->tokens) {
        static const char *const who[] = {"prompt", "policy", "observation"};
        printf("   %6s %8s %-12s %10s %10s\n", "pos", "id", "who", "logprob", "entropy");
        for (int32_t t = 0; t < r->n_tokens; t++)
            printf("   %6d %8d %-12s %10.4f %10.4f\n", t, r->tokens[t], r->mask[t] <= 2 ? who[r->mask[t]] : "?",
                   r->logprobs[t], r->entropy[t]);
    }
}

/* A step has one shard per trainer rank: says which of the step's files sit
 * next to this one (by name; not opened), so a reader knows this file is a
 * part of the step. */
static void print_step_files(const char *path, int64_t step, int rank) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
    DIR *d = opendir(dir);
    if (!d) return;
    int files = 0, lo = INT_MAX, hi = -1;
    for (struct dirent *e; (e = readdir(d));) {
        long long st = 0;
        int r = 0, end = 0;
        if (sscanf(e->d_name, "step_%lld.rank_%d.h5%n", &st, &r, &end) != 2 || end == 0 || e->d_name[end] ||
            st != step)
            continue;
        files++;
        lo = r < lo ? r : lo, hi = r > hi ? r : hi;
    }
    closedir(d);
    if (files > 1)
        printf("step %lld has %d shard files in %s (trainer ranks %d … %d, each holds the rollouts that rank "
               "trained on): this is rank %d's\n",
               (long long)step, files, dir, lo, hi, rank);
}

/* The tokenizer of a shard's run: <run>/tokenizer.json beside <run>/shards/
 * (a BPE run), else the byte tokenizer; NULL when neither can be made (ids
 * then print as <id>). */
static int shard_tokenizer(const char *shard, rlvr_tokenizer **tok) {
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", shard);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
    }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (access(path, R_OK) == 0) {
        int rc = rlvr_tokenizer_file_read(path, tok);
        if (rc == 0) printf("(tokens decoded with %s)\n", path);
        return rc;
    }
    if (rlvr_tokenizer_new_byte(tok) < 0) *tok = NULL;
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
    rc = shard_tokenizer(o->path, &tok);
    printf("%s: rollout shard, format %d: step %lld, rank %d, written %s\n", o->path, info->format_version,
           (long long)info->step, info->rank, info->created_utc);
    print_step_files(o->path, info->step, info->rank);
    int64_t verdicts[RLVR_VERDICT_COUNT] = {0}, policy_tokens = 0;
    double reward = 0;
    printf("\n%5s  %-20s %7s %4s %5s %5s %9s %8s  %-10s %-11s %7s %6s %5s\n", "#", "task", "group", "idx", "ver",
           "stale", "reward", "adv", "verdict", "stop", "tokens", "policy", "turns");
    for (int64_t i = 0; i < info->n_rollouts && rc == 0; i++) {
        float adv = 0;
        if ((rc = rlvr_shard_read(s, i, &r, &adv)) < 0) break;
        int32_t pt = rlvr_rollout_policy_tokens(&r);
        verdicts[r.verdict]++;
        policy_tokens += pt;
        reward += r.reward.total;
        printf("%5lld  %-20.20s %7lld %4d %5lld %5lld %9.4f %+8.3f  %-10s %-11s %7d %6d %5d\n", (long long)i, r.task_id,
               (long long)r.group_id, r.rollout_index, (long long)r.policy_version, (long long)r.staleness,
               r.reward.total, adv, rlvr_verdict_name(r.verdict), rlvr_stop_reason_name(r.stop), r.n_tokens, pt,
               r.n_turns);
    }
    if (rc == 0) {
        printf("\n%lld rollouts, %lld tokens (%lld policy), %lld turns; mean reward %.4f; verdicts:",
               (long long)info->n_rollouts, (long long)info->n_tokens, (long long)policy_tokens,
               (long long)info->n_turns, info->n_rollouts ? reward / (double)info->n_rollouts : 0.0);
        for (int v = 0; v < RLVR_VERDICT_COUNT; v++)
            if (verdicts[v]) printf(" %s %lld", rlvr_verdict_name((rlvr_verdict)v), (long long)verdicts[v]);
        printf("\n");
    }
    for (int64_t i = 0; rc == 0 && o->all && i < info->n_rollouts; i++) {
        float adv;
        if ((rc = rlvr_shard_read(s, i, &r, &adv)) == 0) render_rollout(o, tok, i, &r, adv);
    }
    for (int k = 0; rc == 0 && !o->all && k < o->n_chosen; k++) {
        float adv;
        if ((rc = rlvr_shard_read(s, o->chosen[k], &r, &adv)) == 0) render_rollout(o, tok, o->chosen[k], &r, adv);
    }
    if (rc == 0 && !o->all && o->n_chosen == 0 && info->n_rollouts > 0)
        printf("(rlvr inspect %s --rollout N renders rollout N as text)\n", o->path);
    rlvr_tokenizer_free(tok);
    rlvr_rollout_free(&r);
    rlvr_shard_close(s);
    return rc;
}

/* ---- checkpoints, metrics, manifests ---------------------------------------- */

static int print_dataset(const rlvr_io_dataset_info *d, void *user) {
    (void)user;
    char shape[96] = "(";
    size_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%llu", i ? ", " : "", (unsigned long long)d->dims[i]);
    snprintf(shape + n, sizeof shape - n, "%s)", d->rank == 1 ? "," : "");
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
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        const double *v = t.value[i];
        int64_t n = 0;
        double lo = INFINITY, hi = -INFINITY, last = NAN;
        for (int64_t r = 0; v && r < t.n_rows; r++) {
            if (isnan(v[r])) continue;
            n++;
            lo = fmin(lo, v[r]);
            hi = fmax(hi, v[r]);
            last = v[r];
        }
        if (n == 0) {
            never++;
            continue;
        }
        printf("  %-20s %9lld %14.6g %14.6g %14.6g\n", rlvr_metric_name((rlvr_metric)i), (long long)n, last, lo, hi);
    }
    if (never) {
        printf("  (never measured:");
        for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
            const double *v = t.value[i];
            bool any = false;
            for (int64_t r = 0; v && r < t.n_rows && !any; r++) any = !isnan(v[r]);
            if (!any) printf(" %s", rlvr_metric_name((rlvr_metric)i));
        }
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
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (parse_args(&o, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
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
    return rc < 0 ? rlvr_cmd_fail("inspect", rc) : RLVR_EXIT_OK;
}
