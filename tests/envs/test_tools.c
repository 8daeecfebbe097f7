/* Tool calls: every tool parses with its arguments; every kind of malformed
 * call gets its documented observation, the same every time; the schemas
 * printed for the policy agree with what the parser accepts. */
#include "envs/tools.h"
#include "test.h"

#include <jansson.h>
#include <stdbool.h>

static const uint32_t ALL = RLVR_TOOLS_ALL;

static int parse(rlvr_tool_call *c, rlvr_tool_error *e, const char *text, uint32_t allowed) {
    return rlvr_tool_call_parse(c, e, text, strlen(text), allowed);
}

static void test_valid_calls(void) {
    rlvr_tool_call c;
    rlvr_tool_error e;
    CHECK_OK(parse(&c, &e, "{\"name\": \"read_file\", \"arguments\": {\"path\": \"lib.c\", \"start\": 2, \"end\": 9}}",
                   ALL));
    CHECK(c.tool == RLVR_TOOL_READ_FILE && strcmp(c.path, "lib.c") == 0 && c.start == 2 && c.end == 9);
    CHECK(e.code == RLVR_TOOL_ERR_NONE && e.observation[0] == '\0');
    rlvr_tool_call_clear(&c);
    CHECK(c.path == NULL && c.start == 0);

    CHECK_OK(parse(&c, &e, "  {\"name\":\"submit\"}\n", ALL));
    CHECK(c.tool == RLVR_TOOL_SUBMIT);
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e, "{\"name\":\"run_public_tests\",\"arguments\":{}}", ALL));
    CHECK(c.tool == RLVR_TOOL_RUN_PUBLIC_TESTS);
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e, "{\"arguments\":{},\"name\":\"list_files\"}", ALL));
    CHECK(c.tool == RLVR_TOOL_LIST_FILES && c.path == NULL);
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e, "{\"name\":\"search\",\"arguments\":{\"pattern\":\"i <= n\",\"path\":\"src\"}}", ALL));
    CHECK(c.tool == RLVR_TOOL_SEARCH && strcmp(c.pattern, "i <= n") == 0 && strcmp(c.path, "src") == 0);
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e,
                   "{\"name\":\"replace_in_file\",\"arguments\":{\"path\":\"lib.c\",\"old\":\"i < n\",\"new\":\"i <= n\"}}",
                   ALL));
    CHECK(c.tool == RLVR_TOOL_REPLACE_IN_FILE && strcmp(c.old_text, "i < n") == 0 && c.old_len == 5);
    CHECK(strcmp(c.new_text, "i <= n") == 0 && c.new_len == 6 && c.line == 0);
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e, "{\"name\":\"replace_in_file\",\"arguments\":{\"path\":\"lib.c\",\"line\":3,\"new\":\"x\"}}",
                   ALL));
    CHECK(c.line == 3 && c.old_text == NULL);
    rlvr_tool_call_clear(&c);

    /* content may hold NUL bytes; the length says where it ends */
    CHECK_OK(parse(&c, &e, "{\"name\":\"write_file\",\"arguments\":{\"path\":\"a\",\"content\":\"x\\u0000y\"}}", ALL));
    CHECK(c.tool == RLVR_TOOL_WRITE_FILE && c.content_len == 3 && c.content[2] == 'y');
    rlvr_tool_call_clear(&c);

    CHECK_OK(parse(&c, &e, "{\"name\":\"run\",\"arguments\":{\"command\":\"make -s test\",\"timeout_s\":2.5}}", ALL));
    CHECK(c.tool == RLVR_TOOL_RUN && strcmp(c.command, "make -s test") == 0 && c.timeout_s == 2.5);
    rlvr_tool_call_clear(&c);
    CHECK_OK(parse(&c, &e, "{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout_s\":3}}", ALL));
    CHECK(c.timeout_s == 3.0);
    rlvr_tool_call_clear(&c);
}

/* A refusal with `code` whose observation contains `want`. */
static void expect(const char *text, uint32_t allowed, rlvr_tool_error_code code, const char *want) {
    rlvr_tool_call c;
    rlvr_tool_error e;
    int rc = parse(&c, &e, text, allowed);
    CHECK_MSG(rc == RLVR_EINVAL, "%s: rc %d", text, rc);
    CHECK_MSG(e.code == code, "%s: code %s, expected %s", text, rlvr_tool_error_name(e.code),
              rlvr_tool_error_name(code));
    CHECK_MSG(strncmp(e.observation, "error: invalid tool call: ", 26) == 0, "%s: %s", text, e.observation);
    CHECK_MSG(strstr(e.observation, want), "%s: observation lacks [%s]: %s", text, want, e.observation);
    CHECK(c.path == NULL && c.command == NULL && c.old_text == NULL);
    /* the same call gets the same words */
    rlvr_tool_error again;
    parse(&c, &again, text, allowed);
    CHECK(strcmp(again.observation, e.observation) == 0 && again.code == e.code);
}

static void test_malformed_calls(void) {
    uint32_t few = (1u << RLVR_TOOL_READ_FILE) | (1u << RLVR_TOOL_SUBMIT);
    expect("", ALL, RLVR_TOOL_ERR_EMPTY, "empty tool call");
    expect(" \n\t", ALL, RLVR_TOOL_ERR_EMPTY, "empty tool call");
    expect("{\"name\": \"read_file\"", ALL, RLVR_TOOL_ERR_JSON, "not valid JSON (line 1, column");
    expect("read_file lib.c", ALL, RLVR_TOOL_ERR_JSON, "not valid JSON");
    expect("{\"name\":\"submit\"} trailing", ALL, RLVR_TOOL_ERR_JSON, "not valid JSON");
    expect("{\"name\":\"submit\",\"name\":\"run\"}", ALL, RLVR_TOOL_ERR_JSON, "not valid JSON");
    expect("[\"read_file\"]", ALL, RLVR_TOOL_ERR_NOT_OBJECT, "must be a JSON object");
    expect("{\"arguments\":{}}", ALL, RLVR_TOOL_ERR_NO_NAME, "field \"name\" missing or not a string");
    expect("{\"name\":7}", ALL, RLVR_TOOL_ERR_NO_NAME, "field \"name\"");
    expect("{\"name\":\"rm_rf\"}", ALL, RLVR_TOOL_ERR_UNKNOWN_TOOL, "unknown tool \"rm_rf\"");
    expect("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\"}}", few, RLVR_TOOL_ERR_NOT_ALLOWED,
           "tool \"run\" is not available in this task; tools: read_file, submit");
    expect("{\"name\":\"submit\",\"args\":{}}", ALL, RLVR_TOOL_ERR_EXTRA_FIELD, "unexpected field \"args\"");
    expect("{\"name\":\"read_file\",\"arguments\":\"lib.c\"}", ALL, RLVR_TOOL_ERR_ARGS_NOT_OBJECT,
           "\"arguments\" must be an object");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\",\"lines\":3}}", ALL, RLVR_TOOL_ERR_UNKNOWN_ARG,
           "read_file does not take argument \"lines\"");
    expect("{\"name\":\"read_file\",\"arguments\":{}}", ALL, RLVR_TOOL_ERR_MISSING_ARG,
           "read_file needs argument \"path\"");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":3}}", ALL, RLVR_TOOL_ERR_WRONG_TYPE,
           "argument \"path\" of read_file must be a string");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\",\"start\":\"1\"}}", ALL, RLVR_TOOL_ERR_WRONG_TYPE,
           "argument \"start\" of read_file must be an integer");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\",\"start\":1.5}}", ALL, RLVR_TOOL_ERR_WRONG_TYPE,
           "must be an integer");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\",\"start\":0}}", ALL, RLVR_TOOL_ERR_OUT_OF_RANGE,
           "argument \"start\" of read_file must be between 1 and");
    expect("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout_s\":0}}", ALL, RLVR_TOOL_ERR_OUT_OF_RANGE,
           "argument \"timeout_s\" of run must be above 0");
    expect("{\"name\":\"replace_in_file\",\"arguments\":{\"path\":\"a\",\"new\":\"b\"}}", ALL, RLVR_TOOL_ERR_ONE_OF,
           "replace_in_file needs exactly one of \"old\" or \"line\"");
    expect("{\"name\":\"replace_in_file\",\"arguments\":{\"path\":\"a\",\"old\":\"x\",\"line\":2,\"new\":\"b\"}}", ALL,
           RLVR_TOOL_ERR_ONE_OF, "exactly one of");
    expect("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\\u0000b\"}}", ALL, RLVR_TOOL_ERR_WRONG_TYPE,
           "must not contain NUL bytes");
    /* tool-specific refusals end with the tool's usage, generic ones with the task's tools */
    expect("{\"name\":\"read_file\",\"arguments\":{}}", ALL, RLVR_TOOL_ERR_MISSING_ARG,
           "; usage: {\"name\": \"read_file\", \"arguments\": {\"path\": string, \"start\": integer (optional), "
           "\"end\": integer (optional)}}");
    expect("{\"name\":\"nope\"}", few, RLVR_TOOL_ERR_UNKNOWN_TOOL, "; tools: read_file, submit");
    expect("{\"name\":\"nope\"}", 0, RLVR_TOOL_ERR_UNKNOWN_TOOL, "; tools: none");

    /* the exact text for one case, as docs/TASKS.md shows it */
    rlvr_tool_call c;
    rlvr_tool_error e;
    parse(&c, &e, "{\"name\":\"read_file\",\"arguments\":{}}", ALL);
    CHECK(strcmp(e.observation,
                 "error: invalid tool call: read_file needs argument \"path\"; usage: {\"name\": \"read_file\", "
                 "\"arguments\": {\"path\": string, \"start\": integer (optional), \"end\": integer (optional)}}") == 0);

    /* what the policy wrote is echoed safely: at most 32 bytes, printable only */
    expect("{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", ALL, RLVR_TOOL_ERR_UNKNOWN_TOOL,
           "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"");
    expect("{\"name\":\"a\\nb\"}", ALL, RLVR_TOOL_ERR_UNKNOWN_TOOL, "unknown tool \"a?b\"");

    /* over the size limit: refused before parsing */
    size_t big = RLVR_TOOL_CALL_MAX_BYTES + 10;
    char *text = malloc(big + 1);
    memset(text, ' ', big);
    memcpy(text, "{\"name\":\"submit\"}", 17);
    text[big] = '\0';
    rlvr_tool_call c2;
    CHECK(rlvr_tool_call_parse(&c2, &e, text, big, ALL) == RLVR_EINVAL && e.code == RLVR_TOOL_ERR_TOO_LONG);
    free(text);

    rlvr_tool_error_markers(&e, "<|tool_call|>", "<|/tool_call|>");
    CHECK(e.code == RLVR_TOOL_ERR_MARKERS);
    CHECK(strcmp(e.observation, "error: invalid tool call: unbalanced tool-call markers (write one <|tool_call|> "
                                "JSON <|/tool_call|> per turn)") == 0);
    CHECK(strcmp(rlvr_tool_error_name(RLVR_TOOL_ERR_MISSING_ARG), "missing_arg") == 0);
}

/* A JSON value of the schema type `type` ("string", "integer", "number"). */
static json_t *sample(const char *type) {
    if (strcmp(type, "string") == 0) return json_string("x");
    if (strcmp(type, "integer") == 0) return json_integer(1);
    return json_real(1.5);
}

static json_t *wrong_type(const char *type) {
    return strcmp(type, "string") == 0 ? json_integer(1) : json_string("1");
}

static int try_args(rlvr_tool_id tool, json_t *args, rlvr_tool_error *e) {
    json_t *call = json_pack("{s:s, s:O}", "name", rlvr_tool_name(tool), "arguments", args);
    char *text = json_dumps(call, JSON_COMPACT);
    json_decref(call);
    rlvr_tool_call c;
    int rc = rlvr_tool_call_parse(&c, e, text, strlen(text), ALL);
    rlvr_tool_call_clear(&c);
    free(text);
    return rc;
}

/* Each schema, read as JSON Schema, agrees with the parser. */
static void test_schemas_match_parser(void) {
    for (int t = 0; t < RLVR_TOOL_COUNT; t++) {
        rlvr_tool_id tool = (rlvr_tool_id)t;
        json_error_t jerr;
        json_t *schema = json_loads(rlvr_tool_schema_json(tool), 0, &jerr);
        CHECK_MSG(schema != NULL, "%s: schema is not JSON: %s", rlvr_tool_name(tool), jerr.text);
        if (!schema) continue;
        CHECK(json_is_false(json_object_get(schema, "additionalProperties")));
        json_t *props = json_object_get(schema, "properties"), *req = json_object_get(schema, "required");
        json_t *one_of = json_object_get(schema, "oneOf");
        /* the minimal call: required arguments plus the first oneOf branch */
        json_t *args = json_object();
        size_t i;
        json_t *name;
        json_array_foreach(req, i, name) {
            const char *key = json_string_value(name);
            json_object_set_new(args, key, sample(json_string_value(json_object_get(json_object_get(props, key), "type"))));
        }
        const char *branch = NULL;
        if (one_of) {
            branch = json_string_value(json_array_get(json_object_get(json_array_get(one_of, 0), "required"), 0));
            json_object_set_new(args, branch,
                                sample(json_string_value(json_object_get(json_object_get(props, branch), "type"))));
        }
        rlvr_tool_error e;
        CHECK_MSG(try_args(tool, args, &e) == 0, "%s: minimal call refused: %s", rlvr_tool_name(tool), e.observation);
        /* each required argument left out */
        json_array_foreach(req, i, name) {
            json_t *less = json_deep_copy(args);
            json_object_del(less, json_string_value(name));
            CHECK(try_args(tool, less, &e) == RLVR_EINVAL && e.code == RLVR_TOOL_ERR_MISSING_ARG);
            json_decref(less);
        }
        /* each property with the wrong type; each optional one accepted */
        const char *key;
        json_t *prop;
        json_object_foreach(props, key, prop) {
            const char *type = json_string_value(json_object_get(prop, "type"));
            json_t *bad = json_deep_copy(args);
            json_object_set_new(bad, key, wrong_type(type));
            CHECK_MSG(try_args(tool, bad, &e) == RLVR_EINVAL && e.code == RLVR_TOOL_ERR_WRONG_TYPE, "%s.%s",
                      rlvr_tool_name(tool), key);
            json_decref(bad);
            bool in_one_of = one_of && (strcmp(key, "old") == 0 || strcmp(key, "line") == 0);
            if (!json_object_get(args, key) && !in_one_of) {
                json_t *more = json_deep_copy(args);
                json_object_set_new(more, key, sample(type));
                CHECK_MSG(try_args(tool, more, &e) == 0, "%s.%s optional refused: %s", rlvr_tool_name(tool), key,
                          e.observation);
                json_decref(more);
            }
        }
        /* a property the schema does not list */
        json_t *extra = json_deep_copy(args);
        json_object_set_new(extra, "zzz", json_string("x"));
        CHECK(try_args(tool, extra, &e) == RLVR_EINVAL && e.code == RLVR_TOOL_ERR_UNKNOWN_ARG);
        json_decref(extra);
        json_decref(args);
        json_decref(schema);
        CHECK(rlvr_tool_description(tool) && strlen(rlvr_tool_description(tool)) > 10);
    }
}

static void test_names_and_masks(void) {
    rlvr_tool_id t;
    CHECK_OK(rlvr_tool_find("run_public_tests", &t));
    CHECK(t == RLVR_TOOL_RUN_PUBLIC_TESTS);
    CHECK(rlvr_tool_find("raed_file", &t) == RLVR_ENOTFOUND);
    CHECK(strstr(rlvr_error_last(), "did you mean \"read_file\""));
    uint32_t m;
    CHECK_OK(rlvr_tool_mask_parse("read_file, submit", &m));
    CHECK(m == ((1u << RLVR_TOOL_READ_FILE) | (1u << RLVR_TOOL_SUBMIT)));
    CHECK_OK(rlvr_tool_mask_parse("all", &m));
    CHECK(m == RLVR_TOOLS_ALL);
    CHECK_OK(rlvr_tool_mask_parse("", &m));
    CHECK(m == 0);
    CHECK(rlvr_tool_mask_parse("read_file,lunch", &m) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "lunch"));
    CHECK(rlvr_tool_name(RLVR_TOOL_COUNT) == NULL);
}

int main(void) {
    test_valid_calls();
    test_malformed_calls();
    test_schemas_match_parser();
    test_names_and_masks();
    return test_summary("test_tools");
}
