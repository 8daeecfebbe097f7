/* core/flat.h: images built with offsets read back at another address. */
#include "core/flat.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t n;
    uint64_t name, words, blob;
} root_t;

/* Builds an image, copies it to a fresh buffer (as a child reading a memfd
 * would) and reads every value back from the copy. */
static void test_round_trip(void) {
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(root_t));
    CHECK(root == RLVR_FLAT_FIRST);
    const char *words[] = {"alpha", "", "gamma", NULL};
    const char blob[5] = {1, 0, 2, 0, 3};
    root_t r = {.n = 42};
    r.name = rlvr_flat_str(&f, "main.c");
    r.words = rlvr_flat_strv(&f, words);
    r.blob = rlvr_flat_put(&f, blob, sizeof blob);
    CHECK(!f.failed);
    CHECK(r.name % 16 == 0 && r.words % 16 == 0 && r.blob % 16 == 0);
    CHECK(rlvr_flat_str(&f, NULL) == 0 && rlvr_flat_strv(&f, NULL) == 0 && rlvr_flat_put(&f, NULL, 0) == 0);
    memcpy(f.data + root, &r, sizeof r);

    char *copy = malloc(f.len);
    CHECK(copy != NULL);
    if (!copy) return;
    memcpy(copy, f.data, f.len);
    rlvr_flat_free(&f);
    CHECK(f.data == NULL && f.len == 0);

    const root_t *back = rlvr_flat_at(copy, RLVR_FLAT_FIRST);
    CHECK(back->n == 42);
    CHECK(strcmp(rlvr_flat_at(copy, back->name), "main.c") == 0);
    CHECK(memcmp(rlvr_flat_at(copy, back->blob), blob, sizeof blob) == 0);
    const char **v = rlvr_flat_strv_at(copy, back->words);
    CHECK(v && strcmp(v[0], "alpha") == 0 && strcmp(v[1], "") == 0 && strcmp(v[2], "gamma") == 0 && v[3] == NULL);
    /* the strings live in the copy, not in the source vector */
    CHECK(v[0] != words[0] && v[0] > copy && v[0] < copy + RLVR_FLAT_FIRST + 4096);
    CHECK(rlvr_flat_at(copy, 0) == NULL && rlvr_flat_strv_at(copy, 0) == NULL);
    free(copy);
}

/* Values larger than the first allocation grow the image and stay intact. */
static void test_growth(void) {
    rlvr_flat f = {0};
    size_t big = 100000;
    char *text = malloc(big + 1);
    CHECK(text != NULL);
    if (!text) return;
    for (size_t i = 0; i < big; i++) text[i] = (char)('a' + i % 26);
    text[big] = '\0';
    uint64_t small = rlvr_flat_str(&f, "x");
    uint64_t at = rlvr_flat_str(&f, text);
    CHECK(!f.failed && f.cap >= f.len && f.len == at + big + 1);
    CHECK(strcmp(rlvr_flat_at(f.data, small), "x") == 0);
    CHECK(strcmp(rlvr_flat_at(f.data, at), text) == 0);
    rlvr_flat_free(&f);
    free(text);
}

int main(void) {
    test_round_trip();
    test_growth();
    return test_summary("test_flat_image");
}
