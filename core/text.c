/* core/text.c — the growing text buffer (core/text.h). */
#include "core/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `extra` more bytes and the NUL; false once an allocation failed. */
static bool text_reserve(rlvr_text *t, size_t extra) {
    if (t->failed) return false;
    if (t->len + extra + 1 <= t->cap) return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + extra + 1) cap *= 2;
    char *grown = realloc(t->data, cap);
    if (!grown) {
        t->failed = true;
        return false;
    }
    t->data = grown;
    t->cap = cap;
    return true;
}

void rlvr_text_append(rlvr_text *t, const char *s, size_t n) {
    if (!text_reserve(t, n)) return;
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

void rlvr_text_printf(rlvr_text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if (!text_reserve(t, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void rlvr_text_free(rlvr_text *t) {
    free(t->data);
    *t = (rlvr_text){0};
}
