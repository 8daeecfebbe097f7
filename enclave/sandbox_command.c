/* enclave/sandbox_command.c — the command process: the run's main process.
 *
 * It exists so that what a run executes starts confined (sandbox_confine.c)
 * in a process of its own under the run's init, which watches it and ends
 * the run when it ends. In exec mode it executes the command (spawned with
 * CLONE_VM | CLONE_VFORK, as posix_spawn does, so that no copy of the
 * spawner's page tables is made); in call mode it calls the runtime's
 * function and exits with its value. Setup failures go to init as ERROR on
 * `err`; a command that cannot be executed says so on its output and exits
 * with RLVR_SANDBOX_EXIT_EXEC. */
#include "enclave/sandbox_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const base_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "USER=sandbox",
    "LOGNAME=sandbox", "SHELL=/bin/sh",
};

/* Whether `later` (NULL-terminated entries) sets the variable of `entry`. */
static bool env_replaced(const char *entry, const char *const *later) {
    size_t key = strcspn(entry, "=");
    for (const char *const *l = later; l && *l; l++)
        if (strncmp(*l, entry, key + 1) == 0) return true;
    return false;
}

/* The command's environment: the base, RLVR_RESULTS_FD when it has a
 * results channel, the sandbox's own entries, then the command's (at most
 * 63 in all); an entry replaces an earlier one of the same name. */
static void command_env(const rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, const char **envp, char *results_env,
                        size_t results_cap) {
    const char *own[33];
    size_t n_own = 0;
    for (const char *e = sb->env; *e && n_own < 32; e += strlen(e) + 1) own[n_own++] = e;
    own[n_own] = NULL;
    size_t n = 0;
    for (size_t i = 0; i < sizeof base_env / sizeof *base_env; i++)
        if (!env_replaced(base_env[i], own) && !env_replaced(base_env[i], cmd->env)) envp[n++] = base_env[i];
    if (cmd->results_fd) {
        snprintf(results_env, results_cap, "RLVR_RESULTS_FD=%d", RLVR_SANDBOX_RESULTS_FD);
        envp[n++] = results_env;
    }
    for (size_t i = 0; i < n_own; i++)
        if (!env_replaced(own[i], cmd->env)) envp[n++] = own[i];
    for (const char *const *e = cmd->env; e && *e && n < 63; e++) envp[n++] = *e;
    envp[n] = NULL;
}

/* argv[0] looked up in the base PATH when it names no directory. */
static const char *command_path(const char *prog, char *found, size_t cap) {
    if (strchr(prog, '/')) return prog;
    static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(found, cap, "%s/%s", dirs[i], prog);
        if (access(found, X_OK) == 0) return found;
    }
    return prog;
}

static void exec_command(const rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd) __attribute__((noreturn));

static void exec_command(const rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd) {
    const char *envp[64];
    char results_env[32];
    command_env(sb, cmd, envp, results_env, sizeof results_env);
    char found[PATH_MAX];
    const char *prog = command_path(cmd->argv[0], found, sizeof found);
    if (cmd->judge) /* from the descriptor: the directory is hidden by now */
        syscall(SYS_execveat, SB_JUDGE_FD, "", (char *const *)cmd->argv, (char *const *)envp, AT_EMPTY_PATH);
    else
        execve(prog, (char *const *)cmd->argv, (char *const *)envp);
    char msg[PATH_MAX + 64];
    int len = snprintf(msg, sizeof msg, "rlvr sandbox: cannot run %s: %s\n", cmd->argv[0], strerror(errno));
    if (rlvr_sb_write_all(1, msg, (size_t)len) != 0) {
    }
    _exit(RLVR_SANDBOX_EXIT_EXEC);
}

/* The address-space cap comes last: the runtime's code before it may be
 * built with sanitizers that reserve terabytes. */
void rlvr_sb_command_main(const rlvr_sb_run_plan *plan, int out, int results, int err, int judge) {
    err = rlvr_sb_confine(plan, true, out, results, err, judge);
    const rlvr_sandbox_limits *l = &plan->sb->limits;
    rlvr_sb_set_limit(err, RLIMIT_AS, (rlim_t)l->memory_bytes, (rlim_t)l->memory_bytes, "as");
    exec_command(plan->sb, plan->cmd);
}

/* Init waits (CLONE_VFORK) until the exec. */
int rlvr_sb_command_entry(void *p) {
    const rlvr_sb_command_args *a = p;
    rlvr_sb_command_main(a->plan, a->out, a->results, a->err, a->judge);
}

void rlvr_sb_run_runtime_code(int err, int (*fn)(void *), void *arg) {
    close(err); /* tells init the setup worked */
    /* whatever the runtime had buffered in stdio must not leak into the answer */
    __fpurge(stdout);
    __fpurge(stderr);
    int rc = fn(arg);
    fflush(stdout);
    _exit(rc & 0xff);
}

/* The argument is this process's own copy (from the spawner's image). */
void rlvr_sb_call_main(const rlvr_sb_run_plan *plan, int out, int err) {
    err = rlvr_sb_confine(plan, false, out, -1, err, -1);
    rlvr_sb_run_runtime_code(err, plan->fn, (void *)plan->arg);
}
