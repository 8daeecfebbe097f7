/* train/run.c — configuration, run directory, pool, model and signals shared
 * by the training runtime (train/run.h). */
#include "train/run.h"
#include "core/fs.h"

#include "core/error.h"
#include "core/log.h"
#include "core/text.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "envs/gen.h"
#include "envs/check.h"
#include "envs/tools.h"
#include "io/checkpoint.h"
#include "io/manifest.h"
#include "policy/bpe.h"
#include "policy/model_config.h"
#include "train/credit.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t rlvr_run_stop_flag = 0;

int rlvr_run_path(char *out, size_t cap, const char *dir, const char *leaf) {
    int n = snprintf(out, cap, "%s/%s", dir, leaf);
    if (n < 0 || (size_t)n >= cap) return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s/%s", dir, leaf);
    return 0;
}

/* [credit] mode = mc: the fork keys' ranges (train/credit.h) and the tools
 * whose calls are snapshotted. */
static int credit_checks(rlvr_run *r) {
    const rlvr_config *cfg = r->cfg;
    const rlvr_credit_config *c = &r->rl.credit;
    if (c->forks > RLVR_CREDIT_MAX_FORKS)
        return rlvr_config_error(cfg, "credit", "forks", "%d: Monte-Carlo credit runs at most %d forks per branch point",
                                 c->forks, RLVR_CREDIT_MAX_FORKS);
    if (c->max_branch_points > RLVR_CREDIT_MAX_BRANCH_POINTS)
        return rlvr_config_error(cfg, "credit", "max_branch_points", "%d: at most %d branch points per rollout",
                                 c->max_branch_points, RLVR_CREDIT_MAX_BRANCH_POINTS);
    if (r->train.steps > RLVR_CREDIT_MAX_STEP)
        return rlvr_config_error(cfg, "train", "steps",
                                 "%lld: with [credit] mode = mc a run has at most %u steps (the forks' sampling keys)",
                                 (long long)r->train.steps, RLVR_CREDIT_MAX_STEP);
    if (rlvr_tool_mask_parse(c->state_changing_tools, &r->credit_tools) < 0)
        return rlvr_config_error(cfg, "credit", "state_changing_tools", "%s", rlvr_error_last());
    r->credit_tools &= ~(1u << RLVR_TOOL_SUBMIT); /* submit ends the episode: nothing follows it */
    return 0;
}

/* Rules between sections that no single key's range can state. */
static int cross_checks(rlvr_run *r) {
    const rlvr_config *cfg = r->cfg;
    int64_t bpe_ids = RLVR_TOKENIZER_FIRST_MERGE + r->tokenizer.merges;
    if (r->tokenizer.bpe && r->pretrained.checkpoint[0])
        return rlvr_config_error(cfg, "tokenizer", "kind",
                                 "bpe learns a tokenizer for the run's own model, and [pretrained] checkpoint brings "
                                 "the model's own: set kind = byte (it is then not used) or remove the checkpoint");
    if (r->tokenizer.bpe && r->model.vocab < bpe_ids)
        return rlvr_config_error(cfg, "model", "vocab",
                                 "%d is smaller than the %lld ids a BPE tokenizer of [tokenizer] merges = %lld may "
                                 "have (256 bytes + %d special tokens + merges): set vocab = %lld",
                                 r->model.vocab, (long long)bpe_ids, (long long)r->tokenizer.merges,
                                 RLVR_SPECIAL_COUNT, (long long)bpe_ids);
    if (r->harness.budgets.policy_tokens > r->rl.reward.max_tokens)
        return rlvr_config_error(cfg, "reward", "max_tokens",
                                 "%lld is below [harness] max_policy_tokens = %lld: a rollout the harness allows "
                                 "could not be scored; make them equal",
                                 (long long)r->rl.reward.max_tokens, (long long)r->harness.budgets.policy_tokens);
    if (r->rl.credit.mc) RLVR_TRY(credit_checks(r));
    if (r->sft.extra_demos > 0 && r->tasks.pool[0])
        return rlvr_config_error(cfg, "sft", "extra_demos",
                                 "generates more tasks of the built-in family, but [tasks] pool names a pool; "
                                 "add train tasks to that pool instead, or set extra_demos = 0");
    return 0;
}

/* [pretrained] checkpoint, opened once: the model's shape replaces
 * [model]'s (its init_seed and init_std are unused: the weights are the
 * checkpoint's) and its tokenizer becomes the run's. */
static int pretrained_read(rlvr_run *r) {
    rlvr_checkpoint *ck = NULL;
    int rc = rlvr_checkpoint_open(&ck, r->pretrained.checkpoint);
    if (rc == 0) rc = rlvr_checkpoint_model_config(ck, &r->model);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, &r->tok);
    rlvr_checkpoint_close(ck);
    if (rc < 0) return rlvr_error_wrap(rc, "[pretrained] checkpoint = %s", r->pretrained.checkpoint);
    return 0;
}

/* [template] family applied to the pretrained tokenizer, which must end up
 * with a chat format it can render. */
static int pretrained_chat(rlvr_run *r) {
    int rc = 0;
    if (strcmp(r->pretrained.family, "auto") != 0) {
        size_t len = 0;
        const char *jinja = rlvr_tokenizer_chat_template(r->tok, &len);
        rc = rlvr_tokenizer_set_chat(r->tok, r->pretrained.family, jinja, len, r->pretrained.checkpoint);
    }
    if (rc == 0 && rlvr_tokenizer_kind_of(r->tok) == RLVR_TOKENIZER_HF &&
        rlvr_tokenizer_chat(r->tok)->family == RLVR_CHAT_NATIVE)
        rc = rlvr_config_error(r->cfg, "template", "family",
                               "%s has no chat format (its tokenizer has no native special tokens): name the "
                               "family the model was tuned with, chatml, llama3 or mistral",
                               r->pretrained.checkpoint);
    return rc < 0 ? rlvr_error_wrap(rc, "[pretrained] checkpoint = %s", r->pretrained.checkpoint) : 0;
}

/* Everything after the configuration is in r->cfg: the modules' settings,
 * the cross-key rules, the tokenizer. */
static int run_settle(rlvr_run *r, const char *out_dir) {
    int rc = rlvr_io_settings_read(&r->io, r->cfg);
    if (rc == 0 && out_dir) rc = rlvr_io_settings_set_run_dir(&r->io, out_dir);
    if (rc == 0) rc = rlvr_model_config_read(&r->model, r->cfg);
    if (rc == 0) rc = rlvr_pretrained_config_read(&r->pretrained, r->cfg);
    bool pretrained = rc == 0 && r->pretrained.checkpoint[0];
    if (pretrained) rc = pretrained_read(r);
    if (rc == 0) rc = rlvr_adamw_config_read(&r->optim, r->cfg);
    if (rc == 0) rc = rlvr_sampler_config_from(&r->sampler, r->cfg);
    if (rc == 0) rc = rlvr_sampler_config_validate(r->cfg, &r->model);
    if (rc == 0) rc = rlvr_rl_config_load(&r->rl, r->cfg);
    if (rc == 0) rc = rlvr_tasks_config_read(r->cfg, &r->tasks);
    if (rc == 0) rc = rlvr_harness_options_from_config(&r->harness, r->cfg);
    if (rc == 0) rc = rlvr_enclave_settings_from_config(r->cfg, &r->enclave);
    if (rc == 0) rc = rlvr_sft_config_read(&r->sft, r->cfg);
    if (rc == 0) rc = rlvr_train_config_read(&r->train, r->cfg);
    if (rc == 0) rc = rlvr_tokenizer_config_read(&r->tokenizer, r->cfg);
    if (rc == 0) r->stop_step = r->train.steps;
    if (rc == 0) rc = cross_checks(r);
    if (rc == 0 && pretrained) rc = pretrained_chat(r);
    if (rc == 0 && !pretrained) rc = rlvr_tokenizer_new_byte(&r->tok);
    if (rc == 0) rc = rlvr_tokenizer_check_model(r->tok, &r->model);
    r->tok_pending = r->tokenizer.bpe;
    if (rc == 0) rc = rlvr_run_reload_tokenizer(r);
    r->sampler.seed = r->io.seed;
    if (rc < 0) rlvr_run_close(r);
    return rc;
}

int rlvr_run_load(rlvr_run *r, const char *config_path, const char *out_dir, const rlvr_config_key *const *schemas) {
    memset(r, 0, sizeof *r);
    RLVR_TRY(rlvr_config_load(&r->cfg, config_path, schemas));
    return run_settle(r, out_dir);
}

int rlvr_run_parse(rlvr_run *r, const char *text, const char *name, const char *out_dir,
                   const rlvr_config_key *const *schemas) {
    memset(r, 0, sizeof *r);
    RLVR_TRY(rlvr_config_parse(&r->cfg, text, name, schemas));
    return run_settle(r, out_dir);
}

void rlvr_run_close(rlvr_run *r) {
    for (int s = 0; s < RLVR_SPLIT_COUNT; s++) free(r->split_tasks[s]);
    rlvr_pool_manifest_free(r->pool_manifest);
    rlvr_task_pool_free(r->pool);
    rlvr_sandbox_host_free(r->host);
    rlvr_tokenizer_free(r->tok);
    rlvr_config_free(r->cfg);
    memset(r, 0, sizeof *r);
}

/* ---- pool validation, shared with `rlvr tasks check` ------------------------------- */

typedef struct {
    const rlvr_task_pool *pool;
    rlvr_sandbox_host *host;
    const rlvr_task_check_options *opts;
    rlvr_task_check_result *results;
    bool json;
    FILE *progress;
    pthread_mutex_t lock;
    size_t next, done;
    int error; /* first library error (negative), 0 when none */
    char error_text[1024];
} check_job;

/* One line to the caller's stream, or through core/log when it gave none. */
static void progress_line(FILE *progress, const char *line) {
    if (!progress) {
        rlvr_progress("%s", line);
        return;
    }
    fprintf(progress, "%s\n", line);
    fflush(progress);
}

static void print_result(check_job *job, size_t i) {
    const rlvr_task *t = rlvr_task_pool_get(job->pool, i);
    const rlvr_task_check_result *r = &job->results[i];
    job->done++;
    if (job->json) {
        json_t *q = json_array();
        for (size_t k = 0; k < r->quarantined.n; k++) json_array_append_new(q, json_string(r->quarantined.items[k]));
        json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:i, s:i, s:f}", "id", t->id, "status",
                              rlvr_task_check_status_name(r->status), "reason", r->reason, "quarantined", q, "runs",
                              r->runs, "probes", r->probes, "wall_s", r->wall_s);
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4)) : NULL;
        if (text) progress_line(job->progress, text);
        free(text);
        json_decref(o);
        return;
    }
    rlvr_text line = {0};
    rlvr_text_printf(&line, "[%zu/%zu] %-6s %s (%d runs, %d probes, %.1f s)", job->done,
                     rlvr_task_pool_size(job->pool), rlvr_task_check_status_name(r->status), t->id, r->runs, r->probes,
                     r->wall_s);
    if (r->reason[0]) rlvr_text_printf(&line, ": %s", r->reason);
    for (size_t k = 0; k < r->quarantined.n; k++)
        rlvr_text_printf(&line, "%s%s", k ? ", " : "; quarantined: ", r->quarantined.items[k]);
    if (line.data) progress_line(job->progress, line.data);
    rlvr_text_free(&line);
}

static void *check_worker(void *arg) {
    check_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        size_t i = job->next++;
        bool stop = job->error != 0 || i >= rlvr_task_pool_size(job->pool);
        pthread_mutex_unlock(&job->lock);
        if (stop) break;
        int rc = rlvr_task_check(&job->results[i], rlvr_task_pool_get(job->pool, i), job->host, job->opts);
        pthread_mutex_lock(&job->lock);
        if (rc < 0 && job->error == 0) {
            job->error = rc;
            snprintf(job->error_text, sizeof job->error_text, "%s", rlvr_error_last());
        }
        if (rc == 0) print_result(job, i);
        pthread_mutex_unlock(&job->lock);
    }
    return NULL;
}

static void run_workers(check_job *job, int jobs) {
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    int started = 0;
    for (int j = 0; threads && j < jobs; j++)
        if (pthread_create(&threads[j], NULL, check_worker, job) == 0) started++;
    if (started == 0) check_worker(job);
    for (int j = 0; j < started; j++) pthread_join(threads[j], NULL);
    free(threads);
}

static int pool_needs_host(const rlvr_task_pool *pool) {
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++)
        if (rlvr_task_pool_get(pool, i)->verifier == RLVR_VERIFIER_TESTS) return 1;
    return 0;
}

int rlvr_run_check_pool(const char *pool_path, const char *manifest_path, const rlvr_task_check_options *opts,
                        const rlvr_sandbox_host_options *host_options, int jobs, bool json, FILE *progress, size_t *ok,
                        size_t *total) {
    rlvr_task_pool *pool = NULL;
    rlvr_sandbox_host *host = NULL;
    RLVR_TRY(rlvr_task_pool_load(&pool, pool_path));
    size_t by_time = 0;
    int rc = rlvr_task_pools_split_check((const rlvr_task_pool *const *)&pool, 1, &by_time);
    size_t n = rlvr_task_pool_size(pool);
    if (rc == 0 && !json) {
        char line[256];
        snprintf(line, sizeof line, "split hygiene ok: %zu task%s, %zu split key%s shared by train and eval split by time",
                 n, n == 1 ? "" : "s", by_time, by_time == 1 ? "" : "s");
        progress_line(progress, line);
    }
    if (rc == 0 && pool_needs_host(pool)) rc = rlvr_sandbox_host_new(&host, host_options);
    check_job job = {.pool = pool, .host = host, .opts = opts, .json = json, .progress = progress};
    job.results = rc == 0 ? calloc(n, sizeof *job.results) : NULL;
    if (rc == 0 && !job.results) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) {
        pthread_mutex_init(&job.lock, NULL);
        run_workers(&job, jobs < 1 ? 1 : jobs > (int)n ? (int)n : jobs);
        pthread_mutex_destroy(&job.lock);
        if (job.error < 0) rc = rlvr_error_set(job.error, "%s", job.error_text);
    }
    *ok = 0, *total = n;
    if (rc == 0 && host && rlvr_sandbox_host_image_mounts(host) > 0 && progress && !json) {
        size_t with = 0;
        for (size_t i = 0; i < n; i++) with += rlvr_task_pool_get(pool, i)->environment != NULL;
        fprintf(progress, "environments: %zu task(s) ran in images; %zu image mount(s), shared by all their sandboxes\n",
                with, rlvr_sandbox_host_image_mounts(host));
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) *ok += job.results[i].status == RLVR_TASK_CHECK_OK;
        rc = rlvr_pool_manifest_write(manifest_path, pool, job.results, opts);
    }
    for (size_t i = 0; job.results && i < n; i++) rlvr_task_check_result_clear(&job.results[i]);
    free(job.results);
    rlvr_sandbox_host_free(host);
    rlvr_task_pool_free(pool);
    return rc;
}

/* ---- the run's pool ------------------------------------------------------------------ */

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Generates `n` ranges of the built-in family into dir (written to
 * dir.part first, so a killed generation is started over). */
static int generate_into(rlvr_run *r, const char *dir, const rlvr_task_gen_options *ranges, int n) {
    char part[RLVR_IO_PATH_CAP + 8];
    snprintf(part, sizeof part, "%s.part", dir);
    char cmd[2 * sizeof part];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", part);
    if (exists(part) && system(cmd) != 0) return RLVR_FAIL(RLVR_EIO, "cannot remove stale %s", part);
    RLVR_TRY(rlvr_mkdir_p(r->io.run_dir, 0755));
    for (int i = 0; i < n; i++) {
        const rlvr_task_gen_options *g = &ranges[i];
        if (g->count == 0) continue;
        size_t written = 0;
        rlvr_progress("rlvr: generating %lld %s %s tasks (difficulty %d, seed %llu)", (long long)g->count,
                      r->tasks.family, rlvr_split_name(g->split), g->difficulty, (unsigned long long)g->seed);
        RLVR_TRY(rlvr_task_gen(g, part, &written));
    }
    return rlvr_publish(part, dir, false); /* a pool of many files: renamed whole, not fsynced file by file */
}

/* What the built-in pool is generated from, split by split. */
static void pool_gen_options(const rlvr_run *r, rlvr_task_gen_options g[RLVR_SPLIT_COUNT]) {
    for (int s = 0; s < RLVR_SPLIT_COUNT; s++) rlvr_tasks_config_gen_options(&r->tasks, (rlvr_split)s, &g[s]);
    if (!r->sft.pool_demos) g[RLVR_SPLIT_TRAIN].first += r->sft.extra_demos; /* after the demonstration tasks */
}

/* The three splits of the built-in family into <run_dir>/pool. */
static int build_pool(rlvr_run *r, const char *pool_dir) {
    rlvr_task_gen_options g[RLVR_SPLIT_COUNT];
    pool_gen_options(r, g);
    return generate_into(r, pool_dir, g, RLVR_SPLIT_COUNT);
}

/* A built-in pool made earlier must hold the train tasks this configuration
 * generates: a pool built before [sft] pool_demos changed would hand RL the
 * tasks SFT imitates. */
static int check_pool_layout(const rlvr_run *r) {
    rlvr_task_gen_options g[RLVR_SPLIT_COUNT];
    pool_gen_options(r, g);
    const rlvr_task_gen_options *t = &g[RLVR_SPLIT_TRAIN];
    if (t->count <= 0) return 0;
    char first[128], last[128];
    rlvr_task_gen_id(first, sizeof first, t, t->first);
    rlvr_task_gen_id(last, sizeof last, t, t->first + t->count - 1);
    if (rlvr_task_pool_find(r->pool, first) && rlvr_task_pool_find(r->pool, last)) return 0;
    return RLVR_FAIL(RLVR_EFORMAT,
                     "%s lacks the train tasks %s .. %s that [tasks] and [sft] pool_demos ask for: it was built for "
                     "another configuration; remove it (and its manifest) to rebuild it",
                     r->pool_path, first, last);
}

int rlvr_run_demo_tasks(rlvr_run *r, rlvr_task_pool **out) {
    *out = NULL;
    if (r->sft.extra_demos <= 0) return 0;
    char sft[RLVR_IO_PATH_CAP], dir[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_run_path(sft, sizeof sft, r->io.run_dir, "sft"));
    RLVR_TRY(rlvr_run_path(dir, sizeof dir, sft, "demo_tasks"));
    /* other content than the pool's train tasks, still train split keys:
     * the indices after them, or before them (pool_demos = false) */
    rlvr_task_gen_options g;
    rlvr_tasks_config_gen_options(&r->tasks, RLVR_SPLIT_TRAIN, &g);
    if (r->sft.pool_demos) g.first += g.count;
    g.count = r->sft.extra_demos;
    if (!exists(dir)) {
        RLVR_TRY(rlvr_mkdir_p(sft, 0755));
        RLVR_TRY(generate_into(r, dir, &g, 1));
    }
    RLVR_TRY(rlvr_task_pool_load(out, dir));
    size_t n = rlvr_task_pool_size(*out);
    char first[128], last[128];
    rlvr_task_gen_id(first, sizeof first, &g, g.first);
    rlvr_task_gen_id(last, sizeof last, &g, g.first + g.count - 1);
    if (rlvr_task_pool_count(*out, RLVR_SPLIT_TRAIN) == n && n == (size_t)r->sft.extra_demos &&
        rlvr_task_pool_find(*out, first) && rlvr_task_pool_find(*out, last))
        return 0;
    rlvr_task_pool_free(*out);
    *out = NULL;
    return RLVR_FAIL(RLVR_EFORMAT,
                     "%s holds %zu tasks, [sft] extra_demos and pool_demos ask for %lld train tasks %s .. %s: it "
                     "was made for another configuration; remove the directory to regenerate it",
                     dir, n, (long long)r->sft.extra_demos, first, last);
}

static int check_built_pool(rlvr_run *r, const char *manifest) {
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    opts.quarantine_runs = (int)r->tasks.check_runs;
    opts.seed = r->tasks.seed;
    int jobs = r->tasks.check_jobs > 0 ? (int)r->tasks.check_jobs : rlvr_physical_cores();
    size_t ok = 0, total = 0;
    rlvr_progress("rlvr: validating the pool in enclaves (%d quarantine runs per task, %d at a time)",
                  opts.quarantine_runs, jobs);
    rlvr_sandbox_host_options ho;
    RLVR_TRY(rlvr_sandbox_host_options_from_config(r->cfg, &ho));
    RLVR_TRY(rlvr_run_check_pool(r->pool_path, manifest, &opts, &ho, jobs, false, NULL, &ok, &total));
    rlvr_progress("rlvr: %zu of %zu tasks usable; manifest %s", ok, total, manifest);
    return 0;
}

static int index_splits(rlvr_run *r) {
    size_t n = rlvr_task_pool_size(r->pool);
    for (int s = 0; s < RLVR_SPLIT_COUNT; s++) {
        r->split_tasks[s] = calloc(n ? n : 1, sizeof(int32_t));
        if (!r->split_tasks[s]) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const rlvr_task *t = rlvr_task_pool_get(r->pool, i);
        if (!rlvr_pool_manifest_usable(r->pool_manifest, t->id)) continue;
        r->split_tasks[t->split][r->n_split[t->split]++] = (int32_t)i;
    }
    return 0;
}

/* A rollout may sample as many policy tokens as its task's budget allows;
 * the reward must be able to score every one of them. */
static int check_budgets(const rlvr_run *r) {
    for (int s = 0; s < RLVR_SPLIT_COUNT; s++)
        for (int32_t i = 0; i < r->n_split[s]; i++) {
            const rlvr_task *t = rlvr_task_pool_get(r->pool, (size_t)r->split_tasks[s][i]);
            rlvr_task_budgets b;
            rlvr_task_budgets_resolve(&t->budgets, &r->harness.budgets, &b);
            if (b.policy_tokens > r->rl.reward.max_tokens)
                return rlvr_config_error(r->cfg, "reward", "max_tokens",
                                         "%lld is below the policy-token budget %lld of task %s (%s): raise it "
                                         "to the largest task budget",
                                         (long long)r->rl.reward.max_tokens, (long long)b.policy_tokens, t->id,
                                         t->source);
        }
    return 0;
}

int rlvr_run_pool(rlvr_run *r, bool may_build) {
    if (r->pool) return 0; /* loaded already (sft then train in one process) */
    char manifest[RLVR_IO_PATH_CAP + 32];
    bool built_in = !r->tasks.pool[0];
    if (built_in) RLVR_TRY(rlvr_run_path(r->pool_path, sizeof r->pool_path, r->io.run_dir, "pool"));
    else snprintf(r->pool_path, sizeof r->pool_path, "%s", r->tasks.pool);
    rlvr_pool_manifest_default_path(manifest, sizeof manifest, r->pool_path);
    if (built_in && !exists(manifest)) {
        if (!may_build)
            return RLVR_FAIL(RLVR_ENOTFOUND,
                             "%s: the run's task pool has not been built; run `rlvr sft` or `rlvr train` first",
                             r->pool_path);
        if (!exists(r->pool_path)) RLVR_TRY(build_pool(r, r->pool_path));
        RLVR_TRY(check_built_pool(r, manifest));
    }
    if (!exists(manifest))
        return RLVR_FAIL(RLVR_ENOTFOUND, "%s: pool has no manifest %s; validate it with `rlvr tasks check %s`",
                         r->pool_path, manifest, r->pool_path);
    RLVR_TRY(rlvr_task_pool_load(&r->pool, r->pool_path));
    if (built_in) RLVR_TRY(check_pool_layout(r));
    RLVR_TRY(rlvr_task_pool_check_splits(r->pool));
    RLVR_TRY(rlvr_pool_manifest_load(&r->pool_manifest, manifest, r->pool));
    RLVR_TRY(index_splits(r));
    RLVR_TRY(check_budgets(r));
    if (r->n_split[RLVR_SPLIT_TRAIN] == 0)
        return RLVR_FAIL(RLVR_EINVAL, "%s: no usable train task (see %s)", r->pool_path, manifest);
    return 0;
}

int rlvr_run_host(rlvr_run *r) {
    if (!r->host) {
        rlvr_sandbox_host_options ho;
        RLVR_TRY(rlvr_sandbox_host_options_from_config(r->cfg, &ho));
        RLVR_TRY(rlvr_sandbox_host_new(&r->host, &ho));
    }
    r->harness.host = r->host;
    return 0;
}

/* ---- the tokenizer ------------------------------------------------------------------- */

#define TOKENIZER_FORMAT "rlvr-tokenizer/1"

static int tokenizer_path(const rlvr_run *r, char *path, size_t cap) {
    return rlvr_run_path(path, cap, r->io.run_dir, "tokenizer.json");
}

static int write_tokenizer_file(const char *path, const rlvr_tokenizer *tok) {
    int32_t n = 0;
    const int32_t *m = rlvr_tokenizer_merges(tok, &n);
    json_t *merges = json_array();
    for (int32_t i = 0; merges && i < n; i++) json_array_append_new(merges, json_pack("[i, i]", m[2 * i], m[2 * i + 1]));
    json_t *o = merges ? json_pack("{s:s, s:s, s:s, s:o}", "format", TOKENIZER_FORMAT, "kind", "bpe", "pieces",
                                   RLVR_BPE_PIECES, "merges", merges)
                       : NULL;
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    int rc = text ? rlvr_write_text_atomic(path, text) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    free(text);
    json_decref(o);
    return rc;
}

int rlvr_tokenizer_file_read(const char *path, rlvr_tokenizer **out) {
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!o) return RLVR_FAIL(RLVR_EFORMAT, "%s:%d: %s", path, err.line, err.text);
    const char *format = NULL, *kind = NULL, *pieces = NULL;
    json_t *merges = NULL;
    int rc = 0;
    if (json_unpack(o, "{s:s, s:s, s:s, s:o}", "format", &format, "kind", &kind, "pieces", &pieces, "merges",
                    &merges) != 0 ||
        !json_is_array(merges))
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: not a tokenizer file (wants format, kind, pieces and merges)", path);
    else if (strcmp(format, TOKENIZER_FORMAT) != 0 || strcmp(kind, "bpe") != 0 || strcmp(pieces, RLVR_BPE_PIECES) != 0)
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: %s of kind %s with pieces %s; this rlvr reads %s, bpe, %s", path, format,
                       kind, pieces, TOKENIZER_FORMAT, RLVR_BPE_PIECES);
    size_t n = rc == 0 ? json_array_size(merges) : 0;
    int32_t *m = rc == 0 ? malloc((n ? n : 1) * 2 * sizeof *m) : NULL;
    if (rc == 0 && !m) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_int_t a, b;
        if (json_unpack(json_array_get(merges, i), "[I, I]", &a, &b) != 0 || a < 0 || b < 0 || a > INT32_MAX ||
            b > INT32_MAX)
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: merge %zu is not a pair of ids", path, i);
        else m[2 * i] = (int32_t)a, m[2 * i + 1] = (int32_t)b;
    }
    if (rc == 0) rc = rlvr_tokenizer_new_bpe(out, m, (int32_t)n);
    if (rc < 0 && rc != RLVR_ENOMEM) rc = rlvr_error_wrap(rc, "%s", path);
    free(m);
    json_decref(o);
    return rc;
}

int rlvr_run_set_tokenizer(rlvr_run *r, rlvr_tokenizer *tok, const char *from) {
    char want[64], got[64], path[RLVR_IO_PATH_CAP];
    rlvr_tokenizer_describe(r->tok, want, sizeof want);
    rlvr_tokenizer_describe(tok, got, sizeof got);
    int rc = tokenizer_path(r, path, sizeof path);
    if (rc == 0 && !r->tok_pending && !rlvr_tokenizer_equal(tok, r->tok))
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s uses the tokenizer %s, this run uses %s (%s): its ids mean other text; start "
                                     "from a checkpoint of this run, or give the run another --out",
                       from, got, want, r->tokenizer.bpe ? path : "[tokenizer] kind = byte");
    if (rc == 0 && r->tok_pending && rlvr_tokenizer_kind_of(tok) != RLVR_TOKENIZER_BPE)
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s uses the byte tokenizer, and [tokenizer] kind = bpe: set kind = byte to start "
                                     "from it",
                       from);
    if (rc == 0 && r->tok_pending) rc = rlvr_tokenizer_check_model(tok, &r->model);
    if (rc == 0 && r->tok_pending) rc = write_tokenizer_file(path, tok);
    if (rc < 0 || !r->tok_pending) {
        rlvr_tokenizer_free(tok);
        return rc;
    }
    rlvr_tokenizer_free(r->tok);
    r->tok = tok, r->tok_pending = false;
    return 0;
}

int rlvr_run_reload_tokenizer(rlvr_run *r) {
    char path[RLVR_IO_PATH_CAP];
    if (!r->tok_pending) return 0;
    RLVR_TRY(tokenizer_path(r, path, sizeof path));
    if (!exists(path)) return 0;
    rlvr_tokenizer *tok = NULL;
    RLVR_TRY(rlvr_tokenizer_file_read(path, &tok));
    int rc = rlvr_tokenizer_check_model(tok, &r->model);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        return rlvr_error_wrap(rc, "%s", path);
    }
    rlvr_tokenizer_free(r->tok);
    r->tok = tok, r->tok_pending = false;
    return 0;
}

int rlvr_run_require_tokenizer(rlvr_run *r) {
    RLVR_TRY(rlvr_run_reload_tokenizer(r));
    if (!r->tok_pending) return 0;
    char path[RLVR_IO_PATH_CAP];
    RLVR_TRY(tokenizer_path(r, path, sizeof path));
    return RLVR_FAIL(RLVR_ESTATE,
                     "[tokenizer] kind = bpe, and the run has no tokenizer yet (%s): run `rlvr sft` first, which "
                     "learns it, or set [train] init to a checkpoint that holds one",
                     path);
}

/* ---- models -------------------------------------------------------------------------- */

int rlvr_run_new_model(const rlvr_run *r, rlvr_model **out) {
    if (!r->pretrained.checkpoint[0]) return rlvr_model_new(out, &r->model);
    /* the pretrained weights (their tokenizer was checked when the run opened) */
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    int rc = rlvr_checkpoint_open(&ck, r->pretrained.checkpoint);
    if (rc == 0) rc = rlvr_model_new(&m, &r->model);
    if (rc == 0) rc = rlvr_checkpoint_read_model(ck, m);
    rlvr_checkpoint_close(ck);
    if (rc < 0) {
        rlvr_model_free(m);
        return rlvr_error_wrap(rc, "[pretrained] checkpoint = %s", r->pretrained.checkpoint);
    }
    *out = m;
    return 0;
}

int rlvr_run_load_model(rlvr_run *r, const char *checkpoint_path, bool moments, rlvr_model **out) {
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, checkpoint_path));
    rlvr_tokenizer *tok = NULL;
    int rc = rlvr_checkpoint_read_tokenizer(ck, &tok);
    if (rc == 0) rc = rlvr_run_set_tokenizer(r, tok, checkpoint_path);
    if (rc == 0) rc = rlvr_run_new_model(r, out);
    if (rc == 0) rc = rlvr_checkpoint_read_model(ck, *out);
    rlvr_checkpoint_close(ck);
    if (rc == 0 && !moments && rlvr_model_adam_m(*out)) {
        size_t n = rlvr_model_num_params(*out);
        memset(rlvr_model_adam_m(*out), 0, n * sizeof(float));
        memset(rlvr_model_adam_v(*out), 0, n * sizeof(float));
    }
    if (rc < 0) {
        rlvr_model_free(*out);
        *out = NULL;
    }
    return rc;
}

double rlvr_run_unix_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the run manifest ------------------------------------------------------------------ */

int rlvr_run_manifest_begin(const rlvr_run *r, const char *path, const int layout[3], const char *const *hosts,
                            int n_hosts, rlvr_manifest **out) {
    char pool_hash[24] = "";
    uint64_t h = 0;
    if (r->pool) {
        RLVR_TRY(rlvr_task_pool_hash(r->pool, &h));
        snprintf(pool_hash, sizeof pool_hash, "%016llx", (unsigned long long)h);
    }
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    const char *self[1] = {host};
    rlvr_manifest_options o = RLVR_MANIFEST_OPTIONS_INIT;
    o.run_name = r->io.name;
    o.config_text = rlvr_config_text(r->cfg);
    o.config_hash = rlvr_config_hash(r->cfg);
    o.seed = r->io.seed;
    o.trainer_ranks = layout[0], o.verifier_ranks = layout[1], o.rollout_ranks = layout[2];
    o.world_size = layout[0] + layout[1] + layout[2];
    o.hosts = hosts ? hosts : self;
    o.n_hosts = hosts ? n_hosts : 1;
    o.task_pool_hash = pool_hash;
    RLVR_TRY(rlvr_manifest_new(out, &o));
    int rc = rlvr_manifest_write(*out, path);
    if (rc < 0) {
        rlvr_manifest_free(*out);
        *out = NULL;
    }
    return rc;
}

int rlvr_run_manifest_end(rlvr_manifest *m, const char *path, int rc, int64_t step, int64_t version) {
    if (!m) return 0;
    const char *status = rc == 0 ? "finished" : rc == 1 ? "interrupted" : "failed";
    int w = rlvr_manifest_finish(m, status, step, version);
    if (w == 0) w = rlvr_manifest_write(m, path);
    rlvr_manifest_free(m);
    return w;
}

/* ---- signals ------------------------------------------------------------------------- */

static void on_stop_signal(int sig) { rlvr_run_stop_flag = sig; }

void rlvr_run_install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGTERM, SIGINT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

bool rlvr_run_slurm_restarted(void) {
    const char *c = getenv("SLURM_RESTART_COUNT");
    return c && atoi(c) > 0;
}
