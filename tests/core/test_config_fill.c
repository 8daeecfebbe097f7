/* Schema rows that name their struct field: rlvr_config_fill writes every
 * kind from the file or the default, keeps to one section when asked, and
 * refuses a table cfg was not parsed with; enum names and indices come from
 * the choices alone; rlvr_config_table_check catches rows that disagree
 * with themselves. */
#include "core/config.h"
#include "test.h"

#include <stdint.h>

typedef enum { SHAPE_ROUND = 0, SHAPE_SQUARE = 1, SHAPE_STAR = 2 } shape;

typedef struct {
    int32_t count;
    int64_t big;
    uint64_t seed;
    float ratio;
    double scale;
    bool on;
    const char *name;
    shape form;
    const char *form_name;
    bool mc; /* "outcome|mc" */
    struct {
        int32_t depth;
    } inner;
} demo;

typedef struct {
    double wall_s;
} other;

static const rlvr_config_key demo_keys[] = {
    RLVR_KEY_I32("demo", "count", demo, count, "3", 1, 100, "a count"),
    RLVR_KEY_I64("demo", "big", demo, big, "5000000000", 0, 1e12, "a large number"),
    RLVR_KEY_U64("demo", "seed", demo, seed, "7", 0, 9e18, "a seed"),
    RLVR_KEY_FLOAT("demo", "ratio", demo, ratio, "0.5", 0, 1, "a float"),
    RLVR_KEY_DOUBLE("demo", "scale", demo, scale, "1e-3", 0, 10, "a double"),
    RLVR_KEY_BOOL("demo", "on", demo, on, "true", "a switch"),
    RLVR_KEY_STRING("demo", "name", demo, name, "anon", "a name"),
    RLVR_KEY_ENUM("demo", "form", demo, form, "square", "round|square|star", "a shape"),
    RLVR_KEY_ENUM_NAME("demo", "form_name", demo, form_name, "star", "round|square|star", "a shape as text"),
    RLVR_KEY_ENUM_BOOL("demo", "credit", demo, mc, "outcome", "outcome|mc", "a two-way choice"),
    RLVR_KEY_I32("demo", "depth", demo, inner.depth, "2", 0, 8, "a nested member"),
    RLVR_KEY_DOUBLE("other", "wall_s", other, wall_s, "60", 0.001, 86400, "another section, another struct"),
    /* a row written the old way: no field, read with the getters */
    {.section = "other", .key = "legacy", .type = RLVR_CFG_INT, .default_value = "9", .doc = "no field", .min = 0,
     .max = 10},
    RLVR_KEY_END,
};
static const rlvr_config_key *const schemas[] = {demo_keys, NULL};

static rlvr_config *parse(const char *text) {
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, text, "t.ini", schemas));
    return cfg;
}

static void test_defaults(void) {
    rlvr_config *cfg = parse("");
    if (!cfg) return;
    demo d;
    memset(&d, 0xab, sizeof d);
    CHECK_OK(rlvr_config_fill(cfg, demo_keys, "demo", &d));
    CHECK(d.count == 3);
    CHECK(d.big == 5000000000LL);
    CHECK(d.seed == 7);
    CHECK(d.ratio == 0.5f);
    CHECK(d.scale == 1e-3);
    CHECK(d.on);
    CHECK(strcmp(d.name, "anon") == 0);
    CHECK(d.form == SHAPE_SQUARE);
    CHECK(strcmp(d.form_name, "star") == 0);
    CHECK(!d.mc);
    CHECK(d.inner.depth == 2);
    rlvr_config_free(cfg);
}

static void test_file_values(void) {
    rlvr_config *cfg = parse("[demo]\ncount = 100\nbig = 1e11\nseed = 9000000000000000000\nratio = 0.25\n"
                             "scale = 2.5\non = off\nname = bob\nform = star\nform_name = round\ncredit = mc\n"
                             "depth = 8\n[other]\nwall_s = 0.5\n");
    if (!cfg) return;
    demo d = {0};
    CHECK_OK(rlvr_config_fill(cfg, demo_keys, "demo", &d));
    CHECK(d.count == 100);
    CHECK(d.big == 100000000000LL);
    CHECK(d.seed == 9000000000000000000ULL);
    CHECK(d.ratio == 0.25f);
    CHECK(d.scale == 2.5);
    CHECK(!d.on);
    CHECK(strcmp(d.name, "bob") == 0);
    CHECK(d.form == SHAPE_STAR);
    CHECK(strcmp(d.form_name, "round") == 0);
    CHECK(d.mc);
    CHECK(d.inner.depth == 8);
    /* one section only: the other struct is untouched by [demo] rows */
    other o = {-1};
    CHECK_OK(rlvr_config_fill(cfg, demo_keys, "other", &o));
    CHECK(o.wall_s == 0.5);
    /* the row without a field is still there for the getters */
    int64_t legacy;
    CHECK_OK(rlvr_config_get_int(cfg, "other", "legacy", &legacy));
    CHECK(legacy == 9);
    rlvr_config_free(cfg);
}

static void test_ranges_refused_at_parse(void) {
    rlvr_config *cfg = (rlvr_config *)1;
    CHECK(rlvr_config_parse(&cfg, "[demo]\ncount = 101\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "t.ini:2: [demo] count: 101 is out of range [1, 100]") != NULL);
    CHECK(rlvr_config_parse(&cfg, "[demo]\nform = oval\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "\"oval\" is not one of round|square|star") != NULL);
    CHECK(rlvr_config_parse(&cfg, "[demo]\ncredit = yes\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(cfg == NULL);
}

static void test_table_not_parsed_with(void) {
    static const rlvr_config_key stray[] = {
        RLVR_KEY_I32("stray", "count", demo, count, "1", 0, 9, "not among the schemas"),
        RLVR_KEY_END,
    };
    rlvr_config *cfg = parse("");
    if (!cfg) return;
    demo d = {0};
    CHECK(rlvr_config_fill(cfg, stray, NULL, &d) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "[stray] count is not declared") != NULL);
    CHECK(rlvr_config_fill(cfg, demo_keys, "demo", NULL) == RLVR_EINVAL);
    rlvr_config_free(cfg);
}

static void test_enum_names(void) {
    char buf[16];
    CHECK(strcmp(rlvr_config_enum_name(demo_keys, "demo", "form", SHAPE_ROUND, buf, sizeof buf), "round") == 0);
    CHECK(strcmp(rlvr_config_enum_name(demo_keys, "demo", "form", SHAPE_STAR, buf, sizeof buf), "star") == 0);
    CHECK(rlvr_config_enum_name(demo_keys, "demo", "form", 3, buf, sizeof buf) == NULL && buf[0] == '\0');
    CHECK(rlvr_config_enum_name(demo_keys, "demo", "form", -1, buf, sizeof buf) == NULL);
    CHECK(rlvr_config_enum_name(demo_keys, "demo", "count", 0, buf, sizeof buf) == NULL);
    CHECK(rlvr_config_enum_name(demo_keys, "demo", "nope", 0, buf, sizeof buf) == NULL);
    CHECK(rlvr_config_enum_name(demo_keys, "demo", "form", SHAPE_SQUARE, buf, 4) == NULL); /* too small */
    CHECK(strcmp(rlvr_config_enum_name(demo_keys, "demo", "credit", 1, buf, sizeof buf), "mc") == 0);
    const rlvr_config_key *form = &demo_keys[7];
    CHECK(rlvr_config_enum_index(form, "round") == 0);
    CHECK(rlvr_config_enum_index(form, "star") == 2);
    CHECK(rlvr_config_enum_index(form, "sta") == -1);
    CHECK(rlvr_config_enum_index(&demo_keys[0], "round") == -1);
}

static void expect_bad_row(rlvr_config_key row, const char *want) {
    rlvr_config_key table[2] = {row, RLVR_KEY_END};
    CHECK(rlvr_config_table_check(table) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), want) != NULL, "message \"%s\" lacks \"%s\"", rlvr_error_last(), want);
}

static void test_table_check(void) {
    CHECK_OK(rlvr_config_table_check(demo_keys));
    rlvr_config_key r = demo_keys[0]; /* I32 count */
    r.field = RLVR_FIELD_DOUBLE;
    expect_bad_row(r, "[demo] count: field kind");
    r = demo_keys[0];
    r.max = 1e10; /* does not fit int32 */
    expect_bad_row(r, "[demo] count: field kind");
    r = demo_keys[0];
    r.default_value = "0";
    expect_bad_row(r, "[demo] count: default 0 is out of range");
    r = demo_keys[0];
    r.field = (rlvr_config_field)99;
    expect_bad_row(r, "field kind 99");
    r = demo_keys[2]; /* U64 seed */
    r.min = -1;
    expect_bad_row(r, "[demo] seed: field kind");
    r = demo_keys[7]; /* ENUM form */
    r.default_value = "oval";
    expect_bad_row(r, "default \"oval\" is not one of");
    r.default_value = "round";
    r.choices = "round||star";
    expect_bad_row(r, "choices \"round||star\"");
    r.choices = "round|star|round";
    expect_bad_row(r, "choices \"round|star|round\"");
    r = demo_keys[9]; /* ENUM_BOOL credit */
    r.choices = "outcome|mc|both";
    expect_bad_row(r, "[demo] credit: field kind");
    r = demo_keys[5]; /* BOOL on */
    r.type = RLVR_CFG_STRING;
    expect_bad_row(r, "[demo] on: field kind");
}

static void test_every_choice_parses(void) {
    /* each name of every ENUM row is accepted by the parser and fills its index */
    for (const rlvr_config_key *k = demo_keys; k->key; k++) {
        if (k->type != RLVR_CFG_ENUM || k->field != RLVR_FIELD_ENUM) continue;
        char name[32];
        for (int i = 0; rlvr_config_enum_name(demo_keys, k->section, k->key, i, name, sizeof name); i++) {
            char text[128];
            snprintf(text, sizeof text, "[%s]\n%s = %s\n", k->section, k->key, name);
            rlvr_config *cfg = parse(text);
            if (!cfg) continue;
            demo d = {0};
            CHECK_OK(rlvr_config_fill(cfg, demo_keys, k->section, &d));
            int got;
            memcpy(&got, (const char *)&d + k->offset, sizeof got);
            CHECK_MSG(got == i, "[%s] %s = %s filled %d", k->section, k->key, name, got);
            rlvr_config_free(cfg);
        }
    }
}

int main(void) {
    test_defaults();
    test_file_values();
    test_ranges_refused_at_parse();
    test_table_not_parsed_with();
    test_enum_names();
    test_table_check();
    test_every_choice_parses();
    return test_summary("test_config_fill");
}
