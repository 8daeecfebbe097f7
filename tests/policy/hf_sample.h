/* tests/policy/hf_sample.h — a tiny Hugging Face tokenizer.json for the C
 * tests of the HF tokenizer kind: ids 0-4 and 8 the vocabulary ("Ġ" is
 * GPT-2's mapped space), 5 a special added token that is also in the
 * vocabulary, 6 no token at all, 7 a non-special added token (the id
 * tokenizers gives it: the vocabulary's size). Characters outside the
 * vocabulary are dropped by encode, as tokenizers drops them without an
 * unk token. */
#ifndef RLVR_TESTS_HF_SAMPLE_H
#define RLVR_TESTS_HF_SAMPLE_H

static const char hf_sample_json[] =
    "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,\n"
    " \"added_tokens\": [\n"
    "  {\"id\": 5, \"content\": \"<|im_end|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,\n"
    "   \"normalized\": false, \"special\": true},\n"
    "  {\"id\": 7, \"content\": \"<x>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,\n"
    "   \"normalized\": false, \"special\": false}],\n"
    " \"normalizer\": null,\n"
    " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true,\n"
    "                   \"use_regex\": true},\n"
    " \"post_processor\": null,\n"
    " \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n"
    " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null,\n"
    "           \"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false,\n"
    "           \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"\xc4\xa0\": 3, \"\xc4\xa0" "ab\": 4, \"<|im_end|>\": 5, \"c\": 8},\n"
    "           \"merges\": [[\"a\", \"b\"], \"\xc4\xa0 ab\"]}}\n";

#endif
