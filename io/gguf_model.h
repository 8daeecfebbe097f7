/* io/gguf_model.h — importing a GGUF file (llama.cpp's format) of
 * architecture "llama" or "qwen2": hyperparameters from the <arch>.* keys,
 * the vocabulary size from token_embd's shape, every tensor dequantised to
 * float32 by io/gguf.h (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K).
 * "llama" files hold wq/wk rows in rlvr's interleaved RoPE order already;
 * "qwen2" files (NEOX rope) are permuted like a Hugging Face checkpoint
 * (io/model_port.h). Llama 3.1-style RoPE scaling: llama.cpp keeps only
 * each frequency's divisor (rope_freqs.weight), not the llama3 parameters
 * rlvr's RoPE takes; the parameters every Llama 3.x release uses (factor =
 * the last divisor, low 1, high 4, original context 8192) are taken when
 * they reproduce every divisor, and the file is refused otherwise. Layout: docs/FORMATS.md,
 * "GGUF (read)" and "GGUF model import". */
#ifndef RLVR_IO_GGUF_MODEL_H
#define RLVR_IO_GGUF_MODEL_H

#include "io/model_port.h"
#include "policy/model.h"

/* The model configuration of the GGUF file at `path` (max_seq capped by
 * opt->max_seq); *arch gets "llama" or "qwen2" when non-NULL. RLVR_EFORMAT
 * naming the file and the key for anything unsupported or missing. */
int rlvr_gguf_model_config(const char *path, const rlvr_port_options *opt, rlvr_model_config *out,
                           const char **arch);

/* The model with the file's weights, every shape checked. */
int rlvr_gguf_model_load(const char *path, const rlvr_port_options *opt, rlvr_model **out);

/* The GGUF names of the model tensors, in rlvr_param_views order, with %d
 * for the layer ("blk.%d.attn_q.weight"). */
const char *const *rlvr_gguf_tensor_names(void);

#endif
