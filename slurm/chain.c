/* slurm/chain.c — a run's chain of Slurm jobs: the plan, its scripts and
 * their submission (slurm/chain.h). The status side is slurm/chain_status.c. */
#include "slurm/chain.h"

#include "core/error.h"
#include "core/fs.h"
#include "io/checkpoint.h"
#include "mpi/layout.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* slurm/chain-*.in, compiled in (slurm/CMakeLists.txt) */
#include "chain_templates.inc"

/* ---- the plan --------------------------------------------------------------- */

/* The segment boundaries ⌊steps·k/segments⌋ without overflow. */
static int64_t segment_stop(int64_t steps, int64_t segments, int64_t k) {
    return steps / segments * k + steps % segments * k / segments;
}

static int plan_parts(rlvr_chain *c) {
    int64_t S = c->slurm.segments;
    int max = 1 + (int)S * 2;
    RLVR_ALLOC(c->parts, max);
    int n = 0, prev_train = -1, prev_gate = -1;
    if (c->sft) {
        rlvr_chain_part *p = &c->parts[n];
        p->kind = RLVR_CHAIN_SFT;
        snprintf(p->name, sizeof p->name, "sft");
        p->requires = p->after = -1;
        prev_train = n++;
    }
    for (int64_t k = 1; k <= S; k++) {
        rlvr_chain_part *t = &c->parts[n];
        t->kind = RLVR_CHAIN_TRAIN;
        snprintf(t->name, sizeof t->name, "train%lld", (long long)k);
        t->stop_step = segment_stop(c->steps, S, k);
        t->requires = prev_train;
        t->after = -1;
        prev_train = n++;
        if (!c->slurm.gate) continue;
        rlvr_chain_part *g = &c->parts[n];
        g->kind = RLVR_CHAIN_GATE;
        snprintf(g->name, sizeof g->name, "gate%lld", (long long)k);
        g->stop_step = t->stop_step;
        g->requires = prev_train;
        g->after = prev_gate; /* gates promote in segment order */
        prev_gate = n++;
    }
    c->n_parts = n;
    return 0;
}

static int layout_total(const rlvr_config *cfg, int64_t *total, bool *set) {
    rlvr_layout_config layout;
    RLVR_TRY(rlvr_layout_config_read(&layout, cfg));
    *total = (int64_t)layout.counts.trainer + layout.counts.verifier + layout.counts.rollout;
    *set = layout.counts_set;
    return 0;
}

static int check_plan(rlvr_chain *c, const rlvr_config *cfg, const char *init) {
    const rlvr_slurm_config *s = &c->slurm;
    if (s->segments > c->steps)
        return rlvr_config_error(cfg, "slurm", "segments", "%lld segments for %lld [train] steps: at most one per step",
                                 (long long)s->segments, (long long)c->steps);
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
    c->sft = strcmp(init, "sft") == 0;
    if (!c->sft && s->gate && (strcmp(s->baseline, "sft") == 0 || strcmp(s->baseline, "promoted") == 0))
        return rlvr_config_error(cfg, "slurm", "baseline",
                                 "\"%s\" needs an SFT checkpoint, but [train] init = %s (the chain has no SFT job): "
                                 "give a checkpoint path",
                                 s->baseline, init);
    return 0;
}

int rlvr_chain_plan(rlvr_chain *c, const rlvr_config *cfg, int64_t steps, const char *init) {
    memset(c, 0, sizeof *c);
    c->steps = steps;
    RLVR_TRY(rlvr_slurm_config_read(&c->slurm, cfg));
    RLVR_TRY(check_plan(c, cfg, init));
    return plan_parts(c);
}

void rlvr_chain_free(rlvr_chain *c) {
    for (int i = 0; c->parts && i < c->n_parts; i++) free(c->parts[i].command);
    free(c->parts);
    c->parts = NULL;
    c->n_parts = 0;
}

/* ---- where the chain lives --------------------------------------------------- */

static bool has_space(const char *s) { return s[strcspn(s, " \t\n\v\f\r")] != 0; }

int rlvr_chain_setup(rlvr_chain *c, const char *run_dir, const char *pool, const char *cwd, const char *rlvr_exe) {
    RLVR_TRY(rlvr_mkdir_p(run_dir, 0755));
    if (!realpath(run_dir, c->run_dir)) return RLVR_FAIL(RLVR_EIO, "cannot resolve %s: %s", run_dir, strerror(errno));
    if (cwd) snprintf(c->cwd, sizeof c->cwd, "%s", cwd);
    else if (!getcwd(c->cwd, sizeof c->cwd)) return RLVR_FAIL(RLVR_ESYS, "getcwd: %s", strerror(errno));
    if (has_space(c->run_dir) || has_space(c->cwd))
        return RLVR_FAIL(RLVR_EINVAL, "the run directory (%s) and the working directory (%s) must not hold white "
                                      "space: #SBATCH lines cannot quote it",
                         c->run_dir, c->cwd);
    if (rlvr_exe) {
        snprintf(c->rlvr_exe, sizeof c->rlvr_exe, "%s", rlvr_exe);
    } else {
        ssize_t n = readlink("/proc/self/exe", c->rlvr_exe, sizeof c->rlvr_exe - 1);
        if (n < 0) return RLVR_FAIL(RLVR_ESYS, "readlink /proc/self/exe: %s", strerror(errno));
        c->rlvr_exe[n] = 0;
    }
    snprintf(c->chain_dir, sizeof c->chain_dir, "%s/chain", c->run_dir);
    snprintf(c->config_copy, sizeof c->config_copy, "%s/config.ini", c->run_dir);
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/logs", c->chain_dir);
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    snprintf(dir, sizeof dir, "%s/slurm", c->run_dir);
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    if (pool && pool[0]) {
        if (!realpath(pool, c->pool)) snprintf(c->pool, sizeof c->pool, "%s", pool);
    } else {
        snprintf(c->pool, sizeof c->pool, "%s/pool", c->run_dir);
    }
    return 0;
}

int rlvr_chain_check_idle(const rlvr_chain *c, bool dry_run, bool *unchecked) {
    *unchecked = false;
    rlvr_chain_view v;
    int rc = rlvr_chain_view_load(c->run_dir, &v);
    if (rc == RLVR_ENOTFOUND) rc = 0; /* no chain yet */
    if (rc == 0 && !v.states_ok) {
        if (dry_run) *unchecked = true;
        else rc = RLVR_FAIL(RLVR_ENOTFOUND, "squeue not found on PATH: install Slurm's clients (Debian: slurm-client)");
    }
    char live[4096] = "";
    size_t len = 0;
    for (size_t i = 0; rc == 0 && i < v.n_states; i++) {
        if (!v.states[i].live) continue;
        const char *part = "?";
        for (size_t j = 0; j < v.n; j++)
            if (strcmp(v.jobs[j].id, v.states[i].id) == 0) part = v.jobs[j].part;
        int w = snprintf(live + len, sizeof live - len, "%s%s (job %s, %s)", len ? ", " : "", part, v.states[i].id,
                         v.states[i].state);
        if (w > 0 && (size_t)w < sizeof live - len) len += (size_t)w;
    }
    if (rc == 0 && len)
        rc = RLVR_FAIL(RLVR_ESTATE, "the chain of %s is still queued or running: %s; wait for it, or run `rlvr cancel %s`",
                       c->run_dir, live, c->run_dir);
    rlvr_chain_view_free(&v);
    return rc;
}

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


int rlvr_chain_copy_config(rlvr_chain *c, const char *config_path, bool *replaced) {
    *replaced = false;
    char src[PATH_MAX], dst[PATH_MAX];
    if (realpath(config_path, src) && realpath(c->config_copy, dst) && strcmp(src, dst) == 0) return 0;
    char *text = NULL, *old = NULL;
    RLVR_TRY(read_text_file(config_path, &text));
    bool existed = access(c->config_copy, F_OK) == 0;
    if (existed && read_text_file(c->config_copy, &old) == 0 && strcmp(old, text) != 0) *replaced = true;
    rlvr_error_clear();
    free(old);
    int rc = rlvr_write_text_atomic(c->config_copy, text);
    free(text);
    return rc;
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


static int sbatch_lines(const rlvr_chain *c, const rlvr_chain_part *p, char *out, size_t cap) {
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
    if (p->kind != RLVR_CHAIN_GATE) tb_printf(&b, "#SBATCH --signal=B:USR1@%lld\n", (long long)s->grace_s);
    if (p->kind == RLVR_CHAIN_TRAIN) {
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

int rlvr_chain_render_lib(char **out) { return rlvr_sbatch_render(tmpl_chain_lib_sh, NULL, NULL, 0, out); }

int rlvr_chain_render(const rlvr_chain *c, int i, const char *lib, char **out) {
    *out = NULL;
    const rlvr_chain_part *p = &c->parts[i];
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
    if (p->kind != RLVR_CHAIN_SFT) {
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/checkpoints", c->run_dir);
        int rc = rlvr_checkpoint_path(cand, sizeof cand, dir, p->stop_step);
        if (rc < 0) {
            kv_free(&t);
            return rc;
        }
        kv_put(&t, "CANDIDATE", cand, true);
    }
    if (p->kind == RLVR_CHAIN_TRAIN) {
        tmpl = tmpl_chain_train_sbatch;
        snprintf(num, sizeof num, "%lld", (long long)p->stop_step);
        kv_put(&t, "STOP_STEP", num, false);
        char until[48] = "";
        if (p->stop_step < c->steps) snprintf(until, sizeof until, "--until-step %lld", (long long)p->stop_step);
        kv_put(&t, "UNTIL", until, false);
        kv_put(&t, "LAUNCH", strcmp(c->slurm.launcher, "srun") == 0 ? "srun --mpi=pmix" : "", false);
    } else if (p->kind == RLVR_CHAIN_GATE) {
        tmpl = tmpl_chain_gate_sbatch;
        kv_put(&t, "POOL", c->pool, true);
        const char *b = c->slurm.baseline;
        bool named = strcmp(b, "sft") == 0 || strcmp(b, "promoted") == 0;
        kv_put(&t, "BASELINE_MODE", named ? b : "path", false);
        char abs[PATH_MAX];
        kv_put(&t, "BASELINE", named ? "" : (realpath(b, abs) ? abs : b), true);
    }
    int rc = t.rc;
    if (rc == 0) rc = rlvr_sbatch_render(tmpl, t.keys, (const char *const *)t.values, t.n, out);
    if (rc < 0) rc = rlvr_error_wrap(rc, "rendering %s", p->name);
    kv_free(&t);
    return rc;
}

/* ---- submitting --------------------------------------------------------------- */

static int write_jobs_tsv(const rlvr_chain *c) {
    size_t cap = (size_t)c->n_parts * (sizeof c->parts[0].script + 96) + 64;
    char *text = malloc(cap);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t len = 0;
    text[0] = 0;
    for (int i = 0; i < c->n_parts; i++) {
        const rlvr_chain_part *p = &c->parts[i];
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

static int submit_part(rlvr_chain *c, int i, const char *lib, bool dry_run) {
    rlvr_chain_part *p = &c->parts[i];
    char *script = NULL;
    RLVR_TRY(rlvr_chain_render(c, i, lib, &script));
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
    free(p->command);
    return rlvr_sbatch_submit(p->script, args, dep[0] ? 2 : 0, dry_run, p->id, sizeof p->id, &p->command);
}

int rlvr_chain_submit(rlvr_chain *c, bool dry_run, rlvr_chain_on_part on_part, void *arg, int *submitted) {
    *submitted = 0;
    rlvr_chain_job *old = NULL;
    size_t n_old = 0;
    int rc = rlvr_chain_read_jobs(c->run_dir, &old, &n_old);
    if (rc == RLVR_ENOTFOUND) rc = 0;
    RLVR_TRY(rc);
    char *lib = NULL;
    rc = rlvr_chain_render_lib(&lib);
    for (int i = 0; rc == 0 && i < c->n_parts; i++) {
        rlvr_chain_part *p = &c->parts[i];
        char marker[PATH_MAX + 64];
        rc = rlvr_chain_marker_path(marker, sizeof marker, c->run_dir, p->name, "done");
        if (rc < 0) break;
        if (access(marker, F_OK) == 0) {
            p->finished = true;
            previous_id(old, n_old, p->name, p->id, sizeof p->id);
            snprintf(p->script, sizeof p->script, "%s/slurm/%s.sbatch", c->run_dir, p->name);
            if (on_part) on_part(c, p, marker, arg);
            continue;
        }
        rc = submit_part(c, i, lib, dry_run);
        if (rc < 0) {
            rc = rlvr_error_wrap(rc, "submitting %s%s", p->name,
                                 *submitted ? " (the parts before it are queued: `rlvr cancel` them, or fix the "
                                              "problem and `rlvr submit` again once they ended)"
                                            : "");
            break;
        }
        (*submitted)++;
        if (on_part) on_part(c, p, NULL, arg);
        if (!dry_run) rc = write_jobs_tsv(c); /* after each, so a failure leaves no job unrecorded */
    }
    free(lib);
    free(old);
    return rc;
}
