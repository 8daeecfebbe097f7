/* Rollout shards: round trips, visibility (close-and-rename), refusals. */
#include "io/file.h"
#include "io/shard.h"
#include "io_fixtures.h"
#include "test.h"

#include <sys/stat.h>

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_and_check(const char *dir, int64_t step, int rank, int n, const rlvr_shard_options *opt) {
    rlvr_shard_writer *w = NULL;
    CHECK_OK(rlvr_shard_create(&w, dir, step, rank, opt));
    if (!w) return;
    char final_path[4096], part[4200];
    CHECK_OK(rlvr_shard_path(final_path, sizeof final_path, dir, step, rank));
    snprintf(part, sizeof part, "%s.part", final_path);
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 16, 2));
    for (int k = 0; k < n; k++) {
        CHECK_OK(fixture_rollout(&r, 42 + (uint64_t)step, k, 1 + k % 4, 9 + k % 7));
        CHECK_OK(rlvr_shard_append(w, &r, 0.5f * (float)k - 3.0f));
    }
    CHECK(rlvr_shard_writer_count(w) == n);
    /* not visible under its final name until committed */
    CHECK(!exists(final_path));
    CHECK(exists(part));
    char got_path[4096] = "";
    CHECK_OK(rlvr_shard_commit(w, got_path, sizeof got_path));
    CHECK(strcmp(got_path, final_path) == 0);
    CHECK(exists(final_path));
    CHECK(!exists(part));

    rlvr_shard *s = NULL;
    CHECK_OK(rlvr_shard_open(&s, final_path));
    if (!s) {
        rlvr_rollout_free(&r);
        return;
    }
    const rlvr_shard_info *info = rlvr_shard_info_of(s);
    CHECK(info->step == step);
    CHECK(info->rank == rank);
    CHECK(info->n_rollouts == n);
    CHECK(info->format_version == RLVR_SHARD_FORMAT_VERSION);
    CHECK(strlen(info->created_utc) == 20);
    rlvr_rollout back;
    CHECK_OK(rlvr_rollout_init(&back, 1, 1));
    int64_t tokens = 0, turns = 0;
    for (int k = 0; k < n; k++) {
        float adv = 0;
        CHECK_OK(fixture_rollout(&r, 42 + (uint64_t)step, k, 1 + k % 4, 9 + k % 7));
        CHECK_OK(rlvr_shard_read(s, k, &back, &adv));
        CHECK_MSG(fixture_same_rollout(&r, &back), "rollout %d differs after the round trip", k);
        CHECK(adv == 0.5f * (float)k - 3.0f);
        tokens += r.n_tokens;
        turns += r.n_turns;
    }
    CHECK(info->n_tokens == tokens);
    CHECK(info->n_turns == turns);
    CHECK(rlvr_shard_read(s, n, &back, NULL) == RLVR_EINVAL);
    CHECK(rlvr_shard_read(s, -1, &back, NULL) == RLVR_EINVAL);
    rlvr_shard_close(s);
    rlvr_rollout_free(&back);
    rlvr_rollout_free(&r);

    rlvr_file_kind kind = RLVR_FILE_UNKNOWN;
    int version = 0;
    CHECK_OK(rlvr_io_identify(final_path, &kind, &version));
    CHECK(kind == RLVR_FILE_SHARD && version == RLVR_SHARD_FORMAT_VERSION);
    int64_t datasets = 0, bytes = 0;
    CHECK_OK(rlvr_io_verify(final_path, &datasets, &bytes));
    CHECK(datasets == 36);
    CHECK(bytes > tokens * 13);
}

static void test_round_trips(const char *dir) {
    rlvr_shard_options small = RLVR_SHARD_OPTIONS_INIT;
    small.chunk_tokens = 100; /* many chunks, partial chunk at the end */
    write_and_check(dir, 3, 0, 37, &small);
    write_and_check(dir, 4, 1, 1, NULL);
    write_and_check(dir, 5, 2, 0, NULL); /* an empty step */
    rlvr_shard_options raw = RLVR_SHARD_OPTIONS_INIT;
    raw.compression = 0;
    raw.fsync = false;
    write_and_check(dir, 6, 3, 9, &raw);
    rlvr_shard_options max = RLVR_SHARD_OPTIONS_INIT;
    max.compression = 9;
    max.chunk_tokens = 1;
    write_and_check(dir, 7, 0, 5, &max);
    rlvr_shard_options plain = RLVR_SHARD_OPTIONS_INIT;
    plain.compression = 0;
    plain.chunk_tokens = 37; /* many odd-sized chunks stored as they are, with fsync */
    write_and_check(dir, 8, 1, 23, &plain);
}

static void test_refusals(const char *dir) {
    rlvr_shard_writer *w = NULL;
    CHECK_OK(rlvr_shard_create(&w, dir, 10, 0, NULL));
    if (!w) return;
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 16, 2));
    CHECK_OK(fixture_rollout(&r, 1, 0, 2, 5));
    CHECK_OK(rlvr_shard_append(w, &r, 1.0f));

    r.mask[3] = 7;
    CHECK(rlvr_shard_append(w, &r, 1.0f) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "mask") != NULL);
    CHECK(strstr(rlvr_error_last(), "task-000") != NULL);
    r.mask[3] = RLVR_TOKEN_POLICY;
    r.turns[0].policy_end = r.n_tokens + 1;
    CHECK(rlvr_shard_append(w, &r, 1.0f) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "turn 0") != NULL);
    CHECK_OK(fixture_rollout(&r, 1, 0, 2, 5));
    r.prompt_tokens = r.n_tokens + 1;
    CHECK(rlvr_shard_append(w, &r, 1.0f) == RLVR_EINVAL);
    CHECK_OK(fixture_rollout(&r, 1, 0, 2, 5));
    r.verdict = (rlvr_verdict)99;
    CHECK(rlvr_shard_append(w, &r, 1.0f) == RLVR_EINVAL);
    CHECK(rlvr_shard_writer_count(w) == 1);

    /* aborting leaves nothing behind */
    char path[4096], part[4200];
    CHECK_OK(rlvr_shard_path(path, sizeof path, dir, 10, 0));
    snprintf(part, sizeof part, "%s.part", path);
    CHECK(exists(part));
    rlvr_shard_abort(w);
    CHECK(!exists(part) && !exists(path));
    rlvr_rollout_free(&r);

    rlvr_shard_options bad = RLVR_SHARD_OPTIONS_INIT;
    bad.version = 99;
    CHECK(rlvr_shard_create(&w, dir, 11, 0, &bad) == RLVR_EINVAL);
    bad = (rlvr_shard_options)RLVR_SHARD_OPTIONS_INIT;
    bad.compression = 10;
    CHECK(rlvr_shard_create(&w, dir, 11, 0, &bad) == RLVR_EINVAL);
    CHECK(rlvr_shard_create(&w, dir, -1, 0, NULL) == RLVR_EINVAL);

    /* things that are not shards */
    rlvr_shard *s = NULL;
    char missing[4200], text[4200];
    snprintf(missing, sizeof missing, "%s/nope.h5", dir);
    CHECK(rlvr_shard_open(&s, missing) == RLVR_ENOTFOUND);
    CHECK(strstr(rlvr_error_last(), "nope.h5") != NULL);
    snprintf(text, sizeof text, "%s/text.h5", dir);
    FILE *f = fopen(text, "w");
    if (f) {
        fputs("not hdf5 at all\n", f);
        fclose(f);
    }
    CHECK(rlvr_shard_open(&s, text) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "no HDF5 signature") != NULL);
    CHECK(s == NULL);
}

int main(void) {
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "shard");
    test_round_trips(dir);
    test_refusals(dir);
    fixture_rmtree(dir);
    return test_summary("test_shard");
}
