/* mpi/admission.h — the bounded-staleness gate (docs/OPERATIONS.md
 * "Asynchronous training").
 *
 * Every record carries v_rollout, the policy version that generated it. On
 * arrival the leader computes Δv = v_trainer − v_rollout and admits the
 * record iff 0 ≤ Δv ≤ Δv_max. Δv_max = 0 is the synchronous schedule. Pure
 * functions and plain counters: no MPI. */
#ifndef RLVR_MPI_ADMISSION_H
#define RLVR_MPI_ADMISSION_H

#include <stdbool.h>
#include <stdint.h>

/* Histogram bins: Δv = 0, 1, …, RLVR_STALENESS_BINS-2, and the last bin
 * counts every Δv ≥ RLVR_STALENESS_BINS-1. */
#define RLVR_STALENESS_BINS 16

typedef struct {
    int64_t max_staleness;       /* Δv_max ≥ 0 */
    uint64_t arrived;            /* records seen */
    uint64_t admitted;
    uint64_t dropped_stale;      /* Δv > Δv_max */
    uint64_t dropped_future;     /* Δv < 0: v_rollout newer than the trainer (a bug upstream) */
    int64_t max_seen;            /* largest Δv seen (−1 before any arrival with Δv ≥ 0) */
    uint64_t histogram[RLVR_STALENESS_BINS]; /* Δv of every arrival with Δv ≥ 0, admitted or not */
} rlvr_admission;

/* The rule alone: 0 ≤ v_trainer − v_rollout ≤ max_staleness. */
bool rlvr_admission_admits(int64_t v_trainer, int64_t v_rollout, int64_t max_staleness);

/* Zeroes the counters; RLVR_EINVAL when max_staleness < 0. */
int rlvr_admission_init(rlvr_admission *a, int64_t max_staleness);

/* Counts one arrival and says whether to admit it; *staleness (may be NULL)
 * receives Δv. A record from the future (Δv < 0) is dropped and counted,
 * and the call returns RLVR_EINVAL so the caller can log it: it means
 * versions are being assigned wrongly. */
int rlvr_admission_check(rlvr_admission *a, int64_t v_trainer, int64_t v_rollout, bool *admit, int64_t *staleness);

/* Clears the counters (per step or per report), keeping max_staleness. */
void rlvr_admission_reset(rlvr_admission *a);

/* Adds b's counters into a (e.g. to total over steps). */
void rlvr_admission_merge(rlvr_admission *a, const rlvr_admission *b);

/* Histogram bin of a Δv ≥ 0. */
int rlvr_admission_bin(int64_t staleness);

#endif
