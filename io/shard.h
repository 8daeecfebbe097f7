/* io/shard.h — rollout shards: the rollouts one trainer rank consumed in one
 * step, exactly as sampled (docs/FORMATS.md "Rollout shard"), in one HDF5 file.
 *
 *   writer: rlvr_shard_create → rlvr_shard_append (as rollouts arrive) →
 *           rlvr_shard_commit (or rlvr_shard_abort)
 *   reader: rlvr_shard_open → rlvr_shard_info / rlvr_shard_read → rlvr_shard_close
 *
 * Visibility: close-and-rename. The writer appends to "<name>.part"; commit
 * closes it, fsyncs it and renames it to its final name, so a file under a
 * final name is always complete and readers (trainer, analysis, rlvr
 * inspect) can open it while the run goes on. A crash leaves only a .part
 * file, which nothing reads. (SWMR was not chosen for shards: a shard lives
 * for one step, readers want whole shards, and SWMR needs POSIX write
 * ordering that NFS and some parallel file systems lack.)
 *
 * Cost: full chunks are shuffled, deflated (ISA-L igzip at levels 1–3, libdeflate at 4–9; zlib streams) and
 * checksummed on helper threads — OMP_NUM_THREADS in all, the appending
 * thread included — while appends go on; with fsync the kernel is asked to
 * write the file out as it grows. Chunk buffers stay allocated for the next
 * shard (io/chunks.h).
 *
 * The schema is in docs/FORMATS.md ("Rollout shard"). io/ knows nothing of
 * MPI: the caller passes its rank number. */
#ifndef RLVR_IO_SHARD_H
#define RLVR_IO_SHARD_H

#include "core/record.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_SHARD_FORMAT_VERSION 1

typedef struct {
    int version;          /* RLVR_SHARD_OPTIONS_VERSION */
    int compression;      /* deflate level 0..9; 0 = no shuffle/deflate (checksums stay) */
    int64_t chunk_tokens; /* elements per chunk of the per-token arrays */
    bool fsync;           /* fsync the file before the rename */
} rlvr_shard_options;

#define RLVR_SHARD_OPTIONS_VERSION 1
#define RLVR_SHARD_OPTIONS_INIT {RLVR_SHARD_OPTIONS_VERSION, 1, 65536, true}

typedef struct rlvr_shard_writer rlvr_shard_writer;
typedef struct rlvr_shard rlvr_shard;

/* "<dir>/step_00000012.rank_0003.h5"; RLVR_EINVAL when it does not fit. */
int rlvr_shard_path(char *buf, size_t cap, const char *dir, int64_t step, int rank);

/* Starts the shard of (step, rank) in `dir` (created if missing). opt may
 * be NULL for the defaults. */
int rlvr_shard_create(rlvr_shard_writer **out, const char *dir, int64_t step, int rank,
                      const rlvr_shard_options *opt);

/* Appends one rollout and its GRPO advantage. The record is checked first
 * (token mask values, prompt and turn ranges, verdict and stop codes) and
 * refused with RLVR_EINVAL naming the rollout; a refused record writes
 * nothing. */
int rlvr_shard_append(rlvr_shard_writer *w, const rlvr_rollout *r, float advantage);

/* Rollouts appended so far. */
int64_t rlvr_shard_writer_count(const rlvr_shard_writer *w);

/* Writes what is buffered, closes, fsyncs and renames the file to its final
 * name, fsyncs the directory; frees w in every case. The final path is
 * copied to path_out when non-NULL. */
int rlvr_shard_commit(rlvr_shard_writer *w, char *path_out, size_t cap);

/* Closes and deletes the .part file; frees w. NULL is a no-op. */
void rlvr_shard_abort(rlvr_shard_writer *w);

typedef struct {
    int format_version;
    int64_t step;
    int rank;
    int64_t n_rollouts, n_tokens, n_turns;
    char created_utc[32];
} rlvr_shard_info;

/* Opens and reads a shard (all of it: a shard is one step of one rank),
 * verifying checksums and the consistency of offsets and ranges.
 * RLVR_EFORMAT / RLVR_ECHECKSUM name the file and the dataset. */
int rlvr_shard_open(rlvr_shard **out, const char *path);
void rlvr_shard_close(rlvr_shard *s);

const rlvr_shard_info *rlvr_shard_info_of(const rlvr_shard *s);

/* Copies rollout i (0 <= i < n_rollouts) into `out`, which must have been
 * set up with rlvr_rollout_init (it grows as needed). advantage may be NULL. */
int rlvr_shard_read(const rlvr_shard *s, int64_t i, rlvr_rollout *out, float *advantage);

/* Totals over a shard's rollouts: how many got each verdict, their policy
 * tokens and their mean total reward (0 for an empty shard). */
typedef struct {
    int64_t verdicts[RLVR_VERDICT_COUNT];
    int64_t policy_tokens;
    double mean_reward;
} rlvr_shard_totals;

int rlvr_shard_totals_of(const rlvr_shard *s, rlvr_shard_totals *out);

/* The shard files of one step that sit in the directory of `shard_path`
 * (one per trainer rank), found by name, none opened: their directory
 * ("." for a bare name), how many, and the lowest and highest rank.
 * RLVR_EIO when the directory cannot be listed. */
typedef struct {
    char dir[4096];
    int files, lo_rank, hi_rank; /* ranks -1 when files is 0 */
} rlvr_shard_step_files;

int rlvr_shard_list_step(const char *shard_path, int64_t step, rlvr_shard_step_files *out);

#endif
