/* jobs/model.c — `rlvr model import|export|info`: pretrained Llama-family
 * weights in and out of rlvr checkpoints (io/model_io.h): parse, call,
 * print. */
#include "core/error.h"
#include "io/model_info.h"
#include "io/model_io.h"
#include "jobs/args.h"
#include "jobs/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRC_HELP                                                                                 \
    "  SRC           a Hugging Face model directory (config.json + model.safetensors or its\n"   \
    "                index) of LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM, or a\n" \
    "                GGUF file (.gguf) of architecture llama or qwen2\n"

static void import_usage(FILE *out) {
    fprintf(out,
            "usage: rlvr model import SRC --out CKPT.h5 [--max-seq N] [--template FAMILY]\n" SRC_HELP
            "  --out CKPT    the checkpoint file to write (a run uses it with [pretrained]\n"
            "                checkpoint = CKPT, a verb with --checkpoint CKPT)\n"
            "  --max-seq N   cap on the positions the model is given (default %d; the model's\n"
            "                own max_position_embeddings when smaller)\n"
            "  --template F  chatml, llama3 or mistral: render turns in that family instead of\n"
            "                the one recognised from the model's chat template\n",
            RLVR_IMPORT_MAX_SEQ_DEFAULT);
}

static void export_usage(FILE *out) {
    fprintf(out, "usage: rlvr model export CKPT --out DIR [--dtype f32|bf16|f16]\n"
                 "       rlvr model export CKPT --gguf FILE.gguf [--dtype f32|f16] [--no-tokenizer]\n"
                 "  --out DIR     the directory to create\n"
                 "  --gguf FILE   export a GGUF file (llama.cpp) instead of a directory; a pretrained\n"
                 "                model's tokenizer and chat template go into it\n"
                 "  --no-tokenizer  GGUF: the weights and hyperparameters alone\n"
                 "  --dtype T     weight type: f32 (default), bf16 or f16 (GGUF: f32 or f16)\n");
}

static void info_usage(FILE *out) {
    fprintf(out,
            "usage: rlvr model info SRC [--max-seq N] [--template FAMILY] [--json]\n" SRC_HELP
            "                or an rlvr checkpoint. Prints the model's facts (architecture, parameters,\n"
            "                weight types, context, tokenizer, chat family, bos and stop ids), all that\n"
            "                `rlvr model import` would refuse and why (exit 1), and the [model] section a\n"
            "                run uses\n"
            "  --max-seq N   the import's cap on max_seq, as for import (default %d)\n"
            "  --template F  the chat family, as for import\n"
            "  --json        the same facts as one JSON object\n",
            RLVR_IMPORT_MAX_SEQ_DEFAULT);
}

static void usage(FILE *out) {
    import_usage(out);
    export_usage(out);
    info_usage(out);
}

/* Progress on stderr, about every tenth of the tensors. */
static void progress(void *user, const char *what, int done, int total) {
    const char *verb = user;
    int step = total >= 10 ? total / 10 : 1;
    if (done % step == 0 || done == total) fprintf(stderr, "rlvr model %s: %d/%d tensors (%s)\n", verb, done, total, what);
}

static int cmd_import(int argc, char **argv) {
    const char *src = NULL, *out = NULL, *family = NULL;
    int64_t max_seq = RLVR_IMPORT_MAX_SEQ_DEFAULT;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &src, "SRC", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "CKPT.h5", .required = true),
        RLVR_OPT("--max-seq", RLVR_OPT_INT, &max_seq, "N", .min = 1, .max = 1 << 24),
        RLVR_OPT("--template", RLVR_OPT_STRING, &family, "FAMILY"),
        {0},
    };
    int parsed = rlvr_args_parse("model import", opts, import_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    if (access(out, F_OK) == 0) { /* before the long load; the library checks again */
        fprintf(stderr, "rlvr model import: %s exists: remove it or choose another --out\n", out);
        return RLVR_EXIT_FAILURE;
    }
    rlvr_port_options opt = {.max_seq = (int)max_seq, .progress = progress, .progress_user = "import"};
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    int rc = rlvr_model_io_import(src, family, out, &opt, &m, &tok);
    if (rc == 0) {
        const rlvr_model_config *c = rlvr_model_config_of(m);
        char desc[96], stops[512];
        rlvr_tokenizer_describe(tok, desc, sizeof desc);
        rlvr_model_io_stop_texts(tok, stops, sizeof stops);
        printf("imported %s: %zu parameters, %d layers, d_model %d, vocab %d, max_seq %d; tokenizer %s, chat "
               "format %s, replies stop at %s -> %s\n",
               src, rlvr_model_num_params(m), c->n_layers, c->d_model, c->vocab, c->max_seq, desc,
               rlvr_chat_family_name(rlvr_tokenizer_chat(tok)->family), stops, out);
    }
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    return rc < 0 ? rlvr_cmd_fail("model import", rc) : RLVR_EXIT_OK;
}

static int cmd_export(int argc, char **argv) {
    const char *ckpt = NULL, *dir = NULL, *gguf = NULL, *dtype = "f32";
    bool no_tokenizer = false;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &ckpt, "CKPT", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &dir, "DIR"),
        RLVR_OPT("--gguf", RLVR_OPT_STRING, &gguf, "FILE"),
        RLVR_OPT("--no-tokenizer", RLVR_OPT_FLAG, &no_tokenizer, NULL),
        RLVR_OPT("--dtype", RLVR_OPT_STRING, &dtype, "T"),
        {0},
    };
    int parsed = rlvr_args_parse("model export", opts, export_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_export_options opt = {.dtype = RLVR_EXPORT_F32, .progress = progress, .progress_user = "export"};
    if (strcmp(dtype, "f16") == 0) opt.dtype = RLVR_EXPORT_F16;
    else if (strcmp(dtype, "bf16") == 0) opt.dtype = RLVR_EXPORT_BF16;
    else if (strcmp(dtype, "f32") != 0)
        return rlvr_args_error("model export", export_usage, "--dtype wants f32, bf16 or f16, got \"%s\"", dtype);
    if (!dir == !gguf) return rlvr_args_error("model export", export_usage, "give one of --out DIR or --gguf FILE");
    if (no_tokenizer && !gguf) return rlvr_args_error("model export", export_usage, "--no-tokenizer goes with --gguf");
    if (gguf && opt.dtype == RLVR_EXPORT_BF16)
        return rlvr_args_error("model export", export_usage, "--gguf writes f32 or f16");
    int rc = rlvr_model_io_export(ckpt, dir, gguf, !no_tokenizer, &opt);
    if (rc == 0) printf("exported %s -> %s (%s)\n", ckpt, gguf ? gguf : dir, rlvr_export_dtype_name(opt.dtype));
    return rc < 0 ? rlvr_cmd_fail("model export", rc) : RLVR_EXIT_OK;
}

static int cmd_info(int argc, char **argv) {
    const char *src = NULL, *family = NULL;
    int64_t max_seq = RLVR_IMPORT_MAX_SEQ_DEFAULT;
    bool json = false;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &src, "SRC", .required = true),
        RLVR_OPT("--max-seq", RLVR_OPT_INT, &max_seq, "N", .min = 1, .max = 1 << 24),
        RLVR_OPT("--template", RLVR_OPT_STRING, &family, "FAMILY"),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &json, NULL),
        {0},
    };
    int parsed = rlvr_args_parse("model info", opts, info_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_port_options opt = {.max_seq = (int)max_seq};
    rlvr_model_info info;
    char *text = NULL;
    int rc = rlvr_model_info_read(src, family, &opt, &info);
    if (rc == 0) rc = json ? rlvr_model_info_json(&info, src, &text) : rlvr_model_info_text(&info, src, &text);
    if (rc < 0) return rlvr_cmd_fail("model info", rc);
    fputs(text, stdout);
    if (json) fputc('\n', stdout);
    free(text);
    if (info.n_refusals == 0) return RLVR_EXIT_OK;
    fprintf(stderr, "rlvr model info: %s would be refused, for the %d reason%s above\n", src, info.n_refusals,
            info.n_refusals == 1 ? "" : "s");
    return RLVR_EXIT_FAILURE;
}

int rlvr_cmd_model(int argc, char **argv) {
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "import") == 0) return cmd_import(argc - 1, argv + 1);
    if (strcmp(sub, "export") == 0) return cmd_export(argc - 1, argv + 1);
    if (strcmp(sub, "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (strcmp(sub, "help") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (argc > 1) return rlvr_args_error("model", usage, "unknown subcommand \"%s\"", sub);
    return rlvr_args_error("model", usage, "missing the subcommand (import, export or info)");
}
