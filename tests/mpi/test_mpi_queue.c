/* Point-to-point queues (mpirun -np 4, layout 1/1/2): the leader hands out
 * work, rollout ranks send records to the leader and record + patch to the
 * verifier, the verifier returns verdicts, the leader stops everyone.
 * Also: timeouts, the stop flag, and the bound on sends in flight. */
#include "mpi/queue.h"
#include "mpi/roles.h"
#include "mpi_test.h"

#include <time.h>

enum { GROUPS_PER_RANK = 2, G = 3, VERIFIER = 1, TIMEOUT = 20 };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The record rollout `index` of group `group` would produce; both ends can
 * rebuild it to compare. */
static void fill_record(rlvr_rollout *r, const rlvr_work_item *w, int32_t index, int64_t version) {
    rlvr_rollout_reset(r);
    snprintf(r->task_id, sizeof r->task_id, "%s", w->task_id);
    r->group_id = w->group_id;
    r->rollout_index = index;
    r->policy_version = version;
    r->seed = w->seed;
    r->sample_sequence = w->sample_sequence + (uint32_t)index;
    int32_t n = 50 + 37 * index + (int32_t)(w->group_id % 11);
    for (int32_t i = 0; i < n; i++)
        CHECK_OK(rlvr_rollout_push_token(r, (int32_t)(w->group_id * 1000 + i), -0.5f * (float)i, 0.25f,
                                         i < 10 ? RLVR_TOKEN_PROMPT : RLVR_TOKEN_POLICY));
    r->prompt_tokens = 10;
    r->stop = RLVR_STOP_DONE;
    r->timings.generate_s = 0.001 * index;
}

/* Sends, completing earlier sends while all slots are busy. */
static int send_retry(rlvr_mpi_queue *q, int dest, rlvr_msg_kind kind, rlvr_wire_buf *buf) {
    int rc;
    while ((rc = rlvr_mpi_queue_send(q, dest, kind, buf)) == RLVR_ELIMIT)
        RLVR_TRY(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
    return rc;
}

static void run_leader(rlvr_mpi_queue *q, const rlvr_mpi_roles *roles) {
    rlvr_mpi_msg msg = {0};
    /* nothing has been sent yet: a wait times out, a stop flag interrupts */
    double t0 = now_s();
    CHECK(rlvr_mpi_queue_wait(q, MPI_ANY_SOURCE, RLVR_MSG_VERDICT, &msg, 0.05, NULL) == RLVR_ELIMIT);
    double waited = now_s() - t0;
    CHECK_MSG(waited >= 0.05 && waited < 2.0, "waited %.3f s", waited);
    volatile sig_atomic_t stop = 1;
    CHECK(rlvr_mpi_queue_wait(q, MPI_ANY_SOURCE, RLVR_MSG_ANY, &msg, -1, &stop) == RLVR_EINTERRUPTED);

    rlvr_wire_buf out = {0};
    int n_rollout = roles->layout.rollout;
    for (int r = 0; r < n_rollout; r++) {
        for (int g = 0; g < GROUPS_PER_RANK; g++) {
            rlvr_work_item w = {.task_index = r * 10 + g, .group_id = 100 + r * 10 + g, .group_size = G,
                                .step = 1, .policy_version = 5, .seed = 99, .sample_sequence = (uint32_t)(g * G)};
            snprintf(w.task_id, sizeof w.task_id, "task-%d-%d", r, g);
            CHECK_OK(rlvr_wire_encode_work(&out, &w));
            CHECK_OK(send_retry(q, rlvr_layout_world_rank(&roles->layout, RLVR_ROLE_ROLLOUT, r), RLVR_MSG_WORK,
                                &out));
            CHECK(out.len == 0);
        }
    }
    int want = n_rollout * GROUPS_PER_RANK * G;
    int records = 0, verdicts = 0, passes = 0;
    rlvr_rollout rec, expect;
    memset(&rec, 0, sizeof rec);
    CHECK_OK(rlvr_rollout_init(&expect, 16, 1));
    while (records < want || verdicts < want) {
        int rc = rlvr_mpi_queue_wait(q, MPI_ANY_SOURCE, RLVR_MSG_ANY, &msg, TIMEOUT, NULL);
        CHECK_OK(rc);
        if (rc) break;
        if (msg.kind == RLVR_MSG_RECORD) {
            CHECK_OK(rlvr_wire_decode_record(&rec, NULL, msg.body.data, msg.body.len));
            int r = (int)(rec.group_id - 100) / 10, g = (int)(rec.group_id - 100) % 10;
            CHECK(msg.source == rlvr_layout_world_rank(&roles->layout, RLVR_ROLE_ROLLOUT, r));
            rlvr_work_item w = {.group_id = rec.group_id, .seed = 99, .sample_sequence = (uint32_t)(g * G)};
            snprintf(w.task_id, sizeof w.task_id, "task-%d-%d", r, g);
            fill_record(&expect, &w, rec.rollout_index, 5);
            CHECK(rec.n_tokens == expect.n_tokens && rec.sample_sequence == expect.sample_sequence);
            CHECK(memcmp(rec.tokens, expect.tokens, (size_t)rec.n_tokens * 4) == 0);
            CHECK(strcmp(rec.task_id, expect.task_id) == 0);
            records++;
        } else if (msg.kind == RLVR_MSG_VERDICT) {
            rlvr_verdict_msg v;
            CHECK_OK(rlvr_wire_decode_verdict(&v, msg.body.data, msg.body.len));
            CHECK(msg.source == VERIFIER);
            CHECK(v.verdict == (v.rollout_index == 0 ? RLVR_VERDICT_PASS : RLVR_VERDICT_FAIL));
            passes += v.verdict == RLVR_VERDICT_PASS;
            verdicts++;
        } else {
            CHECK_MSG(0, "unexpected %s message at the leader", rlvr_msg_kind_name(msg.kind));
        }
    }
    CHECK(records == want && verdicts == want);
    CHECK(passes == n_rollout * GROUPS_PER_RANK);

    rlvr_control_msg stop_msg = {RLVR_CONTROL_STOP, 1, 5};
    for (int dest = 1; dest < roles->world_size; dest++) {
        CHECK_OK(rlvr_wire_encode_control(&out, &stop_msg));
        CHECK_OK(send_retry(q, dest, RLVR_MSG_CONTROL, &out));
    }
    CHECK_OK(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
    CHECK(rlvr_mpi_queue_pending(q) == 0);
    rlvr_rollout_free(&rec);
    rlvr_rollout_free(&expect);
    rlvr_wire_buf_free(&out);
    rlvr_mpi_msg_free(&msg);
}

static void run_rollout(rlvr_mpi_queue *q) {
    rlvr_mpi_msg msg = {0};
    rlvr_wire_buf out = {0};
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 16, 1));
    int groups = 0;
    for (;;) {
        int rc = rlvr_mpi_queue_wait(q, RLVR_MPI_LEADER, RLVR_MSG_ANY, &msg, TIMEOUT, NULL);
        CHECK_OK(rc);
        if (rc) break;
        if (msg.kind == RLVR_MSG_CONTROL) {
            rlvr_control_msg c;
            CHECK_OK(rlvr_wire_decode_control(&c, msg.body.data, msg.body.len));
            CHECK(c.what == RLVR_CONTROL_STOP);
            break;
        }
        CHECK(msg.kind == RLVR_MSG_WORK);
        rlvr_work_item w;
        CHECK_OK(rlvr_wire_decode_work(&w, msg.body.data, msg.body.len));
        groups++;
        for (int32_t i = 0; i < w.group_size; i++) {
            fill_record(&r, &w, i, w.policy_version);
            /* the verifier gets the patch; only rollout 0 of a group "fixes" the bug */
            const char *patch = i == 0 ? "+fixed\n" : "+broken\n";
            CHECK_OK(rlvr_wire_encode_record(&out, &r, patch, strlen(patch)));
            CHECK_OK(send_retry(q, VERIFIER, RLVR_MSG_RECORD, &out));
            CHECK_OK(rlvr_wire_encode_record(&out, &r, NULL, 0));
            CHECK_OK(send_retry(q, RLVR_MPI_LEADER, RLVR_MSG_RECORD, &out));
        }
    }
    CHECK(groups == GROUPS_PER_RANK);
    CHECK_OK(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
    rlvr_rollout_free(&r);
    rlvr_wire_buf_free(&out);
    rlvr_mpi_msg_free(&msg);
}

static void run_verifier(rlvr_mpi_queue *q) {
    rlvr_mpi_msg msg = {0};
    rlvr_wire_buf out = {0}, patch = {0};
    rlvr_rollout r;
    memset(&r, 0, sizeof r);
    int checked = 0;
    for (;;) {
        int rc = rlvr_mpi_queue_wait(q, MPI_ANY_SOURCE, RLVR_MSG_ANY, &msg, TIMEOUT, NULL);
        CHECK_OK(rc);
        if (rc) break;
        if (msg.kind == RLVR_MSG_CONTROL) break;
        CHECK(msg.kind == RLVR_MSG_RECORD);
        CHECK_OK(rlvr_wire_decode_record(&r, &patch, msg.body.data, msg.body.len));
        bool pass = patch.len > 0 && strcmp((const char *)patch.data, "+fixed\n") == 0;
        rlvr_verdict_msg v = {r.group_id, r.rollout_index, pass ? RLVR_VERDICT_PASS : RLVR_VERDICT_FAIL, 0,
                              pass ? 1.0f : 0.0f, 0.01};
        CHECK_OK(rlvr_wire_encode_verdict(&out, &v));
        CHECK_OK(send_retry(q, RLVR_MPI_LEADER, RLVR_MSG_VERDICT, &out));
        checked++;
    }
    CHECK(checked == 2 * GROUPS_PER_RANK * G);
    CHECK_OK(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
    rlvr_rollout_free(&r);
    rlvr_wire_buf_free(&out);
    rlvr_wire_buf_free(&patch);
    rlvr_mpi_msg_free(&msg);
}

/* With one send slot, a large message nobody receives yet keeps the slot:
 * the next send is refused with RLVR_ELIMIT, not blocked. */
static void test_send_limit(const rlvr_mpi_roles *roles) {
    rlvr_mpi_queue *q = NULL;
    CHECK_OK(rlvr_mpi_queue_new(&q, roles->world, 1));
    enum { BIG = 4 << 20 };
    rlvr_wire_buf buf = {0};
    rlvr_mpi_msg msg = {0};
    if (roles->world_rank == 0) {
        CHECK_OK(rlvr_wire_buf_reserve(&buf, BIG));
        memset(buf.data, 0xab, BIG);
        buf.len = BIG;
        CHECK_OK(rlvr_mpi_queue_send(q, VERIFIER, RLVR_MSG_CONTROL, &buf));
        CHECK_OK(rlvr_wire_buf_reserve(&buf, 16));
        memset(buf.data, 0, 16);
        buf.len = 16;
        CHECK(rlvr_mpi_queue_send(q, VERIFIER, RLVR_MSG_CONTROL, &buf) == RLVR_ELIMIT);
        CHECK(rlvr_mpi_queue_pending(q) == 1);
        MPI_Barrier(roles->world); /* now the verifier receives */
        CHECK_OK(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
        CHECK_OK(rlvr_mpi_queue_send(q, VERIFIER, RLVR_MSG_CONTROL, &buf));
        CHECK_OK(rlvr_mpi_queue_flush(q, TIMEOUT, NULL));
    } else {
        MPI_Barrier(roles->world);
        if (roles->world_rank == VERIFIER) {
            CHECK_OK(rlvr_mpi_queue_wait(q, 0, RLVR_MSG_CONTROL, &msg, TIMEOUT, NULL));
            CHECK(msg.body.len == BIG && msg.source == 0 && msg.body.data[BIG - 1] == 0xab);
            CHECK_OK(rlvr_mpi_queue_wait(q, 0, RLVR_MSG_CONTROL, &msg, TIMEOUT, NULL));
            CHECK(msg.body.len == 16);
        }
    }
    rlvr_mpi_queue_free(q);
    rlvr_wire_buf_free(&buf);
    rlvr_mpi_msg_free(&msg);
}

int main(int argc, char **argv) {
    mpi_test_init(&argc, &argv, 4);
    rlvr_mpi_roles roles;
    rlvr_layout layout = {1, 1, 2};
    CHECK_OK(rlvr_mpi_roles_init(&roles, &layout, MPI_COMM_WORLD));
    rlvr_mpi_queue *q = NULL;
    CHECK(rlvr_mpi_queue_new(&q, roles.world, 0) == RLVR_EINVAL);
    CHECK_OK(rlvr_mpi_queue_new(&q, roles.world, 4));

    if (roles.is_leader) run_leader(q, &roles);
    else if (roles.role == RLVR_ROLE_ROLLOUT) run_rollout(q);
    else run_verifier(q);
    rlvr_mpi_queue_free(q);

    MPI_Barrier(roles.world);
    test_send_limit(&roles);
    rlvr_mpi_roles_free(&roles);
    return mpi_test_finish("test_mpi_queue");
}
