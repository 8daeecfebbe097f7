/* tests/enclave/carrier.h — a carrier that survives every reset, for tests
 * that must show what would happen if state did cross from one
 * verification to the next: a unix-socket service the test runs in a thread
 * of its own process, outside every sandbox, in a directory the test adds
 * to the sandbox host's system paths (bound read-only at the same path
 * inside; a socket on a read-only bind still takes connections).
 *
 * It keeps one blob and a set of numbers ("facts"), one request per
 * connection:
 *   "PUT\n" then the bytes until the client shuts its side down: the blob
 *            (answer "ok\n");
 *   "GET\n": the blob, until the service closes;
 *   "add N\n": N joins the facts (answer "1");
 *   "has N\n": "1" when N is a fact, else "0".
 * A thread, not a process: the red-team checks count the test's child
 * processes. */
#ifndef RLVR_TESTS_ENCLAVE_CARRIER_H
#define RLVR_TESTS_ENCLAVE_CARRIER_H

#include <stddef.h>

typedef struct carrier carrier;

/* Starts the service in a new directory under `parent` (NULL: /var/tmp;
 * not under /tmp, which every sandbox mounts for itself), mode 0755, the
 * socket 0777, so that a sandbox's identity may connect. */
int carrier_start(carrier **out, const char *parent);
/* The directory to add to the system paths, and the socket's path. */
const char *carrier_dir(const carrier *c);
const char *carrier_socket(const carrier *c);
/* How many PUTs it took; how many facts it holds; how many requests of
 * any kind it answered. */
int carrier_puts(const carrier *c);
int carrier_facts(const carrier *c);
int carrier_requests(const carrier *c);
/* Waits (up to 5 s) until no connection is queued or being served: a
 * sandbox's connection the thread is still closing would otherwise count
 * as the test process's own descriptor. The `void *` form is
 * redteam_target.settle's. */
void carrier_settle(const carrier *c);
void carrier_settle_hook(void *c);
/* Stops the thread and removes the directory. */
void carrier_stop(carrier *c);

#endif
