/* io/hf_model.h — importing a Hugging Face model directory (config.json and
 * model.safetensors, or model.safetensors.index.json and its shards) of a
 * Llama-family model: LlamaForCausalLM (Llama 2 and 3, SmolLM2),
 * MistralForCausalLM (no sliding window) and Qwen2ForCausalLM (q/k/v
 * biases). Anything the model cannot compute exactly (another architecture,
 * activation, RoPE scaling other than "llama3", head_dim != hidden/heads,
 * biases on Llama, a sliding window) is refused with RLVR_EFORMAT naming
 * the file and the field. Weights convert to float32 (F32, F16, BF16, F64)
 * and wq/wk rows are permuted to rlvr's interleaved RoPE
 * (io/model_port.h). Layout: docs/FORMATS.md, "HF model directory". */
#ifndef RLVR_IO_HF_MODEL_H
#define RLVR_IO_HF_MODEL_H

#include "io/model_port.h"
#include "policy/model.h"

/* The model configuration config.json in `dir` describes (max_seq capped by
 * opt->max_seq); *arch gets "llama", "mistral" or "qwen2" when non-NULL. */
int rlvr_hf_model_config(const char *dir, const rlvr_port_options *opt, rlvr_model_config *out, const char **arch);

/* The model with its pretrained weights; every tensor's shape is checked
 * against config.json (a missing or misshapen one names tensor and file). */
int rlvr_hf_model_load(const char *dir, const rlvr_port_options *opt, rlvr_model **out);

/* The safetensors names of the model tensors, in rlvr_param_views order,
 * with %d for the layer ("model.layers.%d.self_attn.q_proj.weight"). */
const char *const *rlvr_hf_tensor_names(void);

#endif
