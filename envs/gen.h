/* envs/gen.h — built-in task families, generated from a seed.
 *
 * - "bugfix-c" (multi-turn, verifier "tests"): a small C library (2-4 units
 *   of one or two functions, lib.c + lib.h + Makefile) in its own git
 *   repository, with one planted bug from a template (off_by_one,
 *   wrong_operator, wrong_constant, missing_case, wrong_condition; the
 *   regression split uses swapped_arguments and wrong_variable, which are
 *   never used for train or eval). Public tests show one failing case;
 *   hidden tests (TAP) cover FAIL_TO_PASS and PASS_TO_PASS; a reference
 *   patch and at least two wrong patches. Every repository is its own split
 *   key.
 * - "bugfix-py" (multi-turn, verifier "tests"): the same draw written in
 *   Python (lib.py), judged by the same C judge through tests/runner.py
 *   under an isolated Python (-I -S -B); envs/gen_bugfix_py.c says how
 *   Python's own lookups are kept out.
 * - "arith" (single-turn, verifier "arith"): arithmetic and countdown
 *   problems scored in process (envs/arith.h).
 *
 * Everything comes from Philox (core/rng.h, purpose RLVR_RNG_ENV) keyed by
 * (seed, family/split/difficulty, task index): the same options give the same
 * bytes, task i does not depend on how many tasks are generated, and train,
 * eval and regression tasks of the same seed are different draws. Content
 * (a library, an arithmetic problem) is also assigned to one split by a hash
 * (7 of 10 buckets train, 2 eval, 1 regression), so separately generated
 * pools of different splits never share a split key. Difficulty 1..3 sets the size of the library or the
 * numbers and how much the prompt gives away. docs/TASKS.md describes the
 * files written. */
#ifndef RLVR_ENVS_GEN_H
#define RLVR_ENVS_GEN_H

#include "envs/task.h"

#include <stddef.h>
#include <stdint.h>

#define RLVR_TASK_GEN_OPTIONS_VERSION 1

typedef struct {
    unsigned version; /* RLVR_TASK_GEN_OPTIONS_VERSION */
    const char *family; /* "bugfix-c" | "bugfix-py" | "arith" */
    int64_t count;      /* tasks to write, ≥ 1 */
    int64_t first;      /* index of the first task (ids and draws), ≥ 0 */
    uint64_t seed;
    rlvr_split split;
    int difficulty;     /* 1..3 */
    uint32_t tools;     /* tool set of generated multi-turn tasks (envs/tools.h mask); 0 = all tools */
    const char *compiler; /* bugfix-c: the C compiler its Makefiles name (CC); NULL or "" = "cc". A bare
                             name of letters, digits and ._+- found in /usr/local/bin, /usr/bin or /bin
                             (where the enclave looks), else RLVR_EINVAL / RLVR_ENOTFOUND */
} rlvr_task_gen_options;

#define RLVR_TASK_GEN_OPTIONS_INIT {RLVR_TASK_GEN_OPTIONS_VERSION, "arith", 1, 0, 1, RLVR_SPLIT_TRAIN, 1, 0, NULL}

/* The family names, NULL-terminated. */
extern const char *const rlvr_task_families[];

/* The templates a family draws from in a split (static names), up to `cap`;
 * returns how many there are. RLVR_ENOTFOUND for an unknown family. */
int rlvr_task_gen_templates(const char *family, rlvr_split split, const char **names, int cap);

/* The id of task number `index` ("<family>-<split>-d<difficulty>-s<seed>-<index, 6 digits>"). */
void rlvr_task_gen_id(char *out, size_t cap, const rlvr_task_gen_options *opts, int64_t index);

/* Makes task number `index` and returns its spec. Files it needs (bugfix-c:
 * repos/<id>/ as a git repository with the base commit, hidden/<id>/tests/)
 * are written under out_dir (created as needed; arith writes nothing); the
 * spec itself is not written. RLVR_EINVAL for bad options, RLVR_EIO when a path already exists
 * or cannot be written, RLVR_EGIT for libgit2 failures. */
int rlvr_task_gen_one(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir);

/* Makes tasks first .. first+count-1 and writes each spec as out_dir/<id>.json
 * (creating out_dir), so out_dir is a pool (envs/pool.h). Several calls with
 * other splits or ranges may share an out_dir. *n_written (may be NULL)
 * counts the specs written, also on failure. */
int rlvr_task_gen(const rlvr_task_gen_options *opts, const char *out_dir, size_t *n_written);

#endif
