/* io/checkpoint.h — checkpoints: everything needed to continue a run
 * bit-identically, in one HDF5 file per save.
 *
 *   rlvr_checkpoint_begin(&w, dir, &opt)       model config, weights and
 *   rlvr_checkpoint_put_model(w, model)         AdamW moments (streamed from
 *   rlvr_checkpoint_put_array(w, &array) ...    the model's flat buffers),
 *   rlvr_checkpoint_put_rng(w, "name", &s) ...  any named state the trainer
 *   rlvr_checkpoint_commit(w, path, cap)        owns (RNG streams, cursors,
 *                                               task-difficulty table, entropy
 *                                               controller, ...)
 *
 * Atomicity: the file is written as "step_<N>.h5.part", closed, fsynced,
 * renamed to "step_<N>.h5" and the directory fsynced; only then is the
 * tracker file `latest` (one line: the file name) replaced the same way.
 * A crash at any point leaves `latest` naming a complete checkpoint.
 * Retention then deletes all but the newest `keep_last` checkpoints, the
 * marked ones ("step_<N>.h5.keep" exists) and the one `latest` names, and
 * removes stale .part files.
 *
 * Loading checks the format name and version, the model configuration and
 * every dataset's shape and type, and each chunk's Fletcher32 checksum as it
 * is read; a mismatch is refused with RLVR_EFORMAT / RLVR_ECHECKSUM naming
 * the file and the field. Weights are read straight into the model's
 * buffers, one chunk block at a time (no second copy of the model).
 * Schema: docs/FORMATS.md ("Checkpoint"). */
#ifndef RLVR_IO_CHECKPOINT_H
#define RLVR_IO_CHECKPOINT_H

#include "core/rng.h"
#include "io/file.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_CHECKPOINT_FORMAT_VERSION 1

typedef struct {
    int version;             /* RLVR_CHECKPOINT_OPTIONS_VERSION */
    int64_t step;            /* optimizer steps taken so far (>= 0); names the file */
    int64_t policy_version;  /* version of the weights being saved */
    const char *config_text; /* the run's configuration, stored verbatim (NULL: none) */
    uint64_t config_hash;    /* rlvr_config_hash() of it */
    int compression;         /* deflate level 0..9 for every dataset (0: none) */
    int keep_last;           /* retention: newest checkpoints kept (<= 0: keep all) */
    bool mark;               /* keep this one whatever keep_last says */
    bool fsync;              /* fsync file and directory (tests may turn it off) */
} rlvr_checkpoint_options;

#define RLVR_CHECKPOINT_OPTIONS_VERSION 1
#define RLVR_CHECKPOINT_OPTIONS_INIT {RLVR_CHECKPOINT_OPTIONS_VERSION, 0, 0, NULL, 0, 0, 3, false, true}

/* A named array of trainer state, stored as /state/<name>. Names use
 * [A-Za-z0-9_.-] and '/' between parts ("rng/sampler"), at most 120 bytes. */
typedef struct {
    const char *name;
    rlvr_dtype dtype;
    int rank;                        /* 1..RLVR_IO_MAX_RANK */
    int64_t dims[RLVR_IO_MAX_RANK];
    const void *data;                /* dims[0]·…·dims[rank-1] elements */
} rlvr_state_array;

typedef struct rlvr_checkpoint_writer rlvr_checkpoint_writer;
typedef struct rlvr_checkpoint rlvr_checkpoint;

/* "<dir>/step_00000100.h5". */
int rlvr_checkpoint_path(char *buf, size_t cap, const char *dir, int64_t step);

/* Starts checkpoint opt->step in `dir` (created if missing). */
int rlvr_checkpoint_begin(rlvr_checkpoint_writer **out, const char *dir, const rlvr_checkpoint_options *opt);

/* Model configuration, parameters and, when the model has them, the two
 * AdamW moment buffers. At most once per checkpoint. */
int rlvr_checkpoint_put_model(rlvr_checkpoint_writer *w, rlvr_model *model);

/* The tokenizer the model's ids belong to, as /tokenizer (kind, and for
 * BPE the pieces rule and the merges, for HF the tokenizer.json text). At
 * most once per checkpoint. */
int rlvr_checkpoint_put_tokenizer(rlvr_checkpoint_writer *w, const rlvr_tokenizer *tok);

/* One named state array; RLVR_EINVAL for a bad or repeated name. */
int rlvr_checkpoint_put_array(rlvr_checkpoint_writer *w, const rlvr_state_array *a);

/* An RNG stream's whole state (10 uint64: seed, purpose, step, sequence,
 * position, buffer[4], used) as state array `name`. */
int rlvr_checkpoint_put_rng(rlvr_checkpoint_writer *w, const char *name, const rlvr_rng_stream *s);

/* Finishes: close, fsync, rename, fsync dir, update `latest`, retention.
 * Frees w in every case. The final path goes to path_out when non-NULL. */
int rlvr_checkpoint_commit(rlvr_checkpoint_writer *w, char *path_out, size_t cap);

/* Deletes the .part file; frees w. NULL is a no-op. */
void rlvr_checkpoint_abort(rlvr_checkpoint_writer *w);

/* The checkpoint `latest` names in `dir`, as a path. RLVR_ENOTFOUND when
 * there is none yet. */
int rlvr_checkpoint_latest(const char *dir, char *path, size_t cap);

/* Marks checkpoint `step` in `dir` to be kept by retention. */
int rlvr_checkpoint_mark(const char *dir, int64_t step);

/* Steps of the complete checkpoints in `dir`, ascending; *n gets the count
 * (up to cap are stored). */
int rlvr_checkpoint_list(const char *dir, int64_t *steps, size_t cap, size_t *n);

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    int format_version;
    int64_t step;
    int64_t policy_version;
    uint64_t config_hash;
    const char *config_text;   /* "" when none was stored */
    char created_utc[32];
    bool has_model;
    bool has_moments;
} rlvr_checkpoint_info;

/* Opens a checkpoint and reads its header (format, step, version, config). */
int rlvr_checkpoint_open(rlvr_checkpoint **out, const char *path);
void rlvr_checkpoint_close(rlvr_checkpoint *ck);
const rlvr_checkpoint_info *rlvr_checkpoint_info_of(const rlvr_checkpoint *ck);

/* Shape and type of state array `name`; RLVR_ENOTFOUND when absent. */
int rlvr_checkpoint_array_shape(const rlvr_checkpoint *ck, const char *name, rlvr_dtype *dtype, int *rank,
                                int64_t dims[RLVR_IO_MAX_RANK]);

/* Reads state array `name` into `data`, refusing (RLVR_EFORMAT, naming the
 * file and the array) a different type, rank or shape. */
int rlvr_checkpoint_read_array(const rlvr_checkpoint *ck, const char *name, rlvr_dtype dtype, int rank,
                               const int64_t dims[RLVR_IO_MAX_RANK], void *data);

/* Restores an RNG stream saved with rlvr_checkpoint_put_rng. */
int rlvr_checkpoint_read_rng(const rlvr_checkpoint *ck, const char *name, rlvr_rng_stream *s);

/* The stored model configuration (RLVR_EFORMAT when the file has no model). */
int rlvr_checkpoint_model_config(const rlvr_checkpoint *ck, rlvr_model_config *cfg);

/* One stored model tensor (/model/params/<name>): its type, element count
 * and the bytes its data takes in the file (after compression). */
typedef struct {
    const char *name; /* valid during the call */
    rlvr_dtype dtype;
    uint64_t n_elements;
    uint64_t n_bytes;
} rlvr_checkpoint_tensor;

/* Calls fn for each stored model tensor, in name order, from the file's
 * dataset headers (no weights are read). Stops at the first negative
 * return. RLVR_EFORMAT when the file has no model. */
int rlvr_checkpoint_model_tensors(const rlvr_checkpoint *ck, int (*fn)(void *user, const rlvr_checkpoint_tensor *t),
                                  void *user);

/* Loads parameters (and moments, when stored) into an existing model whose
 * configuration must equal the stored one field by field (a mismatch names
 * the field). */
int rlvr_checkpoint_read_model(const rlvr_checkpoint *ck, rlvr_model *model);

/* Loads parameter tensor i (policy/model.h's order) alone into the model,
 * the configuration checked as rlvr_checkpoint_read_model does; moments
 * are not read. A tied LM head has nothing to read. For streaming a
 * checkpoint into a sampler's packed copy (rlvr_sampler_pack_tensor). */
int rlvr_checkpoint_read_model_tensor(const rlvr_checkpoint *ck, rlvr_model *model, int i);

/* Creates a model from the stored configuration and loads it. */
int rlvr_checkpoint_load_model(const rlvr_checkpoint *ck, rlvr_model **out);

/* The stored tokenizer; the byte tokenizer for a checkpoint without one
 * (written before tokenizers were stored, when every run was byte-level).
 * RLVR_EFORMAT naming the file for an unknown kind or pieces rule, bad
 * merges, or a stored tokenizer.json rlvr does not read. */
int rlvr_checkpoint_read_tokenizer(const rlvr_checkpoint *ck, rlvr_tokenizer **out);

#endif
