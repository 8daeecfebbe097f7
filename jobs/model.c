/* jobs/model.c — `rlvr model import|export|info`: pretrained Llama-family
 * weights in and out of rlvr checkpoints (io/hf_model.h, io/gguf_model.h,
 * io/hf_export.h, io/gguf_write.h). */
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/gguf_model.h"
#include "io/gguf_write.h"
#include "io/hf_export.h"
#include "io/hf_model.h"
#include "io/model_tokenizer.h"
#include "jobs/commands.h"
#include "policy/template.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr model import SRC --out CKPT.h5 [--max-seq N] [--template FAMILY]\n"
            "       rlvr model export CKPT --out DIR [--dtype f32|bf16|f16]\n"
            "       rlvr model export CKPT --gguf FILE.gguf [--dtype f32|f16] [--no-tokenizer]\n"
            "       rlvr model info SRC\n"
            "  SRC           a Hugging Face model directory (config.json + model.safetensors or its\n"
            "                index) of LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM, or a\n"
            "                GGUF file (.gguf) of architecture llama or qwen2\n"
            "  --out CKPT    import: the checkpoint file to write (loads with --checkpoint and\n"
            "                [train] init = CKPT); export: the directory to create\n"
            "  --max-seq N   cap on the positions the model is given (default %d; the model's\n"
            "                own max_position_embeddings when smaller)\n"
            "  --template F  chatml, llama3 or mistral: render turns in that family instead of\n"
            "                the one recognised from the model's chat template\n"
            "  --gguf FILE   export a GGUF file (llama.cpp) instead of a directory; a pretrained\n"
            "                model's tokenizer and chat template go into it\n"
            "  --no-tokenizer  GGUF: the weights and hyperparameters alone\n"
            "  --dtype T     weight type: f32 (default), bf16 or f16 (GGUF: f32 or f16)\n",
            RLVR_IMPORT_MAX_SEQ_DEFAULT);
}

/* Progress on stderr, about every tenth of the tensors. */
static void progress(void *user, const char *what, int done, int total) {
    const char *verb = user;
    int step = total >= 10 ? total / 10 : 1;
    if (done % step == 0 || done == total) fprintf(stderr, "rlvr model %s: %d/%d tensors (%s)\n", verb, done, total, what);
}

static bool is_gguf(const char *path) {
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".gguf") == 0;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The model's configuration from a GGUF file or an HF directory (cheap:
 * no weights are read), so a model rlvr cannot run is refused first. */
static int source_config(const char *src, const rlvr_port_options *opt, rlvr_model_config *c, const char **arch) {
    if (is_gguf(src)) return rlvr_gguf_model_config(src, opt, c, arch);
    if (is_dir(src)) return rlvr_hf_model_config(src, opt, c, arch);
    return rlvr_error_set(RLVR_EINVAL, "%s: neither a model directory nor a .gguf file", src);
}

static int load_source(const char *src, const rlvr_port_options *opt, rlvr_model **m) {
    if (is_gguf(src)) return rlvr_gguf_model_load(src, opt, m);
    if (is_dir(src)) return rlvr_hf_model_load(src, opt, m);
    return rlvr_error_set(RLVR_EINVAL, "%s: neither a model directory nor a .gguf file", src);
}

/* The model's tokenizer and chat format (read before the weights: a
 * tokenizer rlvr cannot use fails the import at once). */
static int load_tokenizer(const char *src, const char *family, rlvr_tokenizer **tok) {
    int rc = 0;
    if (is_gguf(src)) {
        rlvr_gguf *g = NULL;
        rc = rlvr_gguf_open(&g, src);
        if (rc == 0) rc = rlvr_gguf_chat_tokenizer(tok, g, src, family);
        rlvr_gguf_free(g);
    } else {
        rc = rlvr_hf_dir_tokenizer(tok, src, family);
    }
    return rc;
}

/* The texts of the ids sampling stops at, space-separated, for the summary line. */
static void stop_texts(const rlvr_tokenizer *tok, char *out, size_t cap) {
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n = rlvr_template_stop_tokens(tok, stops);
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < n && at + 1 < cap; i++) {
        char text[128];
        size_t len = 0;
        if (rlvr_tokenizer_decode(tok, &stops[i], 1, true, text, sizeof text, &len) < 0) {
            rlvr_error_clear();
            snprintf(text, sizeof text, "id %d", (int)stops[i]);
        }
        int k = snprintf(out + at, cap - at, "%s%s", i ? " " : "", text);
        if (k < 0 || (size_t)k >= cap - at) break;
        at += (size_t)k;
    }
}

static int cmd_import(int argc, char **argv) {
    const char *src = NULL, *out = NULL, *family = NULL;
    int64_t max_seq = RLVR_IMPORT_MAX_SEQ_DEFAULT;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--max-seq") == 0 && i + 1 < argc) {
            if (rlvr_cmd_parse_int("model import", "--max-seq", argv[++i], 1, 1 << 24, &max_seq) < 0)
                return RLVR_EXIT_USAGE;
        } else if (strcmp(argv[i], "--template") == 0 && i + 1 < argc) family = argv[++i];
        else if (argv[i][0] != '-' && !src) src = argv[i];
        else {
            usage(stderr);
            return RLVR_EXIT_USAGE;
        }
    }
    if (!src || !out) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    if (access(out, F_OK) == 0) { /* before the long load; the library checks again */
        fprintf(stderr, "rlvr model import: %s exists: remove it or choose another --out\n", out);
        return RLVR_EXIT_FAILURE;
    }
    rlvr_port_options opt = {.max_seq = (int)max_seq, .progress = progress, .progress_user = "import"};
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    rlvr_model_config config;
    const char *arch = NULL;
    int rc = source_config(src, &opt, &config, &arch);
    if (rc == 0) rc = load_tokenizer(src, family, &tok);
    if (rc == 0) rc = load_source(src, &opt, &m);
    if (rc == 0) rc = rlvr_tokenizer_check_model(tok, rlvr_model_config_of(m));
    if (rc == 0) rc = rlvr_port_save_checkpoint(out, m, tok);
    if (rc == 0) {
        const rlvr_model_config *c = rlvr_model_config_of(m);
        char desc[96], stops[512];
        rlvr_tokenizer_describe(tok, desc, sizeof desc);
        stop_texts(tok, stops, sizeof stops);
        printf("imported %s: %zu parameters, %d layers, d_model %d, vocab %d, max_seq %d; tokenizer %s, chat "
               "format %s, replies stop at %s -> %s\n",
               src, rlvr_model_num_params(m), c->n_layers, c->d_model, c->vocab, c->max_seq, desc,
               rlvr_chat_family_name(rlvr_tokenizer_chat(tok)->family), stops, out);
    }
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    return rc < 0 ? rlvr_cmd_fail("model import", rc) : RLVR_EXIT_OK;
}

static int parse_dtype(const char *s, rlvr_export_dtype *d) {
    if (strcmp(s, "f32") == 0) *d = RLVR_EXPORT_F32;
    else if (strcmp(s, "f16") == 0) *d = RLVR_EXPORT_F16;
    else if (strcmp(s, "bf16") == 0) *d = RLVR_EXPORT_BF16;
    else {
        fprintf(stderr, "rlvr model export: --dtype wants f32, bf16 or f16, got \"%s\"\n", s);
        return -1;
    }
    return 0;
}

static int load_checkpoint(const char *path, rlvr_model **m, rlvr_tokenizer **tok) {
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, path));
    int rc = rlvr_checkpoint_load_model(ck, m);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, tok);
    rlvr_checkpoint_close(ck);
    return rc;
}

/* The text of a special token (its id -1: none). */
static int token_text(const rlvr_tokenizer *tok, int32_t id, char *buf, size_t cap, const char **out) {
    *out = NULL;
    if (id < 0) return 0;
    size_t len = 0;
    RLVR_TRY(rlvr_tokenizer_decode(tok, &id, 1, true, buf, cap, &len));
    *out = buf;
    return 0;
}

/* A pretrained model's tokenizer goes with an export: an HF directory's
 * tokenizer.json, tokenizer_config.json (chat template, the conversation's
 * first and the turn's end token) and generation_config.json ids, or a GGUF
 * file's tokenizer.ggml.* keys; rlvr's own tokenizers have no such form. */
static int export_tokenizer(const rlvr_tokenizer *tok, rlvr_export_options *opt, char bos[256], char eos[256],
                            int32_t eos_ids[RLVR_TOKENIZER_MAX_EOS + 1]) {
    if (rlvr_tokenizer_kind_of(tok) != RLVR_TOKENIZER_HF) return 0;
    RLVR_TRY(rlvr_tokenizer_hf_json(tok, &opt->tokenizer_json, &opt->tokenizer_json_len));
    size_t len = 0;
    opt->chat_template = rlvr_tokenizer_chat_template(tok, &len);
    const rlvr_chat *c = rlvr_tokenizer_chat(tok);
    /* generation_config.json: what the model declared, with the turn end
     * first when it is not among them, so generate stops where a reply ends */
    int n = 0;
    const int32_t *declared = rlvr_tokenizer_generation_eos(tok, &n);
    bool has_turn_end = false;
    for (int i = 0; i < n; i++) has_turn_end |= declared[i] == c->turn_end;
    opt->n_eos_token_ids = 0;
    if (!has_turn_end && c->turn_end >= 0) eos_ids[opt->n_eos_token_ids++] = c->turn_end;
    for (int i = 0; i < n; i++) eos_ids[opt->n_eos_token_ids++] = declared[i];
    opt->eos_token_ids = eos_ids;
    int32_t gen_bos = rlvr_tokenizer_generation_bos(tok);
    opt->bos_token_id = gen_bos >= 0 ? gen_bos : c->begin;
    opt->turn_end_token_id = c->turn_end;
    RLVR_TRY(token_text(tok, c->begin, bos, 256, &opt->bos_token));
    return token_text(tok, c->turn_end, eos, 256, &opt->eos_token);
}

static int cmd_export(int argc, char **argv) {
    const char *ckpt = NULL, *dir = NULL, *gguf = NULL;
    bool no_tokenizer = false;
    rlvr_export_options opt = {.dtype = RLVR_EXPORT_F32, .progress = progress, .progress_user = "export"};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--gguf") == 0 && i + 1 < argc) gguf = argv[++i];
        else if (strcmp(argv[i], "--no-tokenizer") == 0) no_tokenizer = true;
        else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            if (parse_dtype(argv[++i], &opt.dtype) < 0) return RLVR_EXIT_USAGE;
        } else if (argv[i][0] != '-' && !ckpt) ckpt = argv[i];
        else {
            usage(stderr);
            return RLVR_EXIT_USAGE;
        }
    }
    if (!ckpt || !dir == !gguf) {
        fprintf(stderr, "rlvr model export: give CKPT and one of --out DIR or --gguf FILE\n");
        return RLVR_EXIT_USAGE;
    }
    if (no_tokenizer && !gguf) {
        fprintf(stderr, "rlvr model export: --no-tokenizer goes with --gguf\n");
        return RLVR_EXIT_USAGE;
    }
    if (gguf && opt.dtype == RLVR_EXPORT_BF16) {
        fprintf(stderr, "rlvr model export: --gguf writes f32 or f16\n");
        return RLVR_EXIT_USAGE;
    }
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    char bos[256], eos[256];
    int32_t eos_ids[RLVR_TOKENIZER_MAX_EOS + 1];
    int rc = load_checkpoint(ckpt, &m, &tok);
    if (rc == 0 && !no_tokenizer) rc = export_tokenizer(tok, &opt, bos, eos, eos_ids);
    if (rc == 0) rc = gguf ? rlvr_gguf_export(m, gguf, &opt) : rlvr_hf_export(m, dir, &opt);
    if (rc == 0) printf("exported %s -> %s (%s)\n", ckpt, gguf ? gguf : dir, rlvr_export_dtype_name(opt.dtype));
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    return rc < 0 ? rlvr_cmd_fail("model export", rc) : RLVR_EXIT_OK;
}

/* The [model] section a run needs to start from the model ([train] init =
 * CKPT loads only into an equal configuration): ready to paste. */
static void print_config(const char *src, const char *arch, const rlvr_model_config *c) {
    const rlvr_rope_scaling *r = &c->rope_scaling;
    bool llama3 = r->kind == RLVR_ROPE_SCALING_LLAMA3;
    printf("# %s: %s, head_dim %d\n[model]\nvocab = %d\nd_model = %d\nn_layers = %d\nn_heads = %d\n"
           "n_kv_heads = %d\nd_ff = %d\nmax_seq = %d\nrope_theta = %.9g\nnorm_eps = %.9g\ntie_embeddings = %s\n"
           "qkv_bias = %s\nrope_scaling = %s\ninit_seed = %llu\ninit_std = %.9g\n",
           src, arch, c->d_model / c->n_heads, c->vocab, c->d_model, c->n_layers, c->n_heads, c->n_kv_heads, c->d_ff,
           c->max_seq, (double)c->rope_theta, (double)c->norm_eps, c->tie_embeddings ? "true" : "false",
           c->qkv_bias ? "true" : "false", llama3 ? "llama3" : "none", (unsigned long long)c->init_seed,
           (double)c->init_std);
    if (llama3)
        printf("rope_scaling_factor = %.9g\nrope_low_freq_factor = %.9g\nrope_high_freq_factor = %.9g\n"
               "rope_original_max_seq = %d\n",
               (double)r->factor, (double)r->low_freq_factor, (double)r->high_freq_factor, r->original_max_seq);
}

static int cmd_info(int argc, char **argv) {
    if (argc != 2) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    const char *src = argv[1], *arch = "rlvr checkpoint";
    rlvr_model_config c;
    rlvr_port_options opt = {0};
    int rc;
    if (is_gguf(src) || is_dir(src)) rc = source_config(src, &opt, &c, &arch);
    else {
        rlvr_checkpoint *ck = NULL;
        rc = rlvr_checkpoint_open(&ck, src);
        if (rc == 0) rc = rlvr_checkpoint_model_config(ck, &c);
        rlvr_checkpoint_close(ck);
    }
    if (rc < 0) return rlvr_cmd_fail("model info", rc);
    print_config(src, arch, &c);
    return RLVR_EXIT_OK;
}

int rlvr_cmd_model(int argc, char **argv) {
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "import") == 0) return cmd_import(argc - 1, argv + 1);
    if (strcmp(sub, "export") == 0) return cmd_export(argc - 1, argv + 1);
    if (strcmp(sub, "info") == 0) return cmd_info(argc - 1, argv + 1);
    bool help = strcmp(sub, "help") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0;
    usage(help ? stdout : stderr);
    return help ? RLVR_EXIT_OK : RLVR_EXIT_USAGE;
}
