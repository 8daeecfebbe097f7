/* io/model_info.h — the facts of a model for `rlvr model info`: what a
 * Hugging Face directory, a GGUF file or an rlvr checkpoint holds, what
 * rlvr would make of it, and everything `rlvr model import` would refuse,
 * gathered in one go rather than stopping at the first refusal.
 *
 * Cheap: only headers are read (GGUF metadata and tensor infos,
 * safetensors headers, HDF5 dataset shapes, config and tokenizer files),
 * never the weights. Fields: docs/OPERATIONS.md "rlvr model info". */
#ifndef RLVR_IO_MODEL_INFO_H
#define RLVR_IO_MODEL_INFO_H

#include "io/model_port.h"
#include "policy/model.h"
#include "policy/template.h"

#include <stdbool.h>
#include <stdint.h>

#define RLVR_MODEL_INFO_TYPES 16   /* weight types kept (more are counted in the last) */
#define RLVR_MODEL_INFO_REFUSALS 8 /* refusals kept */

/* The tensors of one weight type. */
typedef struct {
    char name[16];       /* the format's name: GGUF "Q4_1", safetensors "BF16", checkpoint "F32" */
    bool readable;       /* rlvr converts this type to float32 */
    uint64_t n_tensors;
    uint64_t n_elements; /* parameters */
    uint64_t n_bytes;    /* bytes their data takes in the file(s) */
} rlvr_model_info_type;

typedef struct {
    const char *format;   /* "gguf", "hf" (a model directory) or "checkpoint" */
    char arch[64];        /* general.architecture, config.json model_type, or "rlvr checkpoint" */
    uint64_t n_params;    /* the elements of every weight tensor in the file(s) */
    uint64_t n_tensors;
    rlvr_model_info_type types[RLVR_MODEL_INFO_TYPES];
    int n_types;
    int64_t context;      /* the source's own context length; -1 unknown */
    char context_key[80]; /* where it comes from: "llama.context_length", "max_position_embeddings", "max_seq" */
    int max_seq;          /* the max_seq rlvr gives the model (import's cap applied); -1 unknown */
    int max_seq_cap;      /* the import's cap (--max-seq); 0 for a checkpoint */
    bool has_config;      /* `config` is the configuration import would write (a checkpoint's own) */
    rlvr_model_config config;
    bool pretrained;      /* a source, or a checkpoint with a Hugging Face tokenizer */
    bool has_tokenizer;
    const char *tokenizer_kind; /* "hf", "byte" or "bpe" */
    char tokenizer_desc[96];    /* rlvr_tokenizer_describe */
    int32_t vocab_size;
    const char *chat_family;    /* "chatml", "llama3", "mistral", "native"; NULL: none recognised */
    int32_t bos;                /* -1: none */
    char bos_text[64];
    int n_stops;                /* the ids a reply stops at (rlvr_template_stop_tokens) */
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    char stop_texts[RLVR_TEMPLATE_MAX_STOPS][64];
    int n_refusals;             /* what import (or a run, for a checkpoint) would refuse, each naming why */
    char refusals[RLVR_MODEL_INFO_REFUSALS][640];
} rlvr_model_info;

/* The facts of `path` (a source as rlvr_model_io_is_source says, else a
 * checkpoint), with opt->max_seq the import's cap and `family` (NULL: the
 * one recognised) the chat family as `rlvr model import --template` takes
 * it. Refusals are collected in out->refusals, not returned; an error is
 * returned only when nothing can be read (no such file, not a GGUF file,
 * not a checkpoint). out is the caller's. */
int rlvr_model_info_read(const char *path, const char *family, const rlvr_port_options *opt, rlvr_model_info *out);

/* The facts as text for people, then the [model] section a run uses, or as
 * one JSON object; *out is malloc'd, the caller frees it. RLVR_ENOMEM. */
int rlvr_model_info_text(const rlvr_model_info *info, const char *path, char **out);
int rlvr_model_info_json(const rlvr_model_info *info, const char *path, char **out);

/* A parameter count for people: "134.5 M", "1.2 B", "12.3 K", "950". */
void rlvr_model_info_count_text(uint64_t n, char *buf, size_t cap);

#endif
