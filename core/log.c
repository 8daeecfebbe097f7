#include "core/log.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rlvr_log_level log_level = RLVR_LOG_WARN;
static int log_rank = -1;

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static const char *const level_tags[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void rlvr_log_set_level(rlvr_log_level level) { log_level = level; }
rlvr_log_level rlvr_log_get_level(void) { return log_level; }
void rlvr_log_set_rank(int rank) { log_rank = rank; }

int rlvr_log_parse_level(const char *name, rlvr_log_level *out) {
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (rlvr_log_level)i;
            return 0;
        }
    }
    return rlvr_error_set(RLVR_EINVAL, "unknown log level \"%s\" (use error, warn, info or debug)", name);
}

void rlvr_log_init_from_env(void) {
    const char *env = getenv("RLVR_LOG");
    rlvr_log_level level = log_level;
    if (env && rlvr_log_parse_level(env, &level) == 0) log_level = level;
}

/* `line` holds `n` bytes of prefix; the message goes after them and the
 * whole line out in one fputs, so lines from threads do not interleave. */
static void emit(char *line, size_t cap, int n, const char *fmt, va_list ap) {
    vsnprintf(line + n, cap - (size_t)n, fmt, ap);
    size_t len = strlen(line);
    if (len + 1 < cap) {
        line[len] = '\n';
        line[len + 1] = '\0';
    }
    fputs(line, stderr);
}

void rlvr_log(rlvr_log_level level, const char *fmt, ...) {
    if (level > log_level) return;
    char line[4096];
    int n = log_rank >= 0 ? snprintf(line, sizeof line, "[rlvr r%d %s] ", log_rank, level_tags[level])
                          : snprintf(line, sizeof line, "[rlvr %s] ", level_tags[level]);
    va_list ap;
    va_start(ap, fmt);
    emit(line, sizeof line, n, fmt, ap);
    va_end(ap);
}

void rlvr_log_line(rlvr_log_level level, const char *fmt, ...) {
    if (level > log_level) return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    emit(line, sizeof line, 0, fmt, ap);
    va_end(ap);
}
