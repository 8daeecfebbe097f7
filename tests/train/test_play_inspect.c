/* The library behind `rlvr rollout`, `rlvr agent` and `rlvr inspect
 * --rollout` (no command): an arith task played by a random-weights policy
 * through the harness (train/play.h), twice with one seed to the same
 * tokens; a rollout rendered for a human (train/inspect.h) with its
 * segments marked, in colour or not, with its token table; and the
 * tokenizer a shard's ids decode with. */
#include "envs/gen.h"
#include "io/io_fixtures.h"
#include "test.h"
#include "train/inspect.h"
#include "train/play.h"
#include "train/run.h"

#include <sys/stat.h>

static size_t count(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* One rollout of the task; its tokens copied to *tokens (n of them). */
static void play_once(const char *task, int32_t **tokens, int32_t *n, char *task_id) {
    rlvr_play_options o = {.task = task, .seed = 5, .temperature = 1.0f};
    rlvr_play p;
    rlvr_harness_job job;
    memset(&job, 0, sizeof job);
    int rc = rlvr_play_open(&p, &o, 1);
    CHECK_OK(rc);
    if (rc == 0) {
        job.task = p.task;
        CHECK_OK(rlvr_harness_run(p.sampler, p.tok, &p.opt, &job, 1));
        CHECK_OK(rlvr_play_verify(&p, &job, 5)); /* arith: scored by the harness already */
        const rlvr_rollout *r = &job.record;
        CHECK(r->prompt_tokens > 0 && r->n_tokens > r->prompt_tokens);
        CHECK(rlvr_rollout_policy_tokens(r) > 0);
        CHECK(r->verdict != RLVR_VERDICT_NONE);
        snprintf(task_id, RLVR_TASK_ID_CAP, "%s", r->task_id);
        *n = r->n_tokens;
        *tokens = malloc((size_t)r->n_tokens * sizeof **tokens);
        if (*tokens) memcpy(*tokens, r->tokens, (size_t)r->n_tokens * sizeof **tokens);
    }
    rlvr_harness_job_clear(&job);
    rlvr_play_close(&p);
}

static void test_play(const char *dir) {
    rlvr_task_gen_options g = RLVR_TASK_GEN_OPTIONS_INIT;
    g.seed = 3;
    CHECK_OK(rlvr_task_gen(&g, dir, NULL));
    char task[4200];
    snprintf(task, sizeof task, "%s/arith-train-d1-s3-000000.json", dir);
    int32_t *a = NULL, *b = NULL, na = 0, nb = 0;
    char id_a[RLVR_TASK_ID_CAP] = "", id_b[RLVR_TASK_ID_CAP] = "";
    play_once(task, &a, &na, id_a);
    play_once(task, &b, &nb, id_b);
    CHECK(strcmp(id_a, "arith-train-d1-s3-000000") == 0);
    CHECK_MSG(na == nb && a && b && memcmp(a, b, (size_t)na * sizeof *a) == 0, "same seed, other tokens (%d, %d)",
              na, nb);
    free(a);
    free(b);
    /* a task that is not there */
    rlvr_play_options o = {.task = "/nonexistent.json", .seed = 1, .temperature = 1.0f};
    rlvr_play p;
    CHECK(rlvr_play_open(&p, &o, 1) < 0);
    rlvr_play_close(&p);
}

static void test_render(void) {
    rlvr_rollout r;
    rlvr_tokenizer *tok = NULL;
    CHECK_OK(rlvr_rollout_init(&r, 16, 2));
    CHECK_OK(fixture_rollout(&r, 21, 6, 3, 6));
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    char *text = NULL;
    CHECK_OK(rlvr_inspect_rollout(&r, 6, 0.5f, tok, false, true, &text));
    if (text) {
        CHECK(strstr(text, "── rollout 6: task task-001, group 1001, index 2") != NULL);
        CHECK(strstr(text, "advantage +0.5000") != NULL);
        /* three policy segments and two observations, each opened and closed */
        CHECK_MSG(count(text, "{{") == 3 + 1 && count(text, "}}") == 3 + 1, "{{ %zu", count(text, "{{"));
        CHECK(count(text, "[[") == 2 + 1 && count(text, "]]") == 2 + 1); /* + the legend's */
        CHECK(count(text, "   turn ") == 3);
        CHECK(strstr(text, "\033") == NULL);
        /* the token table: its header and one line per token */
        const char *table = strstr(text, "      pos");
        CHECK(table != NULL);
        if (table) CHECK_MSG(count(table, "\n") == (size_t)r.n_tokens + 1, "%zu lines", count(table, "\n"));
    }
    free(text);
    text = NULL;
    CHECK_OK(rlvr_inspect_rollout(&r, 6, 0.5f, NULL, true, false, &text));
    if (text) {
        char first[32];
        snprintf(first, sizeof first, "<%d>", r.tokens[0]); /* no tokenizer: ids as <id> */
        CHECK(strstr(text, first) != NULL);
        CHECK(strstr(text, "\033[32m") != NULL && strstr(text, "{{") == NULL);
        CHECK(strstr(text, "      pos") == NULL);
    }
    free(text);
    rlvr_tokenizer_free(tok);
    rlvr_rollout_free(&r);
}

static void test_shard_tokenizer(const char *dir) {
    char shard[4200], json[4200], found[4200] = "x";
    snprintf(shard, sizeof shard, "%s/run/shards/step_00000001.rank_0000.h5", dir);
    snprintf(json, sizeof json, "%s/run/tokenizer.json", dir);
    rlvr_tokenizer *tok = NULL;
    CHECK_OK(rlvr_inspect_shard_tokenizer(shard, &tok, found, sizeof found));
    CHECK(tok != NULL && found[0] == '\0'); /* no tokenizer.json: the byte tokenizer */
    rlvr_tokenizer_free(tok);
    char run[4200];
    snprintf(run, sizeof run, "%s/run", dir);
    CHECK(mkdir(run, 0755) == 0);
    FILE *f = fopen(json, "w");
    if (f) {
        fputs("not a tokenizer", f);
        fclose(f);
    }
    tok = NULL;
    CHECK(rlvr_inspect_shard_tokenizer(shard, &tok, found, sizeof found) < 0);
    CHECK(tok == NULL);
}

int main(void) {
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "play-inspect");
    test_play(dir);
    test_render();
    test_shard_tokenizer(dir);
    fixture_rmtree(dir);
    return test_summary("test_play_inspect");
}
