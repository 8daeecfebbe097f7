/* tests/slurm/test_sbatch.c — slurm/sbatch.c without a cluster: template
 * rendering, shell quoting, and sbatch / squeue / sacct / scancel replaced by
 * small fake scripts first on PATH (their answers are the formats the real
 * clients print, as seen with slurm-wlm 22.05). */
#include "slurm/sbatch.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fake_dir[] = "/tmp/rlvr_test_sbatch_XXXXXX";

static void write_fake(const char *name, const char *body) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", fake_dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

static void test_render(void) {
    const char *keys[] = {"NAME", "PATH_1", "EMPTY"};
    const char *values[] = {"a@B@c", "/x/y", ""};
    char *out = NULL;
    CHECK_OK(rlvr_sbatch_render("job @NAME@ at @PATH_1@;@EMPTY@ \"$@\" me@host @@ @1X@\n", keys, values, 3, &out));
    /* values are not scanned again; '@' that starts no placeholder stays */
    CHECK_MSG(out && strcmp(out, "job a@B@c at /x/y; \"$@\" me@host @@ @1X@\n") == 0, "got [%s]", out ? out : "");
    free(out);

    out = (char *)1;
    int rc = rlvr_sbatch_render("line one\nline @TWO@ here\n", keys, values, 3, &out);
    CHECK(rc == RLVR_EINVAL && out == NULL);
    CHECK_MSG(strstr(rlvr_error_last(), "@TWO@") && strstr(rlvr_error_last(), "line 2"), "%s", rlvr_error_last());

    CHECK_OK(rlvr_sbatch_render("", NULL, NULL, 0, &out));
    CHECK(out && out[0] == 0);
    free(out);
}

static void test_quote(void) {
    char *q = rlvr_sbatch_shell_quote("it's a $x");
    CHECK(q && strcmp(q, "'it'\\''s a $x'") == 0);
    free(q);
}

static void test_submit(void) {
    char id[32];
    /* dry run: nothing is run (no fake sbatch yet), ids count up */
    const char *args[] = {"--dependency=afterany:7"};
    char *command = NULL;
    CHECK_OK(rlvr_sbatch_submit("/tmp/x.sbatch", args, 1, true, id, sizeof id, &command));
    CHECK(strcmp(id, "DRYRUN-1") == 0);
    CHECK_MSG(command && strcmp(command, "sbatch --parsable --dependency=afterany:7 /tmp/x.sbatch") == 0, "%s",
              command ? command : "(none)");
    free(command);
    CHECK_OK(rlvr_sbatch_submit("/tmp/x.sbatch", NULL, 0, true, id, sizeof id, NULL));
    CHECK(strcmp(id, "DRYRUN-2") == 0);

    int rc = rlvr_sbatch_submit("/tmp/x.sbatch", NULL, 0, false, id, sizeof id, NULL);
    CHECK_MSG(rc == RLVR_ENOTFOUND && strstr(rlvr_error_last(), "sbatch not found"), "%d %s", rc, rlvr_error_last());

    /* the arguments arrive in order, the ";cluster" suffix goes */
    char log[300];
    snprintf(log, sizeof log, "%s/sbatch.args", fake_dir);
    char body[600];
    snprintf(body, sizeof body, "echo \"$@\" > %s\necho '4242;rlvrlocal'", log);
    write_fake("sbatch", body);
    CHECK_OK(rlvr_sbatch_submit("/tmp/x.sbatch", args, 1, false, id, sizeof id, NULL));
    CHECK_MSG(strcmp(id, "4242") == 0, "id %s", id);
    FILE *f = fopen(log, "r");
    char line[300] = "";
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    CHECK_MSG(strcmp(line, "--parsable --dependency=afterany:7 /tmp/x.sbatch\n") == 0, "args [%s]", line);

    write_fake("sbatch", "echo 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1");
    rc = rlvr_sbatch_submit("/tmp/x.sbatch", NULL, 0, false, id, sizeof id, NULL);
    CHECK_MSG(rc == RLVR_ESYS && strstr(rlvr_error_last(), "invalid partition specified: gpu") &&
                  strstr(rlvr_error_last(), "exited 1"),
              "%s", rlvr_error_last());

    write_fake("sbatch", "echo 'Submitted batch job 5'");
    rc = rlvr_sbatch_submit("/tmp/x.sbatch", NULL, 0, false, id, sizeof id, NULL);
    CHECK_MSG(rc == RLVR_ESYS && strstr(rlvr_error_last(), "no job id"), "%s", rlvr_error_last());
}

static void test_query(void) {
    rlvr_sbatch_job jobs[4];
    size_t n = 0;
    /* squeue knows 11 (running) and 12 (completed); 13 only the jobcomp log
     * (twice: requeued, the last entry wins); 14 nobody */
    write_fake("squeue", "echo '11|c.train1|RUNNING|None|2026-01-01T00:00:01|Unknown'\n"
                         "echo '12|c.sft|COMPLETED|None|2026-01-01T00:00:00|2026-01-01T00:00:01'");
    write_fake("sacct", "for a in \"$@\"; do [ \"$a\" = -c ] && c=1; done\n"
                        "[ -z \"$c\" ] && { echo 'Slurm accounting storage is disabled' >&2; exit 1; }\n"
                        "echo '12|c.sft|COMPLETED|0:0|2026-01-01T00:00:00|2026-01-01T00:00:01'\n"
                        "echo '13|c.gate1|REQUEUED|0:0|2026-01-01T00:00:02|2026-01-01T00:00:03'\n"
                        "echo '13|c.gate1|FAILED|1:0|2026-01-01T00:00:04|2026-01-01T00:00:05'");
    CHECK_OK(rlvr_sbatch_query("11,12,13,14", jobs, 4, &n));
    CHECK(n == 4);
    CHECK(strcmp(jobs[0].state, "RUNNING") == 0 && jobs[0].live && strcmp(jobs[0].source, "squeue") == 0);
    CHECK(strcmp(jobs[1].state, "COMPLETED") == 0 && !jobs[1].live && strcmp(jobs[1].exit_code, "0:0") == 0);
    CHECK_MSG(strcmp(jobs[2].state, "FAILED") == 0 && strcmp(jobs[2].exit_code, "1:0") == 0 &&
                  strcmp(jobs[2].source, "jobcomp") == 0 && strcmp(jobs[2].name, "c.gate1") == 0,
              "%s %s %s", jobs[2].state, jobs[2].exit_code, jobs[2].source);
    CHECK(strcmp(jobs[3].state, "UNKNOWN") == 0 && !jobs[3].live);
    CHECK(rlvr_sbatch_state_live("PENDING") && rlvr_sbatch_state_live("REQUEUED") &&
          !rlvr_sbatch_state_live("CANCELLED") && !rlvr_sbatch_state_live("COMPLETED"));

    char log[300], body[600];
    snprintf(log, sizeof log, "%s/scancel.args", fake_dir);
    snprintf(body, sizeof body, "echo \"$@\" > %s", log);
    write_fake("scancel", body);
    CHECK_OK(rlvr_sbatch_cancel("11,13"));
    FILE *f = fopen(log, "r");
    char line[100] = "";
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    CHECK_MSG(strcmp(line, "11 13\n") == 0, "scancel args [%s]", line);
    write_fake("scancel", "echo 'scancel: error: Kill job error on job id 11: Invalid job id specified' >&2; exit 1");
    int rc = rlvr_sbatch_cancel("11");
    CHECK_MSG(rc == RLVR_ESYS && strstr(rlvr_error_last(), "Invalid job id"), "%s", rlvr_error_last());
}

int main(void) {
    if (!mkdtemp(fake_dir)) return 1;
    /* only the fakes: a real Slurm on this machine must not answer */
    setenv("PATH", fake_dir, 1);
    test_render();
    test_quote();
    test_submit();
    test_query();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "/bin/rm -rf %s", fake_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fake_dir);
    return test_summary("test_sbatch");
}
