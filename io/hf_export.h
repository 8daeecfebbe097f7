/* io/hf_export.h — writing a model as a Hugging Face directory that
 * transformers loads with AutoModelForCausalLM.from_pretrained:
 * config.json (Qwen2ForCausalLM for a model with q/k/v biases, else
 * LlamaForCausalLM; rope_scaling when set), generation_config.json and
 * model.safetensors (F32, F16 or BF16 rounded to nearest even; wq/wk rows
 * permuted back to the half-split RoPE order, io/model_port.h), plus
 * tokenizer.json when the options carry its text. The directory is written
 * as "<dir>.tmp" and renamed: it appears complete or not at all. Layout:
 * docs/FORMATS.md, "HF model directory (import/export)". */
#ifndef RLVR_IO_HF_EXPORT_H
#define RLVR_IO_HF_EXPORT_H

#include "io/model_port.h"
#include "policy/model.h"

/* RLVR_ESTATE when `dir` (or "<dir>.tmp") already exists. */
int rlvr_hf_export(const rlvr_model *m, const char *dir, const rlvr_export_options *opt);

#endif
