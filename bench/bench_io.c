/* bench/bench_io.c — `rlvr bench io`: what storing a run costs.
 *
 *   shard_write      rollout shard write per deflate level: create, append,
 *                    commit (Fletcher32 on every chunk, shuffle + deflate when
 *                    the level is > 0 (ISA-L's igzip at 1..3, libdeflate
 *                    at 4..9), fsync, rename, directory fsync),
 *                    against the ceiling: write(2) of the same number of
 *                    payload bytes into a new file in 1 MiB calls, fsync,
 *                    directory fsync — the same durability — in the same
 *                    run (target ratio >= 0.5); tries alternate between the
 *                    two and each reports its best of three
 *   shard_read       rlvr_shard_open (reads and checks everything) + reading
 *                    every rollout, against read(2) of the raw file
 *   checkpoint_save  model + AdamW moments, fsync + rename + `latest`,
 *                    against write(2) of the three buffers into a new file +
 *                    fsync + directory fsync
 *   checkpoint_load  into an existing model, against read(2) of those bytes
 * Both checkpoint cases report the growth of the peak resident memory while
 * they ran: weights are streamed between the model's buffers and the file
 * chunk by chunk, so it stays far below the checkpoint's size.
 * MB are uncompressed payload bytes (1e6). Files go to $TMPDIR (or /tmp). */
#include "bench/bench.h"
#include "core/error.h"
#include "core/record.h"
#include "core/rng.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "io/file.h"
#include "io/shard.h"
#include "policy/model.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_ROWS = 12, TRIES = 3 };

typedef struct {
    char kind[24];
    char config[96];
    double mb, mb_per_s, ceiling, ratio, stored_mb, rss_growth_mb;
} row;

typedef struct {
    row rows[MAX_ROWS];
    int n;
    bool quick;
} report;

static void emit(report *rep, const row *r) {
    printf("{\"bench\":\"io\",\"case\":\"%s\",\"config\":\"%s\",\"mb\":%.6g,\"mb_per_s\":%.6g,"
           "\"ceiling_mb_per_s\":%.6g,\"ratio\":%.4f,\"stored_mb\":%.6g",
           r->kind, r->config, r->mb, r->mb_per_s, r->ceiling, r->ratio, r->stored_mb);
    if (r->rss_growth_mb >= 0) printf(",\"rss_growth_mb\":%.4g", r->rss_growth_mb);
    printf(",\"quick\":%s}\n", rep->quick ? "true" : "false");
    fflush(stdout);
    if (rep->n < MAX_ROWS) rep->rows[rep->n++] = *r;
}

static double file_mb(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0;
}

static double max_rss_mb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss / 1024.0;
}

/* ---- the raw ceiling ---------------------------------------------------------- */

/* fsync the directory holding `path`, as a commit does after its rename:
 * the file's name is then as durable as its bytes. */
static int fsync_dir_of(const char *path) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening directory %s", dir);
    int rc = fsync(fd) == 0 ? 0 : rlvr_error_errno_at(__FILE__, __LINE__, "fsync directory %s", dir);
    close(fd);
    return rc;
}

/* write(2) `nbufs` buffers of n bytes one after the other, in 1 MiB calls,
 * into a new file; fsync, close, fsync the directory: seconds. */
static int raw_write_n(const char *path, const void *const *bufs, int nbufs, size_t n, double *seconds) {
    unlink(path); /* a new file, like every shard and checkpoint */
    double t0 = rlvr_now();
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", path);
    for (int i = 0; i < nbufs; i++)
        for (size_t done = 0; done < n;) {
            size_t k = n - done < (1u << 20) ? n - done : (1u << 20);
            ssize_t w = write(fd, (const char *)bufs[i] + done, k);
            if (w < 0) {
                close(fd);
                return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
            }
            done += (size_t)w;
        }
    if (fsync(fd) != 0) {
        close(fd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "fsync %s", path);
    }
    close(fd);
    RLVR_TRY(fsync_dir_of(path));
    *seconds = rlvr_now() - t0;
    return 0;
}

static int raw_write(const char *path, const void *data, size_t n, double *seconds) {
    const void *bufs[1] = {data};
    return raw_write_n(path, bufs, 1, n, seconds);
}

static int raw_write3(const char *path, const void *a, const void *b, const void *c, size_t n, double *seconds) {
    const void *bufs[3] = {a, b, c};
    return raw_write_n(path, bufs, 3, n, seconds);
}

/* read(2) that file back into the three buffers: seconds. */
static int raw_read3(const char *path, void *a, void *b, void *c, size_t n, double *seconds) {
    double t0 = rlvr_now();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", path);
    void *bufs[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        size_t done = 0;
        ssize_t k;
        while (done < n && (k = read(fd, (char *)bufs[i] + done, n - done)) > 0) done += (size_t)k;
    }
    close(fd);
    *seconds = rlvr_now() - t0;
    return 0;
}

/* read(2) the whole file into `buf` (cap bytes): seconds. */
static int raw_read(const char *path, void *buf, size_t cap, double *seconds) {
    double t0 = rlvr_now();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", path);
    size_t done = 0;
    ssize_t k;
    while (done < cap && (k = read(fd, (char *)buf + done, cap - done)) > 0) done += (size_t)k;
    close(fd);
    *seconds = rlvr_now() - t0;
    return 0;
}

/* ---- shards --------------------------------------------------------------------- */

/* A rollout like the multi-turn harness makes: a prompt, then policy turns
 * and observations; byte-level ids, smooth log-probs and entropies. */
static int make_rollout(rlvr_rollout *r, int k, int tokens) {
    rlvr_rollout_reset(r);
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 1, RLVR_RNG_TEST, 0, (uint32_t)k);
    snprintf(r->task_id, sizeof r->task_id, "bugfix-c/%05d", k / 8);
    r->group_id = k / 8;
    r->rollout_index = k % 8;
    r->policy_version = 40;
    int seg = tokens / 8;
    for (int t = 0; t < seg; t++)
        RLVR_TRY(rlvr_rollout_push_token(r, 32 + (int32_t)rlvr_rng_next_below(&s, 95), 0, 0, RLVR_TOKEN_PROMPT));
    r->prompt_tokens = seg;
    for (int u = 0; u < 4; u++) {
        rlvr_turn turn = {.policy_start = r->n_tokens, .exit_status = 0, .duration_s = 0.5f};
        for (int t = 0; t < seg; t++) {
            float lp = -(float)rlvr_rng_next_uniform(&s) * 2.0f;
            RLVR_TRY(rlvr_rollout_push_token(r, 32 + (int32_t)rlvr_rng_next_below(&s, 95), lp, -lp * 0.7f,
                                             RLVR_TOKEN_POLICY));
        }
        turn.policy_end = turn.observation_start = r->n_tokens;
        for (int t = 0; t < seg + seg / 2 && r->n_tokens < tokens; t++)
            RLVR_TRY(rlvr_rollout_push_token(r, 32 + (int32_t)rlvr_rng_next_below(&s, 95), 0, 0,
                                             RLVR_TOKEN_OBSERVATION));
        turn.observation_end = r->n_tokens;
        snprintf(turn.tool_name, sizeof turn.tool_name, "%s", u % 2 ? "run_tests" : "edit_file");
        RLVR_TRY(rlvr_rollout_push_turn(r, &turn, NULL));
    }
    r->stop = RLVR_STOP_DONE;
    r->verdict = k % 3 ? RLVR_VERDICT_FAIL : RLVR_VERDICT_PASS;
    r->reward.outcome = r->reward.total = r->verdict == RLVR_VERDICT_PASS;
    return 0;
}

static int bench_shards(report *rep, const char *dir, int n_rollouts, int tokens) {
    rlvr_rollout *rs = calloc((size_t)n_rollouts, sizeof *rs);
    if (!rs) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    for (int k = 0; k < n_rollouts && rc == 0; k++) {
        rc = rlvr_rollout_init(&rs[k], tokens, 4);
        if (rc == 0) rc = make_rollout(&rs[k], k, tokens);
    }
    static const int levels[] = {0, 1, 4};
    char path[4200], raw[4200];
    snprintf(raw, sizeof raw, "%s/raw.bin", dir);
    void *buf = NULL;
    for (size_t li = 0; li < sizeof levels / sizeof levels[0] && rc == 0; li++) {
        rlvr_shard_options opt = RLVR_SHARD_OPTIONS_INIT;
        opt.compression = levels[li];
        /* the machine is shared: shard and raw tries alternate, so both
         * see the same conditions, and each keeps its best */
        double write_s = 0, raw_s = 0;
        int64_t payload = 0;
        for (int attempt = 0; attempt < TRIES && rc == 0; attempt++) {
            if (attempt > 0) unlink(path); /* a new file, like the raw one and every step's */
            double t0 = rlvr_now();
            rlvr_shard_writer *w;
            if ((rc = rlvr_shard_create(&w, dir, (int64_t)li, 0, &opt)) < 0) break;
            for (int k = 0; k < n_rollouts && rc == 0; k++) rc = rlvr_shard_append(w, &rs[k], 0.25f);
            if (rc < 0) {
                rlvr_shard_abort(w);
                break;
            }
            if ((rc = rlvr_shard_commit(w, path, sizeof path)) < 0) break;
            double s = rlvr_now() - t0;
            if (attempt == 0 || s < write_s) write_s = s;
            if (attempt == 0) {
                /* the ceiling's bytes: as many as the shard's datasets hold */
                if ((rc = rlvr_io_verify(path, NULL, &payload)) < 0) break;
                if (!buf && !(buf = malloc((size_t)payload))) {
                    rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
                    break;
                }
                size_t off = 0;
                for (int k = 0; k < n_rollouts && off < (size_t)payload; k++) {
                    size_t n = (size_t)rs[k].n_tokens * 4;
                    if (off + n > (size_t)payload) n = (size_t)payload - off;
                    memcpy((char *)buf + off, rs[k].tokens, n);
                    off += n;
                }
                memset((char *)buf + off, 1, (size_t)payload - off);
            }
            if ((rc = raw_write(raw, buf, (size_t)payload, &s)) < 0) break;
            if (attempt == 0 || s < raw_s) raw_s = s;
        }
        if (rc < 0) break;
        double mb = (double)payload / 1e6;
        row r = {.mb = mb, .mb_per_s = mb / write_s, .ceiling = mb / raw_s, .stored_mb = file_mb(path),
                 .rss_growth_mb = -1};
        r.ratio = r.mb_per_s / r.ceiling;
        snprintf(r.kind, sizeof r.kind, "shard_write");
        snprintf(r.config, sizeof r.config, "deflate=%d rollouts=%d tokens=%d", levels[li], n_rollouts,
                 n_rollouts * tokens);
        emit(rep, &r);

        rlvr_shard_options defaults = RLVR_SHARD_OPTIONS_INIT;
        if (levels[li] == defaults.compression) {
            /* reading back the default shard */
            double t0 = rlvr_now();
            rlvr_shard *s;
            if ((rc = rlvr_shard_open(&s, path)) < 0) break;
            rlvr_rollout back;
            rc = rlvr_rollout_init(&back, tokens, 4);
            for (int64_t k = 0; k < rlvr_shard_info_of(s)->n_rollouts && rc == 0; k++)
                rc = rlvr_shard_read(s, k, &back, NULL);
            rlvr_rollout_free(&back);
            rlvr_shard_close(s);
            double read_s = rlvr_now() - t0;
            if (rc == 0) rc = raw_read(raw, buf, (size_t)payload, &raw_s);
            row q = {.mb = mb, .mb_per_s = mb / read_s, .ceiling = mb / raw_s, .stored_mb = file_mb(path),
                     .rss_growth_mb = -1};
            q.ratio = q.mb_per_s / q.ceiling;
            snprintf(q.kind, sizeof q.kind, "shard_read");
            snprintf(q.config, sizeof q.config, "deflate=%d rollouts=%d tokens=%d", levels[li], n_rollouts,
                     n_rollouts * tokens);
            if (rc == 0) emit(rep, &q);
        }
        unlink(path);
    }
    unlink(raw);
    free(buf);
    for (int k = 0; k < n_rollouts; k++) rlvr_rollout_free(&rs[k]);
    free(rs);
    return rc;
}

/* ---- checkpoints ------------------------------------------------------------------ */

static int bench_checkpoint(report *rep, const char *dir, int d, int layers) {
    rlvr_model_config c = {
        .vocab = 272, .d_model = d, .n_layers = layers, .n_heads = d / 64 > 2 ? d / 64 : 2,
        .n_kv_heads = d / 128 > 1 ? d / 128 : 1, .d_ff = 8 * d / 3 / 16 * 16 + 16, .max_seq = 1024,
        .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false, .init_seed = 1, .init_std = 0.02f,
    };
    rlvr_model *m;
    RLVR_TRY(rlvr_model_new(&m, &c));
    int rc = rlvr_model_alloc_optim_state(m);
    size_t n = rlvr_model_num_params(m);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_model_adam_m(m)[i] = rlvr_model_params(m)[i] * 0.1f;
        rlvr_model_adam_v(m)[i] = rlvr_model_params(m)[i] * rlvr_model_params(m)[i];
    }
    char ckdir[4200], path[4300] = "", raw[4200];
    snprintf(ckdir, sizeof ckdir, "%s/ckpt", dir);
    snprintf(raw, sizeof raw, "%s/raw.bin", dir);
    double mb = 3.0 * (double)n * 4.0 / 1e6;
    char config[96];
    snprintf(config, sizeof config, "d=%d L=%d params=%.2fM deflate=0", d, layers, (double)n / 1e6);

    double rss_save = max_rss_mb();
    double t0 = rlvr_now();
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = 1;
    opt.keep_last = 1;
    rlvr_checkpoint_writer *w = NULL;
    if (rc == 0) rc = rlvr_checkpoint_begin(&w, ckdir, &opt);
    if (rc == 0 && (rc = rlvr_checkpoint_put_model(w, m)) < 0) rlvr_checkpoint_abort(w);
    if (rc == 0) rc = rlvr_checkpoint_commit(w, path, sizeof path);
    double save_s = rlvr_now() - t0;
    rss_save = max_rss_mb() - rss_save;

    /* ceiling: the three buffers through write(2) into one file, fsync; then read back */
    double raw_s = 0, raw_read_s = 0;
    for (int attempt = 0; attempt < 2 && rc == 0; attempt++) { /* best of two */
        double s = 0;
        rc = raw_write3(raw, rlvr_model_params(m), rlvr_model_adam_m(m), rlvr_model_adam_v(m), n * 4, &s);
        if (attempt == 0 || s < raw_s) raw_s = s;
    }
    if (rc == 0) rc = raw_read3(raw, rlvr_model_params(m), rlvr_model_adam_m(m), rlvr_model_adam_v(m), n * 4,
                                &raw_read_s);
    unlink(raw);
    if (rc == 0) {
        row r = {.mb = mb, .mb_per_s = mb / save_s, .ceiling = mb / raw_s, .stored_mb = file_mb(path),
                 .rss_growth_mb = rss_save};
        r.ratio = r.mb_per_s / r.ceiling;
        snprintf(r.kind, sizeof r.kind, "checkpoint_save");
        snprintf(r.config, sizeof r.config, "%s", config);
        emit(rep, &r);
    }
    /* load into the existing model: the peak RSS must not grow by a copy */
    double rss0 = max_rss_mb();
    t0 = rlvr_now();
    rlvr_checkpoint *ck = NULL;
    if (rc == 0) rc = rlvr_checkpoint_open(&ck, path);
    if (rc == 0) rc = rlvr_checkpoint_read_model(ck, m);
    rlvr_checkpoint_close(ck);
    double load_s = rlvr_now() - t0;
    if (rc == 0) {
        row r = {.mb = mb, .mb_per_s = mb / load_s, .ceiling = mb / raw_read_s, .stored_mb = file_mb(path),
                 .rss_growth_mb = max_rss_mb() - rss0};
        r.ratio = r.mb_per_s / r.ceiling;
        snprintf(r.kind, sizeof r.kind, "checkpoint_load");
        snprintf(r.config, sizeof r.config, "%s", config);
        emit(rep, &r);
    }
    if (path[0]) unlink(path);
    char latest[4300];
    snprintf(latest, sizeof latest, "%s/latest", ckdir);
    unlink(latest);
    rmdir(ckdir);
    rlvr_model_free(m);
    return rc;
}

int rlvr_bench_io(const rlvr_bench_options *opt) {
    report rep = {.n = 0, .quick = opt->quick};
    const char *base = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/rlvr-bench-io-XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(dir)) return rlvr_error_errno_at(__FILE__, __LINE__, "creating a scratch directory in %s", dir);
    int rc = bench_shards(&rep, dir, opt->quick ? 64 : 512, opt->quick ? 512 : 2048);
    if (rc == 0) rc = opt->quick ? bench_checkpoint(&rep, dir, 128, 2) : bench_checkpoint(&rep, dir, 512, 4);
    rmdir(dir);
    if (rc < 0 || opt->json_only) return rc;
    printf("\n%-16s %-40s %9s %10s %12s %7s %10s\n", "case", "config", "MB", "MB/s", "ceiling MB/s", "ratio",
           "stored MB");
    for (int i = 0; i < rep.n; i++) {
        const row *r = &rep.rows[i];
        printf("%-16s %-40s %9.2f %10.1f %12.1f %7.3f %10.2f\n", r->kind, r->config, r->mb, r->mb_per_s, r->ceiling,
               r->ratio, r->stored_mb);
    }
    printf("ceiling: the same payload bytes through plain system calls, in this run (MB = uncompressed payload)\n"
           "  shard_write      create + append + commit (Fletcher32 per chunk; shuffle + deflate at deflate>0,\n"
           "                   ISA-L igzip at 1-3, libdeflate at 4-9, on every core; fsync, rename,\n"
           "                   directory fsync) vs write(2) into a new file in 1 MiB calls +\n"
           "                   fsync + directory fsync; best of %d each, tries alternating\n"
           "  shard_read       open (every chunk read and checked) + every rollout vs read(2) of the raw file\n"
           "  checkpoint_save  write, fsync, rename, directory fsync, `latest` vs write(2) of the three\n"
           "                   buffers into a new file + fsync + directory fsync\n"
           "  checkpoint_load  open + read into the model vs read(2) of those bytes\n",
           TRIES);
    return 0;
}
