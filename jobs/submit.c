/* jobs/submit.c — `rlvr submit CONFIG [--out RUNDIR] [--dry-run]`: a run as
 * a chain of Slurm jobs (jobs/chain.h, docs/OPERATIONS.md "Slurm chains").
 *
 * Every job depends `afterany` on its predecessor and checks the
 * predecessor's completion marker when it starts: a job that requeues itself
 * after a checkpoint (exit 3) keeps its dependents waiting, because Slurm
 * never sees it end until the final attempt, and a failed predecessor stops
 * the chain at its successor with a `.blocked` note instead of a dependency
 * that can never be satisfied again (afterok's semantics). */
#include "core/config.h"
#include "core/fs.h"
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/h5util.h"
#include "jobs/chain.h"
#include "jobs/commands.h"
#include "jobs/run.h"
#include "mpi/layout.h"
#include "slurm/sbatch.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* slurm/chain-*.in, compiled in (jobs/CMakeLists.txt) */
#include "chain_templates.inc"

const rlvr_config_key rlvr_slurm_config_keys[] = {
    RLVR_KEY_STRING("slurm", "partition", rlvr_slurm_config, partition, "",
        "partition of every job (`--partition`; empty: the cluster's default)"),
    RLVR_KEY_STRING("slurm", "account", rlvr_slurm_config, account, "",
        "account charged (`--account`; empty: your default)"),
    RLVR_KEY_STRING("slurm", "qos", rlvr_slurm_config, qos, "", "quality of service (`--qos`; empty: the default)"),
    RLVR_KEY_STRING("slurm", "time", rlvr_slurm_config, time, "",
        "time limit of each job (`--time`: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS; empty: the "
        "partition's); a segment gets USR1 `grace_s` before it, checkpoints and is requeued"),
    RLVR_KEY_I64("slurm", "nodes", rlvr_slurm_config, nodes, "1", 1, 100000,
        "nodes of each RL segment (`--nodes`; SFT and gate jobs use one)"),
    RLVR_KEY_I64("slurm", "ntasks_per_node", rlvr_slurm_config, ntasks_per_node, "0", 0, 100000,
        "MPI ranks per node of an RL segment (`--ntasks-per-node`); nodes × this must equal the [layout] total. 0: "
        "`--ntasks` = the [layout] total when the file sets [layout], else 1 (one process)"),
    RLVR_KEY_I64("slurm", "cpus_per_task", rlvr_slurm_config, cpus_per_task, "0", 0, 100000,
        "CPUs per rank (`--cpus-per-task`; 0: not requested)"),
    RLVR_KEY_I64("slurm", "gpus_per_node", rlvr_slurm_config, gpus_per_node, "0", 0, 1024,
        "GPUs per node (`--gpus-per-node`; 0: not requested)"),
    RLVR_KEY_STRING("slurm", "mem", rlvr_slurm_config, mem, "",
        "memory per node (`--mem`, e.g. 64G; empty: the partition's default)"),
    RLVR_KEY_STRING("slurm", "extra", rlvr_slurm_config, extra, "",
        "more #SBATCH lines for every job, ';'-separated (e.g. `--constraint=a100; --exclusive`)"),
    RLVR_KEY_I64("slurm", "segments", rlvr_slurm_config, segments, "1", 1, 1000,
        "RL jobs the [train] steps are split into (segment k ends after step ⌊steps·k/segments⌋; each resumes from "
        "the previous one's checkpoint)"),
    RLVR_KEY_I64("slurm", "grace_s", rlvr_slurm_config, grace_s, "120", 1, 86400,
        "seconds before the time limit at which a job gets USR1 (`--signal=B:USR1@grace_s`): it finishes its step, "
        "checkpoints and is requeued"),
    RLVR_KEY_ENUM_NAME("slurm", "launcher", rlvr_slurm_config, launcher, "srun", "srun|none",
        "how an RL segment starts its ranks: `srun` (`srun --mpi=pmix`) or `none` (rlvr runs in the batch shell: "
        "one-process layouts only)"),
    RLVR_KEY_STRING("slurm", "baseline", rlvr_slurm_config, baseline, "sft",
        "what each gate compares the segment's checkpoint with: `sft` (the final SFT checkpoint), `promoted` (the "
        "last promoted checkpoint, else the SFT one) or a checkpoint path"),
    RLVR_KEY_BOOL("slurm", "gate", rlvr_slurm_config, gate, "true",
        "a gate job after each segment (`rlvr gate --promote`): a pass writes <run>/promoted"),
    RLVR_KEY_I64("slurm", "max_requeues", rlvr_slurm_config, max_requeues, "20", 0, 10000,
        "times a job requeues itself after stopping at a checkpoint (USR1 before the time limit); then it ends with "
        "exit 3 and `rlvr submit` continues the chain"),
    RLVR_KEY_END,
};

/* ---- [slurm] ----------------------------------------------------------- */

/* Slurm's time formats to seconds; -1 when `t` is none of them. */
static int64_t slurm_time_seconds(const char *t) {
    long v[4];
    int n = 0, days = 0;
    const char *p = t;
    const char *dash = strchr(t, '-');
    if (dash) {
        char *end;
        long d = strtol(t, &end, 10);
        if (end != dash || d < 0) return -1;
        days = (int)d;
        p = dash + 1;
    }
    while (*p && n < 4) {
        if (!isdigit((unsigned char)*p)) return -1;
        char *end;
        v[n++] = strtol(p, &end, 10);
        p = end;
        if (*p == ':') p++;
        else if (*p) return -1;
    }
    if (*p || n == 0 || n > 3) return -1;
    int64_t s;
    if (dash) /* D-HH, D-HH:MM, D-HH:MM:SS */
        s = v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
    else if (n == 1) /* minutes */
        s = v[0] * 60;
    else if (n == 2) /* MM:SS */
        s = v[0] * 60 + v[1];
    else
        s = v[0] * 3600 + v[1] * 60 + v[2];
    return (int64_t)days * 86400 + s;
}

static bool has_space(const char *s) {
    for (; *s; s++)
        if (isspace((unsigned char)*s)) return true;
    return false;
}

int rlvr_slurm_config_read(rlvr_slurm_config *s, const rlvr_config *cfg) {
    memset(s, 0, sizeof *s);
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_slurm_config_keys, "slurm", s));
    /* the text keys become #SBATCH options, which white space would split;
     * `extra` holds whole lines */
    for (const rlvr_config_key *k = rlvr_slurm_config_keys; k->key; k++) {
        if (k->field != RLVR_FIELD_STRING || strcmp(k->key, "extra") == 0) continue;
        const char *v;
        memcpy(&v, (const char *)s + k->offset, sizeof v);
        if (has_space(v)) return rlvr_config_error(cfg, k->section, k->key, "\"%s\" holds white space", v);
    }
    if (s->time[0]) {
        int64_t limit = slurm_time_seconds(s->time);
        if (limit < 0)
            return rlvr_config_error(cfg, "slurm", "time",
                                     "\"%s\" is not a Slurm time (MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)",
                                     s->time);
        if (limit <= s->grace_s)
            return rlvr_config_error(cfg, "slurm", "time",
                                     "the limit (%lld s) must exceed [slurm] grace_s (%lld s), or USR1 would "
                                     "come before the job starts working",
                                     (long long)limit, (long long)s->grace_s);
    }
    if (!s->baseline[0])
        return rlvr_config_error(cfg, "slurm", "baseline", "empty: use sft, promoted or a checkpoint path");
    return 0;
}

/* ---- the chain's parts -------------------------------------------------- */

typedef enum { PART_SFT, PART_TRAIN, PART_GATE } part_kind;

typedef struct {
    part_kind kind;
    char name[32];
    int64_t stop_step;  /* train: its last step; gate: its candidate's step */
    int requires;       /* part whose .done must exist before it runs (−1: none) */
    int after;          /* another part it only waits for (a gate waits for the previous gate; −1: none) */
    bool finished;      /* its .done exists: not submitted again */
    char id[32];        /* Slurm job id ("-" when finished before) */
    char script[PATH_MAX + 64];
} part;

typedef struct {
    rlvr_run run;
    rlvr_slurm_config slurm;
    const char *config_path;
    bool dry_run;
    bool sft;                   /* [train] init = sft: the chain starts with SFT */
    int64_t ntasks;             /* ranks of an RL segment */
    char run_dir[PATH_MAX];     /* absolute */
    char chain_dir[PATH_MAX + 16];
    char cwd[PATH_MAX];
    char rlvr_exe[PATH_MAX];
    char config_copy[PATH_MAX + 16];
    char pool[PATH_MAX + 16];
    part *parts;
    int n_parts;
} submit_ctx;

/* The segment boundaries ⌊steps·k/segments⌋ without overflow. */
static int64_t segment_stop(int64_t steps, int64_t segments, int64_t k) {
    return steps / segments * k + steps % segments * k / segments;
}

static int plan_parts(submit_ctx *c) {
    int64_t S = c->slurm.segments;
    int max = 1 + (int)S * 2;
    RLVR_ALLOC(c->parts, max);
    int n = 0, prev_train = -1, prev_gate = -1;
    if (c->sft) {
        part *p = &c->parts[n];
        p->kind = PART_SFT;
        snprintf(p->name, sizeof p->name, "sft");
        p->requires = p->after = -1;
        prev_train = n++;
    }
    for (int64_t k = 1; k <= S; k++) {
        part *t = &c->parts[n];
        t->kind = PART_TRAIN;
        snprintf(t->name, sizeof t->name, "train%lld", (long long)k);
        t->stop_step = segment_stop(c->run.train.steps, S, k);
        t->requires = prev_train;
        t->after = -1;
        prev_train = n++;
        if (!c->slurm.gate) continue;
        part *g = &c->parts[n];
        g->kind = PART_GATE;
        snprintf(g->name, sizeof g->name, "gate%lld", (long long)k);
        g->stop_step = t->stop_step;
        g->requires = prev_train;
        g->after = prev_gate; /* gates promote in segment order */
        prev_gate = n++;
    }
    c->n_parts = n;
    return 0;
}

/* ---- checks before anything is written ------------------------------------ */

static int layout_total(const rlvr_config *cfg, int64_t *total, bool *set) {
    rlvr_layout_config layout;
    RLVR_TRY(rlvr_layout_config_read(&layout, cfg));
    *total = (int64_t)layout.counts.trainer + layout.counts.verifier + layout.counts.rollout;
    *set = layout.counts_set;
    return 0;
}

static int check_plan(submit_ctx *c) {
    const rlvr_config *cfg = c->run.cfg;
    const rlvr_slurm_config *s = &c->slurm;
    if (s->segments > c->run.train.steps)
        return rlvr_config_error(cfg, "slurm", "segments", "%lld segments for %lld [train] steps: at most one per step",
                                 (long long)s->segments, (long long)c->run.train.steps);
    int64_t total;
    bool layout_set;
    RLVR_TRY(layout_total(cfg, &total, &layout_set));
    if (strcmp(s->launcher, "none") == 0) {
        if (layout_set && total != 1)
            return rlvr_config_error(cfg, "slurm", "launcher",
                                     "none runs one process, but [layout] asks for %lld ranks: use launcher = srun",
                                     (long long)total);
        if (s->nodes != 1 || s->ntasks_per_node > 1)
            return rlvr_config_error(cfg, "slurm", "launcher", "none runs one process: set nodes = 1 and "
                                                               "ntasks_per_node = 0 or 1, or use launcher = srun");
        c->ntasks = 1;
    } else if (s->ntasks_per_node > 0) {
        c->ntasks = s->nodes * s->ntasks_per_node;
        if (c->ntasks != (layout_set ? total : 1))
            return rlvr_config_error(cfg, "slurm", "ntasks_per_node",
                                     "nodes (%lld) × ntasks_per_node (%lld) = %lld ranks, but [layout] trainer + "
                                     "verifier + rollout = %lld%s",
                                     (long long)s->nodes, (long long)s->ntasks_per_node, (long long)c->ntasks,
                                     (long long)(layout_set ? total : 1),
                                     layout_set ? "" : " (no [layout] in the file: one process)");
    } else {
        c->ntasks = layout_set ? total : 1;
        if (c->ntasks < s->nodes)
            return rlvr_config_error(cfg, "slurm", "nodes", "%lld nodes for %lld ranks: at most one node per rank",
                                     (long long)s->nodes, (long long)c->ntasks);
    }
    c->sft = strcmp(c->run.train.init, "sft") == 0;
    if (!c->sft && s->gate && (strcmp(s->baseline, "sft") == 0 || strcmp(s->baseline, "promoted") == 0))
        return rlvr_config_error(cfg, "slurm", "baseline",
                                 "\"%s\" needs an SFT checkpoint, but [train] init = %s (the chain has no SFT job): "
                                 "give a checkpoint path",
                                 s->baseline, c->run.train.init);
    return 0;
}

/* Refuses while a job of the run's previous chain is queued or running. */
static int check_not_live(submit_ctx *c) {
    rlvr_chain_job *jobs = NULL;
    size_t n = 0;
    int rc = rlvr_chain_read_jobs(c->run_dir, &jobs, &n);
    if (rc == RLVR_ENOTFOUND) return 0;
    RLVR_TRY(rc);
    char csv[8192];
    rlvr_chain_ids_csv(jobs, n, csv, sizeof csv);
    rlvr_sbatch_job *states = calloc(n ? n : 1, sizeof *states);
    size_t m = 0;
    rc = states ? (csv[0] ? rlvr_sbatch_query(csv, states, n, &m) : 0) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == RLVR_ENOTFOUND && c->dry_run) {
        fprintf(stderr, "submit: note: squeue not found, not checking the previous chain's jobs (dry run)\n");
        rc = 0;
        m = 0;
    }
    char live[4096] = "";
    size_t len = 0;
    for (size_t i = 0; rc == 0 && i < m; i++) {
        if (!states[i].live) continue;
        const char *part = "?";
        for (size_t j = 0; j < n; j++)
            if (strcmp(jobs[j].id, states[i].id) == 0) part = jobs[j].part;
        int w = snprintf(live + len, sizeof live - len, "%s%s (job %s, %s)", len ? ", " : "", part, states[i].id,
                         states[i].state);
        if (w > 0 && (size_t)w < sizeof live - len) len += (size_t)w;
    }
    if (rc == 0 && len)
        rc = RLVR_FAIL(RLVR_ESTATE, "the chain of %s is still queued or running: %s; wait for it, or run `rlvr cancel %s`",
                       c->run_dir, live, c->run_dir);
    free(states);
    free(jobs);
    return rc;
}

/* ---- files ---------------------------------------------------------------- */

static int read_text_file(const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    if (!f) return RLVR_FAIL(RLVR_EIO, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
        if (len + 1 == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", path);
    buf[len] = 0;
    *out = buf;
    return 0;
}

/* <run>/config.ini: the configuration the jobs read, so that later edits of
 * the original do not change a running chain. */
static int copy_config(submit_ctx *c) {
    snprintf(c->config_copy, sizeof c->config_copy, "%s/config.ini", c->run_dir);
    char src[PATH_MAX], dst[PATH_MAX];
    if (realpath(c->config_path, src) && realpath(c->config_copy, dst) && strcmp(src, dst) == 0) return 0;
    char *text = NULL, *old = NULL;
    RLVR_TRY(read_text_file(c->config_path, &text));
    bool existed = access(c->config_copy, F_OK) == 0;
    if (existed && read_text_file(c->config_copy, &old) == 0 && strcmp(old, text) != 0)
        fprintf(stderr, "submit: note: %s replaced: it differed from %s\n", c->config_copy, c->config_path);
    rlvr_error_clear();
    free(old);
    int rc = rlvr_write_text_atomic(c->config_copy, text);
    free(text);
    return rc;
}

static int setup_dirs(submit_ctx *c) {
    RLVR_TRY(rlvr_mkdir_p(c->run.io.run_dir, 0755));
    if (!realpath(c->run.io.run_dir, c->run_dir))
        return RLVR_FAIL(RLVR_EIO, "cannot resolve %s: %s", c->run.io.run_dir, strerror(errno));
    if (!getcwd(c->cwd, sizeof c->cwd)) return RLVR_FAIL(RLVR_ESYS, "getcwd: %s", strerror(errno));
    if (has_space(c->run_dir) || has_space(c->cwd))
        return RLVR_FAIL(RLVR_EINVAL, "the run directory (%s) and the working directory (%s) must not hold white "
                                      "space: #SBATCH lines cannot quote it",
                         c->run_dir, c->cwd);
    ssize_t n = readlink("/proc/self/exe", c->rlvr_exe, sizeof c->rlvr_exe - 1);
    if (n < 0) return RLVR_FAIL(RLVR_ESYS, "readlink /proc/self/exe: %s", strerror(errno));
    c->rlvr_exe[n] = 0;
    snprintf(c->chain_dir, sizeof c->chain_dir, "%s/chain", c->run_dir);
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/logs", c->chain_dir);
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    snprintf(dir, sizeof dir, "%s/slurm", c->run_dir);
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    const char *pool = c->run.tasks.pool;
    if (pool && pool[0]) {
        if (!realpath(pool, c->pool)) snprintf(c->pool, sizeof c->pool, "%s", pool);
    } else {
        snprintf(c->pool, sizeof c->pool, "%s/pool", c->run_dir);
    }
    return 0;
}

/* ---- rendering ------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
    bool overflow;
} textbuf;

static void tb_printf(textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(textbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= b->cap - b->len) b->overflow = true;
    else b->len += (size_t)w;
}

static int sbatch_lines(const submit_ctx *c, const part *p, char *out, size_t cap) {
    const rlvr_slurm_config *s = &c->slurm;
    textbuf b = {out, 0, cap, false};
    out[0] = 0;
    const char *base = strrchr(c->run_dir, '/');
    base = base && base[1] ? base + 1 : c->run_dir;
    tb_printf(&b, "#SBATCH --job-name=%s.%s\n", base, p->name);
    tb_printf(&b, "#SBATCH --output=%s/logs/%s-%%j.log\n", c->chain_dir, p->name);
    tb_printf(&b, "#SBATCH --open-mode=append\n");
    tb_printf(&b, "#SBATCH --chdir=%s\n", c->cwd);
    tb_printf(&b, "#SBATCH --requeue\n");
    if (p->kind != PART_GATE) tb_printf(&b, "#SBATCH --signal=B:USR1@%lld\n", (long long)s->grace_s);
    if (p->kind == PART_TRAIN) {
        tb_printf(&b, "#SBATCH --nodes=%lld\n", (long long)s->nodes);
        if (s->ntasks_per_node > 0 && strcmp(s->launcher, "srun") == 0)
            tb_printf(&b, "#SBATCH --ntasks-per-node=%lld\n", (long long)s->ntasks_per_node);
        else
            tb_printf(&b, "#SBATCH --ntasks=%lld\n", (long long)c->ntasks);
    } else {
        tb_printf(&b, "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n");
    }
    if (s->cpus_per_task > 0) tb_printf(&b, "#SBATCH --cpus-per-task=%lld\n", (long long)s->cpus_per_task);
    if (s->gpus_per_node > 0) tb_printf(&b, "#SBATCH --gpus-per-node=%lld\n", (long long)s->gpus_per_node);
    if (s->mem[0]) tb_printf(&b, "#SBATCH --mem=%s\n", s->mem);
    if (s->time[0]) tb_printf(&b, "#SBATCH --time=%s\n", s->time);
    if (s->partition[0]) tb_printf(&b, "#SBATCH --partition=%s\n", s->partition);
    if (s->account[0]) tb_printf(&b, "#SBATCH --account=%s\n", s->account);
    if (s->qos[0]) tb_printf(&b, "#SBATCH --qos=%s\n", s->qos);
    for (const char *e = s->extra; *e;) {
        const char *semi = strchr(e, ';');
        size_t len = semi ? (size_t)(semi - e) : strlen(e);
        while (len && isspace((unsigned char)*e)) e++, len--;
        while (len && isspace((unsigned char)e[len - 1])) len--;
        if (len) {
            bool prefixed = len >= 7 && strncmp(e, "#SBATCH", 7) == 0;
            tb_printf(&b, "%s%.*s\n", prefixed ? "" : "#SBATCH ", (int)len, e);
        }
        if (!semi) break;
        e = semi + 1;
    }
    if (b.len && out[b.len - 1] == '\n') out[--b.len] = 0;
    if (b.overflow) return RLVR_FAIL(RLVR_ELIMIT, "#SBATCH lines of %s longer than %zu bytes", p->name, cap);
    return 0;
}

/* Shell-quoted copies of the values, freed by free_quoted. */
typedef struct {
    const char *keys[24];
    char *values[24];
    size_t n;
    int rc;
} kv;

static void kv_put(kv *t, const char *key, const char *value, bool quote) {
    if (t->rc < 0) return;
    char *v = quote ? rlvr_sbatch_shell_quote(value) : strdup(value);
    if (!v) {
        t->rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        return;
    }
    t->keys[t->n] = key;
    t->values[t->n++] = v;
}

static void kv_free(kv *t) {
    for (size_t i = 0; i < t->n; i++) free(t->values[i]);
}

static int candidate_path(const submit_ctx *c, int64_t step, char *out, size_t cap) {
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/checkpoints", c->run_dir);
    return rlvr_checkpoint_path(out, cap, dir, step);
}

static int render_part(const submit_ctx *c, const part *p, const char *lib, char **script) {
    char lines[16384];
    RLVR_TRY(sbatch_lines(c, p, lines, sizeof lines));
    kv t = {0};
    char num[32], preds[64] = "", cand[PATH_MAX + 64] = "";
    if (p->requires >= 0) snprintf(preds, sizeof preds, "%s", c->parts[p->requires].name);
    kv_put(&t, "SBATCH_LINES", lines, false);
    kv_put(&t, "LIB", lib, false);
    kv_put(&t, "RLVR", c->rlvr_exe, true);
    kv_put(&t, "CONFIG", c->config_copy, true);
    kv_put(&t, "RUN", c->run_dir, true);
    kv_put(&t, "CHAIN", c->chain_dir, true);
    kv_put(&t, "NAME", p->name, false);
    kv_put(&t, "PREDS", preds, false);
    snprintf(num, sizeof num, "%lld", (long long)c->slurm.max_requeues);
    kv_put(&t, "MAX_REQUEUES", num, false);
    const char *tmpl = tmpl_chain_sft_sbatch;
    if (p->kind != PART_SFT) {
        RLVR_TRY(candidate_path(c, p->stop_step, cand, sizeof cand));
        kv_put(&t, "CANDIDATE", cand, true);
    }
    if (p->kind == PART_TRAIN) {
        tmpl = tmpl_chain_train_sbatch;
        snprintf(num, sizeof num, "%lld", (long long)p->stop_step);
        kv_put(&t, "STOP_STEP", num, false);
        char until[48] = "";
        if (p->stop_step < c->run.train.steps) snprintf(until, sizeof until, "--until-step %lld", (long long)p->stop_step);
        kv_put(&t, "UNTIL", until, false);
        kv_put(&t, "LAUNCH", strcmp(c->slurm.launcher, "srun") == 0 ? "srun --mpi=pmix" : "", false);
    } else if (p->kind == PART_GATE) {
        tmpl = tmpl_chain_gate_sbatch;
        kv_put(&t, "POOL", c->pool, true);
        const char *b = c->slurm.baseline;
        bool named = strcmp(b, "sft") == 0 || strcmp(b, "promoted") == 0;
        kv_put(&t, "BASELINE_MODE", named ? b : "path", false);
        char abs[PATH_MAX];
        kv_put(&t, "BASELINE", named ? "" : (realpath(b, abs) ? abs : b), true);
    }
    int rc = t.rc;
    if (rc == 0) rc = rlvr_sbatch_render(tmpl, t.keys, (const char *const *)t.values, t.n, script);
    if (rc < 0) rc = rlvr_error_wrap(rc, "rendering %s", p->name);
    kv_free(&t);
    return rc;
}

static int render_lib(char **lib) {
    return rlvr_sbatch_render(tmpl_chain_lib_sh, NULL, NULL, 0, lib);
}

/* ---- submitting --------------------------------------------------------------- */

static int write_jobs_tsv(const submit_ctx *c) {
    size_t cap = (size_t)c->n_parts * (sizeof c->parts[0].script + 96) + 64;
    char *text = malloc(cap);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t len = 0;
    for (int i = 0; i < c->n_parts; i++) {
        const part *p = &c->parts[i];
        int w = snprintf(text + len, cap - len, "%s\t%s\t%s\n", p->name, p->id[0] ? p->id : "-", p->script);
        if (w > 0) len += (size_t)w;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/jobs.tsv", c->chain_dir);
    int rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

/* The previous chain's job id of `name` (kept for finished parts). */
static void previous_id(const rlvr_chain_job *old, size_t n_old, const char *name, char *id, size_t cap) {
    snprintf(id, cap, "-");
    for (size_t i = 0; i < n_old; i++)
        if (strcmp(old[i].part, name) == 0) snprintf(id, cap, "%s", old[i].id);
}

static int submit_part(submit_ctx *c, part *p, const char *lib) {
    char *script = NULL;
    RLVR_TRY(render_part(c, p, lib, &script));
    snprintf(p->script, sizeof p->script, "%s/slurm/%s.sbatch", c->run_dir, p->name);
    int rc = rlvr_write_text_atomic(p->script, script);
    free(script);
    RLVR_TRY(rc);
    if (chmod(p->script, 0755) != 0) return RLVR_FAIL(RLVR_EIO, "chmod %s: %s", p->script, strerror(errno));
    char marker[PATH_MAX + 64];
    RLVR_TRY(rlvr_chain_marker_path(marker, sizeof marker, c->run_dir, p->name, "blocked"));
    unlink(marker);
    /* afterany on the parts it waits for that were submitted now; a finished
     * part is no dependency (its marker is there) */
    char dep[160] = "";
    int waits[2] = {p->requires, p->after};
    for (int k = 0; k < 2; k++) {
        if (waits[k] < 0 || c->parts[waits[k]].finished) continue;
        size_t len = strlen(dep);
        snprintf(dep + len, sizeof dep - len, "%s%s", len ? ":" : "--dependency=afterany:", c->parts[waits[k]].id);
    }
    const char *args[2] = {dep, "--kill-on-invalid-dep=yes"};
    return rlvr_sbatch_submit(p->script, args, dep[0] ? 2 : 0, c->dry_run, p->id, sizeof p->id);
}

static int submit_chain(submit_ctx *c) {
    rlvr_chain_job *old = NULL;
    size_t n_old = 0;
    int rc = rlvr_chain_read_jobs(c->run_dir, &old, &n_old);
    if (rc == RLVR_ENOTFOUND) rc = 0;
    RLVR_TRY(rc);
    char *lib = NULL;
    rc = render_lib(&lib);
    int submitted = 0;
    for (int i = 0; rc == 0 && i < c->n_parts; i++) {
        part *p = &c->parts[i];
        char marker[PATH_MAX + 64];
        rc = rlvr_chain_marker_path(marker, sizeof marker, c->run_dir, p->name, "done");
        if (rc < 0) break;
        if (access(marker, F_OK) == 0) {
            p->finished = true;
            previous_id(old, n_old, p->name, p->id, sizeof p->id);
            snprintf(p->script, sizeof p->script, "%s/slurm/%s.sbatch", c->run_dir, p->name);
            printf("skipping %-8s finished (%s)\n", p->name, marker);
            continue;
        }
        rc = submit_part(c, p, lib);
        if (rc < 0) {
            rc = rlvr_error_wrap(rc, "submitting %s%s", p->name,
                                 submitted ? " (the parts before it are queued: `rlvr cancel` them, or fix the "
                                             "problem and `rlvr submit` again once they ended)"
                                           : "");
            break;
        }
        submitted++;
        printf("%s %-8s job %s  %s\n", c->dry_run ? "would submit" : "submitted", p->name, p->id, p->script);
        fflush(stdout);
        if (!c->dry_run) rc = write_jobs_tsv(c); /* after each, so a failure leaves no job unrecorded */
    }
    free(lib);
    free(old);
    if (rc == 0 && submitted == 0) printf("the chain of %s is complete: nothing to submit\n", c->run_dir);
    else if (rc == 0 && !c->dry_run)
        printf("chain: %d job%s submitted; `rlvr status %s` follows it, `rlvr cancel %s` stops it\n", submitted,
               submitted == 1 ? "" : "s", c->run_dir, c->run_dir);
    return rc;
}

/* ---- the command ----------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f,
            "usage: rlvr submit CONFIG [--out RUNDIR] [--dry-run]\n"
            "  Submits the run as a chain of Slurm jobs: SFT, then [slurm] segments RL jobs (each resuming\n"
            "  from the previous one's checkpoint), with a gate after each segment that promotes a passing\n"
            "  checkpoint (<run>/promoted). Scripts go to <run>/slurm/, job ids to <run>/chain/jobs.tsv.\n"
            "  Submitting an existing run again skips the finished parts and continues from the latest\n"
            "  checkpoint; it is refused while the run's chain is still queued or running.\n"
            "  --out RUNDIR   the run directory (default: [run] out_dir/name)\n"
            "  --dry-run      write the scripts and print the sbatch command lines; submit nothing\n"
            "  Layout and resources: [slurm] in docs/CONFIG.md; docs/OPERATIONS.md \"Slurm chains\".\n"
            "exit status: 0 submitted, 1 failure (sbatch, a live chain), 2 usage or configuration error\n");
}

int rlvr_cmd_submit(int argc, char **argv) {
    submit_ctx c;
    memset(&c, 0, sizeof c);
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return RLVR_EXIT_OK;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--dry-run") == 0) {
            c.dry_run = true;
        } else if (!c.config_path && argv[i][0] != '-') {
            c.config_path = argv[i];
        } else {
            usage(stderr);
            return RLVR_EXIT_USAGE;
        }
    }
    if (!c.config_path) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    int rc = rlvr_run_open(&c.run, c.config_path, out);
    if (rc < 0) return rlvr_cmd_fail("submit", rc);
    rc = rlvr_slurm_config_read(&c.slurm, c.run.cfg);
    if (rc == 0) rc = check_plan(&c);
    if (rc == 0) rc = plan_parts(&c);
    if (rc == 0) rc = setup_dirs(&c);
    if (rc == 0) rc = check_not_live(&c);
    if (rc == 0) rc = copy_config(&c);
    if (rc == 0) rc = submit_chain(&c);
    int status = rc < 0 ? rlvr_cmd_fail("submit", rc) : RLVR_EXIT_OK;
    free(c.parts);
    rlvr_run_close(&c.run);
    return status;
}
