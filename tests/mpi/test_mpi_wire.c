/* Wire encoding (mpi/wire.h): round trips of every message kind, the exact
 * external32 bytes of the header, refusal of unknown versions, wrong kinds,
 * truncated, padded and out-of-range messages. One process: MPI runs as an
 * Open MPI singleton. */
#include "mpi/wire.h"
#include "mpi_test.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>

static uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static void make_record(rlvr_rollout *r, int32_t n_tokens, int32_t n_turns, uint32_t salt) {
    CHECK_OK(rlvr_rollout_init(r, 4, 1));
    snprintf(r->task_id, sizeof r->task_id, "bugfix-c/%u", salt);
    r->group_id = 1234567890123LL + salt;
    r->rollout_index = (int32_t)(salt % 16);
    r->policy_version = 42;
    r->staleness = 3;
    r->seed = 0xfedcba9876543210ULL;
    r->sample_sequence = 77u + salt;
    int32_t prompt = n_tokens / 4;
    for (int32_t i = 0; i < n_tokens; i++) {
        uint32_t h = hash32((uint32_t)i * 2654435761U + salt);
        uint8_t mask = i < prompt ? RLVR_TOKEN_PROMPT : (h % 3 == 0 ? RLVR_TOKEN_OBSERVATION : RLVR_TOKEN_POLICY);
        float lp = mask == RLVR_TOKEN_POLICY ? -(float)(h % 10000) / 997.0f : 0.0f;
        CHECK_OK(rlvr_rollout_push_token(r, (int32_t)(h % 50000), lp, (float)(h % 77) / 13.0f, mask));
    }
    r->prompt_tokens = prompt;
    for (int32_t t = 0; t < n_turns; t++) {
        rlvr_turn turn = {0};
        int32_t span = n_tokens > prompt ? (n_tokens - prompt) / n_turns : 0;
        turn.policy_start = prompt + t * span;
        turn.policy_end = turn.policy_start + span / 2;
        turn.observation_start = turn.policy_end;
        turn.observation_end = prompt + (t + 1) * span;
        snprintf(turn.tool_name, sizeof turn.tool_name, t % 2 ? "run_tests" : "edit_file");
        turn.exit_status = t % 2 ? 1 : -1;
        turn.duration_s = 0.125f * (float)(t + 1);
        turn.output_truncated = (uint8_t)(t == 1);
        turn.call_parsed = (uint8_t)(t != 2);
        CHECK_OK(rlvr_rollout_push_turn(r, &turn, NULL));
    }
    r->stop = RLVR_STOP_MAX_TOKENS;
    r->verdict = RLVR_VERDICT_FAIL;
    r->verdict_reason = 17;
    r->reward = (rlvr_reward_parts){0.25f, 0.0f, 0.75f, -0.001f};
    r->timings = (rlvr_timings){1.5, 0.25, 3.0e-3, 1e-9};
}

/* Every field sent, compared bit for bit. */
static int records_equal(const rlvr_rollout *a, const rlvr_rollout *b) {
    size_t n = (size_t)a->n_tokens;
    int ok = strcmp(a->task_id, b->task_id) == 0 && a->group_id == b->group_id &&
             a->rollout_index == b->rollout_index && a->policy_version == b->policy_version &&
             a->staleness == b->staleness && a->seed == b->seed && a->sample_sequence == b->sample_sequence &&
             a->n_tokens == b->n_tokens && a->prompt_tokens == b->prompt_tokens && a->n_turns == b->n_turns &&
             a->stop == b->stop && a->verdict == b->verdict && a->verdict_reason == b->verdict_reason &&
             memcmp(&a->reward, &b->reward, sizeof a->reward) == 0 &&
             memcmp(&a->timings, &b->timings, sizeof a->timings) == 0;
    if (!ok) return 0;
    if (n && (memcmp(a->tokens, b->tokens, n * 4) || memcmp(a->logprobs, b->logprobs, n * 4) ||
              memcmp(a->mask, b->mask, n) || memcmp(a->entropy, b->entropy, n * 4)))
        return 0;
    for (int32_t t = 0; t < a->n_turns; t++) {
        const rlvr_turn *x = &a->turns[t], *y = &b->turns[t];
        if (x->policy_start != y->policy_start || x->policy_end != y->policy_end ||
            x->observation_start != y->observation_start || x->observation_end != y->observation_end ||
            strcmp(x->tool_name, y->tool_name) || x->exit_status != y->exit_status ||
            memcmp(&x->duration_s, &y->duration_s, 4) || x->output_truncated != y->output_truncated ||
            x->call_parsed != y->call_parsed)
            return 0;
    }
    return 1;
}

static void test_external32_sizes(void) {
    /* wire.c relies on the standard's external32 sizes */
    struct { MPI_Datatype t; MPI_Aint size; } types[] = {
        {MPI_INT32_T, 4}, {MPI_UINT32_T, 4}, {MPI_INT64_T, 8}, {MPI_UINT64_T, 8},
        {MPI_FLOAT, 4},   {MPI_DOUBLE, 8},   {MPI_BYTE, 1},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        MPI_Aint size = 0;
        CHECK(MPI_Pack_external_size("external32", 1, types[i].t, &size) == MPI_SUCCESS);
        CHECK(size == types[i].size);
    }
}

static void test_work(void) {
    rlvr_work_item w = {.task_index = 913, .group_id = -1, .group_size = 16, .step = 8, .policy_version = 7,
                        .seed = UINT64_MAX, .sample_sequence = 0xabcdef01u};
    snprintf(w.task_id, sizeof w.task_id, "arith/000913");
    rlvr_wire_buf buf = {0};
    CHECK_OK(rlvr_wire_encode_work(&buf, &w));
    /* header: format version 5 then kind 1 (work), big-endian */
    const unsigned char head[8] = {0, 0, 0, 5, 0, 0, 0, 1};
    CHECK(buf.len > 8 && memcmp(buf.data, head, 8) == 0);
    /* then the task id: uint32 length 12, big-endian, and its bytes */
    const unsigned char len12[4] = {0, 0, 0, 12};
    CHECK(memcmp(buf.data + 8, len12, 4) == 0 && memcmp(buf.data + 12, "arith/000913", 12) == 0);
    CHECK(buf.len == 8 + 4 + 12 + 8 + 8 + 4 + 8 + 8 + 8 + 4 + 4 + 8);
    rlvr_msg_kind kind = RLVR_MSG_ANY;
    CHECK_OK(rlvr_wire_peek(buf.data, buf.len, &kind));
    CHECK(kind == RLVR_MSG_WORK);

    rlvr_work_item back;
    CHECK_OK(rlvr_wire_decode_work(&back, buf.data, buf.len));
    CHECK(memcmp(&w, &back, sizeof w) == 0);

    /* a fork group's bytes and the capture mask ride along; the decoded item owns a copy */
    unsigned char fork[5] = {1, 0, 2, 0xff, 3};
    rlvr_work_item wf = w;
    wf.capture_tools = 0x28;
    wf.fork = fork, wf.fork_len = sizeof fork;
    CHECK_OK(rlvr_wire_encode_work(&buf, &wf));
    CHECK(buf.len == 8 + 4 + 12 + 8 + 8 + 4 + 8 + 8 + 8 + 4 + 4 + 8 + 5);
    CHECK_OK(rlvr_wire_decode_work(&back, buf.data, buf.len));
    CHECK(back.capture_tools == 0x28 && back.fork_len == 5 && back.fork != fork &&
          memcmp(back.fork, fork, 5) == 0);
    rlvr_wire_work_clear(&back);
    CHECK(back.fork == NULL && back.fork_len == 0);
    for (size_t cut = 1; cut < 6; cut++) /* a fork cut short is refused */
        CHECK(rlvr_wire_decode_work(&back, buf.data, buf.len - cut) == RLVR_EFORMAT);
    wf.fork = NULL; /* bytes promised, none given */
    CHECK(rlvr_wire_encode_work(&buf, &wf) == RLVR_EINVAL);

    /* invalid items are refused at the sender */
    rlvr_work_item bad = w;
    bad.group_size = 0;
    CHECK(rlvr_wire_encode_work(&buf, &bad) == RLVR_EINVAL);
    bad = w;
    memset(bad.task_id, 'x', sizeof bad.task_id);
    CHECK(rlvr_wire_encode_work(&buf, &bad) == RLVR_EINVAL);
    rlvr_wire_buf_free(&buf);
}

static void test_record_round_trip(void) {
    rlvr_rollout r, back;
    make_record(&r, 1000, 3, 5);
    /* special floats survive bit for bit */
    r.logprobs[300] = -INFINITY;
    r.entropy[301] = -0.0f;
    r.logprobs[302] = NAN;
    const char patch[] = "--- a/src/x.c\n+++ b/src/x.c\n@@ -1 +1 @@\n-int x = 0;\n+int x = 1;\n";

    rlvr_wire_buf buf = {0}, got_patch = {0};
    CHECK_OK(rlvr_wire_encode_record(&buf, &r, patch, strlen(patch)));
    memset(&back, 0, sizeof back); /* a zeroed record grows as needed */
    CHECK_OK(rlvr_wire_decode_record(&back, &got_patch, buf.data, buf.len));
    CHECK(records_equal(&r, &back));
    CHECK(got_patch.len == strlen(patch) && strcmp((const char *)got_patch.data, patch) == 0);

    /* decoding a smaller record into the same buffers, without the patch */
    rlvr_rollout small;
    make_record(&small, 10, 1, 9);
    rlvr_wire_buf buf2 = {0};
    CHECK_OK(rlvr_wire_encode_record(&buf2, &small, NULL, 0));
    CHECK_OK(rlvr_wire_decode_record(&back, NULL, buf2.data, buf2.len));
    CHECK(records_equal(&small, &back));
    /* a patch in the message is skipped when the receiver does not want it */
    CHECK_OK(rlvr_wire_decode_record(&back, NULL, buf.data, buf.len));
    CHECK(records_equal(&r, &back));
    /* the patch buffer reports an empty patch */
    CHECK_OK(rlvr_wire_decode_record(&back, &got_patch, buf2.data, buf2.len));
    CHECK(got_patch.len == 0 && got_patch.data[0] == '\0');

    /* the job info rides along; plain decoding skips it, plain encoding sends zeros */
    rlvr_wire_job_info info = {.task_index = 913, .calls = 5, .calls_parsed = 3, .public_tests_changed = 1,
                               .patch_reason = 12},
                       info_back;
    CHECK_OK(rlvr_wire_encode_job_record(&buf2, &small, &info, "p", 1));
    CHECK_OK(rlvr_wire_decode_job_record(&back, &info_back, &got_patch, buf2.data, buf2.len));
    CHECK(records_equal(&small, &back) && info_back.task_index == 913 && info_back.calls == 5 &&
          info_back.calls_parsed == 3 && info_back.public_tests_changed == 1 && info_back.patch_reason == 12);
    CHECK(got_patch.len == 1 && got_patch.data[0] == 'p');
    CHECK(info_back.credit_len == 0);
    /* credit bytes: the decoder points into the message */
    const unsigned char credit[3] = {9, 8, 7};
    rlvr_wire_job_info with_credit = info;
    with_credit.credit = credit, with_credit.credit_len = 3;
    CHECK_OK(rlvr_wire_encode_job_record(&buf2, &small, &with_credit, "p", 1));
    CHECK_OK(rlvr_wire_decode_job_record(&back, &info_back, &got_patch, buf2.data, buf2.len));
    CHECK(info_back.credit_len == 3 && memcmp(info_back.credit, credit, 3) == 0 &&
          info_back.credit > buf2.data && info_back.credit < buf2.data + buf2.len);
    CHECK(got_patch.len == 1 && got_patch.data[0] == 'p');
    with_credit.credit = NULL;
    CHECK(rlvr_wire_encode_job_record(&buf2, &small, &with_credit, NULL, 0) == RLVR_EINVAL);
    CHECK_OK(rlvr_wire_encode_job_record(&buf2, &small, &info, "p", 1));
    CHECK_OK(rlvr_wire_decode_record(&back, NULL, buf2.data, buf2.len));
    CHECK_OK(rlvr_wire_encode_record(&buf2, &small, NULL, 0));
    CHECK_OK(rlvr_wire_decode_job_record(&back, &info_back, NULL, buf2.data, buf2.len));
    CHECK(info_back.task_index == 0 && info_back.calls == 0 && info_back.public_tests_changed == 0);
    rlvr_wire_job_info bad_info = info;
    bad_info.calls_parsed = 6; /* more parsed than written */
    CHECK(rlvr_wire_encode_job_record(&buf2, &small, &bad_info, NULL, 0) == RLVR_EINVAL);
    bad_info = info;
    bad_info.public_tests_changed = 2;
    CHECK(rlvr_wire_encode_job_record(&buf2, &small, &bad_info, NULL, 0) == RLVR_EINVAL);

    /* an empty record (no tokens, no turns) */
    rlvr_rollout empty;
    memset(&empty, 0, sizeof empty);
    snprintf(empty.task_id, sizeof empty.task_id, "t");
    empty.stop = RLVR_STOP_INFRA_ERROR;
    empty.verdict = RLVR_VERDICT_INFRA;
    CHECK_OK(rlvr_wire_encode_record(&buf2, &empty, NULL, 0));
    CHECK_OK(rlvr_wire_decode_record(&back, NULL, buf2.data, buf2.len));
    CHECK(records_equal(&empty, &back));

    rlvr_rollout_free(&r);
    rlvr_rollout_free(&small);
    rlvr_rollout_free(&back);
    rlvr_wire_buf_free(&buf);
    rlvr_wire_buf_free(&buf2);
    rlvr_wire_buf_free(&got_patch);
}

static void test_record_refusals(void) {
    rlvr_rollout r, back;
    make_record(&r, 40, 2, 3);
    memset(&back, 0, sizeof back);
    rlvr_wire_buf buf = {0}, copy = {0};
    CHECK_OK(rlvr_wire_encode_record(&buf, &r, "p", 1));
    CHECK_OK(rlvr_wire_buf_reserve(&copy, buf.len + 1));

    /* an unknown format version: a clear message, nothing decoded */
    memcpy(copy.data, buf.data, buf.len);
    copy.data[3] = 99;
    CHECK(rlvr_wire_decode_record(&back, NULL, copy.data, buf.len) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "format version 99") != NULL, "%s", rlvr_error_last());
    CHECK_MSG(strstr(rlvr_error_last(), "same rlvr build") != NULL, "%s", rlvr_error_last());
    rlvr_msg_kind kind;
    CHECK(rlvr_wire_peek(copy.data, buf.len, &kind) == RLVR_EFORMAT);
    /* an unknown kind */
    memcpy(copy.data, buf.data, buf.len);
    copy.data[7] = 99;
    CHECK(rlvr_wire_peek(copy.data, buf.len, &kind) == RLVR_EFORMAT);
    /* the wrong kind for the decoder */
    rlvr_work_item w;
    CHECK(rlvr_wire_decode_work(&w, buf.data, buf.len) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "expected a work message, got a record message") != NULL, "%s",
              rlvr_error_last());

    /* every truncation is refused, none crashes */
    int refused = 0;
    for (size_t len = 0; len < buf.len; len++)
        refused += rlvr_wire_decode_record(&back, NULL, buf.data, len) == RLVR_EFORMAT;
    CHECK(refused == (int)buf.len);
    /* a byte too many */
    memcpy(copy.data, buf.data, buf.len);
    copy.data[buf.len] = 0;
    CHECK(rlvr_wire_decode_record(&back, NULL, copy.data, buf.len + 1) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "unexpected bytes") != NULL, "%s", rlvr_error_last());

    /* offsets: header 8, task id 4+len, ids 8+4+8+8+8+4, then n_tokens */
    size_t at_n = 8 + 4 + strlen(r.task_id) + 40;
    size_t at_mask = at_n + 8 + 40 * 4 + 40 * 4;
    /* a huge token count is refused before anything is allocated */
    memcpy(copy.data, buf.data, buf.len);
    copy.data[at_n] = 0x7f;
    CHECK(rlvr_wire_decode_record(&back, NULL, copy.data, buf.len) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "n_tokens") != NULL, "%s", rlvr_error_last());
    CHECK(back.cap_tokens < 1000);
    /* a mask value that is not a token kind */
    memcpy(copy.data, buf.data, buf.len);
    copy.data[at_mask + 20] = 7;
    CHECK(rlvr_wire_decode_record(&back, NULL, copy.data, buf.len) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "mask value 7") != NULL, "%s", rlvr_error_last());
    /* the unmodified copy still decodes */
    memcpy(copy.data, buf.data, buf.len);
    CHECK_OK(rlvr_wire_decode_record(&back, NULL, copy.data, buf.len));
    CHECK(records_equal(&r, &back));

    /* a sender's inconsistent record is refused before it is sent */
    r.turns[1].observation_end = r.n_tokens + 1;
    CHECK(rlvr_wire_encode_record(&buf, &r, NULL, 0) == RLVR_EINVAL);
    r.turns[1].observation_end = r.n_tokens;
    r.verdict = RLVR_VERDICT_COUNT;
    CHECK(rlvr_wire_encode_record(&buf, &r, NULL, 0) == RLVR_EINVAL);
    r.verdict = RLVR_VERDICT_PASS;
    CHECK(rlvr_wire_encode_record(&buf, &r, NULL, 3) == RLVR_EINVAL); /* length without bytes */
    CHECK_OK(rlvr_wire_encode_record(&buf, &r, NULL, 0));

    rlvr_rollout_free(&r);
    rlvr_rollout_free(&back);
    rlvr_wire_buf_free(&buf);
    rlvr_wire_buf_free(&copy);
}

static void test_verdict_control(void) {
    rlvr_verdict_msg v = {.group_id = 99, .rollout_index = 15, .verdict = RLVR_VERDICT_PASS, .reason = 0,
                          .outcome = 0.625f, .verify_s = 2.75};
    rlvr_wire_buf buf = {0};
    CHECK_OK(rlvr_wire_encode_verdict(&buf, &v));
    CHECK(buf.len == 8 + 8 + 4 + 4 + 4 + 4 + 8);
    rlvr_verdict_msg vb;
    CHECK_OK(rlvr_wire_decode_verdict(&vb, buf.data, buf.len));
    CHECK(vb.group_id == 99 && vb.rollout_index == 15 && vb.verdict == RLVR_VERDICT_PASS && vb.reason == 0 &&
          vb.outcome == 0.625f && vb.verify_s == 2.75);
    /* verdict field out of range in the message */
    buf.data[8 + 8 + 4 + 3] = 200;
    CHECK(rlvr_wire_decode_verdict(&vb, buf.data, buf.len) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "unknown verdict 200") != NULL, "%s", rlvr_error_last());
    v.verdict = (rlvr_verdict)-1;
    CHECK(rlvr_wire_encode_verdict(&buf, &v) == RLVR_EINVAL);

    for (int what = RLVR_CONTROL_STOP; what < RLVR_CONTROL_COUNT; what++) {
        rlvr_control_msg c = {(rlvr_control_kind)what, 12, -1}, cb;
        CHECK_OK(rlvr_wire_encode_control(&buf, &c));
        CHECK_OK(rlvr_wire_decode_control(&cb, buf.data, buf.len));
        CHECK(cb.what == c.what && cb.step == 12 && cb.version == -1);
        rlvr_msg_kind kind;
        CHECK_OK(rlvr_wire_peek(buf.data, buf.len, &kind));
        CHECK(kind == RLVR_MSG_CONTROL);
    }
    rlvr_control_msg bad = {(rlvr_control_kind)0, 0, 0};
    CHECK(rlvr_wire_encode_control(&buf, &bad) == RLVR_EINVAL);
    rlvr_wire_buf_free(&buf);
}

int main(int argc, char **argv) {
    mpi_test_init(&argc, &argv, 1);
    test_external32_sizes();
    test_work();
    test_record_round_trip();
    test_record_refusals();
    test_verdict_control();
    return mpi_test_finish("test_mpi_wire");
}
