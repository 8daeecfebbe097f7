/* envs/tools.h — the agent's tools: names, JSON schemas, and parsing a tool
 * call the policy emitted.
 *
 * A tool call is the text the policy writes between <|tool_call|> and
 * <|/tool_call|> (policy/template.h): one JSON object
 *
 *   {"name": "read_file", "arguments": {"path": "lib.c", "start": 1, "end": 20}}
 *
 * "arguments" may be left out when the tool needs none. The call is checked
 * against the tool's schema (rlvr_tool_schema_json prints it as JSON Schema):
 * argument names, JSON types, integer minimums, required arguments, and
 * "exactly one of" groups. Unknown tools, tools the task does not allow,
 * unknown arguments and wrong types are all malformed calls.
 *
 * A malformed call is not an error of the library: rlvr_tool_call_parse
 * fills an rlvr_tool_error whose `observation` is the exact text the policy
 * receives as the tool's output. The text depends only on the call and the
 * task's tool set, so training and deployment reject a call with the same
 * words; docs/TASKS.md "Malformed calls" lists every form. Executing tools
 * is the harness's job (inside the workspace sandbox), not this file's. */
#ifndef RLVR_ENVS_TOOLS_H
#define RLVR_ENVS_TOOLS_H

#include <stddef.h>
#include <stdint.h>

/* Stable numbers: a task's tool set is a bit mask over them. */
typedef enum {
    RLVR_TOOL_LIST_FILES = 0,      /* {path?}                 names under a directory */
    RLVR_TOOL_READ_FILE = 1,       /* {path, start?, end?}    lines start..end (1-based, inclusive) */
    RLVR_TOOL_SEARCH = 2,          /* {pattern, path?}        lines containing a fixed string */
    RLVR_TOOL_REPLACE_IN_FILE = 3, /* {path, old | line, new} replace a unique string, or line N */
    RLVR_TOOL_WRITE_FILE = 4,      /* {path, content}         create or overwrite a file */
    RLVR_TOOL_RUN = 5,             /* {command, timeout_s?}   a shell command in the workspace */
    RLVR_TOOL_RUN_PUBLIC_TESTS = 6,/* {}                      the task's public test command */
    RLVR_TOOL_SUBMIT = 7,          /* {}                      end the episode; the patch is verified */
    RLVR_TOOL_COUNT
} rlvr_tool_id;

#define RLVR_TOOLS_ALL ((uint32_t)((1u << RLVR_TOOL_COUNT) - 1u))

/* "read_file"; NULL when out of range. */
const char *rlvr_tool_name(rlvr_tool_id tool);

/* Finds a tool by name: RLVR_ENOTFOUND (with a "did you mean") when none. */
int rlvr_tool_find(const char *name, rlvr_tool_id *out);

/* One line saying what the tool does, for prompts and docs. */
const char *rlvr_tool_description(rlvr_tool_id tool);

/* The tool's JSON Schema for its "arguments" object, as compact JSON text
 * (static storage). */
const char *rlvr_tool_schema_json(rlvr_tool_id tool);

/* Why a call was refused. Stable numbers (recorded in metrics). */
typedef enum {
    RLVR_TOOL_ERR_NONE = 0,
    RLVR_TOOL_ERR_EMPTY,          /* nothing between the markers */
    RLVR_TOOL_ERR_TOO_LONG,       /* over RLVR_TOOL_CALL_MAX_BYTES */
    RLVR_TOOL_ERR_JSON,           /* not valid JSON */
    RLVR_TOOL_ERR_NOT_OBJECT,     /* valid JSON, not an object */
    RLVR_TOOL_ERR_NO_NAME,        /* "name" missing or not a string */
    RLVR_TOOL_ERR_UNKNOWN_TOOL,   /* no tool of that name */
    RLVR_TOOL_ERR_NOT_ALLOWED,    /* a real tool this task does not offer */
    RLVR_TOOL_ERR_EXTRA_FIELD,    /* a top-level field besides name/arguments */
    RLVR_TOOL_ERR_ARGS_NOT_OBJECT,/* "arguments" is not an object */
    RLVR_TOOL_ERR_UNKNOWN_ARG,    /* an argument the tool does not take */
    RLVR_TOOL_ERR_MISSING_ARG,    /* a required argument is missing */
    RLVR_TOOL_ERR_WRONG_TYPE,     /* an argument of the wrong JSON type */
    RLVR_TOOL_ERR_OUT_OF_RANGE,   /* an integer/number below its minimum or too large */
    RLVR_TOOL_ERR_ONE_OF,         /* not exactly one of a group ("old" | "line") */
    RLVR_TOOL_ERR_MARKERS,        /* the turn's call markers were unbalanced (from the template) */
    RLVR_TOOL_ERR_COUNT
} rlvr_tool_error_code;

/* Calls longer than this are refused without parsing. */
#define RLVR_TOOL_CALL_MAX_BYTES 65536
#define RLVR_TOOL_OBSERVATION_CAP 512

typedef struct {
    rlvr_tool_error_code code;
    char observation[RLVR_TOOL_OBSERVATION_CAP]; /* what the policy sees, NUL-terminated */
} rlvr_tool_error;

/* A parsed call. Strings are NUL-terminated copies (JSON strings may hold
 * NUL bytes: their length is in the *_len field); unused fields are NULL/0.
 *   list_files        path (NULL = ".")
 *   read_file         path, start, end (0 = not given)
 *   search            pattern, path (NULL = ".")
 *   replace_in_file   path, old_text or line (≥ 1), new_text
 *   write_file        path, content
 *   run               command, timeout_s (0 = the task's per-tool timeout)
 *   run_public_tests, submit: no arguments */
typedef struct {
    rlvr_tool_id tool;
    char *path;
    char *pattern;
    char *old_text;
    size_t old_len;
    char *new_text;
    size_t new_len;
    char *content;
    size_t content_len;
    char *command;
    int64_t start, end, line;
    double timeout_s;
} rlvr_tool_call;

/* Parses `len` bytes of call text against the tools in `allowed` (a mask of
 * 1u << rlvr_tool_id). Returns 0 with *call filled; RLVR_EINVAL when the
 * call is malformed, with *err filled (and *call left empty); RLVR_ENOMEM.
 * On success err->code is RLVR_TOOL_ERR_NONE. */
int rlvr_tool_call_parse(rlvr_tool_call *call, rlvr_tool_error *err, const char *text, size_t len,
                         uint32_t allowed);

/* Releases the strings of a parsed call and zeroes it. */
void rlvr_tool_call_clear(rlvr_tool_call *call);

/* The observation for a malformed turn the parser never saw (unbalanced
 * call markers, RLVR_TOOL_ERR_MARKERS), in the same style as the others;
 * `open` and `close` are the markers the policy writes
 * (rlvr_template_call_markers). */
void rlvr_tool_error_markers(rlvr_tool_error *err, const char *open, const char *close);

/* Short symbolic name of an error code: "missing_arg". */
const char *rlvr_tool_error_name(rlvr_tool_error_code code);

/* Parses a comma-separated tool list ("read_file,submit") or "all" or ""
 * (none) into a mask; RLVR_EINVAL naming the unknown tool otherwise. */
int rlvr_tool_mask_parse(const char *list, uint32_t *mask);

#endif
