/* train/credit_wire.h — Monte-Carlo credit's bytes in the training
 * protocol (docs/WIRE.md "Monte-Carlo credit"): the start of a fork group
 * in a WORK item (the parent's prefix and workspace state travel with the
 * work, so any rollout rank can run the forks) and what a finished job
 * sends back in its RECORD (the workspace states it captured, which turns
 * changed the workspace, a fork's prefix count). mpi/wire.h carries both as
 * opaque byte strings; integers here are big-endian like the rest of the
 * wire. */
#ifndef RLVR_TRAIN_CREDIT_WIRE_H
#define RLVR_TRAIN_CREDIT_WIRE_H

#include "envs/harness.h"
#include "mpi/wire.h"

/* A fork group's start received on a rollout rank: the parent's record cut
 * at the branch point (tokens and turns before it), the workspace state,
 * and the prefix the harness jobs point to. */
typedef struct {
    rlvr_rollout record;
    rlvr_workspace_state *state;
    rlvr_harness_prefix prefix;
} rlvr_credit_fork_start;

/* The fork bytes of a WORK item for the jobs of prefix `p`; `scratch` is a
 * buffer for the nested record. */
int rlvr_credit_encode_fork(rlvr_wire_buf *out, rlvr_wire_buf *scratch, const rlvr_harness_prefix *p);
/* Decodes and checks them into *out (zeroed first; free with
 * rlvr_credit_fork_start_free also after an error). RLVR_EFORMAT naming the
 * field for bytes that are cut short, inconsistent or left over. */
int rlvr_credit_decode_fork(rlvr_credit_fork_start *out, const void *data, size_t len);
void rlvr_credit_fork_start_free(rlvr_credit_fork_start *f);

/* The credit bytes of a finished job's RECORD: its capture outputs (states,
 * turn_state, turn_changed), prefix_policy_tokens and snapshot_s. out->len
 * is 0 for a job that neither captured nor forked. */
int rlvr_credit_encode_job(rlvr_wire_buf *out, const rlvr_harness_job *job);
/* Fills those fields of `job` (whose record is already in place: the turn
 * arrays must match its n_turns); nothing for len 0. RLVR_EFORMAT for bad
 * bytes, with the job's fields left empty. */
int rlvr_credit_decode_job(rlvr_harness_job *job, const void *data, size_t len);

#endif
