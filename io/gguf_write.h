/* io/gguf_write.h — writing GGUF version 3 files: a small general writer
 * (metadata of the scalar types and strings, F32/F16 tensors) and the
 * export of a model as a llama.cpp "llama" (or, with q/k/v biases,
 * "qwen2") file.
 *
 *   rlvr_gguf_writer_new(&w)
 *   rlvr_gguf_writer_kv_*(w, key, value) ...
 *   rlvr_gguf_writer_add(w, name, type, n_dims, dims) ...   dims as ggml's ne
 *   rlvr_gguf_writer_open(w, path)     header, tensor infos, alignment
 *   rlvr_gguf_writer_put(w, data) ...  each tensor in order, from float32
 *   rlvr_gguf_writer_finish(w)         fsync, close
 *
 * F16 rounds as numpy's astype(np.float16). Alignment 32 (the default; no
 * general.alignment key). Layout: docs/FORMATS.md, "GGUF (write)". */
#ifndef RLVR_IO_GGUF_WRITE_H
#define RLVR_IO_GGUF_WRITE_H

#include "io/gguf.h"
#include "io/model_port.h"
#include "policy/model.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct rlvr_gguf_writer rlvr_gguf_writer;

int rlvr_gguf_writer_new(rlvr_gguf_writer **out);
void rlvr_gguf_writer_free(rlvr_gguf_writer *w);
int rlvr_gguf_writer_kv_string(rlvr_gguf_writer *w, const char *key, const char *value);
int rlvr_gguf_writer_kv_u32(rlvr_gguf_writer *w, const char *key, uint32_t value);
int rlvr_gguf_writer_kv_f32(rlvr_gguf_writer *w, const char *key, float value);
int rlvr_gguf_writer_kv_bool(rlvr_gguf_writer *w, const char *key, bool value);
/* Arrays: n strings of lens[i] bytes each (any bytes), or n int32. */
int rlvr_gguf_writer_kv_strings(rlvr_gguf_writer *w, const char *key, const char *const *strs, const size_t *lens,
                                uint64_t n);
int rlvr_gguf_writer_kv_i32s(rlvr_gguf_writer *w, const char *key, const int32_t *v, uint64_t n);
/* type RLVR_GGML_F32 or RLVR_GGML_F16; dims[0] varies fastest. */
int rlvr_gguf_writer_add(rlvr_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *dims);
int rlvr_gguf_writer_open(rlvr_gguf_writer *w, const char *path);
int rlvr_gguf_writer_put(rlvr_gguf_writer *w, const float *data);
int rlvr_gguf_writer_finish(rlvr_gguf_writer *w);

/* The model as a GGUF file at `path` (opt->dtype F32 or F16: matrices in
 * that type, vectors in F32), written as "<path>.part" and renamed.
 * Architecture "llama" keeps wq/wk in rlvr's interleaved order (what
 * llama.cpp's "llama" expects); "qwen2" (models with q/k/v biases) gets
 * them in half-split order (NEOX rope). A model with Llama 3.1 RoPE scaling
 * also gets llama.cpp's rope_freqs.weight. With opt->tokenizer_json the
 * file also carries the tokenizer, chat template and ids
 * (rlvr_gguf_put_tokenizer; its refusals fail the export). */
int rlvr_gguf_export(const rlvr_model *m, const char *path, const rlvr_export_options *opt);

#endif
