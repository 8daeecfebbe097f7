/* hf_tok_dump — the C side of check_hf_tokenizer.py.
 *
 *   hf_tok_dump TOKENIZER DOCS OUT
 * builds a tokenizer from TOKENIZER (a tokenizer.json, or a .gguf through
 * io/gguf_tokenizer.h), reads DOCS (documents as a little-endian uint32
 * byte count and the bytes, back to back) and writes to OUT, per document,
 * a line "E ids..." (rlvr_tokenizer_encode), a line "S ids..."
 * (rlvr_tokenizer_encode_specials), each followed by a line "D hex" with
 * the bytes rlvr_tokenizer_decode makes of those ids (specials written in
 * the second mode); the caller compares those with the document (its NFC
 * form for a tokenizer that normalizes). An error, or a special id out of
 * encode, is said on stderr and makes the exit status 1.
 *   hf_tok_dump TOKENIZER
 * only builds it: prints the description, or the error and exits 2.
 *   hf_tok_dump --to-gguf TOKENIZER.json OUT.gguf
 * writes the tokenizer as a GGUF file of tokenizer.ggml.* keys and no
 * tensors (rlvr_gguf_put_tokenizer); the error and exit 2 when refused. */
#include "core/error.h"
#include "io/gguf.h"
#include "io/gguf_tokenizer.h"
#include "io/gguf_write.h"
#include "policy/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load(const char *path, rlvr_tokenizer **out) {
    size_t n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".gguf") == 0) {
        rlvr_gguf *g = NULL;
        RLVR_TRY(rlvr_gguf_open(&g, path));
        int rc = rlvr_gguf_tokenizer(out, g, path);
        rlvr_gguf_free(g);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return RLVR_FAIL(RLVR_EIO, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
    fclose(f);
    int rc = got == (size_t)len ? rlvr_tokenizer_new_hf_json(out, text, (size_t)len, path)
                                : RLVR_FAIL(RLVR_EIO, "cannot read %s", path);
    free(text);
    return rc;
}

/* Encodes one document both ways, writes the ids and their decoding; 0, or 1 after an error. */
static int dump_doc(const rlvr_tokenizer *t, const char *doc, size_t len, FILE *out, size_t index) {
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        int32_t n = 0;
        int rc = mode ? rlvr_tokenizer_encode_specials(t, doc, len, NULL, 0, &n)
                      : rlvr_tokenizer_encode(t, doc, len, NULL, 0, &n);
        int32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
        if (rc == 0) rc = mode ? rlvr_tokenizer_encode_specials(t, doc, len, ids, n, &n)
                               : rlvr_tokenizer_encode(t, doc, len, ids, n, &n);
        size_t dlen = 0;
        if (rc == 0) rc = rlvr_tokenizer_decode(t, ids, n, mode == 1, NULL, 0, &dlen);
        char *back = malloc(dlen + 1);
        if (rc == 0) rc = rlvr_tokenizer_decode(t, ids, n, mode == 1, back, dlen + 1, &dlen);
        if (rc < 0) {
            fprintf(stderr, "document %zu: %s\n", index, rlvr_error_last());
            bad = 1;
        }
        for (int32_t i = 0; mode == 0 && rc == 0 && i < n; i++)
            if (rlvr_tokenizer_is_special(t, ids[i])) {
                fprintf(stderr, "document %zu: encode produced special id %d\n", index, (int)ids[i]);
                bad = 1;
            }
        fputc(mode ? 'S' : 'E', out);
        for (int32_t i = 0; rc == 0 && i < n; i++) fprintf(out, " %d", (int)ids[i]);
        fputs("\nD ", out);
        for (size_t i = 0; rc == 0 && i < dlen; i++) fprintf(out, "%02x", (unsigned char)back[i]);
        fputc('\n', out);
        free(ids), free(back);
    }
    return bad;
}

static int to_gguf(const char *json_path, const char *out) {
    rlvr_tokenizer *t = NULL;
    rlvr_gguf_writer *w = NULL;
    const char *json = NULL;
    size_t len = 0;
    int rc = load(json_path, &t);
    if (rc == 0) rc = rlvr_tokenizer_hf_json(t, &json, &len);
    if (rc == 0) rc = rlvr_gguf_writer_new(&w);
    if (rc == 0) rc = rlvr_gguf_writer_kv_string(w, "general.architecture", "llama");
    rlvr_gguf_tokenizer_spec spec = {.json = json, .len = len, .source = json_path, .bos = -1, .eos = -1, .eot = -1};
    if (rc == 0) rc = rlvr_gguf_put_tokenizer(w, &spec);
    if (rc == 0) rc = rlvr_gguf_writer_open(w, out);
    if (rc == 0) rc = rlvr_gguf_writer_finish(w);
    rlvr_gguf_writer_free(w);
    rlvr_tokenizer_free(t);
    if (rc < 0) fprintf(stderr, "%s\n", rlvr_error_last());
    return rc < 0 ? 2 : 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--to-gguf") == 0) return to_gguf(argv[2], argv[3]);
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: hf_tok_dump TOKENIZER [DOCS OUT]\n");
        return 2;
    }
    rlvr_tokenizer *t = NULL;
    if (load(argv[1], &t) < 0) {
        fprintf(stderr, "%s\n", rlvr_error_last());
        return 2;
    }
    char what[200];
    rlvr_tokenizer_describe(t, what, sizeof what);
    printf("%s\n", what);
    if (argc == 2) {
        rlvr_tokenizer_free(t);
        return 0;
    }
    FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "w");
    if (!in || !out) {
        fprintf(stderr, "cannot open %s or %s\n", argv[2], argv[3]);
        return 2;
    }
    int bad = 0;
    size_t index = 0;
    unsigned char hdr[4];
    while (fread(hdr, 1, 4, in) == 4) {
        size_t len = (size_t)hdr[0] | (size_t)hdr[1] << 8 | (size_t)hdr[2] << 16 | (size_t)hdr[3] << 24;
        char *doc = malloc(len + 1);
        if (!doc || fread(doc, 1, len, in) != len) {
            fprintf(stderr, "%s: truncated document %zu\n", argv[2], index);
            return 2;
        }
        bad |= dump_doc(t, doc, len, out, index++);
        free(doc);
    }
    fclose(in), fclose(out);
    rlvr_tokenizer_free(t);
    return bad;
}
