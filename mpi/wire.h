/* mpi/wire.h — the bytes ranks send each other.
 *
 * Every message is packed with MPI_Pack_external("external32"): a fixed,
 * documented representation (big-endian, IEEE floats, standard sizes) that
 * does not depend on the machine or on the MPI build, so the byte layout in
 * docs/WIRE.md is exact. A message starts with
 *   uint32 format version (RLVR_WIRE_VERSION)   uint32 kind (rlvr_msg_kind)
 * and a receiver refuses a version it does not know (RLVR_EFORMAT: "ranks
 * run different rlvr builds"), a kind it did not expect, a message that is
 * truncated or has bytes left over, and values out of range — a malformed
 * message never reaches the trainer.
 *
 * Encoding and decoding call MPI, so MPI must be initialised (an Open MPI
 * singleton is enough).
 *
 * Kinds: a work item (leader → rollout rank), a rollout record with an
 * optional patch (rollout rank → leader, and → verifier rank with the
 * patch), a verdict (verifier rank → leader), a control message (leader →
 * anyone: stop, new step, new weights version; in bounded-async mode also
 * rank → leader: a caught signal, done after stop). */
#ifndef RLVR_MPI_WIRE_H
#define RLVR_MPI_WIRE_H

#include "core/record.h"

#include <stddef.h>
#include <stdint.h>

#define RLVR_WIRE_VERSION 5u

typedef enum {
    RLVR_MSG_ANY = 0, /* for receive filters only; never encoded */
    RLVR_MSG_WORK = 1,
    RLVR_MSG_RECORD = 2,
    RLVR_MSG_VERDICT = 3,
    RLVR_MSG_CONTROL = 4,
    RLVR_MSG_KIND_COUNT
} rlvr_msg_kind;

/* A growable byte buffer; zero-initialise, free with rlvr_wire_buf_free. */
typedef struct {
    unsigned char *data;
    size_t len, cap;
} rlvr_wire_buf;

int rlvr_wire_buf_reserve(rlvr_wire_buf *b, size_t cap);
void rlvr_wire_buf_free(rlvr_wire_buf *b);

/* Leader → rollout rank: sample a group of G rollouts of one task. */
typedef struct {
    char task_id[RLVR_TASK_ID_CAP];
    int64_t task_index;       /* index in the task pool */
    int64_t group_id;         /* unique per (step, task draw) */
    int32_t group_size;       /* G ≥ 1 */
    int64_t step;             /* trainer step the group is drawn for */
    int64_t policy_version;   /* leader's policy version when it handed the work out */
    uint64_t seed;            /* run seed */
    uint32_t sample_sequence; /* Philox sequence of rollout 0; rollout i uses sample_sequence + i */
    uint32_t capture_tools;   /* Monte-Carlo credit: tools after whose calls the workspace is snapshotted */
    /* Monte-Carlo credit: a fork group's start (the parent's prefix and
     * workspace state, encoded by train/; opaque here). Encoding reads
     * fork_len bytes at fork; a decoded item owns a copy (free it with
     * rlvr_wire_work_clear). fork_len 0: the group starts from the prompt. */
    unsigned char *fork;
    size_t fork_len;
} rlvr_work_item;

/* Frees a decoded work item's copy of its fork bytes. */
void rlvr_wire_work_clear(rlvr_work_item *w);

/* Verifier rank → leader: only the verdict, never test names or output. */
typedef struct {
    int64_t group_id;
    int32_t rollout_index;
    rlvr_verdict verdict;
    int32_t reason;   /* enclave reason code (0 = none) */
    float outcome;    /* R_outcome: {0,1} or partial credit in [0,1] */
    double verify_s;  /* wall time spent verifying */
} rlvr_verdict_msg;

typedef enum {
    RLVR_CONTROL_STOP = 1,    /* finish what is in flight, send nothing new, leave the loop */
    RLVR_CONTROL_STEP = 2,    /* a new trainer step begins (step) */
    RLVR_CONTROL_VERSION = 3, /* weights `version` are being broadcast */
    RLVR_CONTROL_SIGNAL = 4,  /* rank → leader (async mode): this rank caught signal `step`; stop at a boundary */
    RLVR_CONTROL_DONE = 5,    /* rank → leader (async mode), after STOP: nothing more follows from this rank */
    RLVR_CONTROL_UPDATE = 6,  /* leader → trainer rank: optimizer step `step` of `version` rollouts; the batch
                               * follows as a broadcast on the trainer communicator (docs/WIRE.md) */
    RLVR_CONTROL_COUNT
} rlvr_control_kind;

typedef struct {
    rlvr_control_kind what;
    int64_t step;
    int64_t version;
} rlvr_control_msg;

const char *rlvr_msg_kind_name(rlvr_msg_kind kind);

/* Reads and checks the header: RLVR_EFORMAT for a short buffer, an unknown
 * format version or an unknown kind. */
int rlvr_wire_peek(const void *data, size_t len, rlvr_msg_kind *kind);

/* Encoders replace out's contents (out->len = message size). Decoders check
 * everything (header, lengths, ranges, no trailing bytes) and return
 * RLVR_EFORMAT naming the field; on error *out holds partial data that is
 * still safe to free. */
int rlvr_wire_encode_work(rlvr_wire_buf *out, const rlvr_work_item *w);
int rlvr_wire_decode_work(rlvr_work_item *out, const void *data, size_t len);

/* The record with all its arrays (tokens, logprobs, mask, entropy, turns),
 * reward parts, verdict, timings and seeds; cap_* fields are not sent.
 * `patch` (patch_len bytes, may be NULL/0) rides along for the verifier. */
int rlvr_wire_encode_record(rlvr_wire_buf *out, const rlvr_rollout *r, const void *patch, size_t patch_len);
/* `out` must be zeroed or initialised with rlvr_rollout_init; its buffers
 * grow as needed. When `patch` is non-NULL it receives the patch bytes
 * (patch->len, plus a NUL after them); a patch in the message is skipped
 * when `patch` is NULL. */
int rlvr_wire_decode_record(rlvr_rollout *out, rlvr_wire_buf *patch, const void *data, size_t len);

/* What a finished harness job (envs/harness.h) knows beyond its record,
 * sent with it: the task's pool index and the diff gate's findings (the
 * verifier needs them), the tool-call counts (the leader's format reward). */
typedef struct {
    int64_t task_index;           /* the work item's task_index (index in the task pool, >= 0) */
    int32_t calls, calls_parsed;  /* tool calls written, and those that parsed (0 <= parsed <= calls) */
    uint8_t public_tests_changed; /* 0/1: the diff gate saw changed public tests (the rollout is dropped) */
    int32_t patch_reason;         /* 0, or the enclave reason the patch could not leave the workspace */
    /* Monte-Carlo credit: what the job captured (workspace states) and a
     * fork's prefix count, encoded by train/ (opaque here). Encoding reads
     * credit_len bytes at credit; decoding points credit into the message's
     * own bytes (valid while they are). */
    const unsigned char *credit;
    size_t credit_len;
} rlvr_wire_job_info;

/* The record with its job info; `job` NULL sends zeros. The decoder fills
 * `job` when non-NULL. rlvr_wire_encode_record / decode_record are these
 * without job info. */
int rlvr_wire_encode_job_record(rlvr_wire_buf *out, const rlvr_rollout *r, const rlvr_wire_job_info *job,
                                const void *patch, size_t patch_len);
int rlvr_wire_decode_job_record(rlvr_rollout *out, rlvr_wire_job_info *job, rlvr_wire_buf *patch, const void *data,
                                size_t len);

int rlvr_wire_encode_verdict(rlvr_wire_buf *out, const rlvr_verdict_msg *v);
int rlvr_wire_decode_verdict(rlvr_verdict_msg *out, const void *data, size_t len);

int rlvr_wire_encode_control(rlvr_wire_buf *out, const rlvr_control_msg *c);
int rlvr_wire_decode_control(rlvr_control_msg *out, const void *data, size_t len);

#endif
