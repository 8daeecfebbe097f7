/* io/model_port.h — what importing and exporting pretrained Llama-family
 * weights share: the import options, the walk over the model's tensors
 * (each layer's slice of a stacked tensor is one file tensor), the RoPE row
 * permutation, and writing an imported model as a checkpoint file.
 *
 * RoPE: rlvr rotates interleaved pairs (policy/kernels.h); Hugging Face
 * Llama, Mistral and Qwen2 checkpoints (and GGUF "qwen2", llama.cpp's NEOX
 * rope) rotate the two halves of each head. Converting one into the other
 * permutes the rows of wq and wk (and bq, bk) within each head:
 *   interleaved row 2i = half-split row i, row 2i+1 = half-split row i + hd/2.
 * GGUF "llama" files already hold the interleaved order (llama.cpp's
 * converter applies this same permutation). Formats: docs/FORMATS.md. */
#ifndef RLVR_IO_MODEL_PORT_H
#define RLVR_IO_MODEL_PORT_H

#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest context an import gives the model when the caller sets no cap:
 * rlvr's activations grow with max_seq, and pretrained models advertise
 * 32k-128k positions that RL rollouts rarely need. */
#define RLVR_IMPORT_MAX_SEQ_DEFAULT 4096

/* Called after each tensor: `done` of `total` tensors, `what` the one just
 * handled (a file's tensor name). May be NULL. */
typedef void (*rlvr_port_progress_fn)(void *user, const char *what, int done, int total);

typedef struct {
    int max_seq;                   /* cap on the model's max_seq (<= 0: RLVR_IMPORT_MAX_SEQ_DEFAULT) */
    rlvr_port_progress_fn progress; /* may be NULL */
    void *progress_user;
} rlvr_port_options;

/* One file tensor: model tensor `tensor` (0..RLVR_PARAM_TENSORS-1, the order
 * of rlvr_param_views), `layer` (-1 for the global ones), its name in the
 * file (from the format's name table), its shape (rows, cols; cols = 0 for a
 * vector) and its place in the model's parameter buffer. */
typedef struct {
    int tensor, layer;
    const char *name;
    size_t rows, cols;
    float *data;
} rlvr_port_tensor;

typedef int (*rlvr_port_tensor_fn)(void *user, const rlvr_port_tensor *t);

/* Calls fn for each tensor the model has in a file: every layer's slice of
 * the stacked tensors, layer by layer, then the final norm and the LM head
 * (omitted when tied; bq, bk, bv only with qkv_bias). `names` gives each
 * model tensor's file name, with one %d for the layer where per-layer. Stops
 * at the first negative return. Reports progress after every call. */
int rlvr_port_for_each(const rlvr_model *m, const char *const names[RLVR_PARAM_TENSORS],
                       rlvr_port_tensor_fn fn, void *user, const rlvr_port_options *opt);

/* Number of file tensors rlvr_port_for_each visits. */
int rlvr_port_tensor_count(const rlvr_model_config *cfg);

/* True for the tensors whose rows are in RoPE order (wq, wk, bq, bk). */
bool rlvr_port_is_rope_rows(int tensor);

/* Permutes the rows of w (rows × cols, cols = 0 for a vector) within each
 * head of head_dim rows: to_interleaved from half-split order to rlvr's,
 * or back. RLVR_ENOMEM. */
int rlvr_port_permute_rope(float *w, size_t rows, size_t cols, int head_dim, bool to_interleaved);

/* A zeroed configuration with [model]'s defaults for init_seed and init_std
 * (a pretrained model has no value for them), so that a [model] section
 * with only the architecture keys set equals an imported configuration (a
 * checkpoint loads only into an equal configuration). */
void rlvr_port_config_init(rlvr_model_config *c);

/* max_seq for a model that was trained on `trained` positions under the
 * options' cap. */
int rlvr_port_max_seq(int trained, const rlvr_port_options *opt);

/* Writes `m` (and `tok` when non-NULL; without one the checkpoint reads as
 * the byte tokenizer) as a checkpoint file at `path` (conventionally .h5),
 * step 0, no optimizer state. The file appears complete or not at all: it
 * is written in "<path>.tmp/" and renamed into place. */
int rlvr_port_save_checkpoint(const char *path, rlvr_model *m, const rlvr_tokenizer *tok);

/* A new model of configuration `cfg` whose parameters come from `fill`
 * (called once on the freshly created model; the random initial weights are
 * all overwritten by a complete fill). */
int rlvr_port_new_model(rlvr_model **out, const rlvr_model_config *cfg, int (*fill)(rlvr_model *m, void *user),
                        void *user);

/* ---- export ----------------------------------------------------------- */

typedef enum { RLVR_EXPORT_F32 = 0, RLVR_EXPORT_F16, RLVR_EXPORT_BF16 } rlvr_export_dtype;

typedef struct {
    rlvr_export_dtype dtype;        /* matrices; GGUF keeps vectors in F32 as llama.cpp does */
    const char *tokenizer_json;     /* HF: written as tokenizer.json when non-NULL ... */
    size_t tokenizer_json_len;      /* ... this many bytes (rlvr_tokenizer_hf_json gives both) */
    const char *chat_template;      /* HF, with tokenizer_json: tokenizer_config.json's chat_template (may be NULL) */
    const char *bos_token;          /* ... its bos_token and eos_token, token texts (may be NULL) */
    const char *eos_token;
    int32_t bos_token_id;           /* generation_config.json's bos_token_id (-1: none) and */
    const int32_t *eos_token_ids;   /* eos_token_id: generate stops at each of these (n_eos_token_ids; */
    int n_eos_token_ids;            /* one is written as an integer, several as a list) */
    int32_t turn_end_token_id;      /* GGUF: tokenizer.ggml.eot_token_id when not eos_token_ids[0] (-1: none) */
    rlvr_port_progress_fn progress; /* may be NULL */
    void *progress_user;
} rlvr_export_options;

/* "F32", "F16", "BF16". */
const char *rlvr_export_dtype_name(rlvr_export_dtype d);

/* The data of t as a file stores it: t->data itself, or (half_split and a
 * RoPE-rows tensor) a copy in *owned with the rows back in half-split
 * order. The caller frees *owned. */
int rlvr_port_export_data(const rlvr_port_tensor *t, bool half_split, int head_dim, const float **data,
                          float **owned);

/* llama.cpp's rope_freqs.weight for a model with llama3 RoPE scaling: the
 * divisor of each of the head_dim / 2 frequencies, computed as its
 * converter does (float frequencies, double arithmetic). */
void rlvr_port_llama3_divisors(const rlvr_model_config *c, float *out);

/* Renames `tmp` to `path` and fsyncs the directory. */
int rlvr_port_publish(const char *tmp, const char *path);

#endif
