/* envs/tools.c — the tool table, its JSON schemas and the call parser. */
#include "envs/tools.h"

#include "core/config.h"
#include "core/error.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ARG_STRING, ARG_INTEGER, ARG_NUMBER } arg_type;

typedef struct {
    const char *name;
    arg_type type;
    bool required;
    int one_of;  /* 1: member of the tool's "exactly one of" group */
    double min, max;
} tool_arg;

#define TOOL_MAX_ARGS 4

typedef struct {
    const char *name;
    const char *description;
    const char *schema; /* JSON Schema of "arguments"; tests/envs/test_tools checks it against args[] */
    tool_arg args[TOOL_MAX_ARGS];
} tool_def;

#define INT_ARG(n, req) {n, ARG_INTEGER, req, 0, 1, 1e9}
#define STR_ARG(n, req) {n, ARG_STRING, req, 0, 0, 0}

static const tool_def tools[RLVR_TOOL_COUNT] = {
    [RLVR_TOOL_LIST_FILES] = {"list_files", "list the files under a directory of the repository (default: the top)",
                              "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},"
                              "\"additionalProperties\":false}",
                              {STR_ARG("path", false)}},
    [RLVR_TOOL_READ_FILE] = {"read_file", "show a file with line numbers, optionally only lines start..end",
                             "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
                             "\"start\":{\"type\":\"integer\",\"minimum\":1},\"end\":{\"type\":\"integer\","
                             "\"minimum\":1}},\"required\":[\"path\"],\"additionalProperties\":false}",
                             {STR_ARG("path", true), INT_ARG("start", false), INT_ARG("end", false)}},
    [RLVR_TOOL_SEARCH] = {"search", "list the lines that contain a fixed string, in one file or under a directory",
                          "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\"},"
                          "\"path\":{\"type\":\"string\"}},\"required\":[\"pattern\"],\"additionalProperties\":false}",
                          {STR_ARG("pattern", true), STR_ARG("path", false)}},
    [RLVR_TOOL_REPLACE_IN_FILE] = {"replace_in_file",
                                   "replace the one occurrence of a string, or the whole line number `line`, with `new`",
                                   "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
                                   "\"old\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\",\"minimum\":1},"
                                   "\"new\":{\"type\":\"string\"}},\"required\":[\"path\",\"new\"],"
                                   "\"oneOf\":[{\"required\":[\"old\"]},{\"required\":[\"line\"]}],"
                                   "\"additionalProperties\":false}",
                                   {STR_ARG("path", true),
                                    {"old", ARG_STRING, false, 1, 0, 0},
                                    {"line", ARG_INTEGER, false, 1, 1, 1e9},
                                    STR_ARG("new", true)}},
    [RLVR_TOOL_WRITE_FILE] = {"write_file", "create or overwrite a file with `content`",
                              "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
                              "\"content\":{\"type\":\"string\"}},\"required\":[\"path\",\"content\"],"
                              "\"additionalProperties\":false}",
                              {STR_ARG("path", true), STR_ARG("content", true)}},
    [RLVR_TOOL_RUN] = {"run", "run a shell command in the repository (no network); output and exit status come back",
                       "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"},"
                       "\"timeout_s\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":86400}},"
                       "\"required\":[\"command\"],\"additionalProperties\":false}",
                       {STR_ARG("command", true), {"timeout_s", ARG_NUMBER, false, 0, 0, 86400}}},
    [RLVR_TOOL_RUN_PUBLIC_TESTS] = {"run_public_tests", "run the task's public tests; their output comes back",
                                    "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
                                    {{0}}},
    [RLVR_TOOL_SUBMIT] = {"submit", "end the episode; the changes to the repository are verified",
                          "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
                          {{0}}},
};

static const char *const error_names[RLVR_TOOL_ERR_COUNT] = {
    "none",           "empty",        "too_long",    "json",        "not_object",   "no_name",
    "unknown_tool",   "not_allowed",  "extra_field", "args_not_object", "unknown_arg", "missing_arg",
    "wrong_type",     "out_of_range", "one_of",      "markers",
};

const char *rlvr_tool_name(rlvr_tool_id tool) {
    return (unsigned)tool < RLVR_TOOL_COUNT ? tools[tool].name : NULL;
}

const char *rlvr_tool_description(rlvr_tool_id tool) {
    return (unsigned)tool < RLVR_TOOL_COUNT ? tools[tool].description : NULL;
}

const char *rlvr_tool_schema_json(rlvr_tool_id tool) {
    return (unsigned)tool < RLVR_TOOL_COUNT ? tools[tool].schema : NULL;
}

const char *rlvr_tool_error_name(rlvr_tool_error_code code) {
    return (unsigned)code < RLVR_TOOL_ERR_COUNT ? error_names[code] : "?";
}

static bool lookup(const char *name, size_t len, rlvr_tool_id *out) {
    for (int t = 0; t < RLVR_TOOL_COUNT; t++)
        if (strlen(tools[t].name) == len && memcmp(tools[t].name, name, len) == 0) {
            *out = (rlvr_tool_id)t;
            return true;
        }
    return false;
}

int rlvr_tool_find(const char *name, rlvr_tool_id *out) {
    if (lookup(name, strlen(name), out)) return 0;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int t = 0; t < RLVR_TOOL_COUNT; t++) {
        size_t d = rlvr_edit_distance(name, tools[t].name);
        if (d < best_d) best_d = d, best = tools[t].name;
    }
    if (best && best_d <= 3)
        return rlvr_error_set(RLVR_ENOTFOUND, "unknown tool \"%s\"; did you mean \"%s\"?", name, best);
    return rlvr_error_set(RLVR_ENOTFOUND, "unknown tool \"%s\" (tools: list_files, read_file, search, "
                                          "replace_in_file, write_file, run, run_public_tests, submit)", name);
}

int rlvr_tool_mask_parse(const char *list, uint32_t *mask) {
    *mask = 0;
    if (strcmp(list, "all") == 0) {
        *mask = RLVR_TOOLS_ALL;
        return 0;
    }
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ' ') p++;
        if (p == start) break;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(p - start), start);
        rlvr_tool_id t;
        if (rlvr_tool_find(name, &t) < 0) return rlvr_error_wrap(RLVR_EINVAL, "tool list \"%s\"", list);
        *mask |= 1u << t;
    }
    return 0;
}

/* ---- observations ------------------------------------------------------ */

/* A name the policy wrote, made safe to echo: at most 32 bytes, printable
 * ASCII only (others become '?'). */
static void echo_name(char *out, size_t cap, const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < cap; i++) {
        if (i == 32) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}

static const char *type_word(arg_type t) {
    return t == ARG_STRING ? "string" : t == ARG_INTEGER ? "integer" : "number";
}

/* `{"path": string, "start": integer (optional), ...}` */
static size_t format_usage(char *out, size_t cap, const tool_def *def) {
    size_t n = (size_t)snprintf(out, cap, "usage: {\"name\": \"%s\", \"arguments\": {", def->name);
    for (int a = 0; a < TOOL_MAX_ARGS && def->args[a].name && n < cap; a++) {
        const tool_arg *arg = &def->args[a];
        n += (size_t)snprintf(out + n, cap - n, "%s\"%s\": %s", a ? ", " : "", arg->name, type_word(arg->type));
        if (arg->one_of) { /* name the other member of the group */
            for (int b = 0; b < TOOL_MAX_ARGS && def->args[b].name && n < cap; b++)
                if (b != a && def->args[b].one_of)
                    n += (size_t)snprintf(out + n, cap - n, " (or \"%s\")", def->args[b].name);
        } else if (!arg->required && n < cap) {
            n += (size_t)snprintf(out + n, cap - n, " (optional)");
        }
    }
    if (n < cap) n += (size_t)snprintf(out + n, cap - n, "}}");
    return n;
}

static size_t format_tool_list(char *out, size_t cap, uint32_t allowed) {
    size_t n = (size_t)snprintf(out, cap, "tools:");
    int shown = 0;
    for (int t = 0; t < RLVR_TOOL_COUNT && n < cap; t++)
        if (allowed & (1u << t)) n += (size_t)snprintf(out + n, cap - n, "%s %s", shown++ ? "," : "", tools[t].name);
    if (!shown && n < cap) n += (size_t)snprintf(out + n, cap - n, " none");
    return n;
}

/* Fills err: "error: invalid tool call: REASON; SUFFIX" where SUFFIX is the
 * tool's usage when `def` is known, else the list of allowed tools. */
static int refuse(rlvr_tool_error *err, rlvr_tool_error_code code, const tool_def *def, uint32_t allowed,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int refuse(rlvr_tool_error *err, rlvr_tool_error_code code, const tool_def *def, uint32_t allowed,
                  const char *fmt, ...) {
    char *o = err->observation;
    size_t cap = sizeof err->observation;
    size_t n = (size_t)snprintf(o, cap, "error: invalid tool call: ");
    va_list ap;
    va_start(ap, fmt);
    if (n < cap) n += (size_t)vsnprintf(o + n, cap - n, fmt, ap);
    va_end(ap);
    if (n < cap) n += (size_t)snprintf(o + n, cap - n, "; ");
    if (n < cap) n += def ? format_usage(o + n, cap - n, def) : format_tool_list(o + n, cap - n, allowed);
    err->code = code;
    return RLVR_EINVAL;
}

void rlvr_tool_error_markers(rlvr_tool_error *err, const char *open, const char *close) {
    /* The reason alone: which tools exist is the task's business. */
    snprintf(err->observation, sizeof err->observation,
             "error: invalid tool call: unbalanced tool-call markers (write one %s JSON %s per turn)", open, close);
    err->code = RLVR_TOOL_ERR_MARKERS;
}

/* ---- parsing ----------------------------------------------------------- */

void rlvr_tool_call_clear(rlvr_tool_call *call) {
    free(call->path);
    free(call->pattern);
    free(call->old_text);
    free(call->new_text);
    free(call->content);
    free(call->command);
    memset(call, 0, sizeof *call);
}

static char *copy_bytes(const char *s, size_t len) {
    char *p = malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* Stores one checked argument in the call. */
static int store_arg(rlvr_tool_call *call, const tool_arg *arg, json_t *value) {
    if (arg->type == ARG_INTEGER) {
        int64_t v = json_integer_value(value);
        if (strcmp(arg->name, "start") == 0) call->start = v;
        else if (strcmp(arg->name, "end") == 0) call->end = v;
        else call->line = v;
        return 0;
    }
    if (arg->type == ARG_NUMBER) {
        call->timeout_s = json_number_value(value);
        return 0;
    }
    const char *s = json_string_value(value);
    size_t len = json_string_length(value);
    char *copy = copy_bytes(s, len);
    if (!copy) return RLVR_FAIL(RLVR_ENOMEM, "out of memory copying a tool argument");
    const char *n = arg->name;
    char **slot = strcmp(n, "path") == 0      ? &call->path
                  : strcmp(n, "pattern") == 0 ? &call->pattern
                  : strcmp(n, "old") == 0     ? &call->old_text
                  : strcmp(n, "new") == 0     ? &call->new_text
                  : strcmp(n, "content") == 0 ? &call->content
                                              : &call->command;
    *slot = copy;
    if (slot == &call->old_text) call->old_len = len;
    if (slot == &call->new_text) call->new_len = len;
    if (slot == &call->content) call->content_len = len;
    return 0;
}

/* Arguments whose text may hold NUL bytes; the others are names and commands. */
static bool nul_allowed(const tool_arg *arg) {
    return strcmp(arg->name, "old") == 0 || strcmp(arg->name, "new") == 0 || strcmp(arg->name, "content") == 0;
}

static int check_arg(rlvr_tool_error *err, const tool_def *def, const tool_arg *arg, json_t *value) {
    bool ok_type = arg->type == ARG_STRING    ? json_is_string(value)
                   : arg->type == ARG_INTEGER ? json_is_integer(value)
                                              : json_is_number(value);
    if (!ok_type)
        return refuse(err, RLVR_TOOL_ERR_WRONG_TYPE, def, 0, "argument \"%s\" of %s must be %s %s", arg->name,
                      def->name, arg->type == ARG_INTEGER ? "an" : "a", type_word(arg->type));
    if (arg->type == ARG_STRING) {
        if (!nul_allowed(arg) && strlen(json_string_value(value)) != json_string_length(value))
            return refuse(err, RLVR_TOOL_ERR_WRONG_TYPE, def, 0, "argument \"%s\" of %s must not contain NUL bytes",
                          arg->name, def->name);
        return 0;
    }
    double v = json_number_value(value);
    if (arg->type == ARG_NUMBER && !(v > arg->min && v <= arg->max))
        return refuse(err, RLVR_TOOL_ERR_OUT_OF_RANGE, def, 0, "argument \"%s\" of %s must be above %g and at most %g",
                      arg->name, def->name, arg->min, arg->max);
    if (arg->type == ARG_INTEGER && !(v >= arg->min && v <= arg->max))
        return refuse(err, RLVR_TOOL_ERR_OUT_OF_RANGE, def, 0, "argument \"%s\" of %s must be between %g and %g",
                      arg->name, def->name, arg->min, arg->max);
    return 0;
}

static int parse_arguments(rlvr_tool_call *call, rlvr_tool_error *err, const tool_def *def, json_t *args) {
    const char *key;
    json_t *value;
    json_object_foreach(args, key, value) {
        const tool_arg *arg = NULL;
        for (int a = 0; a < TOOL_MAX_ARGS && def->args[a].name; a++)
            if (strcmp(def->args[a].name, key) == 0) arg = &def->args[a];
        if (!arg) {
            char shown[48];
            echo_name(shown, sizeof shown, key, strlen(key));
            return refuse(err, RLVR_TOOL_ERR_UNKNOWN_ARG, def, 0, "%s does not take argument \"%s\"", def->name,
                          shown);
        }
        RLVR_TRY(check_arg(err, def, arg, value));
    }
    int group_members = 0, group_given = 0;
    for (int a = 0; a < TOOL_MAX_ARGS && def->args[a].name; a++) {
        const tool_arg *arg = &def->args[a];
        bool given = json_object_get(args, arg->name) != NULL;
        if (arg->required && !given)
            return refuse(err, RLVR_TOOL_ERR_MISSING_ARG, def, 0, "%s needs argument \"%s\"", def->name, arg->name);
        if (arg->one_of) group_members++, group_given += given;
    }
    if (group_members && group_given != 1) {
        const char *first = NULL, *second = NULL;
        for (int a = 0; a < TOOL_MAX_ARGS && def->args[a].name; a++)
            if (def->args[a].one_of) *(first ? &second : &first) = def->args[a].name;
        return refuse(err, RLVR_TOOL_ERR_ONE_OF, def, 0, "%s needs exactly one of \"%s\" or \"%s\"", def->name, first,
                      second);
    }
    json_object_foreach(args, key, value) {
        for (int a = 0; a < TOOL_MAX_ARGS && def->args[a].name; a++)
            if (strcmp(def->args[a].name, key) == 0) RLVR_TRY(store_arg(call, &def->args[a], value));
    }
    return 0;
}

static int parse_object(rlvr_tool_call *call, rlvr_tool_error *err, json_t *root, uint32_t allowed) {
    if (!json_is_object(root))
        return refuse(err, RLVR_TOOL_ERR_NOT_OBJECT, NULL, allowed,
                      "the call must be a JSON object {\"name\": ..., \"arguments\": {...}}");
    json_t *name = json_object_get(root, "name");
    if (!json_is_string(name))
        return refuse(err, RLVR_TOOL_ERR_NO_NAME, NULL, allowed, "field \"name\" missing or not a string");
    rlvr_tool_id tool;
    char shown[48];
    echo_name(shown, sizeof shown, json_string_value(name), json_string_length(name));
    if (!lookup(json_string_value(name), json_string_length(name), &tool))
        return refuse(err, RLVR_TOOL_ERR_UNKNOWN_TOOL, NULL, allowed, "unknown tool \"%s\"", shown);
    if (!(allowed & (1u << tool)))
        return refuse(err, RLVR_TOOL_ERR_NOT_ALLOWED, NULL, allowed, "tool \"%s\" is not available in this task",
                      shown);
    const tool_def *def = &tools[tool];
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (strcmp(key, "name") != 0 && strcmp(key, "arguments") != 0) {
            echo_name(shown, sizeof shown, key, strlen(key));
            return refuse(err, RLVR_TOOL_ERR_EXTRA_FIELD, def, 0,
                          "unexpected field \"%s\" (a call has only \"name\" and \"arguments\")", shown);
        }
    }
    json_t *args = json_object_get(root, "arguments");
    json_t *empty = NULL;
    if (!args) {
        empty = json_object();
        if (!empty) return RLVR_FAIL(RLVR_ENOMEM, "out of memory parsing a tool call");
        args = empty;
    }
    int rc;
    if (!json_is_object(args))
        rc = refuse(err, RLVR_TOOL_ERR_ARGS_NOT_OBJECT, def, 0, "\"arguments\" must be an object");
    else {
        call->tool = tool;
        rc = parse_arguments(call, err, def, args);
    }
    json_decref(empty);
    return rc;
}

int rlvr_tool_call_parse(rlvr_tool_call *call, rlvr_tool_error *err, const char *text, size_t len,
                         uint32_t allowed) {
    memset(call, 0, sizeof *call);
    err->code = RLVR_TOOL_ERR_NONE;
    err->observation[0] = '\0';
    size_t start = 0;
    while (start < len && (text[start] == ' ' || text[start] == '\n' || text[start] == '\t' || text[start] == '\r'))
        start++;
    if (start == len) return refuse(err, RLVR_TOOL_ERR_EMPTY, NULL, allowed, "empty tool call");
    if (len > RLVR_TOOL_CALL_MAX_BYTES)
        return refuse(err, RLVR_TOOL_ERR_TOO_LONG, NULL, allowed, "tool call longer than %d bytes",
                      RLVR_TOOL_CALL_MAX_BYTES);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return refuse(err, RLVR_TOOL_ERR_JSON, NULL, allowed, "not valid JSON (line %d, column %d)", jerr.line,
                      jerr.column);
    int rc = parse_object(call, err, root, allowed);
    json_decref(root);
    if (rc < 0) rlvr_tool_call_clear(call);
    return rc;
}
