/* enclave/sandbox_protocol.h — the names of a sandbox's processes, the bytes
 * they exchange and the exit codes they end with. docs/ENCLAVE.md "Sandbox
 * processes" has the picture; this header is its one source of values. Not
 * part of the module's contract. */
#ifndef RLVR_ENCLAVE_SANDBOX_PROTOCOL_H
#define RLVR_ENCLAVE_SANDBOX_PROTOCOL_H

/* The processes of a sandbox, by role: one file each. The runtime is none of
 * them: it only starts the spawner and reads pipes. */
typedef enum {
    RLVR_SANDBOX_ROLE_SPAWNER = 1, /* sandbox_spawner.c: forks holders and supervisors for the runtime */
    RLVR_SANDBOX_ROLE_HOLDER,      /* sandbox_holder.c: owns one sandbox's namespaces and root */
    RLVR_SANDBOX_ROLE_SUPERVISOR,  /* sandbox_supervisor.c: one run: joins the sandbox, wall time, report */
    RLVR_SANDBOX_ROLE_INIT,        /* sandbox_init.c: pid 1 of a run: reaps, samples, ends the run */
    RLVR_SANDBOX_ROLE_PREPARE,     /* sandbox_prepare.c: the runtime's prepare step, before the command */
    RLVR_SANDBOX_ROLE_COMMAND,     /* sandbox_command.c: the command (exec) or the runtime's function (call) */
    RLVR_SANDBOX_ROLE_IMAGE,       /* sandbox_image.c: mounts one environment image, hands out its trees */
} rlvr_sandbox_role;

/* Control bytes on the pipes between the runtime and a sandbox's processes.
 * Each is one byte written on its own; only ERROR carries more. */
enum {
    /* holder -> runtime: the holder's namespaces exist; the runtime now
     * writes its uid/gid maps (they can only be written from outside) */
    RLVR_SANDBOX_MSG_UNSHARED = 'U',
    /* runtime -> holder: the maps are written; build the root */
    RLVR_SANDBOX_MSG_GO = 'G',
    /* holder -> runtime: the root is built (after GO) or /work is restored
     * (after RESET); the sandbox is ready for a run */
    RLVR_SANDBOX_MSG_READY = 'K',
    /* runtime -> holder: restore /work to the snapshot (rlvr_sandbox_reset);
     * the holder answers READY or ERROR. EOF on this pipe ends the holder */
    RLVR_SANDBOX_MSG_RESET = 'R',
    /* runtime -> supervisor: stop the run (it went over its output cap) */
    RLVR_SANDBOX_MSG_STOP = 'S',
    /* holder, prepare or command -> whoever waits for it (the runtime, or
     * the run's init): the process failed; a stage byte
     * (RLVR_SANDBOX_STAGE_*) and a message follow, and the process exits
     * with RLVR_SANDBOX_EXIT_FAILED */
    RLVR_SANDBOX_MSG_ERROR = 'E',
};

/* The stage byte after ERROR: where a process failed, so that the host's
 * probe can react (refuse user namespaces, fall back from overlayfs). */
enum {
    RLVR_SANDBOX_STAGE_UNSHARE = 'U', /* creating the holder's namespaces */
    RLVR_SANDBOX_STAGE_OVERLAY = 'O', /* mounting the overlay over /work */
    RLVR_SANDBOX_STAGE_OTHER = 'X',   /* anywhere else */
};

/* Exit codes of a sandbox's processes other than 0 (done) and the command's
 * or the runtime's code's own. Only RLVR_SANDBOX_EXIT_EXEC reaches the
 * runtime, as the command's exit code; the others it never reads (it learns
 * of failures from the messages and reports above and from its pidfds):
 * they say in a process listing or a trace which process gave up where. */
enum {
    /* holder: its descriptors could not be laid out, it was not the
     * spawner's child, or a pipe to the runtime broke before it could say
     * why */
    RLVR_SANDBOX_EXIT_HOLDER_LOST = 120,
    /* holder, prepare or command: failed after sending ERROR */
    RLVR_SANDBOX_EXIT_FAILED = 121,
    /* supervisor or init: failed after writing a run report that names
     * the failure */
    RLVR_SANDBOX_EXIT_REPORTED = 122,
    /* init: its supervisor was gone before the run began */
    RLVR_SANDBOX_EXIT_ORPHANED = 123,
    /* supervisor: its descriptors could not be laid out or it was not the
     * spawner's child (nobody to report to) */
    RLVR_SANDBOX_EXIT_SUPERVISOR_LOST = 124,
    /* spawner: could not set itself up or wait for requests */
    RLVR_SANDBOX_EXIT_SPAWNER = 125,
    /* a child of the spawner could not map the plan it was sent */
    RLVR_SANDBOX_EXIT_NO_PLAN = 126,
    /* command: the program could not be executed (the shell's convention;
     * the run's output says why) */
    RLVR_SANDBOX_EXIT_EXEC = 127,
};

#endif
