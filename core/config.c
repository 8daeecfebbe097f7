#include "core/config.h"
#include "core/hash.h"
#include "core/error.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const rlvr_config_key *schema;
    char *value;
    int line;
} config_entry;

struct rlvr_config {
    char *source;
    char *text;
    const rlvr_config_key *const *schemas;
    config_entry *entries;
    size_t n_entries, cap_entries;
    /* first error found while parsing; libinih keeps going, we keep the first */
    int error;
    /* Debian's libinih is built without line numbers in the handler, so our
     * line reader counts lines and the handler reads the count from here. */
    const char *cursor;
    int line;
};

size_t rlvr_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    size_t row[128];
    if (lb >= 128) return (size_t)-1;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const rlvr_config_key *find_schema(const rlvr_config_key *const *schemas, const char *section,
                                          const char *key) {
    for (size_t t = 0; schemas && schemas[t]; t++)
        for (const rlvr_config_key *k = schemas[t]; k->key; k++)
            if (strcmp(k->section, section) == 0 && strcmp(k->key, key) == 0) return k;
    return NULL;
}

static bool section_known(const rlvr_config_key *const *schemas, const char *section) {
    for (size_t t = 0; schemas && schemas[t]; t++)
        for (const rlvr_config_key *k = schemas[t]; k->key; k++)
            if (strcmp(k->section, section) == 0) return true;
    return false;
}

/* Closest "section.key" (or section) to what the user wrote, for messages. */
static void suggest(const rlvr_config_key *const *schemas, const char *section, const char *key, char *out,
                    size_t cap) {
    size_t best = (size_t)-1;
    out[0] = '\0';
    char want[256], have[256];
    snprintf(want, sizeof want, "%s.%s", section, key ? key : "");
    for (size_t t = 0; schemas && schemas[t]; t++) {
        for (const rlvr_config_key *k = schemas[t]; k->key; k++) {
            size_t d;
            if (key) {
                snprintf(have, sizeof have, "%s.%s", k->section, k->key);
                d = rlvr_edit_distance(want, have);
                /* a key spelled right but put in the wrong section */
                if (strcmp(k->key, key) == 0) d = 1;
            } else {
                snprintf(have, sizeof have, "[%s]", k->section);
                d = rlvr_edit_distance(section, k->section);
            }
            if (d < best) {
                best = d;
                snprintf(out, cap, "%s", have);
            }
        }
    }
    size_t len = strlen(key ? want : section);
    if (best > 3 && best * 2 > len) out[0] = '\0';
}

static bool parse_bool(const char *v, bool *out) {
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) { *out = true; return true; }
        if (strcasecmp(v, no[i]) == 0) { *out = false; return true; }
    }
    return false;
}

static bool parse_int(const char *v, int64_t *out) {
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 0);
    if (errno || end == v || *end) {
        /* allow "1e6" style for integers when exact */
        double d = strtod(v, &end);
        if (end == v || *end || d != floor(d) || fabs(d) > 9.0e18) return false;
        x = (long long)d;
    }
    *out = x;
    return true;
}

static bool parse_double(const char *v, double *out) {
    errno = 0;
    char *end;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d)) return false;
    *out = d;
    return true;
}

/* Index of `v` among "a|b|c"; -1 when it is none of them. */
static int enum_find(const char *choices, const char *v) {
    size_t lv = strlen(v);
    const char *p = choices;
    for (int i = 0; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == lv && strncmp(p, v, len) == 0) return i;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static bool enum_has(const char *choices, const char *v) { return enum_find(choices, v) >= 0; }

/* Checks `value` against the key's type and range; on failure writes why. */
static bool value_ok(const rlvr_config_key *k, const char *value, char *why, size_t cap) {
    int64_t i;
    double d = 0;
    bool b;
    switch (k->type) {
    case RLVR_CFG_INT:
        if (!parse_int(value, &i)) { snprintf(why, cap, "\"%s\" is not an integer", value); return false; }
        d = (double)i;
        break;
    case RLVR_CFG_FLOAT:
        if (!parse_double(value, &d)) { snprintf(why, cap, "\"%s\" is not a number", value); return false; }
        break;
    case RLVR_CFG_BOOL:
        if (!parse_bool(value, &b)) {
            snprintf(why, cap, "\"%s\" is not a boolean (use true or false)", value);
            return false;
        }
        return true;
    case RLVR_CFG_ENUM:
        if (!enum_has(k->choices, value)) {
            snprintf(why, cap, "\"%s\" is not one of %s", value, k->choices);
            return false;
        }
        return true;
    case RLVR_CFG_STRING:
        return true;
    }
    if (k->min <= k->max && (d < k->min || d > k->max)) {
        snprintf(why, cap, "%s is out of range [%g, %g]", value, k->min, k->max);
        return false;
    }
    return true;
}

static int record_error(rlvr_config *cfg, int lineno, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int record_error(rlvr_config *cfg, int lineno, const char *fmt, ...) {
    if (cfg->error) return 0;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rlvr_error_set(RLVR_ECONFIG, "%s:%d: %s", cfg->source, lineno, msg);
    cfg->error = RLVR_ECONFIG;
    return 0;
}

static config_entry *find_entry(const rlvr_config *cfg, const char *section, const char *key) {
    for (size_t i = 0; i < cfg->n_entries; i++)
        if (strcmp(cfg->entries[i].schema->section, section) == 0 && strcmp(cfg->entries[i].schema->key, key) == 0)
            return &cfg->entries[i];
    return NULL;
}

static int on_ini_entry(void *user, const char *section, const char *name, const char *value) {
    rlvr_config *cfg = user;
    int lineno = cfg->line;
    char hint[300];
    if (!name) { /* a section header on its own */
        if (!section_known(cfg->schemas, section)) {
            suggest(cfg->schemas, section, NULL, hint, sizeof hint);
            return record_error(cfg, lineno, "unknown section [%s]%s%s", section,
                                hint[0] ? "; did you mean " : "", hint);
        }
        return 1;
    }
    const rlvr_config_key *k = find_schema(cfg->schemas, section, name);
    if (!k) {
        suggest(cfg->schemas, section, name, hint, sizeof hint);
        return record_error(cfg, lineno, "unknown key \"%s\" in [%s]%s%s", name, section,
                            hint[0] ? "; did you mean " : "", hint);
    }
    char why[512];
    if (!value_ok(k, value, why, sizeof why))
        return record_error(cfg, lineno, "[%s] %s: %s (%s)", section, name, why, k->doc);
    if (find_entry(cfg, section, name))
        return record_error(cfg, lineno, "[%s] %s is set twice", section, name);
    if (cfg->n_entries == cfg->cap_entries) {
        size_t cap = cfg->cap_entries ? cfg->cap_entries * 2 : 32;
        config_entry *grown = realloc(cfg->entries, cap * sizeof *grown);
        if (!grown) return record_error(cfg, lineno, "out of memory");
        cfg->entries = grown;
        cfg->cap_entries = cap;
    }
    char *copy = strdup(value);
    if (!copy) return record_error(cfg, lineno, "out of memory");
    cfg->entries[cfg->n_entries++] = (config_entry){.schema = k, .value = copy, .line = lineno};
    return 1;
}

/* libinih line reader over the text in memory; counts lines for messages. */
static char *read_line(char *str, int num, void *stream) {
    rlvr_config *cfg = stream;
    const char *p = cfg->cursor;
    if (!*p || num < 2) return NULL;
    int n = 0;
    while (n < num - 1 && p[n] && p[n] != '\n') n++;
    if (p[n] == '\n' && n < num - 1) n++;
    memcpy(str, p, (size_t)n);
    str[n] = '\0';
    cfg->cursor = p + n;
    if (n > 0 && str[n - 1] == '\n') cfg->line++;
    else if (!*cfg->cursor) cfg->line++; /* last line without newline */
    return str;
}

int rlvr_config_parse(rlvr_config **out, const char *text, const char *name,
                      const rlvr_config_key *const *schemas) {
    *out = NULL;
    rlvr_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    cfg->source = strdup(name);
    cfg->text = strdup(text);
    cfg->schemas = schemas;
    if (!cfg->source || !cfg->text) {
        rlvr_config_free(cfg);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    cfg->cursor = cfg->text;
    int rc = ini_parse_stream(read_line, cfg, on_ini_entry, cfg);
    if (cfg->error) {
        rlvr_config_free(cfg);
        return RLVR_ECONFIG;
    }
    if (rc > 0) {
        rlvr_config_free(cfg);
        return rlvr_error_set(RLVR_ECONFIG, "%s:%d: not an INI line (expected [section] or key = value)", name, rc);
    }
    if (rc < 0) {
        rlvr_config_free(cfg);
        return rlvr_error_set(RLVR_ECONFIG, "%s: could not parse (libinih error %d)", name, rc);
    }
    *out = cfg;
    return 0;
}

int rlvr_config_load(rlvr_config **out, const char *path, const rlvr_config_key *const *schemas) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return rlvr_error_set(RLVR_EIO, "cannot open config %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) {
        fclose(f);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len <= 1) {
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                fclose(f);
                return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            }
            text = grown;
            cap *= 2;
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(text);
        return rlvr_error_set(RLVR_EIO, "cannot read config %s", path);
    }
    text[len] = '\0';
    int rc = rlvr_config_parse(out, text, path, schemas);
    free(text);
    return rc;
}

void rlvr_config_free(rlvr_config *cfg) {
    if (!cfg) return;
    for (size_t i = 0; i < cfg->n_entries; i++) free(cfg->entries[i].value);
    free(cfg->entries);
    free(cfg->source);
    free(cfg->text);
    free(cfg);
}

/* The raw text for a key: the file's value or the schema default. */
static int lookup(const rlvr_config *cfg, const char *section, const char *key, rlvr_config_type type,
                  const char **value) {
    const rlvr_config_key *k = find_schema(cfg->schemas, section, key);
    if (!k) return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s is not declared in any schema", section, key);
    bool string_like = type == RLVR_CFG_STRING && (k->type == RLVR_CFG_STRING || k->type == RLVR_CFG_ENUM);
    if (k->type != type && !string_like)
        return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s read with the wrong type", section, key);
    const config_entry *e = find_entry(cfg, section, key);
    *value = e ? e->value : k->default_value;
    return 0;
}

int rlvr_config_get_int(const rlvr_config *cfg, const char *section, const char *key, int64_t *out) {
    const char *v;
    RLVR_TRY(lookup(cfg, section, key, RLVR_CFG_INT, &v));
    if (!parse_int(v, out)) return RLVR_FAIL(RLVR_EINVAL, "default of [%s] %s is not an integer", section, key);
    return 0;
}

int rlvr_config_get_double(const rlvr_config *cfg, const char *section, const char *key, double *out) {
    const char *v;
    RLVR_TRY(lookup(cfg, section, key, RLVR_CFG_FLOAT, &v));
    if (!parse_double(v, out)) return RLVR_FAIL(RLVR_EINVAL, "default of [%s] %s is not a number", section, key);
    return 0;
}

int rlvr_config_get_bool(const rlvr_config *cfg, const char *section, const char *key, bool *out) {
    const char *v;
    RLVR_TRY(lookup(cfg, section, key, RLVR_CFG_BOOL, &v));
    if (!parse_bool(v, out)) return RLVR_FAIL(RLVR_EINVAL, "default of [%s] %s is not a boolean", section, key);
    return 0;
}

int rlvr_config_get_string(const rlvr_config *cfg, const char *section, const char *key, const char **out) {
    return lookup(cfg, section, key, RLVR_CFG_STRING, out);
}

bool rlvr_config_is_set(const rlvr_config *cfg, const char *section, const char *key) {
    return find_entry(cfg, section, key) != NULL;
}

int rlvr_config_line(const rlvr_config *cfg, const char *section, const char *key) {
    const config_entry *e = find_entry(cfg, section, key);
    return e ? e->line : 0;
}

const char *rlvr_config_source(const rlvr_config *cfg) { return cfg->source; }
const char *rlvr_config_text(const rlvr_config *cfg) { return cfg->text; }
uint64_t rlvr_config_hash(const rlvr_config *cfg) { return rlvr_fnv1a64(cfg->text, strlen(cfg->text)); }

int rlvr_config_error(const rlvr_config *cfg, const char *section, const char *key, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!cfg) return rlvr_error_set(RLVR_ECONFIG, "[%s] %s (default): %s", section, key, msg);
    int line = rlvr_config_line(cfg, section, key);
    if (line > 0) return rlvr_error_set(RLVR_ECONFIG, "%s:%d: [%s] %s: %s", cfg->source, line, section, key, msg);
    return rlvr_error_set(RLVR_ECONFIG, "%s: [%s] %s (default): %s", cfg->source, section, key, msg);
}

/* ---- filling structs from the tables ------------------------------------ */

/* Stores the text `v` of key k into its field at `field`. */
static int store_field(const rlvr_config_key *k, const char *v, char *field) {
    int64_t i = 0;
    double d = 0;
    bool b = false;
    int e = -1;
    bool ok;
    switch (k->field) {
    case RLVR_FIELD_I32:
    case RLVR_FIELD_I64:
    case RLVR_FIELD_U64: ok = k->type == RLVR_CFG_INT && parse_int(v, &i); break;
    case RLVR_FIELD_FLOAT:
    case RLVR_FIELD_DOUBLE: ok = k->type == RLVR_CFG_FLOAT && parse_double(v, &d); break;
    case RLVR_FIELD_BOOL: ok = k->type == RLVR_CFG_BOOL && parse_bool(v, &b); break;
    case RLVR_FIELD_STRING: ok = k->type == RLVR_CFG_STRING || k->type == RLVR_CFG_ENUM; break;
    case RLVR_FIELD_ENUM:
    case RLVR_FIELD_ENUM_BOOL:
        ok = k->type == RLVR_CFG_ENUM && (e = enum_find(k->choices, v)) >= 0;
        break;
    default: ok = false; break;
    }
    if (!ok)
        return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s: value \"%s\" does not fit its field kind %d", k->section,
                         k->key, v, (int)k->field);
    /* memcpy: the destination is a member of the caller's struct, reached
     * through a byte offset */
    switch (k->field) {
    case RLVR_FIELD_I32: { int32_t x = (int32_t)i; memcpy(field, &x, sizeof x); break; }
    case RLVR_FIELD_I64: memcpy(field, &i, sizeof i); break;
    case RLVR_FIELD_U64: { uint64_t x = (uint64_t)i; memcpy(field, &x, sizeof x); break; }
    case RLVR_FIELD_FLOAT: { float x = (float)d; memcpy(field, &x, sizeof x); break; }
    case RLVR_FIELD_DOUBLE: memcpy(field, &d, sizeof d); break;
    case RLVR_FIELD_BOOL: memcpy(field, &b, sizeof b); break;
    case RLVR_FIELD_STRING: memcpy(field, &v, sizeof v); break;
    case RLVR_FIELD_ENUM: memcpy(field, &e, sizeof e); break;
    case RLVR_FIELD_ENUM_BOOL: { bool x = e == 1; memcpy(field, &x, sizeof x); break; }
    default: break;
    }
    return 0;
}

int rlvr_config_fill(const rlvr_config *cfg, const rlvr_config_key *keys, const char *section, void *dst) {
    if (!cfg) return rlvr_config_fill_defaults(keys, section, dst);
    if (!keys || !dst) return RLVR_FAIL(RLVR_EINVAL, "rlvr_config_fill: NULL argument");
    for (const rlvr_config_key *k = keys; k->key; k++) {
        if (k->field == RLVR_FIELD_NONE || (section && strcmp(k->section, section) != 0)) continue;
        if (!find_schema(cfg->schemas, k->section, k->key))
            return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s is not declared in any schema", k->section, k->key);
        const config_entry *e = find_entry(cfg, k->section, k->key);
        RLVR_TRY(store_field(k, e ? e->value : k->default_value, (char *)dst + k->offset));
    }
    return 0;
}

int rlvr_config_fill_defaults(const rlvr_config_key *keys, const char *section, void *dst) {
    if (!keys || !dst) return RLVR_FAIL(RLVR_EINVAL, "rlvr_config_fill_defaults: NULL argument");
    for (const rlvr_config_key *k = keys; k->key; k++) {
        if (k->field == RLVR_FIELD_NONE || (section && strcmp(k->section, section) != 0)) continue;
        RLVR_TRY(store_field(k, k->default_value, (char *)dst + k->offset));
    }
    return 0;
}

int rlvr_config_enum_index(const rlvr_config_key *k, const char *name) {
    if (!k || k->type != RLVR_CFG_ENUM || !k->choices || !name) return -1;
    return enum_find(k->choices, name);
}

const char *rlvr_config_enum_name(const rlvr_config_key *keys, const char *section, const char *key, int value,
                                  char *buf, size_t cap) {
    if (!buf || cap == 0) return NULL;
    buf[0] = '\0';
    const rlvr_config_key *const tables[] = {keys, NULL};
    const rlvr_config_key *k = find_schema(tables, section, key);
    if (!k || k->type != RLVR_CFG_ENUM || value < 0) return NULL;
    const char *p = k->choices;
    for (int i = 0; i < value; i++) {
        p = strchr(p, '|');
        if (!p) return NULL;
        p++;
    }
    size_t len = strcspn(p, "|");
    if (len >= cap) return NULL;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* Does the field kind suit the key's type (and an I32 field its range)? */
static bool field_fits(const rlvr_config_key *k) {
    switch (k->field) {
    case RLVR_FIELD_NONE: return true;
    case RLVR_FIELD_I32:
        return k->type == RLVR_CFG_INT && k->min <= k->max && k->min >= INT32_MIN && k->max <= INT32_MAX;
    case RLVR_FIELD_I64: return k->type == RLVR_CFG_INT;
    case RLVR_FIELD_U64: return k->type == RLVR_CFG_INT && k->min <= k->max && k->min >= 0;
    case RLVR_FIELD_FLOAT:
    case RLVR_FIELD_DOUBLE: return k->type == RLVR_CFG_FLOAT;
    case RLVR_FIELD_BOOL: return k->type == RLVR_CFG_BOOL;
    case RLVR_FIELD_STRING: return k->type == RLVR_CFG_STRING || k->type == RLVR_CFG_ENUM;
    case RLVR_FIELD_ENUM: return k->type == RLVR_CFG_ENUM;
    case RLVR_FIELD_ENUM_BOOL:
        return k->type == RLVR_CFG_ENUM && k->choices && strchr(k->choices, '|') &&
               !strchr(strchr(k->choices, '|') + 1, '|'); /* two choices */
    }
    return false;
}

/* Non-empty names between the bars, none twice. */
static bool choices_ok(const char *choices) {
    if (!choices || !choices[0]) return false;
    const char *p = choices;
    for (int i = 0;; i++) {
        size_t len = strcspn(p, "|");
        char name[128];
        if (len == 0 || len >= sizeof name) return false;
        memcpy(name, p, len);
        name[len] = '\0';
        if (enum_find(choices, name) != i) return false;
        if (!p[len]) return true;
        p += len + 1;
    }
}

int rlvr_config_table_check(const rlvr_config_key *keys) {
    if (!keys) return RLVR_FAIL(RLVR_EINVAL, "rlvr_config_table_check: NULL table");
    for (const rlvr_config_key *k = keys; k->key; k++) {
        if (!k->section || !k->default_value || !k->doc)
            return RLVR_FAIL(RLVR_EINVAL, "config key %s: section, default and doc are required", k->key);
        if ((unsigned)k->field > RLVR_FIELD_ENUM_BOOL || !field_fits(k))
            return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s: field kind %d does not fit its type", k->section,
                             k->key, (int)k->field);
        if (k->type == RLVR_CFG_ENUM && !choices_ok(k->choices))
            return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s: choices \"%s\" are not names between bars",
                             k->section, k->key, k->choices ? k->choices : "");
        char why[512];
        if (!value_ok(k, k->default_value, why, sizeof why))
            return RLVR_FAIL(RLVR_EINVAL, "config key [%s] %s: default %s", k->section, k->key, why);
    }
    return 0;
}
