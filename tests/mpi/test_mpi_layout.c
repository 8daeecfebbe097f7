/* [layout] parsing and validation, rank ↔ role mapping and the launch check:
 * pure functions, no MPI_Init. */
#include "mpi/layout.h"
#include "test.h"

static const rlvr_config_key *const schemas[] = {rlvr_layout_config_keys, NULL};

static void test_config(void) {
    rlvr_config *cfg = NULL;
    rlvr_layout l;
    CHECK_OK(rlvr_config_parse(&cfg, "[layout]\ntrainer = 2\nverifier = 1\nrollout = 3\n", "run.ini", schemas));
    CHECK_OK(rlvr_layout_from_config(&l, cfg, 6));
    CHECK(l.trainer == 2 && l.verifier == 1 && l.rollout == 3);
    CHECK(rlvr_layout_world_size(&l) == 6);

    /* wrong world size: names the file, line, key and shows the world size */
    rlvr_layout untouched = {7, 7, 7};
    int rc = rlvr_layout_from_config(&untouched, cfg, 5);
    CHECK(rc == RLVR_ECONFIG);
    const char *msg = rlvr_error_last();
    CHECK_MSG(strstr(msg, "run.ini:4") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "rollout") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "world size is 5") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "= 6 ranks") != NULL, "%s", msg);
    CHECK(untouched.trainer == 7);
    rlvr_config_free(cfg);

    /* defaults: one rank per role */
    CHECK_OK(rlvr_config_parse(&cfg, "", "empty.ini", schemas));
    CHECK_OK(rlvr_layout_from_config(&l, cfg, 3));
    CHECK(l.trainer == 1 && l.verifier == 1 && l.rollout == 1);
    CHECK(rlvr_layout_from_config(&l, cfg, 1) == RLVR_ECONFIG);
    rlvr_config_free(cfg);

    /* a role with no ranks is refused by the schema, naming the key */
    cfg = NULL;
    rc = rlvr_config_parse(&cfg, "[layout]\nverifier = 0\n", "zero.ini", schemas);
    CHECK(rc == RLVR_ECONFIG && cfg == NULL);
    CHECK_MSG(strstr(rlvr_error_last(), "verifier") != NULL, "%s", rlvr_error_last());
    /* and a typo gets a suggestion */
    rc = rlvr_config_parse(&cfg, "[layout]\nrollouts = 2\n", "typo.ini", schemas);
    CHECK(rc == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "rollout") != NULL, "%s", rlvr_error_last());
    rlvr_config_free(cfg);
}

static void test_validate(void) {
    rlvr_layout l = {0, 1, 1};
    CHECK(rlvr_layout_validate(&l, 2) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "trainer") != NULL, "%s", rlvr_error_last());
    l = (rlvr_layout){1, 2, 3};
    CHECK_OK(rlvr_layout_validate(&l, 6));
    CHECK(rlvr_layout_validate(&l, 7) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "world size is 7") != NULL, "%s", rlvr_error_last());
}

static void test_roles(void) {
    rlvr_layout l = {2, 1, 3};
    const rlvr_rank_role want[6] = {RLVR_ROLE_TRAINER, RLVR_ROLE_TRAINER, RLVR_ROLE_VERIFIER,
                               RLVR_ROLE_ROLLOUT, RLVR_ROLE_ROLLOUT, RLVR_ROLE_ROLLOUT};
    const int want_rank[6] = {0, 1, 0, 0, 1, 2};
    for (int w = 0; w < 6; w++) {
        rlvr_rank_role role;
        int rr = -1;
        CHECK_OK(rlvr_layout_role_of(&l, w, &role, &rr));
        CHECK(role == want[w]);
        CHECK(rr == want_rank[w]);
        CHECK(rlvr_layout_world_rank(&l, role, rr) == w);
    }
    CHECK(rlvr_layout_role_of(&l, 6, NULL, NULL) == RLVR_EINVAL);
    CHECK(rlvr_layout_role_of(&l, -1, NULL, NULL) == RLVR_EINVAL);
    CHECK(rlvr_layout_world_rank(&l, RLVR_ROLE_VERIFIER, 1) == RLVR_EINVAL);
    CHECK(rlvr_layout_world_rank(&l, RLVR_ROLE_COUNT, 0) == RLVR_EINVAL);
    CHECK(rlvr_layout_count(&l, RLVR_ROLE_ROLLOUT) == 3);
    CHECK(strcmp(rlvr_role_name(RLVR_ROLE_VERIFIER), "verifier") == 0);
    CHECK(strcmp(rlvr_role_name(RLVR_ROLE_COUNT), "unknown") == 0);
}

static void test_launch(void) {
    CHECK_OK(rlvr_mpi_check_launch_env(1, NULL, NULL, NULL)); /* plain run, no launcher */
    CHECK_OK(rlvr_mpi_check_launch_env(4, "4", NULL, NULL));
    CHECK_OK(rlvr_mpi_check_launch_env(4, "4", NULL, "16")); /* mpirun inside a bigger allocation */
    CHECK_OK(rlvr_mpi_check_launch_env(4, NULL, "4", "16")); /* srun step inside a bigger allocation */
    CHECK_OK(rlvr_mpi_check_launch_env(8, NULL, NULL, "8"));

    /* the singleton trap: srun without PMIx */
    CHECK(rlvr_mpi_check_launch_env(1, NULL, "4", "4") == RLVR_ECONFIG);
    const char *msg = rlvr_error_last();
    CHECK_MSG(strstr(msg, "singleton") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "SLURM_STEP_NUM_TASKS=4") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "srun --mpi=pmix") != NULL, "%s", msg);
    CHECK(rlvr_mpi_check_launch_env(1, NULL, NULL, "2") == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "SLURM_NTASKS=2") != NULL, "%s", rlvr_error_last());

    CHECK(rlvr_mpi_check_launch_env(2, NULL, "4", NULL) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "2 ranks") != NULL, "%s", rlvr_error_last());
    CHECK(rlvr_mpi_check_launch_env(3, NULL, NULL, "x3") == RLVR_ECONFIG);
    CHECK(rlvr_mpi_check_launch_env(3, "2", NULL, NULL) == RLVR_ECONFIG);
}

int main(void) {
    test_config();
    test_validate();
    test_roles();
    test_launch();
    return test_summary("test_mpi_layout");
}
