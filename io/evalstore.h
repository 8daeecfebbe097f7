/* io/evalstore.h — evaluation results (eval/eval.h) as HDF5 files
 * (schema: docs/FORMATS.md "Evaluation results").
 *
 * A result file ("rlvr.eval_result", version 1) holds what rebuilds the
 * result — the settings (samples, seed, temperature, confidence, resamples)
 * and the per-task counts table — plus the stats and the groups as they
 * were summarised (pass@k and pass^k with intervals, per family and "all"),
 * so readers such as h5py need no statistics of their own. Reading it back
 * recomputes the groups from the counts (rlvr_eval_result_new / set_task /
 * summarize), like rlvr_eval_result_from_json, so shards can be merged.
 *
 * A sweep file ("rlvr.eval_sweep", version 1) holds several labelled
 * results (one per checkpoint, each laid out like a result file under
 * /checkpoints/<i>) and a long table of every estimate (/table: checkpoint,
 * step, family, metric "pass@k" | "pass^k", k, ...).
 *
 * Files are written as PATH.part, closed, fsynced, renamed and the directory
 * fsynced, so a reader never sees half a file; every dataset is chunked with
 * shuffle + deflate and Fletcher32. io/ is used from one thread at a time. */
#ifndef RLVR_IO_EVALSTORE_H
#define RLVR_IO_EVALSTORE_H

#include "eval/eval.h"

#include <stddef.h>
#include <stdint.h>

#define RLVR_FORMAT_EVAL_RESULT "rlvr.eval_result"
#define RLVR_FORMAT_EVAL_SWEEP "rlvr.eval_sweep"
#define RLVR_EVALSTORE_FORMAT_VERSION 1

/* What a result is of (attributes next to the settings). */
typedef struct {
    char checkpoint[4096];  /* the checkpoint evaluated ("" unknown) */
    int64_t step;           /* its step (-1 unknown) */
    int64_t policy_version; /* (-1 unknown) */
    char pool[4096];        /* the task pool ("" unknown) */
    char split[16];         /* "eval", "train", "regression", "all" ("" unknown) */
    int64_t shard, n_shards; /* shard `shard` of n_shards of the split's tasks (-1, -1: the whole split) */
    int64_t first_task;     /* position of the shard's first task among the split's tasks (0 for a whole split) */
} rlvr_evalstore_label;

/* step, policy_version, shard, n_shards -1; strings ""; first_task 0. */
void rlvr_evalstore_label_init(rlvr_evalstore_label *l);

/* Writes one result with its label to `path` (atomically; see above).
 * Errors name the path. */
int rlvr_evalstore_write(const char *path, const rlvr_eval_result *r, const rlvr_evalstore_label *label);

/* Reads a result file: the settings, the per-task counts and the stats; the
 * groups are recomputed at the stored confidence and resamples. label may be
 * NULL. RLVR_EFORMAT naming the file and the dataset or attribute for a file
 * that is not a version-1 result, RLVR_ECHECKSUM for a corrupted chunk. */
int rlvr_evalstore_read(const char *path, rlvr_eval_result **out, rlvr_evalstore_label *label);

/* Writes n labelled results (n ≥ 1) as one sweep file at `path`. */
int rlvr_evalstore_write_sweep(const char *path, const rlvr_eval_result *const *results,
                               const rlvr_evalstore_label *labels, size_t n);

/* Reads a sweep file: *results (n, each rlvr_eval_result_free, then free the
 * array) and *labels (n, free) in the stored order. labels may be NULL. */
int rlvr_evalstore_read_sweep(const char *path, rlvr_eval_result ***results, rlvr_evalstore_label **labels,
                              size_t *n);

#endif
