/* tests/slurm/test_chain_lib.c — slurm/config.h and slurm/chain.h without a
 * cluster: Slurm's six time formats and bad times, the [slurm] table against
 * docs/CONFIG.md, the chain plan of a configuration, a script rendered from
 * its template, a dry-run submission, the status model from a fake chain
 * directory and given squeue/sacct lines, and the live-chain refusal with a
 * fake squeue on PATH. */
#include "core/config.h"
#include "enclave/fsutil.h"
#include "mpi/layout.h"
#include "slurm/chain.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/rlvr_test_chain_lib_XXXXXX";

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The whole file, or NULL (enclave/fsutil.h's reader). */
static char *read_text(const char *path) {
    char *text = NULL;
    return rlvr_fs_read_file(path, &text, NULL) == 0 ? text : NULL;
}

static rlvr_config *parse(const char *text) {
    /* the config keeps the list: static */
    static const rlvr_config_key *const schemas[] = {rlvr_slurm_config_keys, rlvr_layout_config_keys, NULL};
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, text, "test.ini", schemas));
    return cfg;
}

/* ---- time formats ------------------------------------------------------------- */

static void test_times(void) {
    const struct {
        const char *text;
        int64_t seconds;
    } good[] = {
        {"30", 30 * 60},                               /* minutes */
        {"90:15", 90 * 60 + 15},                       /* minutes:seconds */
        {"04:00:00", 4 * 3600},                        /* hours:minutes:seconds */
        {"2-12", 2 * 86400 + 12 * 3600},               /* days-hours */
        {"1-02:30", 86400 + 2 * 3600 + 30 * 60},       /* days-hours:minutes */
        {"3-00:00:07", 3 * 86400 + 7},                 /* days-hours:minutes:seconds */
        {"0", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int64_t s = -1;
        CHECK_OK(rlvr_slurm_time_seconds(good[i].text, &s));
        CHECK_MSG(s == good[i].seconds, "%s: %lld s, want %lld", good[i].text, (long long)s, (long long)good[i].seconds);
    }
    const char *bad[] = {"", "abc", "1:2:3:4", "1-2:3:4:5", "1-", "-5", "1:", ":5", "1-2-3", "1:x", "1 ", "1234567890",
                         "1.5", "2-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t s = 12345;
        int rc = rlvr_slurm_time_seconds(bad[i], &s);
        CHECK_MSG(rc == RLVR_EINVAL, "\"%s\" accepted (%d)", bad[i], rc);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\" is not a Slurm time", bad[i]);
        CHECK_MSG(strstr(rlvr_error_last(), quoted) && strstr(rlvr_error_last(), "D-HH:MM:SS"), "%s",
                  rlvr_error_last());
        CHECK(s == 12345);
    }
    /* the reader refuses them naming [slurm] time */
    rlvr_config *cfg = parse("[slurm]\ntime = 1:2:3:4\n");
    rlvr_slurm_config s;
    CHECK(cfg && rlvr_slurm_config_read(&s, cfg) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "[slurm] time") && strstr(rlvr_error_last(), "\"1:2:3:4\""), "%s",
              rlvr_error_last());
    rlvr_config_free(cfg);
    cfg = parse("[slurm]\ntime = 2\ngrace_s = 120\n"); /* 120 s is not more than grace_s */
    CHECK(cfg && rlvr_slurm_config_read(&s, cfg) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "grace_s"), "%s", rlvr_error_last());
    rlvr_config_free(cfg);
}

/* ---- the [slurm] table ------------------------------------------------------------ */

/* The default column of `key`'s row in docs/CONFIG.md's [slurm] table. */
static bool documented_default(const char *doc, const char *key, char *out, size_t cap) {
    const char *sec = strstr(doc, "\n## [slurm]");
    if (!sec) return false;
    const char *end = strstr(sec + 5, "\n## ");
    char row[96];
    snprintf(row, sizeof row, "\n| `%s` | ", key);
    const char *r = strstr(sec, row);
    if (!r || (end && r > end)) return false;
    /* | `key` | type | `default` | doc | */
    const char *p = r + strlen(row);
    while (*p && *p != '\n' && !(*p == '|' && p[-1] != '\\')) p++; /* the type column may hold "\|" */
    if (*p != '|' || !(p = strchr(p, '`'))) return false;
    const char *q = strchr(p + 1, '`');
    if (!q || (size_t)(q - p - 1) >= cap) return false;
    snprintf(out, cap, "%.*s", (int)(q - p - 1), p + 1);
    return true;
}

static void test_table(void) {
    CHECK_OK(rlvr_config_table_check(rlvr_slurm_config_keys));
    rlvr_config *cfg = parse("");
    rlvr_slurm_config s;
    CHECK_OK(rlvr_slurm_config_read(&s, cfg));
    /* every default reaches the struct as the table writes it */
    size_t n = 0;
    for (const rlvr_config_key *k = rlvr_slurm_config_keys; k->key; k++, n++) {
        const char *field = (const char *)&s + k->offset;
        if (k->field == RLVR_FIELD_I64) {
            int64_t v;
            memcpy(&v, field, sizeof v);
            CHECK_MSG(v == strtoll(k->default_value, NULL, 10), "%s = %lld", k->key, (long long)v);
        } else if (k->field == RLVR_FIELD_STRING) {
            const char *v;
            memcpy(&v, field, sizeof v);
            CHECK_MSG(strcmp(v, k->default_value) == 0, "%s = \"%s\"", k->key, v);
        } else if (k->field == RLVR_FIELD_BOOL) {
            bool v;
            memcpy(&v, field, sizeof v);
            CHECK_MSG(v == (strcmp(k->default_value, "true") == 0), "%s", k->key);
        } else {
            CHECK_MSG(false, "%s: a field kind this test does not know", k->key);
        }
    }
    CHECK(n == 16);
    CHECK(s.segments == 1 && s.grace_s == 120 && s.nodes == 1 && s.max_requeues == 20 && s.gate);
    CHECK(strcmp(s.launcher, "srun") == 0 && strcmp(s.baseline, "sft") == 0 && s.time[0] == 0);
    rlvr_config_free(cfg);

    /* docs/CONFIG.md documents every key with the table's default */
    char path[4096];
    char *doc = read_text(test_source_path(path, sizeof path, "docs/CONFIG.md"));
    CHECK_MSG(doc != NULL, "cannot read %s", path);
    for (const rlvr_config_key *k = rlvr_slurm_config_keys; doc && k->key; k++) {
        char def[128];
        CHECK_MSG(documented_default(doc, k->key, def, sizeof def), "[slurm] %s not in docs/CONFIG.md", k->key);
        CHECK_MSG(strcmp(def, k->default_value) == 0, "[slurm] %s: documented `%s`, table \"%s\"", k->key, def,
                  k->default_value);
    }
    free(doc);

    cfg = parse("[slurm]\npartition = a b\n");
    CHECK(cfg && rlvr_slurm_config_read(&s, cfg) == RLVR_ECONFIG && strstr(rlvr_error_last(), "[slurm] partition"));
    rlvr_config_free(cfg);
}

/* ---- the plan --------------------------------------------------------------------- */

static void test_plan(void) {
    rlvr_config *cfg = parse("[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n"
                             "[slurm]\nsegments = 3\nnodes = 2\nntasks_per_node = 2\n");
    rlvr_chain c;
    CHECK_OK(rlvr_chain_plan(&c, cfg, 10, "sft"));
    const char *names[] = {"sft", "train1", "gate1", "train2", "gate2", "train3", "gate3"};
    const int64_t stops[] = {0, 3, 3, 6, 6, 10, 10};
    const int requires[] = {-1, 0, 1, 1, 3, 3, 5};
    const int after[] = {-1, -1, -1, -1, 2, -1, 4};
    CHECK(c.n_parts == 7 && c.sft && c.ntasks == 4);
    for (int i = 0; i < c.n_parts && i < 7; i++) {
        const rlvr_chain_part *p = &c.parts[i];
        CHECK_MSG(strcmp(p->name, names[i]) == 0, "part %d is %s", i, p->name);
        CHECK_MSG(p->stop_step == stops[i] && p->requires == requires[i] && p->after == after[i],
                  "%s: stop %lld requires %d after %d", p->name, (long long)p->stop_step, p->requires, p->after);
        CHECK(p->kind == (i == 0 ? RLVR_CHAIN_SFT : i % 2 ? RLVR_CHAIN_TRAIN : RLVR_CHAIN_GATE));
    }
    rlvr_chain_free(&c);

    /* no SFT and no gates: the segments only; 7 steps in 2 end at 3 and 7 */
    rlvr_config_free(cfg);
    cfg = parse("[slurm]\nsegments = 2\ngate = false\n");
    CHECK_OK(rlvr_chain_plan(&c, cfg, 7, "scratch"));
    CHECK(c.n_parts == 2 && !c.sft && c.ntasks == 1);
    CHECK(c.n_parts == 2 && strcmp(c.parts[0].name, "train1") == 0 && c.parts[0].requires == -1 &&
          c.parts[0].stop_step == 3 && c.parts[1].requires == 0 && c.parts[1].stop_step == 7);
    rlvr_chain_free(&c);

    /* refusals name the key */
    const struct {
        const char *ini, *init, *key;
        int64_t steps;
    } bad[] = {
        {"[slurm]\nsegments = 11\n", "sft", "[slurm] segments", 10},
        {"[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n[slurm]\nnodes = 2\nntasks_per_node = 3\n", "sft",
         "[slurm] ntasks_per_node", 10},
        {"[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n[slurm]\nlauncher = none\n", "sft", "[slurm] launcher", 10},
        {"[slurm]\nnodes = 2\n", "sft", "[slurm] nodes", 10},
        {"[slurm]\ngate = true\n", "scratch", "[slurm] baseline", 10},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rlvr_config_free(cfg);
        cfg = parse(bad[i].ini);
        int rc = rlvr_chain_plan(&c, cfg, bad[i].steps, bad[i].init);
        CHECK_MSG(rc == RLVR_ECONFIG && strstr(rlvr_error_last(), bad[i].key), "%zu: %d %s", i, rc, rlvr_error_last());
        rlvr_chain_free(&c);
    }
    rlvr_config_free(cfg);
}

/* ---- scripts and a dry-run submission ------------------------------------------------ */

typedef struct {
    char log[1024];
} seen_parts;

static void on_part(const rlvr_chain *c, const rlvr_chain_part *p, const char *done_marker, void *arg) {
    (void)c;
    seen_parts *s = arg;
    size_t len = strlen(s->log);
    snprintf(s->log + len, sizeof s->log - len, "%s%s=%s", len ? " " : "", p->name, done_marker ? "skip" : p->id);
}

static void test_render_submit(void) {
    rlvr_config *cfg = parse("[layout]\ntrainer = 1\nverifier = 1\nrollout = 2\n"
                             "[slurm]\nsegments = 2\nnodes = 2\nntasks_per_node = 2\ntime = 1-00:00\n"
                             "partition = gpu\nmem = 8G\nextra = --exclusive; #SBATCH --constraint=x\n"
                             "baseline = promoted\nmax_requeues = 4\n");
    rlvr_chain c;
    CHECK_OK(rlvr_chain_plan(&c, cfg, 10, "sft"));
    char run[256];
    snprintf(run, sizeof run, "%s/myrun", tmp);
    CHECK_OK(rlvr_chain_setup(&c, run, NULL, "/work/dir", "/opt/rlvr"));
    struct stat st;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/chain/logs", run);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));

    char *lib = NULL, *script = NULL;
    CHECK_OK(rlvr_chain_render_lib(&lib));
    CHECK(lib && strstr(lib, "need_done()") != NULL);
    CHECK_OK(rlvr_chain_render(&c, 3, lib, &script)); /* train2 */
    char want[PATH_MAX + 128];
    const char *lines[] = {"#SBATCH --job-name=myrun.train2\n", "#SBATCH --chdir=/work/dir\n",
                           "#SBATCH --signal=B:USR1@120\n", "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n",
                           "#SBATCH --mem=8G\n#SBATCH --time=1-00:00\n#SBATCH --partition=gpu\n"
                           "#SBATCH --exclusive\n#SBATCH --constraint=x\n",
                           "RLVR='/opt/rlvr'\n", "NAME=train2\nMAX_REQUEUES=4\n", "need_done train1\n",
                           "run_child srun --mpi=pmix \"$RLVR\" train \"$CONFIG\" --out \"$RUN\" --resume \n"};
    for (size_t i = 0; script && i < sizeof lines / sizeof *lines; i++)
        CHECK_MSG(strstr(script, lines[i]), "train2 lacks [%s]", lines[i]);
    snprintf(want, sizeof want, "#SBATCH --output=%s/chain/logs/train2-%%j.log\n", c.run_dir);
    CHECK(script && strstr(script, want));
    snprintf(want, sizeof want, "CANDIDATE='%s/checkpoints/step_00000010.h5'\n", c.run_dir);
    CHECK(script && strstr(script, want));
    CHECK(script && strstr(script, lib)); /* the shared functions are inlined */
    free(script);
    CHECK_OK(rlvr_chain_render(&c, 1, lib, &script)); /* train1 stops early */
    CHECK(script && strstr(script, "--resume --until-step 5\n"));
    free(script);
    CHECK_OK(rlvr_chain_render(&c, 4, lib, &script)); /* gate2 */
    snprintf(want, sizeof want, "POOL='%s/pool'\nBASELINE_MODE=promoted\nBASELINE=''\n", c.run_dir);
    CHECK_MSG(script && strstr(script, want), "%s", script ? script : "");
    CHECK(script && !strstr(script, "#SBATCH --signal") && strstr(script, "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n") &&
          strstr(script, "need_done train2\n"));
    free(script);
    free(lib);

    /* a dry run with sft finished: sft skipped, train1 depends on nothing */
    char config_path[512];
    snprintf(config_path, sizeof config_path, "%s/in.ini", tmp);
    write_text(config_path, "[slurm]\n");
    bool replaced = true;
    CHECK_OK(rlvr_chain_copy_config(&c, config_path, &replaced));
    CHECK(!replaced);
    write_text(config_path, "[slurm]\nsegments = 2\n");
    CHECK_OK(rlvr_chain_copy_config(&c, config_path, &replaced));
    CHECK(replaced);
    char *copy = read_text(c.config_copy);
    CHECK(copy && strcmp(copy, "[slurm]\nsegments = 2\n") == 0);
    free(copy);
    snprintf(path, sizeof path, "%s/chain/sft.done", c.run_dir);
    write_text(path, "done job 7\n");
    seen_parts seen = {{0}};
    int submitted = -1;
    CHECK_OK(rlvr_chain_submit(&c, true, on_part, &seen, &submitted));
    CHECK(submitted == 4);
    CHECK_MSG(strcmp(seen.log, "sft=skip train1=DRYRUN-1 gate1=DRYRUN-2 train2=DRYRUN-3 gate2=DRYRUN-4") == 0, "%s",
              seen.log);
    CHECK(c.parts[0].finished && strcmp(c.parts[0].id, "-") == 0);
    snprintf(path, sizeof path, "%s/slurm/gate2.sbatch", c.run_dir);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0755);
    snprintf(path, sizeof path, "%s/slurm/sft.sbatch", c.run_dir);
    CHECK(access(path, F_OK) != 0); /* a finished part is not written again */
    snprintf(path, sizeof path, "%s/chain/jobs.tsv", c.run_dir);
    CHECK(access(path, F_OK) != 0); /* a dry run records no jobs */
    rlvr_chain_free(&c);
    rlvr_config_free(cfg);

    /* white space in the run directory cannot go into #SBATCH lines */
    cfg = parse("");
    CHECK_OK(rlvr_chain_plan(&c, cfg, 4, "sft"));
    snprintf(run, sizeof run, "%s/my run", tmp);
    CHECK(rlvr_chain_setup(&c, run, NULL, "/w", "/r") == RLVR_EINVAL);
    rlvr_chain_free(&c);
    rlvr_config_free(cfg);
}

/* ---- status -------------------------------------------------------------------------- */

static void test_status(void) {
    char run[256], path[512];
    snprintf(run, sizeof run, "%s/st", tmp);
    snprintf(path, sizeof path, "%s/chain", run);
    mkdir(run, 0755);
    mkdir(path, 0755);
    rlvr_chain_job *jobs = NULL;
    size_t n = 0;
    CHECK(rlvr_chain_read_jobs(run, &jobs, &n) == RLVR_ENOTFOUND && strstr(rlvr_error_last(), "has no chain"));

    snprintf(path, sizeof path, "%s/chain/jobs.tsv", run);
    write_text(path, "sft\t-\t/x/sft.sbatch\ntrain1\t101\t/x/train1.sbatch\ngate1\t102\t/x/gate1.sbatch\n"
                     "train2\t103\t/x/train2.sbatch\ngate2\t104\t/x/gate2.sbatch\n");
    snprintf(path, sizeof path, "%s/chain/sft.done", run);
    write_text(path, "done job 7\n");
    snprintf(path, sizeof path, "%s/chain/gate1.done", run);
    write_text(path, "reject /x/ck.h5 (baseline /x/sft.h5)\n");
    snprintf(path, sizeof path, "%s/chain/train2.blocked", run);
    write_text(path, "train1 did not finish\n");
    snprintf(path, sizeof path, "%s/promoted", run);
    write_text(path, "/x/promoted.h5\n");
    CHECK_OK(rlvr_chain_read_jobs(run, &jobs, &n));
    CHECK(n == 5 && strcmp(jobs[3].part, "train2") == 0 && strcmp(jobs[3].id, "103") == 0 &&
          strcmp(jobs[3].script, "/x/train2.sbatch") == 0);

    /* Slurm's answers: squeue knows 103 (pending) and 101 (finished, no exit
     * code); sacct gives 101's exit code, 102 (requeued: the last line wins);
     * nobody knows 104 */
    rlvr_sbatch_job st[4];
    memset(st, 0, sizeof st);
    const char *ids[] = {"101", "102", "103", "104"};
    for (int i = 0; i < 4; i++) snprintf(st[i].id, sizeof st[i].id, "%s", ids[i]);
    char squeue[] = "103|st.train2|PENDING|Dependency|N/A|N/A\n"
                    "101|st.train1|COMPLETED|None|2026-01-01T00:00:00|2026-01-01T01:00:00\n"
                    "999|other|RUNNING|None|x|y\n";
    rlvr_sbatch_parse_squeue(squeue, st, 4);
    char sacct[] = "101|st.train1|COMPLETED|0:0|2026-01-01T00:00:00|2026-01-01T01:00:00\n"
                   "102|st.gate1|NODE_FAIL|0:0|2026-01-01T01:00:00|2026-01-01T01:05:00\n"
                   "102|st.gate1|CANCELLED by 0|0:15|2026-01-01T01:10:00|2026-01-01T02:00:00\n"
                   "garbage line\n";
    rlvr_sbatch_parse_sacct(sacct, st, 4, "sacct");
    snprintf(st[3].state, sizeof st[3].state, "UNKNOWN");
    CHECK(st[2].live && !st[0].live && !st[1].live);

    rlvr_chain_row row;
    rlvr_chain_row_of(run, &jobs[0], st, 4, &row); /* sft: no job, done */
    CHECK(strcmp(row.state, "-") == 0 && strcmp(row.marker, "done") == 0 && !row.exit_code[0] && !row.end[0]);
    rlvr_chain_row_of(run, &jobs[1], st, 4, &row);
    CHECK_MSG(strcmp(row.state, "COMPLETED") == 0 && strcmp(row.exit_code, "0:0") == 0 &&
                  strcmp(row.end, "2026-01-01T01:00:00") == 0 && strcmp(row.marker, "-") == 0,
              "%s %s %s %s", row.state, row.exit_code, row.end, row.marker);
    rlvr_chain_row_of(run, &jobs[2], st, 4, &row);
    CHECK_MSG(strcmp(row.state, "CANCELLED") == 0 && strcmp(row.exit_code, "0:15") == 0 &&
                  strcmp(row.end, "2026-01-01T02:00:00") == 0 && strcmp(row.marker, "reject") == 0,
              "%s %s %s %s", row.state, row.exit_code, row.end, row.marker);
    rlvr_chain_row_of(run, &jobs[3], st, 4, &row);
    CHECK_MSG(strcmp(row.state, "PENDING (Dependency)") == 0 && !row.end[0] &&
                  strcmp(row.marker, "blocked: train1 did not finish") == 0,
              "%s [%s] %s", row.state, row.end, row.marker);
    rlvr_chain_row_of(run, &jobs[4], st, 2, &row); /* Slurm said nothing of 104 */
    CHECK(strcmp(row.state, "?") == 0 && strcmp(row.marker, "-") == 0);

    rlvr_chain_results r;
    rlvr_chain_results_read(run, &r);
    CHECK(!r.checkpoint[0] && strcmp(r.promoted, "/x/promoted.h5") == 0 && !r.metrics_file[0] && !r.metrics_error[0]);

    /* cancel: nothing live → no scancel; no squeue → refused */
    rlvr_chain_view v = {.jobs = jobs, .n = n, .states = st, .n_states = 2, .states_ok = true};
    char names[256];
    CHECK_OK(rlvr_chain_cancel(&v, names, sizeof names));
    CHECK(names[0] == 0);
    v.states_ok = false;
    CHECK(rlvr_chain_cancel(&v, names, sizeof names) == RLVR_ENOTFOUND);
    free(jobs);

    /* a malformed jobs.tsv */
    snprintf(path, sizeof path, "%s/chain/jobs.tsv", run);
    write_text(path, "sft only\n");
    CHECK(rlvr_chain_read_jobs(run, &jobs, &n) == RLVR_EFORMAT && strstr(rlvr_error_last(), "PART<TAB>ID<TAB>SCRIPT"));
}

/* A live job of the previous chain refuses a new submission (fake squeue). */
static void test_live_chain(void) {
    char run[256], path[512], bin[256];
    snprintf(run, sizeof run, "%s/live", tmp);
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    mkdir(bin, 0755);
    snprintf(path, sizeof path, "%s/squeue", bin);
    write_text(path, "#!/bin/sh\necho '201|live.train1|RUNNING|None|2026-01-01T00:00:00|N/A'\n");
    chmod(path, 0755);
    rlvr_config *cfg = parse("[slurm]\ngate = false\n");
    rlvr_chain c;
    CHECK_OK(rlvr_chain_plan(&c, cfg, 4, "scratch"));
    CHECK_OK(rlvr_chain_setup(&c, run, NULL, "/w", "/r"));
    bool unchecked = true;
    CHECK_OK(rlvr_chain_check_idle(&c, false, &unchecked)); /* no chain yet */
    CHECK(!unchecked);
    snprintf(path, sizeof path, "%s/chain/jobs.tsv", run);
    write_text(path, "train1\t201\t/x/train1.sbatch\n");
    const char *old_path = getenv("PATH");
    char *saved = old_path ? strdup(old_path) : NULL;
    setenv("PATH", bin, 1);
    int rc = rlvr_chain_check_idle(&c, false, &unchecked);
    CHECK_MSG(rc == RLVR_ESTATE && strstr(rlvr_error_last(), "train1 (job 201, RUNNING)"), "%d %s", rc,
              rlvr_error_last());
    rlvr_chain_view v;
    CHECK_OK(rlvr_chain_view_load(run, &v));
    CHECK(v.states_ok && v.n == 1 && v.n_states == 1 && v.states[0].live);
    rlvr_chain_view_free(&v);
    /* no squeue at all: a dry run goes on unchecked, a real one is refused */
    snprintf(path, sizeof path, "%s/squeue", bin);
    unlink(path);
    CHECK_OK(rlvr_chain_check_idle(&c, true, &unchecked));
    CHECK(unchecked);
    CHECK(rlvr_chain_check_idle(&c, false, &unchecked) == RLVR_ENOTFOUND);
    if (saved) setenv("PATH", saved, 1);
    free(saved);
    rlvr_chain_free(&c);
    rlvr_config_free(cfg);
}

int main(void) {
    if (!mkdtemp(tmp)) return 1;
    test_times();
    test_table();
    test_plan();
    test_render_submit();
    test_status();
    test_live_chain();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_summary("test_chain_lib");
}
