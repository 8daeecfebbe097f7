/* train/credit_wire.c — Monte-Carlo credit's bytes in WORK and RECORD
 * messages (train/credit_wire.h; layout in docs/WIRE.md "Monte-Carlo
 * credit"). */
#include "train/credit_wire.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- big-endian cursor ------------------------------------------------------------------ */

typedef struct {
    rlvr_wire_buf *b;
    int rc;
} writer;

static void put_bytes(writer *w, const void *p, size_t n) {
    if (w->rc || n == 0) return;
    w->rc = rlvr_wire_buf_reserve(w->b, w->b->len + n);
    if (w->rc) return;
    memcpy(w->b->data + w->b->len, p, n);
    w->b->len += n;
}

static void put_be(writer *w, uint64_t v, int bytes) {
    unsigned char p[8];
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put_bytes(w, p, (size_t)bytes);
}

typedef struct {
    const unsigned char *p;
    size_t len, at;
    const char *what;
} reader;

static int get_bytes(reader *r, const unsigned char **p, size_t n, const char *field) {
    if (n > r->len - r->at)
        return rlvr_error_set(RLVR_EFORMAT, "%s: %s needs %zu bytes at offset %zu, %zu remain", r->what, field, n,
                              r->at, r->len - r->at);
    *p = r->p + r->at;
    r->at += n;
    return 0;
}

static int get_be(reader *r, uint64_t *v, int bytes, const char *field) {
    const unsigned char *p = NULL;
    RLVR_TRY(get_bytes(r, &p, (size_t)bytes, field));
    *v = 0;
    for (int i = 0; i < bytes; i++) *v = *v << 8 | p[i];
    return 0;
}

/* A u64 length, then that many bytes. */
static int get_blob(reader *r, const unsigned char **p, size_t *n, const char *field) {
    uint64_t len;
    RLVR_TRY(get_be(r, &len, 8, field));
    if (len > r->len - r->at)
        return rlvr_error_set(RLVR_EFORMAT, "%s: %s claims %llu bytes, %zu remain", r->what, field,
                              (unsigned long long)len, r->len - r->at);
    *n = (size_t)len;
    return get_bytes(r, p, (size_t)len, field);
}

static int finish(const reader *r) {
    if (r->at != r->len)
        return rlvr_error_set(RLVR_EFORMAT, "%s: %zu unexpected bytes after the last field", r->what, r->len - r->at);
    return 0;
}

/* ---- the fork bytes of a WORK item ---------------------------------------------------------
 *   u32 turn, u64 length + a RECORD message of the parent cut at the branch
 *   point, u64 length + the workspace state's archive (0: pristine). */

int rlvr_credit_encode_fork(rlvr_wire_buf *out, rlvr_wire_buf *scratch, const rlvr_harness_prefix *p) {
    out->len = 0;
    if (!p || !p->record || p->turn < 1 || p->turn > p->record->n_turns || p->tokens > p->record->n_tokens)
        return RLVR_FAIL(RLVR_EINVAL, "fork bytes: a prefix inside its record needed");
    rlvr_rollout cut = *p->record; /* a view: the tokens and turns before the branch point */
    cut.n_tokens = p->tokens;
    cut.n_turns = p->turn;
    RLVR_TRY(rlvr_wire_encode_record(scratch, &cut, NULL, 0));
    size_t state_len = 0;
    const void *state = p->state ? rlvr_workspace_state_bytes(p->state, &state_len) : NULL;
    writer w = {out, 0};
    put_be(&w, (uint32_t)p->turn, 4);
    put_be(&w, scratch->len, 8);
    put_bytes(&w, scratch->data, scratch->len);
    put_be(&w, state_len, 8);
    put_bytes(&w, state, state_len);
    return w.rc;
}

void rlvr_credit_fork_start_free(rlvr_credit_fork_start *f) {
    if (!f) return;
    rlvr_rollout_free(&f->record);
    rlvr_workspace_state_free(f->state);
    memset(f, 0, sizeof *f);
}

int rlvr_credit_decode_fork(rlvr_credit_fork_start *out, const void *data, size_t len) {
    memset(out, 0, sizeof *out);
    reader r = {data, len, 0, "fork bytes of a work item"};
    uint64_t turn;
    const unsigned char *rec = NULL, *state = NULL;
    size_t rec_len = 0, state_len = 0;
    RLVR_TRY(get_be(&r, &turn, 4, "turn"));
    RLVR_TRY(get_blob(&r, &rec, &rec_len, "parent record"));
    RLVR_TRY(get_blob(&r, &state, &state_len, "workspace state"));
    RLVR_TRY(finish(&r));
    RLVR_TRY(rlvr_wire_decode_record(&out->record, NULL, rec, rec_len));
    if (turn < 1 || turn != (uint64_t)out->record.n_turns)
        return rlvr_error_set(RLVR_EFORMAT, "fork bytes: branch turn %llu, but the parent's prefix has %d turns",
                              (unsigned long long)turn, out->record.n_turns);
    if (state_len > 0) RLVR_TRY(rlvr_workspace_state_from_bytes(&out->state, state, state_len));
    out->prefix = (rlvr_harness_prefix){
        .record = &out->record, .turn = (int32_t)turn, .tokens = out->record.n_tokens, .state = out->state};
    return 0;
}

/* ---- the credit bytes of a RECORD -----------------------------------------------------------
 *   i32 prefix_policy_tokens, f64 snapshot_s (IEEE bits), u32 n_states, per
 *   state a u64 length + its archive, u32 n (0 or the record's turns), then
 *   turn_state[n] i32 and turn_changed[n] u8. */

int rlvr_credit_encode_job(rlvr_wire_buf *out, const rlvr_harness_job *job) {
    out->len = 0;
    bool captured = job->turn_state != NULL;
    if (!captured && job->prefix_policy_tokens == 0 && job->n_states == 0) return 0; /* a fork has prefix tokens */
    writer w = {out, 0};
    uint64_t bits;
    memcpy(&bits, &job->snapshot_s, sizeof bits);
    put_be(&w, (uint32_t)job->prefix_policy_tokens, 4);
    put_be(&w, bits, 8);
    put_be(&w, (uint32_t)job->n_states, 4);
    for (int32_t i = 0; i < job->n_states; i++) {
        size_t n = 0;
        const void *p = rlvr_workspace_state_bytes(job->states[i], &n);
        put_be(&w, n, 8);
        put_bytes(&w, p, n);
    }
    int32_t turns = captured ? job->record.n_turns : 0;
    put_be(&w, (uint32_t)turns, 4);
    for (int32_t t = 0; t < turns; t++) put_be(&w, (uint32_t)job->turn_state[t], 4);
    put_bytes(&w, job->turn_changed, (size_t)turns);
    return w.rc;
}

static int decode_states(rlvr_harness_job *job, reader *r) {
    uint64_t n;
    RLVR_TRY(get_be(r, &n, 4, "n_states"));
    if (n > (r->len - r->at) / 8)
        return rlvr_error_set(RLVR_EFORMAT, "%s: %llu states cannot fit in %zu bytes", r->what,
                              (unsigned long long)n, r->len - r->at);
    job->states = calloc(n ? n : 1, sizeof *job->states);
    if (!job->states) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        const unsigned char *p = NULL;
        size_t len = 0;
        RLVR_TRY(get_blob(r, &p, &len, "workspace state"));
        RLVR_TRY(rlvr_workspace_state_from_bytes(&job->states[i], p, len));
        job->n_states = (int32_t)i + 1;
    }
    return 0;
}

static int decode_turns(rlvr_harness_job *job, reader *r) {
    uint64_t n;
    RLVR_TRY(get_be(r, &n, 4, "turns"));
    if (n == 0) return 0;
    if (n != (uint64_t)job->record.n_turns)
        return rlvr_error_set(RLVR_EFORMAT, "%s: %llu captured turns for a record of %d", r->what,
                              (unsigned long long)n, job->record.n_turns);
    job->turn_state = malloc(n * sizeof *job->turn_state);
    job->turn_changed = malloc(n);
    if (!job->turn_state || !job->turn_changed) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    job->cap_turn_states = (int32_t)n;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t v;
        RLVR_TRY(get_be(r, &v, 4, "turn_state"));
        int32_t s = (int32_t)(uint32_t)v;
        if (s < RLVR_HARNESS_STATE_UNKNOWN || s >= job->n_states)
            return rlvr_error_set(RLVR_EFORMAT, "%s: turn %llu names state %d of %d", r->what, (unsigned long long)t,
                                  s, job->n_states);
        job->turn_state[t] = s;
    }
    const unsigned char *changed = NULL;
    RLVR_TRY(get_bytes(r, &changed, n, "turn_changed"));
    for (uint64_t t = 0; t < n; t++) {
        if (changed[t] > 1) return rlvr_error_set(RLVR_EFORMAT, "%s: turn_changed %u", r->what, changed[t]);
        job->turn_changed[t] = changed[t];
    }
    return 0;
}

int rlvr_credit_decode_job(rlvr_harness_job *job, const void *data, size_t len) {
    if (len == 0) return 0;
    reader r = {data, len, 0, "credit bytes of a record"};
    uint64_t ppt, bits;
    RLVR_TRY(get_be(&r, &ppt, 4, "prefix_policy_tokens"));
    RLVR_TRY(get_be(&r, &bits, 8, "snapshot_s"));
    int rc = decode_states(job, &r);
    if (rc == 0) rc = decode_turns(job, &r);
    if (rc == 0) rc = finish(&r);
    if (rc < 0) {
        rlvr_harness_job_clear_capture(job);
        return rc;
    }
    job->prefix_policy_tokens = (int32_t)(uint32_t)ppt;
    memcpy(&job->snapshot_s, &bits, sizeof bits);
    return 0;
}
