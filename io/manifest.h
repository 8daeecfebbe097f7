/* io/manifest.h — the run manifest (manifest.h5): where a run's files came
 * from, so that an archived run can be reproduced from its files alone.
 *
 * Written when a job starts (status "running") and rewritten when it ends
 * (status, end time, final step), each time atomically (temporary name,
 * fsync, rename). It records rlvr's own source commit and dirty state
 * (libgit2 on the source tree, falling back to the values taken when the
 * build was configured), the configuration text and hash, the seed, the
 * rank layout, every rank's host name, the SLURM_* environment, library
 * versions (HDF5, MPI, libgit2, OpenBLAS, compiler) and the task pool hash.
 * Schema: docs/FORMATS.md ("Run manifest"). io/ knows nothing of MPI roles:
 * the caller passes the layout and the host names it gathered. */
#ifndef RLVR_IO_MANIFEST_H
#define RLVR_IO_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_MANIFEST_FORMAT_VERSION 1

typedef struct {
    int version;                /* RLVR_MANIFEST_OPTIONS_VERSION */
    const char *run_name;
    const char *config_text;    /* the run's configuration (NULL: none) */
    uint64_t config_hash;       /* rlvr_config_hash() */
    uint64_t seed;              /* [run] seed */
    int world_size;             /* MPI ranks in all */
    int trainer_ranks, verifier_ranks, rollout_ranks;
    const char *const *hosts;   /* host name of each rank, n_hosts entries */
    int n_hosts;
    const char *task_pool_hash; /* hash of the task pool the run trains on ("" if none) */
    const char *source_dir;     /* rlvr's source tree for libgit2; NULL: the build's */
} rlvr_manifest_options;

#define RLVR_MANIFEST_OPTIONS_VERSION 1
#define RLVR_MANIFEST_OPTIONS_INIT {RLVR_MANIFEST_OPTIONS_VERSION, "run", NULL, 0, 0, 1, 1, 0, 0, NULL, 0, "", NULL}

typedef struct rlvr_manifest rlvr_manifest;

/* Gathers the provenance now (git state, environment, versions). A libgit2
 * failure is not an error: the build-time commit is used and the reason
 * kept in `git_error`. */
int rlvr_manifest_new(rlvr_manifest **out, const rlvr_manifest_options *opt);
void rlvr_manifest_free(rlvr_manifest *m);

/* Records the end of the job: status ("finished", "failed", "interrupted"),
 * the last completed step and policy version. Then write it again. */
int rlvr_manifest_finish(rlvr_manifest *m, const char *status, int64_t final_step, int64_t final_policy_version);

/* Writes the manifest atomically to `path`. */
int rlvr_manifest_write(const rlvr_manifest *m, const char *path);

/* The provenance as gathered, for callers and tests. */
const char *rlvr_manifest_git_commit(const rlvr_manifest *m); /* 40 hex digits or "unknown" */
bool rlvr_manifest_git_dirty(const rlvr_manifest *m);
const char *rlvr_manifest_git_source(const rlvr_manifest *m); /* "libgit2" or "build" */

/* One root attribute of a manifest file as text (strings as is, numbers in
 * decimal): RLVR_ENOTFOUND when absent. */
int rlvr_manifest_read_attr(const char *path, const char *name, char *buf, size_t cap);

#endif
