/* tests/envs/pool_fixture.h — a small generated pool for the envs tests:
 * `bugfix` bugfix-c tasks and `arith` arithmetic tasks (generator seed
 * `seed`) in DIR/pool, loaded. */
#ifndef RLVR_TESTS_ENVS_POOL_FIXTURE_H
#define RLVR_TESTS_ENVS_POOL_FIXTURE_H

#include "envs/gen.h"
#include "envs/pool.h"
#include "test.h"

#include <stdio.h>

static inline rlvr_task_pool *pool_fixture(const char *dir, int bugfix, int arith, uint64_t seed) {
    char pool_dir[4096];
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.count = bugfix;
    o.seed = seed;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    o.family = "arith";
    o.count = arith;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    return pool;
}

#endif
