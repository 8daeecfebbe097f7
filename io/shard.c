/* io/shard.c — rollout shards (schema: docs/FORMATS.md, "Rollout shard"). */
#include "io/shard.h"
#include "core/error.h"
#include "io/chunks.h"
#include "io/h5util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One column of a table: a 1-D dataset. str_size > 0 marks a fixed-length
 * string column of that many bytes (NUL-terminated). */
typedef struct {
    const char *name;
    rlvr_dtype dtype;
    size_t str_size;
} column_spec;

enum { TK_ID, TK_LOGPROB, TK_MASK, TK_ENTROPY, TK_N };
static const column_spec token_columns[TK_N] = {
    [TK_ID] = {"tokens/id", RLVR_DT_I32, 0},
    [TK_LOGPROB] = {"tokens/logprob", RLVR_DT_F32, 0},
    [TK_MASK] = {"tokens/mask", RLVR_DT_U8, 0},
    [TK_ENTROPY] = {"tokens/entropy", RLVR_DT_F32, 0},
};

enum {
    TU_ROLLOUT, TU_POLICY_START, TU_POLICY_END, TU_OBS_START, TU_OBS_END, TU_TOOL, TU_EXIT,
    TU_DURATION, TU_TRUNCATED, TU_PARSED, TU_N
};
static const column_spec turn_columns[TU_N] = {
    [TU_ROLLOUT] = {"turns/rollout", RLVR_DT_I32, 0},
    [TU_POLICY_START] = {"turns/policy_start", RLVR_DT_I32, 0},
    [TU_POLICY_END] = {"turns/policy_end", RLVR_DT_I32, 0},
    [TU_OBS_START] = {"turns/observation_start", RLVR_DT_I32, 0},
    [TU_OBS_END] = {"turns/observation_end", RLVR_DT_I32, 0},
    [TU_TOOL] = {"turns/tool_name", 0, RLVR_TOOL_NAME_CAP},
    [TU_EXIT] = {"turns/exit_status", RLVR_DT_I32, 0},
    [TU_DURATION] = {"turns/duration_s", RLVR_DT_F32, 0},
    [TU_TRUNCATED] = {"turns/output_truncated", RLVR_DT_U8, 0},
    [TU_PARSED] = {"turns/call_parsed", RLVR_DT_U8, 0},
};

enum {
    RO_TOKEN_OFFSET, RO_TURN_OFFSET, RO_TASK, RO_GROUP, RO_INDEX, RO_VERSION, RO_STALENESS, RO_SEED,
    RO_SEQUENCE, RO_PROMPT, RO_R_TOTAL, RO_R_OUTCOME, RO_R_FORMAT, RO_R_LENGTH, RO_ADVANTAGE, RO_VERDICT,
    RO_REASON, RO_STOP, RO_T_GEN, RO_T_TOOL, RO_T_VERIFY, RO_T_QUEUE, RO_N
};
static const column_spec rollout_columns[RO_N] = {
    [RO_TOKEN_OFFSET] = {"rollouts/token_offset", RLVR_DT_I64, 0},
    [RO_TURN_OFFSET] = {"rollouts/turn_offset", RLVR_DT_I64, 0},
    [RO_TASK] = {"rollouts/task_id", 0, RLVR_TASK_ID_CAP},
    [RO_GROUP] = {"rollouts/group_id", RLVR_DT_I64, 0},
    [RO_INDEX] = {"rollouts/index", RLVR_DT_I32, 0},
    [RO_VERSION] = {"rollouts/policy_version", RLVR_DT_I64, 0},
    [RO_STALENESS] = {"rollouts/staleness", RLVR_DT_I64, 0},
    [RO_SEED] = {"rollouts/seed", RLVR_DT_U64, 0},
    [RO_SEQUENCE] = {"rollouts/sample_sequence", RLVR_DT_U32, 0},
    [RO_PROMPT] = {"rollouts/prompt_tokens", RLVR_DT_I32, 0},
    [RO_R_TOTAL] = {"rollouts/reward_total", RLVR_DT_F32, 0},
    [RO_R_OUTCOME] = {"rollouts/reward_outcome", RLVR_DT_F32, 0},
    [RO_R_FORMAT] = {"rollouts/reward_format", RLVR_DT_F32, 0},
    [RO_R_LENGTH] = {"rollouts/reward_length_penalty", RLVR_DT_F32, 0},
    [RO_ADVANTAGE] = {"rollouts/advantage", RLVR_DT_F32, 0},
    [RO_VERDICT] = {"rollouts/verdict", RLVR_DT_U8, 0},
    [RO_REASON] = {"rollouts/verdict_reason", RLVR_DT_I32, 0},
    [RO_STOP] = {"rollouts/stop_reason", RLVR_DT_U8, 0},
    [RO_T_GEN] = {"rollouts/generate_s", RLVR_DT_F64, 0},
    [RO_T_TOOL] = {"rollouts/tool_s", RLVR_DT_F64, 0},
    [RO_T_VERIFY] = {"rollouts/verify_s", RLVR_DT_F64, 0},
    [RO_T_QUEUE] = {"rollouts/queue_s", RLVR_DT_F64, 0},
};

/* Raw bytes of full chunks queued but not yet stored beyond which the
 * appending thread helps encode them; their buffers are then reused. */
#define SHARD_BATCH_BYTES ((size_t)4 << 20)
/* With fsync on, the kernel is asked to start writing the file each time
 * this much more was stored, so the commit's fsync waits for little. */
#define SHARD_WRITEBACK_BYTES ((size_t)1 << 20)

static size_t spec_size(const column_spec *c) { return c->str_size ? c->str_size : rlvr_dtype_size(c->dtype); }

/* ---- writer ---------------------------------------------------------------- */

struct rlvr_shard_writer {
    char path[4096], part[4104];
    hid_t file;
    rlvr_shard_options opt;
    int64_t step;
    int rank;
    int64_t n_rollouts, n_tokens, n_turns;
    rlvr_h5_column tok[TK_N], turn[TU_N], roll[RO_N];
    rlvr_h5_chunk_batch *batch; /* encodes full chunks on all cores */
};

int rlvr_shard_path(char *buf, size_t cap, const char *dir, int64_t step, int rank) {
    int n = snprintf(buf, cap, "%s/step_%08lld.rank_%04d.h5", dir, (long long)step, rank);
    if (n < 0 || (size_t)n >= cap) return RLVR_FAIL(RLVR_EINVAL, "shard path in %s is too long", dir);
    return 0;
}

static int create_columns(rlvr_h5_column *cols, const column_spec *specs, int n, hid_t file, size_t chunk_rows,
                          int level) {
    for (int i = 0; i < n; i++) {
        const column_spec *s = &specs[i];
        hid_t file_type = s->str_size ? rlvr_h5_string_type(s->str_size, false) : rlvr_h5_file_type(s->dtype);
        if (file_type < 0) return RLVR_H5_FAIL("string type for %s", s->name);
        hid_t mem_type = s->str_size ? file_type : rlvr_h5_mem_type(s->dtype);
        RLVR_TRY(rlvr_h5_column_create(&cols[i], file, s->name, file_type, mem_type, s->str_size > 0,
                                       spec_size(s), chunk_rows, level));
    }
    return 0;
}

static int use_batch(rlvr_h5_column *cols, int n, rlvr_h5_chunk_batch *batch) {
    for (int i = 0; i < n; i++) RLVR_TRY(rlvr_h5_chunk_batch_attach(batch, &cols[i]));
    return 0;
}

/* Their buffers go back to the batch's pool (and on to the next shard's). */
static void close_columns(rlvr_h5_column *cols, int n, rlvr_h5_chunk_batch *batch) {
    for (int i = 0; i < n; i++) {
        if (batch) rlvr_h5_chunk_batch_detach(batch, &cols[i]);
        rlvr_h5_column_close(&cols[i]);
    }
}

static void writer_free(rlvr_shard_writer *w) {
    close_columns(w->tok, TK_N, w->batch);
    close_columns(w->turn, TU_N, w->batch);
    close_columns(w->roll, RO_N, w->batch);
    rlvr_h5_chunk_batch_free(w->batch);
    rlvr_h5_close(&w->file);
    free(w);
}

int rlvr_shard_create(rlvr_shard_writer **out, const char *dir, int64_t step, int rank,
                      const rlvr_shard_options *opt) {
    *out = NULL;
    rlvr_shard_options defaults = RLVR_SHARD_OPTIONS_INIT;
    if (!opt) opt = &defaults;
    if (opt->version != RLVR_SHARD_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_shard_options version %d, expected %d", opt->version,
                         RLVR_SHARD_OPTIONS_VERSION);
    if (opt->compression < 0 || opt->compression > 9 || opt->chunk_tokens < 1 || opt->chunk_tokens > (1 << 26))
        return RLVR_FAIL(RLVR_EINVAL, "shard options: compression %d (0..9) or chunk_tokens %lld out of range",
                         opt->compression, (long long)opt->chunk_tokens);
    if (step < 0 || rank < 0)
        return RLVR_FAIL(RLVR_EINVAL, "shard step %lld and rank %d must be >= 0", (long long)step, rank);
    RLVR_TRY(rlvr_mkdir_p(dir, 0777));
    rlvr_shard_writer *w = calloc(1, sizeof *w);
    if (!w) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    w->file = H5I_INVALID_HID;
    w->opt = *opt;
    w->step = step;
    w->rank = rank;
    int rc = rlvr_shard_path(w->path, sizeof w->path, dir, step, rank);
    if (rc == 0) {
        snprintf(w->part, sizeof w->part, "%s.part", w->path);
        rc = rlvr_h5_file_create(&w->file, w->part, false);
    }
    if (rc < 0) {
        free(w);
        return rc;
    }
    char now[32];
    rlvr_utc_now(now, sizeof now);
    int level = opt->compression;
    if ((rc = rlvr_h5_write_format(w->file, RLVR_FORMAT_SHARD, RLVR_SHARD_FORMAT_VERSION)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "step", step)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "rank", rank)) < 0 ||
        (rc = rlvr_h5_attr_put_str(w->file, "created_utc", now)) < 0 ||
        (rc = create_columns(w->tok, token_columns, TK_N, w->file, (size_t)opt->chunk_tokens, level)) < 0 ||
        (rc = create_columns(w->turn, turn_columns, TU_N, w->file, 4096, level)) < 0 ||
        (rc = create_columns(w->roll, rollout_columns, RO_N, w->file, 1024, level)) < 0)
        goto fail;
    /* full chunks are encoded on all cores and written as they are (at
     * level 0 too: the checksum is then all there is to compute) */
    if ((rc = rlvr_h5_chunk_batch_new(&w->batch, level, SHARD_BATCH_BYTES)) < 0 ||
        (rc = use_batch(w->tok, TK_N, w->batch)) < 0 || (rc = use_batch(w->turn, TU_N, w->batch)) < 0 ||
        (rc = use_batch(w->roll, RO_N, w->batch)) < 0)
        goto fail;
    if (opt->fsync) {
        /* the POSIX driver's handle is its file descriptor */
        hid_t fapl = H5Fget_access_plist(w->file);
        void *handle = NULL;
        if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(w->file, fapl, &handle) >= 0 &&
            handle)
            rlvr_h5_chunk_batch_writeback(w->batch, *(int *)handle, SHARD_WRITEBACK_BYTES);
        rlvr_h5_close(&fapl);
        H5Eclear2(H5E_DEFAULT);
    }
    int64_t zero = 0;
    if ((rc = rlvr_h5_column_push(&w->roll[RO_TOKEN_OFFSET], &zero, 1)) < 0 ||
        (rc = rlvr_h5_column_push(&w->roll[RO_TURN_OFFSET], &zero, 1)) < 0)
        goto fail;
    *out = w;
    return 0;
fail:
    rc = rlvr_error_wrap(rc, "creating shard %s", w->part);
    unlink(w->part);
    writer_free(w);
    return rc;
}

/* Checks a record before anything is written, so a refusal leaves the
 * shard as it was. */
static int check_record(const rlvr_rollout *r) {
    char who[160];
    snprintf(who, sizeof who, "rollout (task \"%.*s\", group %lld, index %d)", RLVR_TASK_ID_CAP - 1, r->task_id,
             (long long)r->group_id, r->rollout_index);
    if (memchr(r->task_id, '\0', RLVR_TASK_ID_CAP) == NULL)
        return RLVR_FAIL(RLVR_EINVAL, "%s: task_id is not NUL-terminated within %d bytes", who, RLVR_TASK_ID_CAP);
    if (r->n_tokens < 0 || r->n_turns < 0 || r->prompt_tokens < 0 || r->prompt_tokens > r->n_tokens)
        return RLVR_FAIL(RLVR_EINVAL, "%s: n_tokens %d, prompt_tokens %d, n_turns %d are inconsistent", who,
                         r->n_tokens, r->prompt_tokens, r->n_turns);
    if (r->n_tokens > 0 && (!r->tokens || !r->logprobs || !r->mask || !r->entropy))
        return RLVR_FAIL(RLVR_EINVAL, "%s: token arrays are missing", who);
    if (r->n_turns > 0 && !r->turns) return RLVR_FAIL(RLVR_EINVAL, "%s: turns are missing", who);
    for (int32_t t = 0; t < r->n_tokens; t++)
        if (r->mask[t] > RLVR_TOKEN_OBSERVATION)
            return RLVR_FAIL(RLVR_EINVAL, "%s: token %d has mask %u (0 prompt, 1 policy, 2 observation)", who, t,
                             r->mask[t]);
    for (int32_t k = 0; k < r->n_turns; k++) {
        const rlvr_turn *u = &r->turns[k];
        bool ok = 0 <= u->policy_start && u->policy_start <= u->policy_end && u->policy_end <= r->n_tokens &&
                  0 <= u->observation_start && u->observation_start <= u->observation_end &&
                  u->observation_end <= r->n_tokens;
        if (!ok)
            return RLVR_FAIL(RLVR_EINVAL, "%s: turn %d ranges [%d,%d) / [%d,%d) fall outside its %d tokens", who, k,
                             u->policy_start, u->policy_end, u->observation_start, u->observation_end,
                             r->n_tokens);
        if (memchr(u->tool_name, '\0', RLVR_TOOL_NAME_CAP) == NULL)
            return RLVR_FAIL(RLVR_EINVAL, "%s: turn %d tool_name is not NUL-terminated", who, k);
    }
    if ((unsigned)r->stop >= RLVR_STOP_COUNT || (unsigned)r->verdict >= RLVR_VERDICT_COUNT)
        return RLVR_FAIL(RLVR_EINVAL, "%s: stop reason %d or verdict %d is not a known code", who, (int)r->stop,
                         (int)r->verdict);
    return 0;
}

#define PUSH(col, value)                                                                           \
    do {                                                                                           \
        __typeof__(value) v_ = (value);                                                            \
        RLVR_TRY(rlvr_h5_column_push(&(col), &v_, 1));                                             \
    } while (0)

static int append_turn(rlvr_shard_writer *w, int32_t rollout, const rlvr_turn *u) {
    char tool[RLVR_TOOL_NAME_CAP] = {0};
    snprintf(tool, sizeof tool, "%s", u->tool_name);
    PUSH(w->turn[TU_ROLLOUT], rollout);
    PUSH(w->turn[TU_POLICY_START], u->policy_start);
    PUSH(w->turn[TU_POLICY_END], u->policy_end);
    PUSH(w->turn[TU_OBS_START], u->observation_start);
    PUSH(w->turn[TU_OBS_END], u->observation_end);
    RLVR_TRY(rlvr_h5_column_push(&w->turn[TU_TOOL], tool, 1));
    PUSH(w->turn[TU_EXIT], u->exit_status);
    PUSH(w->turn[TU_DURATION], u->duration_s);
    PUSH(w->turn[TU_TRUNCATED], u->output_truncated);
    PUSH(w->turn[TU_PARSED], u->call_parsed);
    return 0;
}

static int append_rows(rlvr_shard_writer *w, const rlvr_rollout *r, float advantage) {
    size_t n = (size_t)r->n_tokens;
    RLVR_TRY(rlvr_h5_column_push(&w->tok[TK_ID], r->tokens, n));
    RLVR_TRY(rlvr_h5_column_push(&w->tok[TK_LOGPROB], r->logprobs, n));
    RLVR_TRY(rlvr_h5_column_push(&w->tok[TK_MASK], r->mask, n));
    RLVR_TRY(rlvr_h5_column_push(&w->tok[TK_ENTROPY], r->entropy, n));
    for (int32_t k = 0; k < r->n_turns; k++) RLVR_TRY(append_turn(w, (int32_t)w->n_rollouts, &r->turns[k]));
    char task[RLVR_TASK_ID_CAP] = {0};
    snprintf(task, sizeof task, "%s", r->task_id);
    PUSH(w->roll[RO_TOKEN_OFFSET], (int64_t)(w->n_tokens + r->n_tokens));
    PUSH(w->roll[RO_TURN_OFFSET], (int64_t)(w->n_turns + r->n_turns));
    RLVR_TRY(rlvr_h5_column_push(&w->roll[RO_TASK], task, 1));
    PUSH(w->roll[RO_GROUP], r->group_id);
    PUSH(w->roll[RO_INDEX], r->rollout_index);
    PUSH(w->roll[RO_VERSION], r->policy_version);
    PUSH(w->roll[RO_STALENESS], r->staleness);
    PUSH(w->roll[RO_SEED], r->seed);
    PUSH(w->roll[RO_SEQUENCE], r->sample_sequence);
    PUSH(w->roll[RO_PROMPT], r->prompt_tokens);
    PUSH(w->roll[RO_R_TOTAL], r->reward.total);
    PUSH(w->roll[RO_R_OUTCOME], r->reward.outcome);
    PUSH(w->roll[RO_R_FORMAT], r->reward.format);
    PUSH(w->roll[RO_R_LENGTH], r->reward.length_penalty);
    PUSH(w->roll[RO_ADVANTAGE], advantage);
    PUSH(w->roll[RO_VERDICT], (uint8_t)r->verdict);
    PUSH(w->roll[RO_REASON], r->verdict_reason);
    PUSH(w->roll[RO_STOP], (uint8_t)r->stop);
    PUSH(w->roll[RO_T_GEN], r->timings.generate_s);
    PUSH(w->roll[RO_T_TOOL], r->timings.tool_s);
    PUSH(w->roll[RO_T_VERIFY], r->timings.verify_s);
    PUSH(w->roll[RO_T_QUEUE], r->timings.queue_s);
    return 0;
}

int rlvr_shard_append(rlvr_shard_writer *w, const rlvr_rollout *r, float advantage) {
    RLVR_TRY(check_record(r));
    int rc = append_rows(w, r, advantage);
    if (rc < 0) return rlvr_error_wrap(rc, "appending rollout %lld to shard %s", (long long)w->n_rollouts, w->part);
    w->n_rollouts++;
    w->n_tokens += r->n_tokens;
    w->n_turns += r->n_turns;
    return 0;
}

int64_t rlvr_shard_writer_count(const rlvr_shard_writer *w) { return w->n_rollouts; }

static int flush_columns(rlvr_h5_column *cols, int n) {
    for (int i = 0; i < n; i++) RLVR_TRY(rlvr_h5_column_flush(&cols[i]));
    return 0;
}

int rlvr_shard_commit(rlvr_shard_writer *w, char *path_out, size_t cap) {
    int rc = 0;
    if ((rc = flush_columns(w->tok, TK_N)) < 0 || (rc = flush_columns(w->turn, TU_N)) < 0 ||
        (rc = flush_columns(w->roll, RO_N)) < 0 || (rc = rlvr_h5_chunk_batch_write(w->batch)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "n_rollouts", w->n_rollouts)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "n_tokens", w->n_tokens)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "n_turns", w->n_turns)) < 0)
        goto fail;
    close_columns(w->tok, TK_N, w->batch);
    close_columns(w->turn, TU_N, w->batch);
    close_columns(w->roll, RO_N, w->batch);
    if (H5Fclose(w->file) < 0) {
        w->file = H5I_INVALID_HID;
        rc = RLVR_H5_FAIL("closing shard %s", w->part);
        goto fail;
    }
    w->file = H5I_INVALID_HID;
    if ((rc = rlvr_publish(w->part, w->path, w->opt.fsync)) < 0) {
        if (access(w->path, F_OK) == 0 && access(w->part, F_OK) != 0) { /* renamed; only the directory's fsync failed */
            writer_free(w);
            return rc;
        }
        goto fail;
    }
    if (path_out) snprintf(path_out, cap, "%s", w->path);
    writer_free(w);
    return 0;
fail:
    rc = rlvr_error_wrap(rc, "committing shard %s", w->path);
    unlink(w->part);
    writer_free(w);
    return rc;
}

void rlvr_shard_abort(rlvr_shard_writer *w) {
    if (!w) return;
    char part[sizeof w->part];
    memcpy(part, w->part, sizeof part);
    writer_free(w);
    unlink(part);
}

/* ---- reader ---------------------------------------------------------------- */

struct rlvr_shard {
    char path[4096];
    rlvr_shard_info info;
    void *tok[TK_N], *turn[TU_N], *roll[RO_N];
};

void rlvr_shard_close(rlvr_shard *s) {
    if (!s) return;
    for (int i = 0; i < TK_N; i++) free(s->tok[i]);
    for (int i = 0; i < TU_N; i++) free(s->turn[i]);
    for (int i = 0; i < RO_N; i++) free(s->roll[i]);
    free(s);
}

/* Reads a table's columns and checks each has `rows` rows (offset columns
 * one more). rows < 0: take the first column's length. */
static int read_columns(void **out, const column_spec *specs, int n, hid_t file, int64_t rows, const char *path,
                        int64_t *rows_out) {
    for (int i = 0; i < n; i++) {
        const column_spec *c = &specs[i];
        hid_t mem = c->str_size ? rlvr_h5_string_type(c->str_size, false) : rlvr_h5_mem_type(c->dtype);
        if (mem < 0) return RLVR_H5_FAIL("%s: string type for %s", path, c->name);
        if (!c->str_size) {
            hid_t dset = H5Dopen2(file, c->name, H5P_DEFAULT);
            hid_t type = dset >= 0 ? H5Dget_type(dset) : H5I_INVALID_HID;
            rlvr_dtype have = c->dtype;
            bool known = type >= 0 && rlvr_h5_dtype_of(type, &have) == 0;
            rlvr_h5_close(&type);
            rlvr_h5_close(&dset);
            H5Eclear2(H5E_DEFAULT);
            if (known && have != c->dtype)
                return rlvr_error_set(RLVR_EFORMAT, "%s: dataset /%s holds %s, expected %s", path, c->name,
                                      rlvr_dtype_name(have), rlvr_dtype_name(c->dtype));
        }
        hsize_t got = 0;
        int rc = rlvr_h5_read_column(file, c->name, mem, spec_size(c), &out[i], &got, path);
        if (c->str_size) H5Tclose(mem);
        if (rc < 0) return rc;
        bool is_offset = specs == rollout_columns && (i == RO_TOKEN_OFFSET || i == RO_TURN_OFFSET);
        int64_t expect = rows < 0 ? (int64_t)got - (is_offset ? 1 : 0) : rows;
        if (rows < 0) rows = expect;
        if ((int64_t)got != expect + (is_offset ? 1 : 0))
            return rlvr_error_set(RLVR_EFORMAT, "%s: dataset /%s has %llu rows, expected %lld", path, c->name,
                                  (unsigned long long)got, (long long)(expect + (is_offset ? 1 : 0)));
    }
    if (rows_out) *rows_out = rows;
    return 0;
}

/* Offsets start at 0, never decrease and end at the table's length; turn
 * ranges lie inside their rollout. */
static int check_consistency(const rlvr_shard *s) {
    const int64_t *to = s->roll[RO_TOKEN_OFFSET], *uo = s->roll[RO_TURN_OFFSET];
    int64_t n = s->info.n_rollouts;
    if (to[0] != 0 || uo[0] != 0 || to[n] != s->info.n_tokens || uo[n] != s->info.n_turns)
        return rlvr_error_set(RLVR_EFORMAT, "%s: offsets do not span the token and turn arrays", s->path);
    const int32_t *prompt = s->roll[RO_PROMPT], *turn_rollout = s->turn[TU_ROLLOUT];
    const uint8_t *mask = s->tok[TK_MASK], *verdict = s->roll[RO_VERDICT], *stop = s->roll[RO_STOP];
    for (int64_t i = 0; i < n; i++) {
        if (to[i + 1] < to[i] || uo[i + 1] < uo[i] || to[i + 1] - to[i] > INT32_MAX)
            return rlvr_error_set(RLVR_EFORMAT, "%s: /rollouts offsets decrease at rollout %lld", s->path,
                                  (long long)i);
        int64_t len = to[i + 1] - to[i];
        if (prompt[i] < 0 || prompt[i] > len)
            return rlvr_error_set(RLVR_EFORMAT, "%s: /rollouts/prompt_tokens[%lld] = %d is outside 0..%lld", s->path,
                                  (long long)i, prompt[i], (long long)len);
        if (verdict[i] >= RLVR_VERDICT_COUNT || stop[i] >= RLVR_STOP_COUNT)
            return rlvr_error_set(RLVR_EFORMAT, "%s: rollout %lld has an unknown verdict %u or stop reason %u",
                                  s->path, (long long)i, verdict[i], stop[i]);
        for (int64_t k = uo[i]; k < uo[i + 1]; k++) {
            const int32_t *ps = s->turn[TU_POLICY_START], *pe = s->turn[TU_POLICY_END];
            const int32_t *os = s->turn[TU_OBS_START], *oe = s->turn[TU_OBS_END];
            if (turn_rollout[k] != i || ps[k] < 0 || ps[k] > pe[k] || pe[k] > len || os[k] < 0 || os[k] > oe[k] ||
                oe[k] > len)
                return rlvr_error_set(RLVR_EFORMAT, "%s: /turns row %lld does not fit rollout %lld", s->path,
                                      (long long)k, (long long)i);
        }
    }
    for (int64_t t = 0; t < s->info.n_tokens; t++)
        if (mask[t] > RLVR_TOKEN_OBSERVATION)
            return rlvr_error_set(RLVR_EFORMAT, "%s: /tokens/mask[%lld] = %u is not 0, 1 or 2", s->path,
                                  (long long)t, mask[t]);
    return 0;
}

int rlvr_shard_open(rlvr_shard **out, const char *path) {
    *out = NULL;
    rlvr_shard *s = calloc(1, sizeof *s);
    if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    hid_t file;
    int rc = rlvr_h5_file_open(&file, path, RLVR_FORMAT_SHARD, RLVR_SHARD_FORMAT_VERSION, &s->info.format_version,
                               false);
    if (rc < 0) {
        free(s);
        return rc;
    }
    int64_t rank = 0, n_rollouts = 0;
    if ((rc = rlvr_h5_attr_get_i64(file, "step", &s->info.step, path)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(file, "rank", &rank, path)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(file, "n_rollouts", &n_rollouts, path)) < 0 ||
        (rc = rlvr_h5_attr_get_str(file, "created_utc", s->info.created_utc, sizeof s->info.created_utc, path)) < 0)
        goto done;
    s->info.rank = (int)rank;
    if ((rc = read_columns(s->roll, rollout_columns, RO_N, file, n_rollouts, path, &s->info.n_rollouts)) < 0 ||
        (rc = read_columns(s->tok, token_columns, TK_N, file, -1, path, &s->info.n_tokens)) < 0 ||
        (rc = read_columns(s->turn, turn_columns, TU_N, file, -1, path, &s->info.n_turns)) < 0 ||
        (rc = check_consistency(s)) < 0)
        goto done;
done:
    rlvr_h5_close(&file);
    if (rc < 0) {
        rlvr_shard_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

const rlvr_shard_info *rlvr_shard_info_of(const rlvr_shard *s) { return &s->info; }

#define COL(table, idx, type) ((const type *)(s->table[idx]))

int rlvr_shard_read(const rlvr_shard *s, int64_t i, rlvr_rollout *out, float *advantage) {
    if (i < 0 || i >= s->info.n_rollouts)
        return RLVR_FAIL(RLVR_EINVAL, "%s: rollout %lld does not exist (the shard holds %lld)", s->path,
                         (long long)i, (long long)s->info.n_rollouts);
    int64_t t0 = COL(roll, RO_TOKEN_OFFSET, int64_t)[i], t1 = COL(roll, RO_TOKEN_OFFSET, int64_t)[i + 1];
    int64_t u0 = COL(roll, RO_TURN_OFFSET, int64_t)[i], u1 = COL(roll, RO_TURN_OFFSET, int64_t)[i + 1];
    rlvr_rollout_reset(out);
    for (int64_t t = t0; t < t1; t++)
        RLVR_TRY(rlvr_rollout_push_token(out, COL(tok, TK_ID, int32_t)[t], COL(tok, TK_LOGPROB, float)[t],
                                         COL(tok, TK_ENTROPY, float)[t], COL(tok, TK_MASK, uint8_t)[t]));
    for (int64_t k = u0; k < u1; k++) {
        rlvr_turn u = {
            .policy_start = COL(turn, TU_POLICY_START, int32_t)[k],
            .policy_end = COL(turn, TU_POLICY_END, int32_t)[k],
            .observation_start = COL(turn, TU_OBS_START, int32_t)[k],
            .observation_end = COL(turn, TU_OBS_END, int32_t)[k],
            .exit_status = COL(turn, TU_EXIT, int32_t)[k],
            .duration_s = COL(turn, TU_DURATION, float)[k],
            .output_truncated = COL(turn, TU_TRUNCATED, uint8_t)[k],
            .call_parsed = COL(turn, TU_PARSED, uint8_t)[k],
        };
        memcpy(u.tool_name, COL(turn, TU_TOOL, char) + (size_t)k * RLVR_TOOL_NAME_CAP, RLVR_TOOL_NAME_CAP);
        u.tool_name[RLVR_TOOL_NAME_CAP - 1] = '\0';
        RLVR_TRY(rlvr_rollout_push_turn(out, &u, NULL));
    }
    memcpy(out->task_id, COL(roll, RO_TASK, char) + (size_t)i * RLVR_TASK_ID_CAP, RLVR_TASK_ID_CAP);
    out->task_id[RLVR_TASK_ID_CAP - 1] = '\0';
    out->group_id = COL(roll, RO_GROUP, int64_t)[i];
    out->rollout_index = COL(roll, RO_INDEX, int32_t)[i];
    out->policy_version = COL(roll, RO_VERSION, int64_t)[i];
    out->staleness = COL(roll, RO_STALENESS, int64_t)[i];
    out->seed = COL(roll, RO_SEED, uint64_t)[i];
    out->sample_sequence = COL(roll, RO_SEQUENCE, uint32_t)[i];
    out->prompt_tokens = COL(roll, RO_PROMPT, int32_t)[i];
    out->reward.total = COL(roll, RO_R_TOTAL, float)[i];
    out->reward.outcome = COL(roll, RO_R_OUTCOME, float)[i];
    out->reward.format = COL(roll, RO_R_FORMAT, float)[i];
    out->reward.length_penalty = COL(roll, RO_R_LENGTH, float)[i];
    out->verdict = (rlvr_verdict)COL(roll, RO_VERDICT, uint8_t)[i];
    out->verdict_reason = COL(roll, RO_REASON, int32_t)[i];
    out->stop = (rlvr_stop_reason)COL(roll, RO_STOP, uint8_t)[i];
    out->timings.generate_s = COL(roll, RO_T_GEN, double)[i];
    out->timings.tool_s = COL(roll, RO_T_TOOL, double)[i];
    out->timings.verify_s = COL(roll, RO_T_VERIFY, double)[i];
    out->timings.queue_s = COL(roll, RO_T_QUEUE, double)[i];
    if (advantage) *advantage = COL(roll, RO_ADVANTAGE, float)[i];
    return 0;
}

int rlvr_shard_list_step(const char *shard_path, int64_t step, rlvr_shard_step_files *out) {
    *out = (rlvr_shard_step_files){.lo_rank = -1, .hi_rank = -1};
    const char *slash = strrchr(shard_path, '/');
    if (!slash) snprintf(out->dir, sizeof out->dir, ".");
    else snprintf(out->dir, sizeof out->dir, "%.*s", (int)(slash == shard_path ? 1 : slash - shard_path), shard_path);
    DIR *d = opendir(out->dir);
    if (!d) return RLVR_FAIL(RLVR_EIO, "cannot list %s: %s", out->dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
        long long st = 0;
        int r = 0, end = 0;
        if (sscanf(e->d_name, "step_%lld.rank_%d.h5%n", &st, &r, &end) != 2 || end == 0 || e->d_name[end] ||
            st != step)
            continue;
        if (out->files++ == 0) out->lo_rank = out->hi_rank = r;
        out->lo_rank = r < out->lo_rank ? r : out->lo_rank;
        out->hi_rank = r > out->hi_rank ? r : out->hi_rank;
    }
    closedir(d);
    return 0;
}

int rlvr_shard_totals_of(const rlvr_shard *s, rlvr_shard_totals *out) {
    *out = (rlvr_shard_totals){0};
    const rlvr_shard_info *info = rlvr_shard_info_of(s);
    rlvr_rollout r;
    RLVR_TRY(rlvr_rollout_init(&r, 256, 8));
    double reward = 0;
    int rc = 0;
    for (int64_t i = 0; i < info->n_rollouts && rc == 0; i++) {
        if ((rc = rlvr_shard_read(s, i, &r, NULL)) < 0) break;
        out->verdicts[r.verdict]++;
        out->policy_tokens += rlvr_rollout_policy_tokens(&r);
        reward += r.reward.total;
    }
    rlvr_rollout_free(&r);
    out->mean_reward = info->n_rollouts ? reward / (double)info->n_rollouts : 0.0;
    return rc;
}
