/* core/config.h — one flag-free INI configuration per run (libinih).
 *
 * Every key a module understands is declared once, in a schema table
 * (rlvr_config_key[], terminated by RLVR_KEY_END). A row names the key, its
 * type, default, range and documentation, and the struct field the key's
 * value goes to. Loading checks the whole file against the tables given:
 * unknown sections or keys and values of the wrong type or out of range are
 * errors naming the file, line, key and, for unknown names, the closest
 * known one ("did you mean"). A module then reads its sections with one
 * rlvr_config_fill() into its struct (the file's value or the default of
 * each key) and checks what spans keys itself.
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

/* The C type of the struct field a key fills (rlvr_config_fill). */
typedef enum {
    RLVR_FIELD_NONE = 0, /* fills nothing: a row written without a field (read with the getters) */
    RLVR_FIELD_I32,      /* int32_t or int, from an INT key (its range must fit) */
    RLVR_FIELD_I64,      /* int64_t, from an INT key */
    RLVR_FIELD_U64,      /* uint64_t, from an INT key with min >= 0 (seeds) */
    RLVR_FIELD_FLOAT,    /* float, from a FLOAT key */
    RLVR_FIELD_DOUBLE,   /* double, from a FLOAT key */
    RLVR_FIELD_BOOL,     /* bool, from a BOOL key */
    RLVR_FIELD_STRING,   /* const char *, from a STRING key or an ENUM key's name; the text lives as long
                          * as the rlvr_config (no copy) */
    RLVR_FIELD_ENUM,     /* an int-sized C enum, from an ENUM key: the index of the value in `choices`,
                          * so the order of "a|b|c" is the order of the C enum's values */
    RLVR_FIELD_ENUM_BOOL /* bool, from an ENUM key of two choices: true for the second */
} rlvr_config_field;

typedef struct {
    const char *section;       /* "model" */
    const char *key;           /* "d_model"; NULL ends a table */
    rlvr_config_type type;
    const char *default_value; /* as it would be written in the file */
    const char *doc;           /* one line for docs/CONFIG.md and errors */
    const char *choices;       /* RLVR_CFG_ENUM only: "a|b|c" */
    double min, max;           /* numeric range, inclusive; ignored when min > max */
    rlvr_config_field field;   /* what rlvr_config_fill writes; RLVR_FIELD_NONE: nothing */
    size_t offset;             /* offsetof the field in the struct the module fills */
} rlvr_config_key;

/* Range helper for schema tables: RLVR_CFG_RANGE(1, 1e9). RLVR_CFG_ANY = no range. */
#define RLVR_CFG_RANGE(lo, hi) (lo), (hi)
#define RLVR_CFG_ANY 1.0, 0.0

/* ---- table rows: one key, one entry ------------------------------------
 *
 *   RLVR_KEY_I32("grpo", "group_size", rlvr_grpo_config, group_size, "8", 2, 65536,
 *                "G: rollouts per task in a group"),
 *
 * S is the struct the section is filled into and F its member (a nested
 * member such as `objective.clip_low` works too). The default is text, as it
 * would be written in the file, so docs/CONFIG.md shows it as written.
 * Each macro checks at compile time that F has the C type its kind fills:
 * a mismatch is "comparison of distinct pointer types" (an error with
 * -Werror) or, for enums, a negative array size. */
#define RLVR_KEY_FIELD_(S, F, ctype) (offsetof(S, F) + 0 * sizeof((ctype *)0 == &((S *)0)->F))
#define RLVR_KEY_ENUM_FIELD_(S, F) \
    (offsetof(S, F) + 0 * sizeof(char[sizeof(((S *)0)->F) == sizeof(int) ? 1 : -1]))
#define RLVR_KEY_ROW_(sec, key, type, def, doc, choices, lo, hi, kind, off) \
    {(sec), (key), (type), (def), (doc), (choices), (lo), (hi), (kind), (off)}

#define RLVR_KEY_I32(sec, key, S, F, def, lo, hi, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_INT, def, doc, NULL, lo, hi, RLVR_FIELD_I32, RLVR_KEY_FIELD_(S, F, int32_t))
#define RLVR_KEY_I64(sec, key, S, F, def, lo, hi, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_INT, def, doc, NULL, lo, hi, RLVR_FIELD_I64, RLVR_KEY_FIELD_(S, F, int64_t))
#define RLVR_KEY_U64(sec, key, S, F, def, lo, hi, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_INT, def, doc, NULL, lo, hi, RLVR_FIELD_U64, RLVR_KEY_FIELD_(S, F, uint64_t))
#define RLVR_KEY_FLOAT(sec, key, S, F, def, lo, hi, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_FLOAT, def, doc, NULL, lo, hi, RLVR_FIELD_FLOAT, RLVR_KEY_FIELD_(S, F, float))
#define RLVR_KEY_DOUBLE(sec, key, S, F, def, lo, hi, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_FLOAT, def, doc, NULL, lo, hi, RLVR_FIELD_DOUBLE, \
                  RLVR_KEY_FIELD_(S, F, double))
#define RLVR_KEY_BOOL(sec, key, S, F, def, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_BOOL, def, doc, NULL, 1.0, 0.0, RLVR_FIELD_BOOL, RLVR_KEY_FIELD_(S, F, bool))
#define RLVR_KEY_STRING(sec, key, S, F, def, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_STRING, def, doc, NULL, 1.0, 0.0, RLVR_FIELD_STRING, \
                  RLVR_KEY_FIELD_(S, F, const char *))
/* An ENUM key into a C enum: "a|b|c" lists the names in the enum's order. */
#define RLVR_KEY_ENUM(sec, key, S, F, def, choices, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_ENUM, def, doc, choices, 1.0, 0.0, RLVR_FIELD_ENUM, RLVR_KEY_ENUM_FIELD_(S, F))
/* An ENUM key kept as its name (const char *), for values passed on as text. */
#define RLVR_KEY_ENUM_NAME(sec, key, S, F, def, choices, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_ENUM, def, doc, choices, 1.0, 0.0, RLVR_FIELD_STRING, \
                  RLVR_KEY_FIELD_(S, F, const char *))
/* An ENUM key of two choices into a bool: true for the second ("outcome|mc"). */
#define RLVR_KEY_ENUM_BOOL(sec, key, S, F, def, choices, doc) \
    RLVR_KEY_ROW_(sec, key, RLVR_CFG_ENUM, def, doc, choices, 1.0, 0.0, RLVR_FIELD_ENUM_BOOL, \
                  RLVR_KEY_FIELD_(S, F, bool))
#define RLVR_KEY_END {NULL, NULL, 0, NULL, NULL, NULL, 0, 0, RLVR_FIELD_NONE, 0}

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

/* Writes every key of `keys` (only those of `section`, or all when NULL)
 * that has a field into `dst`, a struct of the type the rows name: the
 * file's value or the default. The values were checked against type and
 * range when the file was parsed, so what is left to a module is what spans
 * keys. `keys` must be among the schemas cfg was parsed with: RLVR_EINVAL
 * otherwise (a programming error, like a getter asking for an unknown key).
 * A NULL `cfg` is a file that sets nothing: every key at its default. */
int rlvr_config_fill(const rlvr_config *cfg, const rlvr_config_key *keys, const char *section, void *dst);

/* Every key at its default, no file needed: how a module's C defaults come
 * from its table, so that a default is written once. Fails
 * only on a table whose default does not parse (rlvr_config_table_check
 * refuses such a table too). */
int rlvr_config_fill_defaults(const rlvr_config_key *keys, const char *section, void *dst);

/* Name of value `value` of the ENUM key [section] key of `keys`, copied into
 * buf (cap bytes): for messages and reports that print an enum, so that the
 * names are written only in the table. NULL when there is no such key or
 * value (buf then holds ""). */
const char *rlvr_config_enum_name(const rlvr_config_key *keys, const char *section, const char *key, int value,
                                  char *buf, size_t cap);

/* Index of `name` in an ENUM row's choices; -1 when it is not one. */
int rlvr_config_enum_index(const rlvr_config_key *k, const char *name);

/* Checks a table's rows against themselves: the field kind fits the type
 * (and an I32 field the range), the default parses and lies in the range,
 * an ENUM's choices are non-empty names and hold the default, an ENUM_BOOL
 * has two. RLVR_EINVAL naming the first bad row. For tests. */
int rlvr_config_table_check(const rlvr_config_key *keys);

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

#endif
