/* tests/policy/test_bench_policy_model.c — `rlvr bench policy --checkpoint`
 * and `--model`: the model-size mode benches a checkpoint's own weights (a
 * tiny checkpoint written here, so the test stays fast, with weights no
 * random initialisation gives: its policy_weights line must carry their
 * FNV-1a, computed here from the model written) and prints the machine
 * line, per weight format (f32, bf16, q8_0) two decode lines, one prefill
 * (each with a roofline) and a packing line, and one train step; both names of SmolLM2-135M are known, an unknown name (listing
 * the known ones) or a missing file is an error, not an exit. Speed is not
 * judged: no wall-clock limits in tests. */
#include "test.h"

#include "bench/bench.h"
#include "core/hash.h"
#include "io/checkpoint.h"
#include "policy/model.h"

#include <stdlib.h>
#include <unistd.h>

/* Writes a checkpoint of a small model into dir; its path into path, the
 * FNV-1a of its parameters into hash. */
static int write_checkpoint(const char *dir, char *path, size_t cap, uint64_t *hash) {
    rlvr_model_config c = {.vocab = 320, .d_model = 64, .n_layers = 2, .n_heads = 2, .n_kv_heads = 1,
                           .d_ff = 176, .max_seq = 64, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                           .tie_embeddings = true, .init_seed = 3, .init_std = 0.02f};
    rlvr_model *m = NULL;
    RLVR_TRY(rlvr_model_new(&m, &c));
    /* not what init_seed gives: a bench of random weights of this shape would differ */
    float *p = rlvr_model_params(m);
    size_t n = rlvr_model_num_params(m);
    for (size_t i = 0; i < n; i++) p[i] = p[i] * 1.5f + 1e-3f * (float)(i % 7);
    *hash = rlvr_fnv1a64(p, n * sizeof(float));
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.fsync = false;
    rlvr_checkpoint_writer *w = NULL;
    int rc = rlvr_checkpoint_begin(&w, dir, &opt);
    if (rc == 0) rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0) rc = rlvr_checkpoint_commit(w, path, cap);
    else if (w) rlvr_checkpoint_abort(w);
    rlvr_model_free(m);
    return rc;
}

/* Runs the benchmark with stdout sent to out_path; returns its code. */
static int run_to_file(const rlvr_bench_options *opt, const char *out_path) {
    fflush(stdout);
    int saved = dup(fileno(stdout));
    if (saved < 0 || !freopen(out_path, "w", stdout)) return RLVR_FAIL(RLVR_EIO, "cannot redirect stdout");
    int rc = rlvr_bench_policy(opt);
    fflush(stdout);
    dup2(saved, fileno(stdout));
    close(saved);
    return rc;
}

/* Lines of the file containing every one of the words. */
static int count_lines(const char *path, const char *a, const char *b) {
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, a) && (!b || strstr(line, b))) n++;
    if (f) fclose(f);
    return n;
}

int main(void) {
    char dir[] = "/tmp/rlvr_bench_model_XXXXXX", path[512], out[600];
    CHECK(mkdtemp(dir) != NULL);
    uint64_t hash = 0;
    CHECK_OK(write_checkpoint(dir, path, sizeof path, &hash));
    snprintf(out, sizeof out, "%s/bench.jsonl", dir);

    rlvr_bench_options opt = {.quick = true, .json_only = true, .checkpoint = path};
    CHECK_OK(run_to_file(&opt, out));
    CHECK(count_lines(out, "\"bench\":\"policy_machine\"", "read_gbps") == 1);
    CHECK(count_lines(out, "\"bench\":\"policy_decode\"", "d=64 L=2 H=2 KV=1 F=176 V=320") == 6);
    CHECK(count_lines(out, "\"bench\":\"policy_decode\"", "roofline_ratio") == 6);
    CHECK(count_lines(out, "batch=16 shared", "roofline_speedup") == 3);
    CHECK(count_lines(out, "\"bench\":\"policy_prefill\"", "roofline_ratio") == 3);
    /* once per weight format, the fast ones against f32 */
    const char *formats[] = {"\"weights\":\"f32\"", "\"weights\":\"bf16\"", "\"weights\":\"q8_0\""};
    for (int i = 0; i < 3; i++) {
        CHECK(count_lines(out, "\"bench\":\"policy_decode\"", formats[i]) == 2);
        CHECK(count_lines(out, "\"bench\":\"policy_prefill\"", formats[i]) == 1);
        CHECK(count_lines(out, "\"bench\":\"policy_pack\"", formats[i]) == 1);
    }
    CHECK(count_lines(out, "\"vs_f32\"", NULL) == 6);
    CHECK(count_lines(out, "\"bench\":\"policy_train_step\"", "roofline_ratio") == 1);
    char want[64];
    snprintf(want, sizeof want, "\"weights_fnv1a\":\"%016llx\"", (unsigned long long)hash);
    CHECK(count_lines(out, "\"bench\":\"policy_weights\"", want) == 1);
    CHECK(count_lines(out, "\"bench\":\"policy_weights\"", path) == 1);
    CHECK(count_lines(out, "\"bench\":", NULL) == 15);

    /* the names scripts/fetch_smollm2.sh gives and the short one: one shape */
    rlvr_model_config a, b;
    CHECK_OK(rlvr_bench_policy_model_config("smollm2-135m", &a));
    CHECK_OK(rlvr_bench_policy_model_config("smollm2-135m-instruct", &b));
    CHECK(a.d_model == 576 && b.d_model == 576 && a.n_layers == 30 && b.vocab == 49152);
    CHECK(rlvr_bench_policy_model_config("smollm2", &a) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "smollm2-135m-instruct") != NULL);

    rlvr_bench_options unknown = {.quick = true, .json_only = true, .model = "no-such-model"};
    CHECK(run_to_file(&unknown, out) == RLVR_EINVAL);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.h5", dir);
    rlvr_bench_options absent = {.quick = true, .json_only = true, .checkpoint = missing};
    CHECK(run_to_file(&absent, out) < 0);

    unlink(out);
    unlink(path);
    rmdir(dir);
    return test_summary("test_bench_policy_model");
}
