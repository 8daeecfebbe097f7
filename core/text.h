/* core/text.h — a growing NUL-terminated text buffer.
 *
 * Appends never fail visibly: on out-of-memory `failed` is set, later
 * appends are ignored, and the owner checks `failed` once at the end (and
 * turns it into RLVR_ENOMEM with its own message). A zero-initialised
 * rlvr_text is empty and ready. */
#ifndef RLVR_CORE_TEXT_H
#define RLVR_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data; /* NUL-terminated; NULL while nothing was appended */
    size_t len, cap;
    bool failed;
} rlvr_text;

void rlvr_text_printf(rlvr_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) (which may hold NULs). */
void rlvr_text_append(rlvr_text *t, const char *s, size_t n);
/* Appends s[0..n) as valid UTF-8: each ill-formed part (the longest start
 * of a sequence that could still have been valid, at least one byte, as
 * Unicode recommends and Python's and Rust's lossy decoders do) becomes
 * U+FFFD. Model output is bytes; JSON and chat templates need text. */
void rlvr_text_append_utf8(rlvr_text *t, const char *s, size_t n);
/* Frees the buffer and leaves `t` empty. */
void rlvr_text_free(rlvr_text *t);

#endif
