/* core/config.h — one flag-free INI configuration per run (libinih).
 *
 * Every key a module understands is declared in a schema table
 * (rlvr_config_key[], terminated by an entry with key == NULL). Loading
 * checks the whole file against the schemas given: unknown sections or keys
 * and values of the wrong type or out of range are errors naming the file,
 * line, key and, for unknown names, the closest known one ("did you mean").
 * Getters return the file's value or the schema default.
 * docs/CONFIG.md lists every key; tests/core checks it stays complete. */
#ifndef RLVR_CORE_CONFIG_H
#define RLVR_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RLVR_CFG_INT,    /* int64 */
    RLVR_CFG_FLOAT,  /* double */
    RLVR_CFG_BOOL,   /* true/false, yes/no, on/off, 1/0 */
    RLVR_CFG_STRING, /* any text */
    RLVR_CFG_ENUM,   /* one of `choices`, "a|b|c" */
} rlvr_config_type;

typedef struct {
    const char *section;       /* "model" */
    const char *key;           /* "d_model"; NULL ends a table */
    rlvr_config_type type;
    const char *default_value; /* as it would be written in the file */
    const char *doc;           /* one line for docs/CONFIG.md and errors */
    const char *choices;       /* RLVR_CFG_ENUM only: "a|b|c" */
    double min, max;           /* numeric range, inclusive; ignored when min > max */
} rlvr_config_key;

/* Range helper for schema tables: RLVR_CFG_RANGE(1, 1e9). RLVR_CFG_ANY = no range. */
#define RLVR_CFG_RANGE(lo, hi) (lo), (hi)
#define RLVR_CFG_ANY 1.0, 0.0

typedef struct rlvr_config rlvr_config;

/* Parses the INI file at `path` against `schemas` (a NULL-terminated list of
 * key tables). On error returns RLVR_ECONFIG (or RLVR_EIO) with a message
 * "FILE:LINE: ..." and leaves *out NULL. */
int rlvr_config_load(rlvr_config **out, const char *path, const rlvr_config_key *const *schemas);

/* Same from text in memory; `name` stands for the file name in messages. */
int rlvr_config_parse(rlvr_config **out, const char *text, const char *name,
                      const rlvr_config_key *const *schemas);

void rlvr_config_free(rlvr_config *cfg);

/* Typed getters. Asking for a key that no schema declares, or with the wrong
 * type, is a programming error: RLVR_EINVAL. */
int rlvr_config_get_int(const rlvr_config *cfg, const char *section, const char *key, int64_t *out);
int rlvr_config_get_double(const rlvr_config *cfg, const char *section, const char *key, double *out);
int rlvr_config_get_bool(const rlvr_config *cfg, const char *section, const char *key, bool *out);
/* STRING and ENUM keys; the pointer lives as long as cfg. */
int rlvr_config_get_string(const rlvr_config *cfg, const char *section, const char *key, const char **out);

/* True when the file set the key explicitly. */
bool rlvr_config_is_set(const rlvr_config *cfg, const char *section, const char *key);

/* Line of the key in the file (0 when not set): for messages from validators. */
int rlvr_config_line(const rlvr_config *cfg, const char *section, const char *key);

/* File name or the `name` given to rlvr_config_parse. */
const char *rlvr_config_source(const rlvr_config *cfg);

/* The configuration text exactly as read, and its 64-bit FNV-1a hash
 * (recorded in run manifests and checkpoints). */
const char *rlvr_config_text(const rlvr_config *cfg);
uint64_t rlvr_config_hash(const rlvr_config *cfg);

/* Validation error helper for module validators: formats
 * "FILE:LINE: [section] key: message" and returns RLVR_ECONFIG. */
int rlvr_config_error(const rlvr_config *cfg, const char *section, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Levenshtein distance, exposed for "did you mean" elsewhere (CLI verbs). */
size_t rlvr_edit_distance(const char *a, const char *b);

/* 64-bit FNV-1a over bytes. */
uint64_t rlvr_fnv1a64(const void *data, size_t n);

#endif
