/* core/flat.c — flat images of small structures (core/flat.h). */
#include "core/flat.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static_assert(sizeof(uint64_t) == sizeof(char *), "a string vector's slots hold pointers in place");

enum { FLAT_ALIGN = RLVR_FLAT_FIRST };

uint64_t rlvr_flat_put(rlvr_flat *f, const void *p, size_t len) {
    if (f->failed || (!p && len == 0)) return 0;
    size_t start = f->len < FLAT_ALIGN ? FLAT_ALIGN : (f->len + FLAT_ALIGN - 1) & ~(size_t)(FLAT_ALIGN - 1);
    if (start + len + 1 > f->cap) {
        size_t cap = f->cap ? f->cap : 256;
        while (cap < start + len + 1) cap *= 2;
        char *grown = realloc(f->data, cap);
        if (!grown) {
            f->failed = true;
            return 0;
        }
        memset(grown + f->cap, 0, cap - f->cap);
        f->data = grown;
        f->cap = cap;
    }
    if (p && len) memcpy(f->data + start, p, len);
    f->len = start + len;
    return start;
}

uint64_t rlvr_flat_str(rlvr_flat *f, const char *s) { return s ? rlvr_flat_put(f, s, strlen(s) + 1) : 0; }

uint64_t rlvr_flat_strv(rlvr_flat *f, const char *const *v) {
    if (!v) return 0;
    size_t n = 0;
    while (v[n]) n++;
    uint64_t at = rlvr_flat_put(f, NULL, (n + 1) * sizeof(uint64_t));
    for (size_t i = 0; !f->failed && i < n; i++) {
        uint64_t s = rlvr_flat_str(f, v[i]);
        if (!f->failed) memcpy(f->data + at + i * sizeof(uint64_t), &s, sizeof s);
    }
    if (!f->failed) memset(f->data + at + n * sizeof(uint64_t), 0, sizeof(uint64_t));
    return f->failed ? 0 : at;
}

void rlvr_flat_free(rlvr_flat *f) {
    free(f->data);
    *f = (rlvr_flat){0};
}

void *rlvr_flat_at(char *image, uint64_t off) { return off ? image + off : NULL; }

const char **rlvr_flat_strv_at(char *image, uint64_t off) {
    if (!off) return NULL;
    char *slots = image + off;
    for (size_t i = 0;; i++) {
        uint64_t s;
        memcpy(&s, slots + i * sizeof s, sizeof s);
        const char *str = s ? image + s : NULL; /* same width: each slot becomes its pointer */
        memcpy(slots + i * sizeof s, &str, sizeof str);
        if (!s) return (const char **)(void *)slots;
    }
}
