/* io/model_io.h — what `rlvr model` does with a model's files, over the
 * readers and writers of io/hf_model.h, io/gguf_model.h, io/hf_export.h and
 * io/gguf_write.h: a source is a Hugging Face model directory or a GGUF
 * file (named *.gguf); a checkpoint is rlvr's. */
#ifndef RLVR_IO_MODEL_IO_H
#define RLVR_IO_MODEL_IO_H

#include "io/model_port.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>

/* True when `path` names a GGUF file (by its .gguf suffix) or a directory:
 * a source rather than a checkpoint. */
bool rlvr_model_io_is_source(const char *path);

/* The model's configuration and architecture name from a source (cheap: no
 * weights are read), so that a model rlvr cannot run is refused first; from
 * anything else a checkpoint's configuration, *arch "rlvr checkpoint".
 * *arch points to static or the format's text that lives as long as the
 * process. RLVR_EINVAL naming a path that is neither. */
int rlvr_model_io_config(const char *path, const rlvr_port_options *opt, rlvr_model_config *c, const char **arch);

/* A source as a checkpoint at `out`: its configuration checked, its
 * tokenizer and chat format (`family` chatml, llama3 or mistral replaces
 * the one recognised from the model's chat template; NULL: recognised) read
 * before the weights, the weights loaded, the tokenizer checked against the
 * model, the checkpoint written. On success *m and *tok are the caller's
 * (rlvr_model_free, rlvr_tokenizer_free). */
int rlvr_model_io_import(const char *src, const char *family, const char *out, const rlvr_port_options *opt,
                         rlvr_model **m, rlvr_tokenizer **tok);

/* A checkpoint exported as a Hugging Face directory `dir` or, with `gguf`
 * non-NULL, a GGUF file (exactly one of the two). A pretrained model's
 * tokenizer goes with it unless `with_tokenizer` is false: an HF
 * directory's tokenizer.json, tokenizer_config.json (chat template, the
 * conversation's first and the turn's end token) and generation_config.json
 * ids, or a GGUF file's tokenizer.ggml.* keys; rlvr's own tokenizers have
 * no such form. opt's tokenizer fields are filled here. */
int rlvr_model_io_export(const char *ckpt, const char *dir, const char *gguf, bool with_tokenizer,
                         const rlvr_export_options *opt);

/* The texts of the ids a reply stops at (policy/template.h), space
 * separated, cut to fit `cap`; an id with no text as "id N". */
void rlvr_model_io_stop_texts(const rlvr_tokenizer *tok, char *out, size_t cap);

#endif
