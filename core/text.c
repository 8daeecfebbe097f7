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

/* Bytes of the well-formed UTF-8 sequence at s[0..n) (1..4), or 0 with
 * *bad = the length of its ill-formed part (Unicode's table of
 * well-formed byte sequences: the second byte's range depends on the
 * first, to exclude overlong forms, surrogates and code points past
 * U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n, size_t *bad) {
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3;
    else if (c >= 0xF0 && c <= 0xF4) need = 4;
    else {
        *bad = 1;
        return 0;
    }
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    for (size_t i = 1; i < need; i++) {
        if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF)) {
            *bad = i;
            return 0;
        }
    }
    return need;
}

void rlvr_text_append_utf8(rlvr_text *t, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0; /* well-formed bytes not yet appended start at i - run */
    while (i < n) {
        size_t bad = 0, k = utf8_sequence(u + i, n - i, &bad);
        if (k) {
            i += k;
            run += k;
            continue;
        }
        rlvr_text_append(t, s + i - run, run);
        rlvr_text_append(t, "\xEF\xBF\xBD", 3);
        i += bad;
        run = 0;
    }
    rlvr_text_append(t, s + n - run, run);
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
