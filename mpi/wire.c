#include "mpi/wire.h"
#include "mpi/check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* external32 sizes are fixed by the MPI standard (MPI 3.1, section 13.5.2). */
#define EXT_I32 4
#define EXT_I64 8
#define EXT_F32 4
#define EXT_F64 8
#define HEADER_BYTES 8

static char external32[] = "external32";

/* ---- growable buffer ---------------------------------------------------- */

int rlvr_wire_buf_reserve(rlvr_wire_buf *b, size_t cap) {
    if (cap <= b->cap) return 0;
    size_t n = b->cap ? b->cap : 256;
    while (n < cap) n = n > SIZE_MAX / 2 ? cap : n * 2;
    unsigned char *d = realloc(b->data, n);
    if (!d) return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a message buffer to %zu bytes", n);
    b->data = d;
    b->cap = n;
    return 0;
}

void rlvr_wire_buf_free(rlvr_wire_buf *b) {
    if (!b) return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

const char *rlvr_msg_kind_name(rlvr_msg_kind kind) {
    switch (kind) {
    case RLVR_MSG_ANY: return "any";
    case RLVR_MSG_WORK: return "work";
    case RLVR_MSG_RECORD: return "record";
    case RLVR_MSG_VERDICT: return "verdict";
    case RLVR_MSG_CONTROL: return "control";
    default: return "unknown";
    }
}

/* ---- packing: one function per message, run twice (measure, then pack) -- */

typedef struct {
    unsigned char *buf; /* NULL while measuring */
    MPI_Aint pos, cap;
    int rc;
} packer;

static void put(packer *p, const void *src, int count, MPI_Datatype type, size_t ext_size) {
    if (p->rc || count == 0) return;
    if (!p->buf) {
        p->pos += (MPI_Aint)((size_t)count * ext_size);
        return;
    }
    int mrc = MPI_Pack_external(external32, src, count, type, p->buf, p->cap, &p->pos);
    if (mrc != MPI_SUCCESS) p->rc = rlvr_mpi_fail_at(mrc, __FILE__, __LINE__, "MPI_Pack_external");
}

static void put_u32(packer *p, uint32_t v) { put(p, &v, 1, MPI_UINT32_T, EXT_I32); }
static void put_i32(packer *p, int32_t v) { put(p, &v, 1, MPI_INT32_T, EXT_I32); }
static void put_i64(packer *p, int64_t v) { put(p, &v, 1, MPI_INT64_T, EXT_I64); }
static void put_u64(packer *p, uint64_t v) { put(p, &v, 1, MPI_UINT64_T, EXT_I64); }
static void put_f32(packer *p, float v) { put(p, &v, 1, MPI_FLOAT, EXT_F32); }
static void put_f64(packer *p, double v) { put(p, &v, 1, MPI_DOUBLE, EXT_F64); }
/* uint32 length, then the bytes (no NUL) */
static void put_str(packer *p, const char *s, size_t cap) {
    size_t n = strnlen(s, cap);
    put_u32(p, (uint32_t)n);
    put(p, s, (int)n, MPI_BYTE, 1);
}
static void put_header(packer *p, rlvr_msg_kind kind) {
    put_u32(p, RLVR_WIRE_VERSION);
    put_u32(p, (uint32_t)kind);
}

typedef void (*encode_fn)(packer *p, const void *msg, const void *extra, size_t extra_len);

/* Measures, reserves, packs; checks the two passes agree. */
static int encode(rlvr_wire_buf *out, encode_fn fn, const void *msg, const void *extra, size_t extra_len) {
    packer m = {0};
    fn(&m, msg, extra, extra_len);
    if (m.pos > INT_MAX)
        return RLVR_FAIL(RLVR_ELIMIT, "message of %lld bytes is larger than one MPI send can carry (%d bytes)",
                         (long long)m.pos, INT_MAX);
    RLVR_TRY(rlvr_wire_buf_reserve(out, (size_t)m.pos));
    packer p = {out->data, 0, m.pos, 0};
    fn(&p, msg, extra, extra_len);
    if (p.rc) return p.rc;
    if (p.pos != m.pos)
        return RLVR_FAIL(RLVR_EMPI, "MPI_Pack_external wrote %lld bytes, expected %lld (external32 sizes differ?)",
                         (long long)p.pos, (long long)m.pos);
    out->len = (size_t)p.pos;
    return 0;
}

/* ---- unpacking with bounds checks --------------------------------------- */

typedef struct {
    const unsigned char *data;
    MPI_Aint pos, len;
    const char *kind; /* "record", for messages */
} unpacker;

static int get(unpacker *u, void *dst, int32_t count, MPI_Datatype type, size_t ext_size, const char *field) {
    if (count < 0) return rlvr_error_set(RLVR_EFORMAT, "%s message: negative count %d for %s", u->kind, count, field);
    if (count == 0) return 0;
    size_t need = (size_t)count * ext_size, left = (size_t)(u->len - u->pos);
    if (need > left)
        return rlvr_error_set(RLVR_EFORMAT,
                              "%s message truncated: %s needs %zu bytes at offset %lld but only %zu remain "
                              "(message of %lld bytes)",
                              u->kind, field, need, (long long)u->pos, left, (long long)u->len);
    RLVR_MPI_CHECK(MPI_Unpack_external(external32, u->data, u->len, &u->pos, dst, count, type));
    return 0;
}

static int get_u32(unpacker *u, uint32_t *v, const char *f) { return get(u, v, 1, MPI_UINT32_T, EXT_I32, f); }
static int get_i32(unpacker *u, int32_t *v, const char *f) { return get(u, v, 1, MPI_INT32_T, EXT_I32, f); }
static int get_i64(unpacker *u, int64_t *v, const char *f) { return get(u, v, 1, MPI_INT64_T, EXT_I64, f); }
static int get_u64(unpacker *u, uint64_t *v, const char *f) { return get(u, v, 1, MPI_UINT64_T, EXT_I64, f); }
static int get_f32(unpacker *u, float *v, const char *f) { return get(u, v, 1, MPI_FLOAT, EXT_F32, f); }
static int get_f64(unpacker *u, double *v, const char *f) { return get(u, v, 1, MPI_DOUBLE, EXT_F64, f); }

/* A length-prefixed string into char[cap], NUL-terminated. */
static int get_str(unpacker *u, char *dst, size_t cap, const char *field) {
    uint32_t n;
    RLVR_TRY(get_u32(u, &n, field));
    if (n >= cap)
        return rlvr_error_set(RLVR_EFORMAT, "%s message: %s is %u bytes long, the limit is %zu", u->kind, field, n,
                              cap - 1);
    RLVR_TRY(get(u, dst, (int32_t)n, MPI_BYTE, 1, field));
    dst[n] = '\0';
    if (strlen(dst) != n)
        return rlvr_error_set(RLVR_EFORMAT, "%s message: %s contains a NUL byte", u->kind, field);
    return 0;
}

static int read_header(unpacker *u, rlvr_msg_kind *kind) {
    if (u->len < HEADER_BYTES)
        return rlvr_error_set(RLVR_EFORMAT, "message of %lld bytes is shorter than the %d-byte wire header",
                              (long long)u->len, HEADER_BYTES);
    uint32_t version, k;
    RLVR_TRY(get_u32(u, &version, "format version"));
    if (version != RLVR_WIRE_VERSION)
        return rlvr_error_set(RLVR_EFORMAT,
                              "wire message format version %u is not understood by this build (it reads version "
                              "%u): are all ranks running the same rlvr build?",
                              version, RLVR_WIRE_VERSION);
    RLVR_TRY(get_u32(u, &k, "kind"));
    if (k == RLVR_MSG_ANY || k >= RLVR_MSG_KIND_COUNT)
        return rlvr_error_set(RLVR_EFORMAT, "wire message of unknown kind %u (format version %u)", k, version);
    *kind = (rlvr_msg_kind)k;
    return 0;
}

static int open_message(unpacker *u, const void *data, size_t len, rlvr_msg_kind expected) {
    if (!data && len) return rlvr_error_set(RLVR_EINVAL, "%s message: NULL data", rlvr_msg_kind_name(expected));
    if (len > (size_t)INT_MAX)
        return rlvr_error_set(RLVR_EFORMAT, "%s message of %zu bytes is larger than any rlvr sends",
                              rlvr_msg_kind_name(expected), len);
    u->data = data;
    u->pos = 0;
    u->len = (MPI_Aint)len;
    u->kind = rlvr_msg_kind_name(expected);
    rlvr_msg_kind kind = RLVR_MSG_ANY;
    RLVR_TRY(read_header(u, &kind));
    if (kind != expected)
        return rlvr_error_set(RLVR_EFORMAT, "expected a %s message, got a %s message", rlvr_msg_kind_name(expected),
                              rlvr_msg_kind_name(kind));
    return 0;
}

static int close_message(const unpacker *u) {
    if (u->pos != u->len)
        return rlvr_error_set(RLVR_EFORMAT, "%s message has %lld unexpected bytes after its last field", u->kind,
                              (long long)(u->len - u->pos));
    return 0;
}

int rlvr_wire_peek(const void *data, size_t len, rlvr_msg_kind *kind) {
    if (!data || !kind) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_peek: NULL argument");
    unpacker u = {data, 0, len > (size_t)INT_MAX ? INT_MAX : (MPI_Aint)len, "wire"};
    return read_header(&u, kind);
}

static int check_task_id(const char *id, const char *what) {
    if (strnlen(id, RLVR_TASK_ID_CAP) >= RLVR_TASK_ID_CAP)
        return rlvr_error_set(RLVR_EINVAL, "%s: task id is not NUL-terminated within %d bytes", what,
                              RLVR_TASK_ID_CAP);
    return 0;
}

/* ---- work item ---------------------------------------------------------- */

static void pack_work(packer *p, const void *msg, const void *extra, size_t extra_len) {
    (void)extra, (void)extra_len;
    const rlvr_work_item *w = msg;
    put_header(p, RLVR_MSG_WORK);
    put_str(p, w->task_id, RLVR_TASK_ID_CAP);
    put_i64(p, w->task_index);
    put_i64(p, w->group_id);
    put_i32(p, w->group_size);
    put_i64(p, w->step);
    put_i64(p, w->policy_version);
    put_u64(p, w->seed);
    put_u32(p, w->sample_sequence);
    put_u32(p, w->capture_tools);
    put_u64(p, (uint64_t)w->fork_len);
    put(p, w->fork, (int)w->fork_len, MPI_BYTE, 1);
}

void rlvr_wire_work_clear(rlvr_work_item *w) {
    if (!w) return;
    free(w->fork);
    w->fork = NULL;
    w->fork_len = 0;
}

/* A length-prefixed byte string of the message: *at points into it. */
static int view_bytes(unpacker *u, const unsigned char **at, size_t *len, const char *field) {
    uint64_t n;
    RLVR_TRY(get_u64(u, &n, field));
    if (n > (uint64_t)(u->len - u->pos))
        return rlvr_error_set(RLVR_EFORMAT, "%s message truncated: %s of %llu bytes, %lld remain", u->kind, field,
                              (unsigned long long)n, (long long)(u->len - u->pos));
    *at = u->data + u->pos;
    *len = (size_t)n;
    u->pos += (MPI_Aint)n;
    return 0;
}

static int check_work(const rlvr_work_item *w, int code, const char *what) {
    if (w->group_size < 1)
        return rlvr_error_set(code, "%s: group size %d (task %s) must be at least 1", what, w->group_size, w->task_id);
    if (w->task_index < 0)
        return rlvr_error_set(code, "%s: negative task index %lld", what, (long long)w->task_index);
    return 0;
}

int rlvr_wire_encode_work(rlvr_wire_buf *out, const rlvr_work_item *w) {
    if (!out || !w) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_work: NULL argument");
    RLVR_TRY(check_task_id(w->task_id, "work item"));
    RLVR_TRY(check_work(w, RLVR_EINVAL, "work item"));
    if (w->fork_len > (size_t)INT_MAX || (w->fork_len && !w->fork))
        return rlvr_error_set(RLVR_EINVAL, "work item: fork of %zu bytes without data, or too large", w->fork_len);
    return encode(out, pack_work, w, NULL, 0);
}

int rlvr_wire_decode_work(rlvr_work_item *out, const void *data, size_t len) {
    if (!out) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_decode_work: NULL argument");
    memset(out, 0, sizeof *out);
    unpacker u;
    RLVR_TRY(open_message(&u, data, len, RLVR_MSG_WORK));
    RLVR_TRY(get_str(&u, out->task_id, sizeof out->task_id, "task_id"));
    RLVR_TRY(get_i64(&u, &out->task_index, "task_index"));
    RLVR_TRY(get_i64(&u, &out->group_id, "group_id"));
    RLVR_TRY(get_i32(&u, &out->group_size, "group_size"));
    RLVR_TRY(get_i64(&u, &out->step, "step"));
    RLVR_TRY(get_i64(&u, &out->policy_version, "policy_version"));
    RLVR_TRY(get_u64(&u, &out->seed, "seed"));
    RLVR_TRY(get_u32(&u, &out->sample_sequence, "sample_sequence"));
    RLVR_TRY(get_u32(&u, &out->capture_tools, "capture_tools"));
    const unsigned char *fork = NULL;
    size_t fork_len = 0;
    RLVR_TRY(view_bytes(&u, &fork, &fork_len, "fork"));
    RLVR_TRY(close_message(&u));
    RLVR_TRY(check_work(out, RLVR_EFORMAT, "work message"));
    if (fork_len > 0) {
        out->fork = malloc(fork_len);
        if (!out->fork) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a fork of %zu bytes", fork_len);
        memcpy(out->fork, fork, fork_len);
        out->fork_len = fork_len;
    }
    return 0;
}

/* ---- rollout record ----------------------------------------------------- */

typedef struct {
    const rlvr_rollout *r;
    const rlvr_wire_job_info *job;
} record_msg;

static void pack_record(packer *p, const void *msg, const void *patch, size_t patch_len) {
    const rlvr_rollout *r = ((const record_msg *)msg)->r;
    const rlvr_wire_job_info *job = ((const record_msg *)msg)->job;
    put_header(p, RLVR_MSG_RECORD);
    put_str(p, r->task_id, RLVR_TASK_ID_CAP);
    put_i64(p, r->group_id);
    put_i32(p, r->rollout_index);
    put_i64(p, r->policy_version);
    put_i64(p, r->staleness);
    put_u64(p, r->seed);
    put_u32(p, r->sample_sequence);

    put_i32(p, r->n_tokens);
    put_i32(p, r->prompt_tokens);
    put(p, r->tokens, r->n_tokens, MPI_INT32_T, EXT_I32);
    put(p, r->logprobs, r->n_tokens, MPI_FLOAT, EXT_F32);
    put(p, r->mask, r->n_tokens, MPI_BYTE, 1);
    put(p, r->entropy, r->n_tokens, MPI_FLOAT, EXT_F32);

    put_i32(p, r->n_turns);
    for (int32_t i = 0; i < r->n_turns; i++) {
        const rlvr_turn *t = &r->turns[i];
        put_i32(p, t->policy_start);
        put_i32(p, t->policy_end);
        put_i32(p, t->observation_start);
        put_i32(p, t->observation_end);
        put_str(p, t->tool_name, RLVR_TOOL_NAME_CAP);
        put_i32(p, t->exit_status);
        put_f32(p, t->duration_s);
        put(p, &t->output_truncated, 1, MPI_BYTE, 1);
        put(p, &t->call_parsed, 1, MPI_BYTE, 1);
    }

    put_i32(p, (int32_t)r->stop);
    put_i32(p, (int32_t)r->verdict);
    put_i32(p, r->verdict_reason);
    put_f32(p, r->reward.total);
    put_f32(p, r->reward.outcome);
    put_f32(p, r->reward.format);
    put_f32(p, r->reward.length_penalty);
    put_f64(p, r->timings.generate_s);
    put_f64(p, r->timings.tool_s);
    put_f64(p, r->timings.verify_s);
    put_f64(p, r->timings.queue_s);

    put_i64(p, job->task_index);
    put_i32(p, job->calls);
    put_i32(p, job->calls_parsed);
    put(p, &job->public_tests_changed, 1, MPI_BYTE, 1);
    put_i32(p, job->patch_reason);
    put_u64(p, (uint64_t)job->credit_len);
    put(p, job->credit, (int)job->credit_len, MPI_BYTE, 1);

    put_u64(p, (uint64_t)patch_len);
    put(p, patch, (int)patch_len, MPI_BYTE, 1);
}

static int check_range(int32_t start, int32_t end, int32_t n, int code, const char *what, int32_t turn,
                       const char *field) {
    if (start < 0 || end < start || end > n)
        return rlvr_error_set(code, "%s: turn %d has %s range [%d, %d) outside the record's %d tokens", what, turn,
                              field, start, end, n);
    return 0;
}

/* The consistency both ends insist on; `code` is RLVR_EINVAL for a sender's
 * bug and RLVR_EFORMAT for a bad message. */
static int check_record(const rlvr_rollout *r, int code, const char *what) {
    if (r->n_tokens < 0 || r->n_turns < 0)
        return rlvr_error_set(code, "%s: negative token or turn count (%d, %d)", what, r->n_tokens, r->n_turns);
    if (r->prompt_tokens < 0 || r->prompt_tokens > r->n_tokens)
        return rlvr_error_set(code, "%s: prompt_tokens %d outside [0, %d]", what, r->prompt_tokens, r->n_tokens);
    if (r->rollout_index < 0) return rlvr_error_set(code, "%s: negative rollout index %d", what, r->rollout_index);
    if ((unsigned)r->stop >= RLVR_STOP_COUNT)
        return rlvr_error_set(code, "%s: unknown stop reason %d", what, (int)r->stop);
    if ((unsigned)r->verdict >= RLVR_VERDICT_COUNT)
        return rlvr_error_set(code, "%s: unknown verdict %d", what, (int)r->verdict);
    for (int32_t i = 0; i < r->n_tokens; i++)
        if (r->mask[i] > RLVR_TOKEN_OBSERVATION)
            return rlvr_error_set(code, "%s: token %d has mask value %u (allowed 0..2)", what, i, r->mask[i]);
    for (int32_t i = 0; i < r->n_turns; i++) {
        const rlvr_turn *t = &r->turns[i];
        RLVR_TRY(check_range(t->policy_start, t->policy_end, r->n_tokens, code, what, i, "policy"));
        RLVR_TRY(check_range(t->observation_start, t->observation_end, r->n_tokens, code, what, i, "observation"));
    }
    return 0;
}

static int check_job_info(const rlvr_wire_job_info *j, int code, const char *what) {
    if (j->task_index < 0) return rlvr_error_set(code, "%s: negative task index %lld", what, (long long)j->task_index);
    if (j->calls < 0 || j->calls_parsed < 0 || j->calls_parsed > j->calls)
        return rlvr_error_set(code, "%s: %d tool calls of which %d parsed", what, j->calls, j->calls_parsed);
    if (j->public_tests_changed > 1)
        return rlvr_error_set(code, "%s: public_tests_changed is %u (allowed 0, 1)", what, j->public_tests_changed);
    if (j->patch_reason < 0) return rlvr_error_set(code, "%s: negative patch reason %d", what, j->patch_reason);
    return 0;
}

int rlvr_wire_encode_record(rlvr_wire_buf *out, const rlvr_rollout *r, const void *patch, size_t patch_len) {
    return rlvr_wire_encode_job_record(out, r, NULL, patch, patch_len);
}

int rlvr_wire_encode_job_record(rlvr_wire_buf *out, const rlvr_rollout *r, const rlvr_wire_job_info *job,
                                const void *patch, size_t patch_len) {
    static const rlvr_wire_job_info none = {0};
    if (!job) job = &none;
    if (!out || !r) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_record: NULL argument");
    RLVR_TRY(check_job_info(job, RLVR_EINVAL, "rollout record"));
    if (patch_len && !patch) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_record: patch is NULL");
    if (job->credit_len > (size_t)INT_MAX || (job->credit_len && !job->credit))
        return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_record: credit of %zu bytes without data, or too large",
                              job->credit_len);
    if (patch_len > (size_t)INT_MAX)
        return rlvr_error_set(RLVR_ELIMIT, "patch of %zu bytes is larger than one message can carry", patch_len);
    RLVR_TRY(check_task_id(r->task_id, "rollout record"));
    if (r->n_tokens > 0 && (!r->tokens || !r->logprobs || !r->mask || !r->entropy))
        return rlvr_error_set(RLVR_EINVAL, "rollout record: %d tokens but a token array is NULL", r->n_tokens);
    if (r->n_turns > 0 && !r->turns)
        return rlvr_error_set(RLVR_EINVAL, "rollout record: %d turns but no turn array", r->n_turns);
    for (int32_t i = 0; i < r->n_turns; i++)
        if (strnlen(r->turns[i].tool_name, RLVR_TOOL_NAME_CAP) >= RLVR_TOOL_NAME_CAP)
            return rlvr_error_set(RLVR_EINVAL, "rollout record: turn %d tool name is not NUL-terminated", i);
    RLVR_TRY(check_record(r, RLVR_EINVAL, "rollout record"));
    record_msg m = {r, job};
    return encode(out, pack_record, &m, patch, patch_len);
}

static int reserve_tokens(rlvr_rollout *r, int32_t n) {
    if (n <= r->cap_tokens && r->tokens) return 0;
    size_t cap = n > 0 ? (size_t)n : 1;
    int32_t *tokens = realloc(r->tokens, cap * sizeof *tokens);
    if (tokens) r->tokens = tokens;
    float *logprobs = realloc(r->logprobs, cap * sizeof *logprobs);
    if (logprobs) r->logprobs = logprobs;
    uint8_t *mask = realloc(r->mask, cap * sizeof *mask);
    if (mask) r->mask = mask;
    float *entropy = realloc(r->entropy, cap * sizeof *entropy);
    if (entropy) r->entropy = entropy;
    if (!tokens || !logprobs || !mask || !entropy)
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory receiving a rollout of %d tokens", n);
    r->cap_tokens = (int32_t)cap;
    return 0;
}

static int reserve_turns(rlvr_rollout *r, int32_t n) {
    if (n <= r->cap_turns && r->turns) return 0;
    size_t cap = n > 0 ? (size_t)n : 1;
    rlvr_turn *turns = realloc(r->turns, cap * sizeof *turns);
    if (!turns) return RLVR_FAIL(RLVR_ENOMEM, "out of memory receiving a rollout of %d turns", n);
    r->turns = turns;
    r->cap_turns = (int32_t)cap;
    return 0;
}

/* Smallest encoded size of one token and of one turn: counts that could not
 * fit in what is left are refused before anything is allocated. */
#define TOKEN_BYTES (EXT_I32 + EXT_F32 + 1 + EXT_F32)
#define TURN_MIN_BYTES (4 * EXT_I32 + EXT_I32 + EXT_I32 + EXT_F32 + 2)

static int check_count(const unpacker *u, int32_t n, size_t each, const char *field) {
    if (n < 0) return rlvr_error_set(RLVR_EFORMAT, "%s message: negative %s %d", u->kind, field, n);
    size_t left = (size_t)(u->len - u->pos);
    if ((size_t)n > left / each)
        return rlvr_error_set(RLVR_EFORMAT, "%s message truncated: %s = %d needs at least %zu bytes, %zu remain",
                              u->kind, field, n, (size_t)n * each, left);
    return 0;
}

static int unpack_turn(unpacker *u, rlvr_turn *t) {
    memset(t, 0, sizeof *t);
    RLVR_TRY(get_i32(u, &t->policy_start, "turn policy_start"));
    RLVR_TRY(get_i32(u, &t->policy_end, "turn policy_end"));
    RLVR_TRY(get_i32(u, &t->observation_start, "turn observation_start"));
    RLVR_TRY(get_i32(u, &t->observation_end, "turn observation_end"));
    RLVR_TRY(get_str(u, t->tool_name, sizeof t->tool_name, "turn tool_name"));
    RLVR_TRY(get_i32(u, &t->exit_status, "turn exit_status"));
    RLVR_TRY(get_f32(u, &t->duration_s, "turn duration_s"));
    RLVR_TRY(get(u, &t->output_truncated, 1, MPI_BYTE, 1, "turn output_truncated"));
    RLVR_TRY(get(u, &t->call_parsed, 1, MPI_BYTE, 1, "turn call_parsed"));
    return 0;
}

int rlvr_wire_decode_record(rlvr_rollout *r, rlvr_wire_buf *patch, const void *data, size_t len) {
    return rlvr_wire_decode_job_record(r, NULL, patch, data, len);
}

int rlvr_wire_decode_job_record(rlvr_rollout *r, rlvr_wire_job_info *job, rlvr_wire_buf *patch, const void *data,
                                size_t len) {
    if (!r) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_decode_record: NULL record");
    rlvr_wire_job_info info = {0};
    unpacker u;
    RLVR_TRY(open_message(&u, data, len, RLVR_MSG_RECORD));
    r->n_tokens = r->n_turns = 0;
    RLVR_TRY(get_str(&u, r->task_id, sizeof r->task_id, "task_id"));
    RLVR_TRY(get_i64(&u, &r->group_id, "group_id"));
    RLVR_TRY(get_i32(&u, &r->rollout_index, "rollout_index"));
    RLVR_TRY(get_i64(&u, &r->policy_version, "policy_version"));
    RLVR_TRY(get_i64(&u, &r->staleness, "staleness"));
    RLVR_TRY(get_u64(&u, &r->seed, "seed"));
    RLVR_TRY(get_u32(&u, &r->sample_sequence, "sample_sequence"));

    int32_t n, prompt;
    RLVR_TRY(get_i32(&u, &n, "n_tokens"));
    RLVR_TRY(get_i32(&u, &prompt, "prompt_tokens"));
    RLVR_TRY(check_count(&u, n, TOKEN_BYTES, "n_tokens"));
    RLVR_TRY(reserve_tokens(r, n));
    RLVR_TRY(get(&u, r->tokens, n, MPI_INT32_T, EXT_I32, "tokens"));
    RLVR_TRY(get(&u, r->logprobs, n, MPI_FLOAT, EXT_F32, "logprobs"));
    RLVR_TRY(get(&u, r->mask, n, MPI_BYTE, 1, "mask"));
    RLVR_TRY(get(&u, r->entropy, n, MPI_FLOAT, EXT_F32, "entropy"));
    r->n_tokens = n;
    r->prompt_tokens = prompt;

    int32_t turns;
    RLVR_TRY(get_i32(&u, &turns, "n_turns"));
    RLVR_TRY(check_count(&u, turns, TURN_MIN_BYTES, "n_turns"));
    RLVR_TRY(reserve_turns(r, turns));
    for (int32_t i = 0; i < turns; i++) {
        RLVR_TRY(unpack_turn(&u, &r->turns[i]));
        r->n_turns = i + 1;
    }

    int32_t stop, verdict;
    RLVR_TRY(get_i32(&u, &stop, "stop"));
    RLVR_TRY(get_i32(&u, &verdict, "verdict"));
    r->stop = (rlvr_stop_reason)stop;
    r->verdict = (rlvr_verdict)verdict;
    RLVR_TRY(get_i32(&u, &r->verdict_reason, "verdict_reason"));
    RLVR_TRY(get_f32(&u, &r->reward.total, "reward total"));
    RLVR_TRY(get_f32(&u, &r->reward.outcome, "reward outcome"));
    RLVR_TRY(get_f32(&u, &r->reward.format, "reward format"));
    RLVR_TRY(get_f32(&u, &r->reward.length_penalty, "reward length_penalty"));
    RLVR_TRY(get_f64(&u, &r->timings.generate_s, "generate_s"));
    RLVR_TRY(get_f64(&u, &r->timings.tool_s, "tool_s"));
    RLVR_TRY(get_f64(&u, &r->timings.verify_s, "verify_s"));
    RLVR_TRY(get_f64(&u, &r->timings.queue_s, "queue_s"));

    RLVR_TRY(get_i64(&u, &info.task_index, "task_index"));
    RLVR_TRY(get_i32(&u, &info.calls, "calls"));
    RLVR_TRY(get_i32(&u, &info.calls_parsed, "calls_parsed"));
    RLVR_TRY(get(&u, &info.public_tests_changed, 1, MPI_BYTE, 1, "public_tests_changed"));
    RLVR_TRY(get_i32(&u, &info.patch_reason, "patch_reason"));
    RLVR_TRY(view_bytes(&u, &info.credit, &info.credit_len, "credit"));
    RLVR_TRY(check_job_info(&info, RLVR_EFORMAT, "record message"));
    if (job) *job = info;

    uint64_t plen;
    RLVR_TRY(get_u64(&u, &plen, "patch length"));
    if (plen > (uint64_t)(u.len - u.pos))
        return rlvr_error_set(RLVR_EFORMAT, "record message truncated: patch of %llu bytes, %lld remain",
                              (unsigned long long)plen, (long long)(u.len - u.pos));
    if (patch) {
        RLVR_TRY(rlvr_wire_buf_reserve(patch, (size_t)plen + 1));
        RLVR_TRY(get(&u, patch->data, (int32_t)plen, MPI_BYTE, 1, "patch"));
        patch->data[plen] = '\0';
        patch->len = (size_t)plen;
    } else {
        u.pos += (MPI_Aint)plen;
    }
    RLVR_TRY(close_message(&u));
    return check_record(r, RLVR_EFORMAT, "record message");
}

/* ---- verdict ------------------------------------------------------------ */

static void pack_verdict(packer *p, const void *msg, const void *extra, size_t extra_len) {
    (void)extra, (void)extra_len;
    const rlvr_verdict_msg *v = msg;
    put_header(p, RLVR_MSG_VERDICT);
    put_i64(p, v->group_id);
    put_i32(p, v->rollout_index);
    put_i32(p, (int32_t)v->verdict);
    put_i32(p, v->reason);
    put_f32(p, v->outcome);
    put_f64(p, v->verify_s);
}

static int check_verdict(const rlvr_verdict_msg *v, int code, const char *what) {
    if ((unsigned)v->verdict >= RLVR_VERDICT_COUNT)
        return rlvr_error_set(code, "%s: unknown verdict %d", what, (int)v->verdict);
    if (v->rollout_index < 0) return rlvr_error_set(code, "%s: negative rollout index %d", what, v->rollout_index);
    return 0;
}

int rlvr_wire_encode_verdict(rlvr_wire_buf *out, const rlvr_verdict_msg *v) {
    if (!out || !v) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_verdict: NULL argument");
    RLVR_TRY(check_verdict(v, RLVR_EINVAL, "verdict"));
    return encode(out, pack_verdict, v, NULL, 0);
}

int rlvr_wire_decode_verdict(rlvr_verdict_msg *out, const void *data, size_t len) {
    if (!out) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_decode_verdict: NULL argument");
    memset(out, 0, sizeof *out);
    unpacker u;
    RLVR_TRY(open_message(&u, data, len, RLVR_MSG_VERDICT));
    int32_t verdict;
    RLVR_TRY(get_i64(&u, &out->group_id, "group_id"));
    RLVR_TRY(get_i32(&u, &out->rollout_index, "rollout_index"));
    RLVR_TRY(get_i32(&u, &verdict, "verdict"));
    out->verdict = (rlvr_verdict)verdict;
    RLVR_TRY(get_i32(&u, &out->reason, "reason"));
    RLVR_TRY(get_f32(&u, &out->outcome, "outcome"));
    RLVR_TRY(get_f64(&u, &out->verify_s, "verify_s"));
    RLVR_TRY(close_message(&u));
    return check_verdict(out, RLVR_EFORMAT, "verdict message");
}

/* ---- control ------------------------------------------------------------ */

static void pack_control(packer *p, const void *msg, const void *extra, size_t extra_len) {
    (void)extra, (void)extra_len;
    const rlvr_control_msg *c = msg;
    put_header(p, RLVR_MSG_CONTROL);
    put_i32(p, (int32_t)c->what);
    put_i64(p, c->step);
    put_i64(p, c->version);
}

static int check_control(const rlvr_control_msg *c, int code, const char *what) {
    if ((int)c->what < RLVR_CONTROL_STOP || (int)c->what >= RLVR_CONTROL_COUNT)
        return rlvr_error_set(code, "%s: unknown control kind %d", what, (int)c->what);
    return 0;
}

int rlvr_wire_encode_control(rlvr_wire_buf *out, const rlvr_control_msg *c) {
    if (!out || !c) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_encode_control: NULL argument");
    RLVR_TRY(check_control(c, RLVR_EINVAL, "control"));
    return encode(out, pack_control, c, NULL, 0);
}

int rlvr_wire_decode_control(rlvr_control_msg *out, const void *data, size_t len) {
    if (!out) return rlvr_error_set(RLVR_EINVAL, "rlvr_wire_decode_control: NULL argument");
    memset(out, 0, sizeof *out);
    unpacker u;
    RLVR_TRY(open_message(&u, data, len, RLVR_MSG_CONTROL));
    int32_t what;
    RLVR_TRY(get_i32(&u, &what, "what"));
    out->what = (rlvr_control_kind)what;
    RLVR_TRY(get_i64(&u, &out->step, "step"));
    RLVR_TRY(get_i64(&u, &out->version, "version"));
    RLVR_TRY(close_message(&u));
    return check_control(out, RLVR_EFORMAT, "control message");
}
