/* Crash safety: a child saving checkpoints back to back is killed with
 * SIGKILL at random moments, many times. After every kill, `latest` must
 * name a checkpoint that loads completely (model, moments, state, every
 * checksum), no older than before, and every complete checkpoint file in the
 * directory must load too. */
#include "io/checkpoint.h"
#include "io/file.h"
#include "io_fixtures.h"
#include "test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define KILLS 60

static const rlvr_model_config crash_config = {
    .vocab = 64, .d_model = 32, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 64, .max_seq = 32,
    .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false, .init_seed = 5, .init_std = 0.02f,
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The model's parameters at `step` are a function of the step, so a loaded
 * checkpoint can be checked value by value. */
static void set_weights(rlvr_model *m, int64_t step) {
    size_t n = rlvr_model_num_params(m);
    float *p = rlvr_model_params(m), *mm = rlvr_model_adam_m(m), *vv = rlvr_model_adam_v(m);
    for (size_t i = 0; i < n; i++) {
        p[i] = (float)step + (float)(i % 1000) * 1e-3f;
        mm[i] = -(float)step;
        vv[i] = (float)(i % 7);
    }
}

static int save(const char *dir, rlvr_model *m, int64_t step) {
    set_weights(m, step);
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = step;
    opt.policy_version = step;
    opt.config_text = "[checkpoint]\nkeep = 2\n";
    opt.keep_last = 2;
    rlvr_checkpoint_writer *w;
    RLVR_TRY(rlvr_checkpoint_begin(&w, dir, &opt));
    int64_t cursor[2] = {step, step * 3};
    rlvr_state_array a = {.name = "cursor", .dtype = RLVR_DT_I64, .rank = 1, .dims = {2}, .data = cursor};
    int rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0) rc = rlvr_checkpoint_put_array(w, &a);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    return rlvr_checkpoint_commit(w, NULL, 0);
}

/* Loads everything in `path`; returns its step or a negative code. */
static int64_t load_fully(const char *path, rlvr_model *into) {
    rlvr_checkpoint *ck;
    int rc = rlvr_checkpoint_open(&ck, path);
    if (rc < 0) return rc;
    int64_t step = rlvr_checkpoint_info_of(ck)->step;
    int64_t cursor[2] = {0, 0}, dims[RLVR_IO_MAX_RANK] = {2};
    rc = rlvr_checkpoint_read_model(ck, into);
    if (rc == 0) rc = rlvr_checkpoint_read_array(ck, "cursor", RLVR_DT_I64, 1, dims, cursor);
    rlvr_checkpoint_close(ck);
    if (rc == 0) rc = rlvr_io_verify(path, NULL, NULL);
    if (rc < 0) return rc;
    const float *p = rlvr_model_params(into);
    size_t n = rlvr_model_num_params(into);
    for (size_t i = 0; i < n; i += 97)
        if (p[i] != (float)step + (float)(i % 1000) * 1e-3f) return rlvr_error_set(RLVR_EFORMAT, "wrong weights");
    if (cursor[0] != step || cursor[1] != step * 3 || rlvr_model_adam_m(into)[n - 1] != -(float)step)
        return rlvr_error_set(RLVR_EFORMAT, "wrong state");
    return step;
}

static bool has_part_file(const char *dir) {
    DIR *d = opendir(dir);
    bool found = false;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) found = found || strstr(e->d_name, ".part") != NULL;
    if (d) closedir(d);
    return found;
}

/* Every complete checkpoint file (final name) must load. */
static int check_all_complete(const char *dir, rlvr_model *m) {
    int64_t steps[64];
    size_t n = 0;
    RLVR_TRY(rlvr_checkpoint_list(dir, steps, 64, &n));
    for (size_t i = 0; i < n && i < 64; i++) {
        char path[4200];
        RLVR_TRY(rlvr_checkpoint_path(path, sizeof path, dir, steps[i]));
        int64_t got = load_fully(path, m);
        if (got < 0) return (int)got;
    }
    return 0;
}

/* The child: saves step after step into dir until killed, after writing a
 * byte to ready_fd. A program of its own (exec'd, not just forked): a fork
 * does not inherit the model's buffers (core/mem.h), and OpenMP, which the
 * model's initialisation uses, does not survive a fork. */
static int saver(const char *dir, int64_t first, int ready_fd) {
    rlvr_model *m = NULL;
    if (rlvr_model_new(&m, &crash_config) < 0 || rlvr_model_alloc_optim_state(m) < 0) return 4;
    if (write(ready_fd, "r", 1) != 1) return 2;
    for (int64_t step = first;; step++)
        if (save(dir, m, step) < 0) return 3;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--saver") == 0) return saver(argv[2], atoll(argv[3]), atoi(argv[4]));
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "crash");
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &crash_config));
    if (!m || rlvr_model_alloc_optim_state(m) < 0) return test_summary("test_checkpoint_crash");

    /* how long one save takes here, to spread the kills over it */
    double t0 = now_s();
    CHECK_OK(save(dir, m, 0));
    CHECK_OK(save(dir, m, 1));
    double save_s = (now_s() - t0) / 2;
    int64_t latest_step = 1;
    int mid_write = 0;
    rlvr_rng_stream rng;
    rlvr_rng_stream_init(&rng, 2024, RLVR_RNG_TEST, 0, 0);

    for (int k = 0; k < KILLS; k++) {
        int ready[2];
        if (pipe(ready) != 0) break;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) { /* this program again, as the saver (see main) */
            close(ready[0]);
            char fd[16], first[32];
            snprintf(fd, sizeof fd, "%d", ready[1]);
            snprintf(first, sizeof first, "%lld", (long long)latest_step + 1);
            execl("/proc/self/exe", "test_checkpoint_crash", "--saver", dir, first, fd, (char *)NULL);
            _exit(5);
        }
        close(ready[1]);
        char c;
        CHECK(read(ready[0], &c, 1) == 1);
        close(ready[0]);
        /* somewhere in the first few saves, often in the middle of one */
        usleep((useconds_t)(rlvr_rng_next_uniform(&rng) * 3.0 * save_s * 1e6));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "kill %d: the child exited on its own (%d)", k,
                  status);
        mid_write += has_part_file(dir);

        char path[4200];
        int rc = rlvr_checkpoint_latest(dir, path, sizeof path);
        CHECK_MSG(rc == 0, "kill %d: no latest: %s", k, rlvr_error_last());
        if (rc < 0) continue;
        int64_t step = load_fully(path, m);
        CHECK_MSG(step >= latest_step, "kill %d: latest %s does not load (%lld): %s", k, path, (long long)step,
                  rlvr_error_last());
        rc = check_all_complete(dir, m);
        CHECK_MSG(rc == 0, "kill %d: a complete checkpoint does not load: %s", k, rlvr_error_last());
        if (step > latest_step) latest_step = step;
    }
    printf("%d kills, %d during a write (a .part file was left), one save ~%.1f ms, reached step %lld\n", KILLS,
           mid_write, save_s * 1e3, (long long)latest_step);
    /* the kills must really have hit saves in progress */
    CHECK_MSG(mid_write >= KILLS / 4, "only %d of %d kills hit a save in progress", mid_write, KILLS);
    /* and the next save cleans up after them */
    CHECK_OK(save(dir, m, latest_step + 1));
    CHECK(!has_part_file(dir));
    rlvr_model_free(m);
    fixture_rmtree(dir);
    return test_summary("test_checkpoint_crash");
}
