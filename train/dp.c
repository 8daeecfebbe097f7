/* train/dp.c — the trainer communicator's protocol between the leader and
 * the other trainer ranks ([layout] trainer = T > 1; docs/WIRE.md
 * "Data-parallel trainer ranks"): not a role, the part of two roles
 * (train/leader.c, train/follower.c) that must match byte for byte.
 *
 * Per optimizer step the leader sends UPDATE to each trainer rank, then
 * broadcasts the batch, then ([shards] write) sends each rank its part as
 * whole records; every trainer rank computes the gradient of its part, the
 * gradients and the step's stats are summed in rank order, every rank steps
 * AdamW, and the replicas' weight hashes are compared. At start the
 * leader's weights, AdamW moments and KL reference are broadcast. */
#include "core/error.h"
#include "core/hash.h"
#include "mpi/check.h"
#include "mpi/reduce.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The update batch on the trainer communicator (native byte order: every
 * trainer rank runs the same binary): 11 doubles (step, the objective
 * options, n, T, 1 when per-token advantages follow), adv[n] double,
 * n_tokens[n] i32, tokens[T] i32, logprobs[T] f32, with Monte-Carlo
 * credit tok_adv[T] f32, then mask[T] u8 (last: the rest stays aligned). */
#define UPDATE_HEAD 11

static int update_reserve(rlvr_dist_dp *ps, size_t bytes) {
    if (bytes <= ps->update_cap) return 0;
    char *p = realloc(ps->update_buf, bytes);
    if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for the update batch (%zu bytes)", bytes);
    ps->update_buf = p, ps->update_cap = bytes;
    return 0;
}

static size_t update_bytes(int64_t n, int64_t T, bool tok_adv) {
    return UPDATE_HEAD * sizeof(double) + (size_t)n * (sizeof(double) + sizeof(int32_t)) +
           (size_t)T * (sizeof(int32_t) + sizeof(float) + 1 + (tok_adv ? sizeof(float) : 0));
}

int rlvr_dist_dp_encode_update(rlvr_dist_dp *ps, const rlvr_update_batch *b) {
    int64_t T = 0;
    for (int i = 0; i < b->n; i++) T += b->recs[i]->n_tokens;
    ps->update_len = update_bytes(b->n, T, b->tok_adv != NULL);
    RLVR_TRY(update_reserve(ps, ps->update_len));
    const rlvr_objective_options *o = &b->opt;
    double head[UPDATE_HEAD] = {(double)b->step, o->clip_low,      o->clip_high, o->is_cap,
                                o->kl_beta,      o->entropy_coef,  (double)o->aggregation,
                                o->normaliser,   (double)b->n,     (double)T,    b->tok_adv ? 1.0 : 0.0};
    char *p = ps->update_buf;
    memcpy(p, head, sizeof head), p += sizeof head;
    memcpy(p, b->adv, (size_t)b->n * sizeof *b->adv), p += (size_t)b->n * sizeof *b->adv;
    for (int i = 0; i < b->n; i++, p += sizeof(int32_t)) memcpy(p, &b->recs[i]->n_tokens, sizeof(int32_t));
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->tokens, len * sizeof(int32_t));
        p += len * sizeof(int32_t);
    }
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->logprobs, len * sizeof(float));
        p += len * sizeof(float);
    }
    for (int i = 0; b->tok_adv && i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->tok_adv[i], len * sizeof(float));
        p += len * sizeof(float);
    }
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->mask, len);
        p += len;
    }
    return 0;
}

void rlvr_dist_dp_view_free(rlvr_dist_dp_view *v) {
    free(v->recs), free(v->ptrs), free(v->tok_adv);
    memset(v, 0, sizeof *v);
}

int rlvr_dist_dp_decode_update(rlvr_dist_dp *ps, rlvr_dist_dp_view *v) {
    double head[UPDATE_HEAD];
    memcpy(head, ps->update_buf, sizeof head);
    int n = (int)head[8];
    int64_t T = (int64_t)head[9];
    rlvr_objective_options o = {.clip_low = head[1], .clip_high = head[2], .is_cap = head[3], .kl_beta = head[4],
                                .entropy_coef = head[5], .aggregation = (rlvr_aggregation)(int)head[6],
                                .normaliser = head[7]};
    bool has_tok_adv = head[10] != 0;
    v->recs = calloc((size_t)(n > 0 ? n : 1), sizeof *v->recs);
    v->ptrs = calloc((size_t)(n > 0 ? n : 1), sizeof *v->ptrs);
    v->tok_adv = has_tok_adv ? calloc((size_t)(n > 0 ? n : 1), sizeof *v->tok_adv) : NULL;
    if (!v->recs || !v->ptrs || (has_tok_adv && !v->tok_adv)) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    char *p = ps->update_buf + sizeof head;
    const double *adv = (const double *)(void *)p;
    p += (size_t)n * sizeof(double);
    const int32_t *len = (const int32_t *)(void *)p;
    char *tok = p + (size_t)n * sizeof(int32_t), *lp = tok + (size_t)T * sizeof(int32_t);
    char *ta = lp + (size_t)T * sizeof(float), *mask = ta + (has_tok_adv ? (size_t)T * sizeof(float) : 0);
    for (int i = 0; i < n; i++) {
        rlvr_rollout *r = &v->recs[i];
        r->n_tokens = r->cap_tokens = len[i];
        r->tokens = (int32_t *)(void *)tok, r->logprobs = (float *)(void *)lp, r->mask = (uint8_t *)mask;
        if (v->tok_adv) v->tok_adv[i] = (const float *)(void *)ta, ta += (size_t)len[i] * sizeof(float);
        tok += (size_t)len[i] * sizeof(int32_t), lp += (size_t)len[i] * sizeof(float), mask += len[i];
        v->ptrs[i] = r;
    }
    v->b = (rlvr_update_batch){
        .step = (int64_t)head[0], .opt = o, .n = n, .recs = v->ptrs, .adv = adv, .tok_adv = v->tok_adv};
    return 0;
}

/* The leader's batch to every trainer rank: size, then the bytes. */
static int bcast_update(rlvr_dist_dp *ps, bool leader) {
    dist *d = ps->d;
    uint64_t bytes = leader ? ps->update_len : 0;
    RLVR_MPI_CHECK(MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, d->roles.role_comm));
    if (!leader) RLVR_TRY(update_reserve(ps, (size_t)bytes));
    for (uint64_t at = 0; at < bytes;) { /* int counts */
        int chunk = bytes - at > (1u << 30) ? 1 << 30 : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Bcast(ps->update_buf + at, chunk, MPI_BYTE, 0, d->roles.role_comm));
        at += (uint64_t)chunk;
    }
    return 0;
}

/* [shards] write: each trainer rank writes its part of the batch to its own
 * shard, which needs what the broadcast leaves out (task, group, rewards,
 * verdict, turns, timings, seeds …). The leader sends trainer rank r its part
 * [lo_r, hi_r) as whole records, point to point on the trainer communicator:
 * a u64 byte count, then the bytes in chunks of at most 1 GiB; the bytes are,
 * per record in batch order, a u64 length and the wire record (mpi/wire.h,
 * external32, versioned). */
#define PART_TAG 7100
#define PART_CHUNK (1 << 30)

static int encode_part(rlvr_dist_dp *ps, const rlvr_update_batch *b, int lo, int hi) {
    dist *d = ps->d;
    ps->part.len = 0;
    for (int i = lo; i < hi; i++) {
        RLVR_TRY(rlvr_wire_encode_record(&d->out, b->recs[i], NULL, 0));
        uint64_t len = d->out.len;
        RLVR_TRY(rlvr_wire_buf_reserve(&ps->part, ps->part.len + sizeof len + d->out.len));
        memcpy(ps->part.data + ps->part.len, &len, sizeof len);
        memcpy(ps->part.data + ps->part.len + sizeof len, d->out.data, d->out.len);
        ps->part.len += sizeof len + d->out.len;
    }
    return 0;
}

static int send_part(rlvr_dist_dp *ps, int trainer_rank) {
    dist *d = ps->d;
    uint64_t bytes = ps->part.len;
    RLVR_MPI_CHECK(MPI_Send(&bytes, 1, MPI_UINT64_T, trainer_rank, PART_TAG, d->roles.role_comm));
    for (uint64_t at = 0; at < bytes;) {
        int chunk = bytes - at > PART_CHUNK ? PART_CHUNK : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Send(ps->part.data + at, chunk, MPI_BYTE, trainer_rank, PART_TAG, d->roles.role_comm));
        at += (uint64_t)chunk;
    }
    return 0;
}

static int send_parts(rlvr_dist_dp *ps, const rlvr_update_batch *b) {
    dist *d = ps->d;
    for (int r = 1; r < d->roles.role_size; r++) {
        int lo = 0, hi = 0;
        rlvr_update_part(b, r, d->roles.role_size, &lo, &hi);
        RLVR_TRY(encode_part(ps, b, lo, hi));
        RLVR_TRY(send_part(ps, r));
    }
    return 0;
}

/* A non-leader trainer rank: its part from the leader, decoded into
 * ps->part_recs[0 .. ps->n_part_recs). */
static int receive_part(rlvr_dist_dp *ps) {
    dist *d = ps->d;
    uint64_t bytes = 0;
    RLVR_MPI_CHECK(MPI_Recv(&bytes, 1, MPI_UINT64_T, 0, PART_TAG, d->roles.role_comm, MPI_STATUS_IGNORE));
    RLVR_TRY(rlvr_wire_buf_reserve(&ps->part, (size_t)bytes));
    for (uint64_t at = 0; at < bytes;) {
        int chunk = bytes - at > PART_CHUNK ? PART_CHUNK : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Recv(ps->part.data + at, chunk, MPI_BYTE, 0, PART_TAG, d->roles.role_comm,
                                MPI_STATUS_IGNORE));
        at += (uint64_t)chunk;
    }
    ps->part.len = (size_t)bytes;
    ps->n_part_recs = 0;
    for (size_t at = 0; at < ps->part.len;) {
        uint64_t len = 0;
        if (ps->part.len - at < sizeof len)
            return rlvr_error_set(RLVR_EFORMAT, "the leader's shard part is cut short at byte %zu of %zu", at,
                                  ps->part.len);
        memcpy(&len, ps->part.data + at, sizeof len);
        at += sizeof len;
        if (len > ps->part.len - at)
            return rlvr_error_set(RLVR_EFORMAT, "record %d of the leader's shard part claims %llu bytes, %zu are left",
                                  ps->n_part_recs, (unsigned long long)len, ps->part.len - at);
        if (ps->n_part_recs == ps->cap_part_recs) {
            int cap = ps->cap_part_recs ? 2 * ps->cap_part_recs : 64;
            rlvr_rollout *p = realloc(ps->part_recs, (size_t)cap * sizeof *p);
            if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            memset(p + ps->cap_part_recs, 0, (size_t)(cap - ps->cap_part_recs) * sizeof *p);
            ps->part_recs = p, ps->cap_part_recs = cap;
        }
        RLVR_TRY(rlvr_wire_decode_record(&ps->part_recs[ps->n_part_recs], NULL, ps->part.data + at, (size_t)len));
        ps->n_part_recs++;
        at += (size_t)len;
    }
    return 0;
}

/* rlvr_trainer_dp.share (leader): UPDATE to each trainer rank, then the
 * batch, then ([shards] write) each rank's part as whole records. */
static int dp_share(void *ctx, const rlvr_update_batch *b) {
    rlvr_dist_dp *ps = ctx;
    dist *d = ps->d;
    for (int i = 1; i < d->roles.layout.trainer; i++)
        RLVR_TRY(rlvr_dist_send_control(d, rlvr_dist_world_rank(d, RLVR_ROLE_TRAINER, i), RLVR_CONTROL_UPDATE, b->step, b->n));
    RLVR_TRY(rlvr_dist_dp_encode_update(ps, b));
    RLVR_TRY(bcast_update(ps, true));
    return d->run->io.shards ? send_parts(ps, b) : 0;
}

/* Stats summed over trainer ranks in rank order (max for the log-prob gap). */
#define DP_STATS 8

static int dp_reduce(void *ctx, rlvr_model *model, step_stats *s) {
    rlvr_dist_dp *ps = ctx;
    dist *d = ps->d;
    int P = d->roles.role_size;
    RLVR_TRY(rlvr_mpi_sum_ordered(d->roles.role_comm, rlvr_model_grads(model), rlvr_model_num_params(model), 0));
    double mine[DP_STATS] = {s->loss, s->entropy_sum, (double)s->tokens, (double)s->clipped,
                             (double)s->truncated_is, s->logprob_diff_max, s->kl_sum, s->logprob_diff_sum};
    double *all = malloc((size_t)P * DP_STATS * sizeof *all);
    if (!all) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = MPI_Allgather(mine, DP_STATS, MPI_DOUBLE, all, DP_STATS, MPI_DOUBLE, d->roles.role_comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        RLVR_MPI_CHECK(rc);
    }
    double sum[DP_STATS] = {0};
    for (int r = 0; r < P; r++)
        for (int k = 0; k < DP_STATS; k++)
            sum[k] = k == 5 ? (all[r * DP_STATS + k] > sum[k] ? all[r * DP_STATS + k] : sum[k]) : sum[k] + all[r * DP_STATS + k];
    free(all);
    s->loss = sum[0], s->entropy_sum = sum[1], s->tokens = (int64_t)sum[2], s->clipped = (int64_t)sum[3];
    s->truncated_is = (int64_t)sum[4], s->logprob_diff_max = sum[5], s->kl_sum = sum[6];
    s->logprob_diff_sum = sum[7];
    return 0;
}

/* rlvr_trainer_dp.check: every replica's weights hash to the leader's (cheap
 * next to the step: one pass over the parameters). */
static int dp_check(void *ctx, rlvr_model *model, int64_t step) {
    rlvr_dist_dp *ps = ctx;
    dist *d = ps->d;
    uint64_t mine = rlvr_fnv1a64(rlvr_model_params_read(model), rlvr_model_num_params(model) * sizeof(float));
    uint64_t *all = malloc((size_t)d->roles.role_size * sizeof *all);
    if (!all) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, d->roles.role_comm);
    int differs = 0;
    uint64_t lead_hash = all[0], other = 0;
    for (int r = 1; rc == MPI_SUCCESS && r < d->roles.role_size && !differs; r++)
        if (all[r] != all[0]) differs = r, other = all[r];
    free(all);
    if (differs)
        return rlvr_error_set(RLVR_ESTATE, "after step %lld the weights of trainer rank %d differ from the leader's "
                                           "(hash %016llx vs %016llx): the replicas diverged",
                              (long long)step, differs, (unsigned long long)other, (unsigned long long)lead_hash);
    RLVR_MPI_CHECK(rc);
    ps->replica_checks++;
    return 0;
}

void rlvr_dist_dp_set(rlvr_dist_dp *ps, rlvr_trainer *t) {
    dist *d = ps->d;
    rlvr_trainer_dp dp = {.rank = d->roles.role_rank, .size = d->roles.role_size,
                          .share = d->roles.is_leader ? dp_share : NULL, .reduce = dp_reduce, .check = dp_check,
                          .ctx = ps};
    rlvr_trainer_set_dp(t, &dp);
}

/* The leader's weights, AdamW moments and KL reference to every trainer
 * rank (after set-up: from [train] init or the checkpoint resumed). */
static int bcast_floats(rlvr_dist_dp *ps, float *buf, size_t n) {
    dist *d = ps->d;
    for (size_t at = 0; at < n;) {
        int chunk = n - at > (1u << 28) ? 1 << 28 : (int)(n - at);
        RLVR_MPI_CHECK(MPI_Bcast(buf + at, chunk, MPI_FLOAT, 0, d->roles.role_comm));
        at += (size_t)chunk;
    }
    return 0;
}

int rlvr_dist_dp_bcast_state(rlvr_dist_dp *ps, rlvr_trainer *t) {
    rlvr_model *m = rlvr_trainer_model_mut(t), *ref = rlvr_trainer_reference(t);
    size_t n = rlvr_model_num_params(m);
    RLVR_TRY(bcast_floats(ps, rlvr_model_params(m), n));
    RLVR_TRY(bcast_floats(ps, rlvr_model_adam_m(m), n));
    RLVR_TRY(bcast_floats(ps, rlvr_model_adam_v(m), n));
    if (ref) RLVR_TRY(bcast_floats(ps, rlvr_model_params(ref), rlvr_model_num_params(ref)));
    return 0;
}

/* [shards] write: this rank's part as whole records in place of the
 * broadcast's views, which hold what the gradient needs and nothing else. */
static int take_part(rlvr_dist_dp *ps, rlvr_dist_dp_view *v) {
    dist *d = ps->d;
    int lo = 0, hi = 0;
    rlvr_update_part(&v->b, d->roles.role_rank, d->roles.role_size, &lo, &hi);
    RLVR_TRY(receive_part(ps));
    if (ps->n_part_recs != hi - lo)
        return rlvr_error_set(RLVR_EFORMAT, "step %lld: the leader sent %d records for this rank's part, rollouts "
                                            "[%d, %d) of the batch",
                              (long long)v->b.step, ps->n_part_recs, lo, hi);
    for (int i = lo; i < hi; i++) {
        const rlvr_rollout *whole = &ps->part_recs[i - lo], *view = v->ptrs[i];
        if (whole->n_tokens != view->n_tokens ||
            memcmp(whole->tokens, view->tokens, (size_t)view->n_tokens * sizeof *view->tokens) != 0)
            return rlvr_error_set(RLVR_EFORMAT, "step %lld: record %d of the leader's shard part (task %s) is not "
                                                "rollout %d of the batch",
                                  (long long)v->b.step, i - lo, whole->task_id, i);
        v->ptrs[i] = whole;
    }
    return 0;
}


/* UPDATE on a non-leader trainer rank: the batch, then the step on its part. */
int rlvr_dist_dp_receive_update(rlvr_dist_dp *ps, rlvr_trainer *replica) {
    dist *d = ps->d;
    RLVR_TRY(bcast_update(ps, false));
    rlvr_dist_dp_view v = {0};
    step_stats s = {0};
    int rc = rlvr_dist_dp_decode_update(ps, &v);
    if (rc == 0 && d->run->io.shards) rc = take_part(ps, &v);
    if (rc == 0) rc = rlvr_trainer_apply(replica, &v.b, &s);
    rlvr_dist_dp_view_free(&v);
    return rc;
}

void rlvr_dist_dp_free(rlvr_dist_dp *ps) {
    free(ps->update_buf);
    rlvr_wire_buf_free(&ps->part);
    for (int i = 0; i < ps->cap_part_recs; i++) rlvr_rollout_free(&ps->part_recs[i]);
    free(ps->part_recs);
    memset(ps, 0, sizeof *ps);
}
