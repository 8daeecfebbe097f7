"""Writes a tiny pretrained-style chat model as a Hugging Face directory:

    make_tiny_chat_model.py OUT_DIR TEMPLATE_FILE

a byte-level BPE tokenizer (GPT-2 style, trained with `tokenizers` on a
little arithmetic text, with <|endoftext|>, <|im_start|>, <|im_end|> as
special tokens), tokenizer_config.json carrying TEMPLATE_FILE as its chat
template, and a random float32 SmolLM2-shaped LlamaForCausalLM (tied
embeddings, 2 layers, d 32) saved as safetensors. Deterministic (seeded)."""
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out, template = sys.argv[1], open(sys.argv[2]).read()
corpus = [f"What is {a} + {b}? Answer: {a + b}\n" for a in range(40) for b in range(0, 40, 3)]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
tok.decoder = decoders.ByteLevel()
tok.train_from_iterator(corpus, trainers.BpeTrainer(
    vocab_size=320, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>",
                               pad_token="<|im_end|>", unk_token="<|endoftext|>")
fast.chat_template = template
fast.save_pretrained(out)

torch.manual_seed(7)
cfg = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024, rms_norm_eps=1e-5,
                  rope_theta=100000.0, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
LlamaForCausalLM(cfg).float().save_pretrained(out, safe_serialization=True)
print(f"{out}: vocab {cfg.vocab_size}")
