/* envs/pool.h — a task pool: the specs of one directory or JSONL file.
 *
 * A pool path is
 * - a directory: every "*.json" file directly in it (not in subdirectories,
 *   not hidden files) is one spec, read in byte order of the file names;
 * - a ".jsonl" file: one spec per non-empty line, relative paths resolved
 *   against the file's directory, messages name "FILE:LINE";
 * - a ".json" file: a pool of one.
 * Task ids are unique in a pool.
 *
 * Split hygiene (docs/TASKS.md "Pools"): train tasks share no split key with
 * eval or regression tasks, so no repository or template is both trained on
 * and measured, unless the key is split by time: every task of it carries
 * created_at and every train task is older than every eval or regression
 * task (tasks mined along one repository's history). Training and evaluation refuse a pool, or a set of pools, that
 * breaks it. */
#ifndef RLVR_ENVS_POOL_H
#define RLVR_ENVS_POOL_H

#include "envs/task.h"

#include <stddef.h>

typedef struct rlvr_task_pool rlvr_task_pool;

/* Loads every spec. The first bad spec fails the whole load with its message
 * (RLVR_EFORMAT / RLVR_EIO); duplicate ids are RLVR_EFORMAT naming both
 * sources; an empty pool is RLVR_EFORMAT. */
int rlvr_task_pool_load(rlvr_task_pool **out, const char *path);
void rlvr_task_pool_free(rlvr_task_pool *pool);

/* The path it was loaded from. */
const char *rlvr_task_pool_path(const rlvr_task_pool *pool);
size_t rlvr_task_pool_size(const rlvr_task_pool *pool);
/* Task i in load order (i < size). */
const rlvr_task *rlvr_task_pool_get(const rlvr_task_pool *pool, size_t i);
/* The task with this id, or NULL. */
const rlvr_task *rlvr_task_pool_find(const rlvr_task_pool *pool, const char *id);
/* Number of tasks in a split. */
size_t rlvr_task_pool_count(const rlvr_task_pool *pool, rlvr_split split);

/* Split hygiene over the tasks of one pool: RLVR_EINVAL when a split key is
 * used by a train task and by an eval or regression task and not split by
 * time; the message names the key, the tasks that decide it, and how many
 * keys are shared. */
int rlvr_task_pool_check_splits(const rlvr_task_pool *pool);

/* The same over several pools taken together (a training pool and the
 * evaluation pools of the same run). */
int rlvr_task_pools_check_splits(const rlvr_task_pool *const *pools, size_t n_pools);

/* The same, and *time_split_keys (may be NULL) receives how many keys are
 * shared by train and other tasks and split by time. */
int rlvr_task_pools_split_check(const rlvr_task_pool *const *pools, size_t n_pools, size_t *time_split_keys);

#endif
