/* jobs/commands.h — the verbs of the `rlvr` command. Each job kind lives in
 * its own file and exposes `int rlvr_cmd_<verb>(int argc, char **argv)`,
 * where argv[0] is the verb itself. The return value is the process exit
 * status (see docs/OPERATIONS.md for the documented codes). */
#ifndef RLVR_JOBS_COMMANDS_H
#define RLVR_JOBS_COMMANDS_H

#include <stdint.h>

/* Exit statuses shared by all verbs. */
enum {
    RLVR_EXIT_OK = 0,
    RLVR_EXIT_FAILURE = 1,   /* the job ran and failed (or a gate rejected) */
    RLVR_EXIT_USAGE = 2,     /* bad command line or configuration */
    RLVR_EXIT_STOPPED = 3,   /* stopped by a signal after a checkpoint (resume, or let Slurm requeue it) */
};

/* Reads an integer flag value in [lo, hi]; on a bad value prints
 * "rlvr VERB: FLAG wants an integer in LO..HI, got TEXT" and returns -1. */
int rlvr_cmd_parse_int(const char *verb, const char *flag, const char *text, int64_t lo, int64_t hi, int64_t *out);

typedef int (*rlvr_command_fn)(int argc, char **argv);

typedef struct {
    const char *name;
    const char *usage;    /* "CONFIG [--json]" */
    const char *summary;  /* one line for `rlvr help` */
    rlvr_command_fn run;
} rlvr_command;

/* The table of verbs, terminated by {NULL}. */
extern const rlvr_command rlvr_commands[];

/* Prints an error with the library's last message and returns RLVR_EXIT_FAILURE
 * (or RLVR_EXIT_USAGE for configuration errors). */
int rlvr_cmd_fail(const char *verb, int rc);

int rlvr_cmd_bench(int argc, char **argv);
int rlvr_cmd_config(int argc, char **argv);
int rlvr_cmd_plan(int argc, char **argv);
int rlvr_cmd_inspect(int argc, char **argv);
int rlvr_cmd_tasks(int argc, char **argv);
/* `rlvr tasks import SOURCE ...` (argv[0] "import"), and its synopsis and
 * description lines (swe-bench, harbor) for `rlvr tasks --help`. */
int rlvr_cmd_tasks_import(int argc, char **argv);
extern const char *const rlvr_tasks_import_synopsis[2], *const rlvr_tasks_import_doc[2];
int rlvr_cmd_rollout(int argc, char **argv);
int rlvr_cmd_eval(int argc, char **argv);
int rlvr_cmd_sweep(int argc, char **argv);
int rlvr_cmd_agent(int argc, char **argv);
int rlvr_cmd_sft(int argc, char **argv);
int rlvr_cmd_train(int argc, char **argv);
int rlvr_cmd_quickstart(int argc, char **argv);
int rlvr_cmd_submit(int argc, char **argv);
int rlvr_cmd_status(int argc, char **argv);
int rlvr_cmd_cancel(int argc, char **argv);
int rlvr_cmd_report(int argc, char **argv);
int rlvr_cmd_gate(int argc, char **argv);
int rlvr_cmd_model(int argc, char **argv);
int rlvr_cmd_generate(int argc, char **argv);
int rlvr_cmd_chat(int argc, char **argv);
int rlvr_cmd_verify(int argc, char **argv);

#endif
