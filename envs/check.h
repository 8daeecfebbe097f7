/* envs/check.h — pool validation (docs/TASKS.md "Pool validation") and the
 * validated-pool manifest.
 *
 * Checking a task makes sure its reward means something:
 * - distinguishability: the untouched repository fails (every FAIL_TO_PASS
 *   test fails, every PASS_TO_PASS test passes), the reference patch passes
 *   (with consensus), and every wrong patch fails;
 * - quarantine: the reference runs N more times in shuffled test orders; a
 *   test that ever fails is quarantined (removed from the reward); a task
 *   with too many quarantined tests, or all its FAIL_TO_PASS tests, is
 *   excluded as flaky.
 * - tampering: every probe of envs/probes.h (wrong solutions that attack
 *   how the task is judged: lookup-found build files, system-named headers,
 *   results forged from the code under test, a decoy failure and a kill,
 *   reading the hidden tests) must go unrewarded; a task where one is
 *   rewarded is "exploitable", and the reason names the probes.
 * "tests" tasks run in verification enclaves (enclave/verify.h); "arith"
 * tasks are scored in process (an empty answer fails, the reference passes,
 * wrong answers and the arith probes fail).
 *
 * The manifest records the verdict of every task and a content hash of the
 * pool (specs, hidden test files; the base commit ids stand for the
 * repositories). Training and evaluation load it with the pool and refuse it
 * when the pool changed since it was checked. Hashes are FNV-1a 64: they
 * catch edits and stale manifests, not an adversary. */
#ifndef RLVR_ENVS_CHECK_H
#define RLVR_ENVS_CHECK_H

#include "enclave/sandbox.h"
#include "envs/pool.h"
#include "envs/task.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    RLVR_TASK_CHECK_OK = 0,     /* distinguishable; usable (maybe with quarantined tests) */
    RLVR_TASK_CHECK_BROKEN = 1, /* contradicts itself: excluded */
    RLVR_TASK_CHECK_FLAKY = 2,  /* unstable on the reference: excluded */
    RLVR_TASK_CHECK_INFRA = 3,  /* could not be judged (the enclave failed): excluded */
    RLVR_TASK_CHECK_EXPLOITABLE = 4, /* a tampering probe was rewarded: excluded */
} rlvr_task_check_status;

#define RLVR_TASK_CHECK_STATUS_COUNT 5

/* "ok", "broken", "flaky", "infra", "exploitable". */
const char *rlvr_task_check_status_name(rlvr_task_check_status s);

#define RLVR_TASK_CHECK_OPTIONS_VERSION 1

typedef struct {
    unsigned version;
    int quarantine_runs;         /* reference runs in shuffled orders, ≥ 1 */
    double max_quarantine_share; /* exclude a task when more of its tests than this are quarantined */
    int consensus_runs;          /* runs a passing patch needs, all passing */
    uint64_t seed;               /* seeds and test orders of the runs */
    double wall_s;               /* wall-time limit of one enclave run */
} rlvr_task_check_options;

/* [enclave] quarantine_runs, quarantine_max_share, consensus_runs and
 * wall_time_s at their defaults (test_config_defaults holds them equal), seed 1 */
#define RLVR_TASK_CHECK_OPTIONS_INIT {RLVR_TASK_CHECK_OPTIONS_VERSION, 30, 0.25, 3, 1, 120.0}

typedef struct {
    rlvr_task_check_status status;
    char reason[512];          /* why it is not OK ("" when OK) */
    rlvr_str_list quarantined; /* tests removed from the reward */
    int runs;                  /* enclave runs made */
    int probes;                /* tampering probes made (each refused, or the task is exploitable) */
    double wall_s;
} rlvr_task_check_result;

/* Checks one task. `host` is needed for "tests" tasks (NULL is allowed for a
 * pool of "arith" tasks). Returns 0 with *out filled whatever the verdict;
 * a negative code only for bad options or out of memory. */
int rlvr_task_check(rlvr_task_check_result *out, const rlvr_task *task, rlvr_sandbox_host *host,
                    const rlvr_task_check_options *opts);
void rlvr_task_check_result_clear(rlvr_task_check_result *r);

/* Content hash of one task (its spec as rlvr_task_to_json writes it, plus
 * its hidden test files) and of a pool (its tasks' hashes in load order). */
int rlvr_task_content_hash(const rlvr_task *task, uint64_t *out);
int rlvr_task_pool_hash(const rlvr_task_pool *pool, uint64_t *out);

/* ---- manifest ("rlvr-pool-manifest/1", JSON) ------------------------------- */

#define RLVR_POOL_MANIFEST_FORMAT "rlvr-pool-manifest/1"

/* Where a pool's manifest lives by default: "<pool path>.manifest.json"
 * (beside the directory or file, never inside a directory pool). */
void rlvr_pool_manifest_default_path(char *out, size_t cap, const char *pool_path);

/* Writes the manifest: results[i] belongs to task i of the pool. */
int rlvr_pool_manifest_write(const char *path, const rlvr_task_pool *pool, const rlvr_task_check_result *results,
                             const rlvr_task_check_options *opts);

typedef struct rlvr_pool_manifest rlvr_pool_manifest;

/* Reads a manifest and matches it to `pool`: RLVR_EFORMAT for a file that is
 * not a manifest, RLVR_ECHECKSUM when the pool changed since it was checked
 * (the message names a changed task and says to run `rlvr tasks check`). */
int rlvr_pool_manifest_load(rlvr_pool_manifest **out, const char *path, const rlvr_task_pool *pool);
void rlvr_pool_manifest_free(rlvr_pool_manifest *m);

/* The recorded status of a task; RLVR_ENOTFOUND for an id not in it. */
int rlvr_pool_manifest_status(const rlvr_pool_manifest *m, const char *id, rlvr_task_check_status *out);
/* True when the task passed the check (status OK). */
bool rlvr_pool_manifest_usable(const rlvr_pool_manifest *m, const char *id);
/* Its quarantined tests (NULL when the id is unknown). */
const rlvr_str_list *rlvr_pool_manifest_quarantined(const rlvr_pool_manifest *m, const char *id);
/* Tasks with status OK. */
size_t rlvr_pool_manifest_usable_count(const rlvr_pool_manifest *m);

/* A checked pool's tally: how many of its *n tasks the manifest gives each
 * status, and the pool's content hash (rlvr_task_pool_hash). */
int rlvr_pool_manifest_tally(const char *pool_path, const char *manifest_path,
                             size_t counts[RLVR_TASK_CHECK_STATUS_COUNT], size_t *n, uint64_t *hash);

#endif
