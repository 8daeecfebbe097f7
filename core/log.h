/* core/log.h — leveled logging to stderr with a rank prefix.
 *
 * Lines look like "[rlvr r0 INFO] message". The level comes from
 * rlvr_log_set_level() or the RLVR_LOG environment variable
 * (error|warn|info|debug); the library default is warn, so tests are quiet
 * unless asked; the `rlvr` command raises it to info. */
#ifndef RLVR_CORE_LOG_H
#define RLVR_CORE_LOG_H

typedef enum {
    RLVR_LOG_ERROR = 0,
    RLVR_LOG_WARN = 1,
    RLVR_LOG_INFO = 2,
    RLVR_LOG_DEBUG = 3,
} rlvr_log_level;

void rlvr_log_set_level(rlvr_log_level level);
rlvr_log_level rlvr_log_get_level(void);
/* Parses "error|warn|info|debug"; returns 0 or RLVR_EINVAL. */
int rlvr_log_parse_level(const char *name, rlvr_log_level *out);
/* Applies RLVR_LOG from the environment if set and valid. */
void rlvr_log_init_from_env(void);
/* The MPI rank shown in the prefix; -1 (default) shows no rank. */
void rlvr_log_set_rank(int rank);

void rlvr_log(rlvr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A line as written, without the "[rlvr ...]" prefix, at `level`: the
 * progress a person watches (a step's line, "checkpoint PATH") and the
 * job-ending messages a script greps, which keep their own wording. The
 * library prints nothing to stderr any other way, so RLVR_LOG=warn quiets
 * a job's progress and a library caller (tests, benchmarks) sees none at the
 * default level. */
void rlvr_log_line(rlvr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define rlvr_progress(...) rlvr_log_line(RLVR_LOG_INFO, __VA_ARGS__)

#define rlvr_log_error(...) rlvr_log(RLVR_LOG_ERROR, __VA_ARGS__)
#define rlvr_log_warn(...) rlvr_log(RLVR_LOG_WARN, __VA_ARGS__)
#define rlvr_log_info(...) rlvr_log(RLVR_LOG_INFO, __VA_ARGS__)
#define rlvr_log_debug(...) rlvr_log(RLVR_LOG_DEBUG, __VA_ARGS__)

#endif
