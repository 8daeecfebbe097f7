/* Errors, rollout records, fork-private memory and system helpers. */
#include "core/mem.h"
#include "core/record.h"
#include "core/sys.h"
#include "core/text.h"
#include "test.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails_with_context(void) {
    int rc = RLVR_FAIL(RLVR_EIO, "cannot read %s", "x.h5");
    return rlvr_error_wrap(rc, "loading checkpoint");
}

static void test_errors(void) {
    rlvr_error_clear();
    CHECK(rlvr_error_last()[0] == '\0');
    CHECK(fails_with_context() == RLVR_EIO);
    CHECK_MSG(strcmp(rlvr_error_last(), "loading checkpoint: cannot read x.h5") == 0, "%s", rlvr_error_last());
    /* the innermost location, relative to the repository, kept apart from the message */
    CHECK_MSG(strncmp(rlvr_error_where(), "tests/core/test_core_misc.c:", 28) == 0, "%s", rlvr_error_where());
    CHECK(rlvr_error_last_code() == RLVR_EIO);
    rlvr_error_set(RLVR_EINVAL, "no location");
    CHECK(rlvr_error_where()[0] == '\0');
    rlvr_error_clear();
    CHECK(rlvr_error_where()[0] == '\0');
    CHECK(strcmp(rlvr_error_name(RLVR_ECHECKSUM), "RLVR_ECHECKSUM") == 0);
}

static void test_record(void) {
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 2, 1));
    for (int i = 0; i < 100; i++)
        CHECK_OK(rlvr_rollout_push_token(&r, i, -0.5f, 1.0f, i % 3 == 0 ? RLVR_TOKEN_POLICY : RLVR_TOKEN_OBSERVATION));
    CHECK(r.n_tokens == 100 && r.cap_tokens >= 100);
    CHECK(rlvr_rollout_policy_tokens(&r) == 34);
    rlvr_turn t = {.policy_start = 0, .policy_end = 5, .exit_status = 0};
    snprintf(t.tool_name, sizeof t.tool_name, "run");
    int32_t index = -1;
    for (int i = 0; i < 20; i++) CHECK_OK(rlvr_rollout_push_turn(&r, &t, &index));
    CHECK(index == 19 && r.n_turns == 20);
    rlvr_rollout copy;
    CHECK_OK(rlvr_rollout_copy(&copy, &r));
    CHECK(copy.n_tokens == 100 && copy.tokens[99] == 99 && copy.mask[99] == RLVR_TOKEN_POLICY);
    CHECK(copy.tokens != r.tokens && strcmp(copy.turns[19].tool_name, "run") == 0);
    rlvr_rollout_reset(&r);
    CHECK(r.n_tokens == 0 && r.cap_tokens >= 100);
    CHECK(strcmp(rlvr_stop_reason_name(RLVR_STOP_REPETITION), "repetition") == 0);
    CHECK(strcmp(rlvr_verdict_name(RLVR_VERDICT_REJECTED), "rejected") == 0);
    rlvr_rollout_free(&r);
    rlvr_rollout_free(&copy);
}

static void test_sys(void) {
    CHECK(rlvr_physical_cores() >= 1);
    double t0 = rlvr_now(), t1 = rlvr_now();
    CHECK(t1 >= t0);
}

/* Whether /proc/self/maps has a mapping holding address p. */
static bool mapped(const void *p) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return false;
    unsigned long lo, hi, at = (unsigned long)(uintptr_t)p;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= at && at < hi) found = true;
    fclose(f);
    return found;
}

/* Zeroed, 64-byte aligned, and absent from a forked child's address space
 * (outside AddressSanitizer builds). */
static void test_mem(void) {
    size_t n = (size_t)3 << 20;
    unsigned char *p = rlvr_mem_alloc(n);
    CHECK(p != NULL && (uintptr_t)p % 64 == 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i += 4093) nonzero += p[i] != 0;
    CHECK(nonzero == 0 && p[n - 1] == 0);
    p[0] = 1, p[n - 1] = 2;
    CHECK(mapped(p) && mapped(p + n - 1));
    if (!RLVR_MEM_FORK_PRIVATE) { /* AddressSanitizer build: heap memory, inherited */
        rlvr_mem_free(p);
        return;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) _exit(mapped(p) || mapped(p + n - 1) ? 1 : 0);
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(p[0] == 1 && p[n - 1] == 2);
    rlvr_mem_free(p);
    unsigned char *empty = rlvr_mem_alloc(0);
    CHECK(empty != NULL);
    rlvr_mem_free(empty);
    rlvr_mem_free(NULL);
}

/* Lossy UTF-8: the Unicode standard's own example of replacing the
 * maximal subparts of ill-formed sequences (chapter 3, "U+FFFD Substitution
 * of Maximal Subparts"), and well-formed text passing through unchanged. */
static void test_utf8(void) {
    const char bad[] = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
    const char want[] = "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                        "b\xEF\xBF\xBD"
                        "c\xEF\xBF\xBD\xEF\xBF\xBD"
                        "d";
    rlvr_text t = {0};
    rlvr_text_append_utf8(&t, bad, sizeof bad - 1);
    CHECK(t.data && t.len == sizeof want - 1 && memcmp(t.data, want, t.len) == 0);
    rlvr_text_free(&t);
    /* overlong, surrogate and past-U+10FFFF forms are each ill-formed from their first byte */
    const char forms[] = "\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80";
    rlvr_text_append_utf8(&t, forms, sizeof forms - 1);
    size_t fffd = 0;
    for (size_t i = 0; t.data && i + 2 < t.len; i++) fffd += memcmp(t.data + i, "\xEF\xBF\xBD", 3) == 0;
    CHECK(fffd == 2 + 3 + 4 && t.len == 3 * fffd);
    rlvr_text_free(&t);
    const char good[] = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 end";
    rlvr_text_append_utf8(&t, good, sizeof good - 1);
    CHECK(t.data && t.len == sizeof good - 1 && memcmp(t.data, good, t.len) == 0);
    rlvr_text_free(&t);
}

int main(void) {
    test_utf8();
    test_errors();
    test_mem();
    test_record();
    test_sys();
    return test_summary("test_core_misc");
}
