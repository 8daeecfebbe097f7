#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RLVR_ERROR_CAP 2048

static _Thread_local char error_message[RLVR_ERROR_CAP];
static _Thread_local int error_code;
/* "dir/file.c:LINE" of the innermost error (source paths are relative to the
 * repository: the build maps them), "" when it was set without one */
static _Thread_local char error_where[256];

static int error_vset(int code, const char *fmt, va_list ap) {
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    error_code = code;
    return code;
}

int rlvr_error_set(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_vset(code, fmt, ap);
    va_end(ap);
    error_where[0] = '\0';
    return code;
}

int rlvr_error_set_at(int code, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_vset(code, fmt, ap);
    va_end(ap);
    snprintf(error_where, sizeof error_where, "%s:%d", file, line);
    return code;
}

int rlvr_error_errno_at(const char *file, int line, const char *fmt, ...) {
    int saved = errno;
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rlvr_error_set_at(RLVR_ESYS, file, line, "%s: %s", what, strerror(saved));
}

int rlvr_error_wrap(int code, const char *fmt, ...) {
    char previous[RLVR_ERROR_CAP];
    snprintf(previous, sizeof previous, "%s", error_message);
    char context[1024] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    /* truncation of very long chains is acceptable: the context comes first */
    size_t n = strlen(context);
    memcpy(error_message, context, n + 1);
    if (previous[0] && n + 2 < sizeof error_message) {
        memcpy(error_message + n, ": ", 3);
        snprintf(error_message + n + 2, sizeof error_message - n - 2, "%.*s",
                 (int)(sizeof error_message - n - 3), previous);
    }
    error_code = code;
    return code;
}

const char *rlvr_error_last(void) { return error_message; }
const char *rlvr_error_where(void) { return error_where; }
int rlvr_error_last_code(void) { return error_code; }

void rlvr_error_clear(void) {
    error_message[0] = '\0';
    error_where[0] = '\0';
    error_code = RLVR_OK;
}

const char *rlvr_error_name(int code) {
    switch (code) {
    case RLVR_OK: return "RLVR_OK";
    case RLVR_EINVAL: return "RLVR_EINVAL";
    case RLVR_ENOMEM: return "RLVR_ENOMEM";
    case RLVR_EIO: return "RLVR_EIO";
    case RLVR_ECONFIG: return "RLVR_ECONFIG";
    case RLVR_EFORMAT: return "RLVR_EFORMAT";
    case RLVR_ESYS: return "RLVR_ESYS";
    case RLVR_ELIMIT: return "RLVR_ELIMIT";
    case RLVR_EUNSUPPORTED: return "RLVR_EUNSUPPORTED";
    case RLVR_EMPI: return "RLVR_EMPI";
    case RLVR_EHDF5: return "RLVR_EHDF5";
    case RLVR_EGIT: return "RLVR_EGIT";
    case RLVR_ESANDBOX: return "RLVR_ESANDBOX";
    case RLVR_ECHECKSUM: return "RLVR_ECHECKSUM";
    case RLVR_EINTERRUPTED: return "RLVR_EINTERRUPTED";
    case RLVR_ENOTFOUND: return "RLVR_ENOTFOUND";
    case RLVR_EBLAS: return "RLVR_EBLAS";
    case RLVR_ESTATE: return "RLVR_ESTATE";
    default: return "RLVR_E?";
    }
}
