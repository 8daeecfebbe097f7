"""policy/tokenizer.h's Hugging Face kind against the tokenizers library
(the pinned reference, scripts/pyref.sh).

Builds a deterministic corpus of at least 200 KB from files on this machine
and generated text (code, prose, scripts from CJK to emoji ZWJ sequences,
combining marks in NFD and NFC, whitespace runs, numbers, chat markup);
trains three byte-level BPE tokenizers on it, styled as GPT-2, Llama-3 and
Qwen2, each with special added tokens and non-special ones; then, for every
document, compares the ids rlvr gives (hf_tok_dump) with tokenizers' ids:
rlvr_tokenizer_encode against tokenizers with encode_special_tokens = True,
rlvr_tokenizer_encode_specials against its default encode, both with
add_special_tokens=False; and that decode(encode(x)) == x (for the
NFC-normalizing tokenizer, == NFC(x) between the added tokens, which is
what tokenizers' own decode gives back too).
The same comparison runs on GGUF files that gguf-py writes from each
tokenizer's vocabulary, merges and token types (io/gguf_tokenizer.h), and
on variants of the GPT-2 one that switch on what the three leave off:
ByteLevel's prefix space, Digits, every Split behavior, invert and string
patterns, a Sequence normalizer, added tokens with lstrip, rstrip and
single_word (the "smollm" GGUF pre-tokenizer is checked on the Digits one).
rlvr also writes each of these as GGUF keys (hf_tok_dump --to-gguf,
io/gguf_tokenizer.h): where llama.cpp has a name for the pre-tokenizer the
keys must equal the ones written here in the converter's way and encode to
the same ids; elsewhere the writer must refuse, naming --no-tokenizer.
Last, unsupported and corrupt tokenizer.json files must be refused with a
message naming the file.

Usage: check_hf_tokenizer.py HF_TOK_DUMP WORKDIR
"""
import glob
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

dump, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


# ---- the corpus -------------------------------------------------------------------------

def files_text(pattern, budget, chunk):
    """Documents of about `chunk` characters cut from the files matching
    pattern (sorted, so the same machine gives the same corpus), up to
    `budget` characters in all."""
    docs, total = [], 0
    for path in sorted(glob.glob(pattern, recursive=True)):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(text), chunk):
            docs.append(text[i:i + chunk])
            total += len(docs[-1])
            if total >= budget:
                return docs
    return docs


def unicode_docs(rng):
    words = {
        "cjk": ["東京", "日本語", "中文字符", "汉字", "한국어", "ひらがな", "カタカナ", "漢字テスト", "北京大学"],
        "cyrillic": ["Привет", "мир", "Москва", "ёжик", "Съешь", "ещё", "этих", "французских", "булок"],
        "arabic": ["مرحبا", "بالعالم", "العربية", "كتاب", "مدرسة", "١٢٣٤", "سلام"],
        "greek": ["Ελληνικά", "αβγ", "ΣΊΣΥΦΟΣ", "λόγος"],
        "emoji": ["😀", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇫🇷", "🤷🏻‍♀️", "✋🏿"],
        "marks": ["e\u0301", "\u00e9", "a\u0308", "\u00e4", "n\u0303", "\u00f1", "A\u030a", "\u00c5",
                  "o\u0302\u0323", "\u1ed9", "\u1e9b\u0323", "q\u0307\u0323", "\u212b", "\uff21\uff22"],
        "latin": ["café", "naïve", "résumé", "Straße", "ſtate", "Ǆemal", "ﬁne", "İstanbul", "KELVIN", "\u212aelvin"],
        "space": ["\u00a0", "\u2003", "\u3000", "\u200b", "\u0085", "\u2028", "\u202f", "\t", "\x0b", "\x0c"],
    }
    pools = list(words.values())
    docs = []
    for _ in range(120):
        parts = []
        for _ in range(rng.randint(20, 80)):
            pool = rng.choice(pools)
            parts.append(rng.choice(pool))
            parts.append(rng.choice([" ", " ", " ", "", ", ", ". ", "\n", "  ", "'s ", "'LL ", "-"]))
        docs.append("".join(parts))
    # the same texts in NFD and NFC
    for d in docs[:40]:
        docs.append(unicodedata.normalize("NFD", d))
        docs.append(unicodedata.normalize("NFC", d))
    return docs


def whitespace_docs(rng):
    pieces = [" ", "  ", "    ", "\t", "\t\t", "\n", "\n\n", "\n\n\n\n\n", "\r\n", "\r\n\r\n", "   \n", " \t \n",
              "x", "word", "if (a) {", "}", "return 0;", "  trailing   ", "\r", "\u3000"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(10, 120))) for _ in range(120)]


def number_docs(rng):
    docs = []
    for _ in range(100):
        parts = []
        for _ in range(rng.randint(5, 40)):
            k = rng.random()
            if k < 0.3:
                parts.append(str(rng.randint(0, 10 ** rng.randint(1, 30))))
            elif k < 0.5:
                parts.append(f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 9)}f}")
            elif k < 0.6:
                parts.append("0x%x" % rng.getrandbits(64))
            elif k < 0.7:
                parts.append("١٢٣ ٤٥٦ ⅻ ½ ²³ ①②")
            else:
                parts.append(rng.choice(["v1.2.3", "1,000,000", "3.14e-10", "2024-01-31", "12:30:45", "+49 30 1234"]))
            parts.append(rng.choice([" ", "", ", ", "\n", "; "]))
        docs.append("".join(parts))
    return docs


def chat_docs(rng):
    """Text that spells the added tokens, around them and inside words."""
    marks = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>", "<think>", "<|im_",
             "<tool_call", "<<|im_end|>>", "<|im_start|><|im_end|>", " <L>", "\t<L> ", "<R>  \n", "<R>", " word ",
             "words", "word", "_word", "\u3000<L>", "word\u0301", "\u00e9word", "\u00b2word", "\u2167word"]
    words = ["user", "assistant", "\n", " ", "  ", "hello", "{\"name\": \"ls\"}", "x<tool_call>y", "é\u0301", "\t"]
    return ["".join(rng.choice(marks + words) for _ in range(rng.randint(10, 60))) for _ in range(150)]


def build_corpus():
    rng = random.Random(20240601)
    docs = []
    docs += files_text("/usr/lib/python3.11/*.py", 90_000, 3000)
    docs += files_text("/usr/include/*.h", 50_000, 2000)
    docs += files_text("/usr/share/common-licenses/*", 40_000, 2500)
    docs += unicode_docs(rng)
    docs += whitespace_docs(rng)
    docs += number_docs(rng)
    docs += chat_docs(rng)
    docs += ["", " ", "\n", "a", "'s", " 's", "'S'", "ﬁ", "\u0301", "e\u0301\u0301", "<|im_end|>", "<tool_call>"]
    return docs


# ---- the tokenizers ------------------------------------------------------------------------

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
         r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def train(style, docs):
    tok = Tokenizer(models.BPE())
    if style == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    elif style == "llama3":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True)])
    else:
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=256 + len(SPECIALS) + 3000, min_frequency=2, show_progress=False,
                                  special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    # non-special added tokens: raw-text ones as Qwen2's <tool_call>, and a normalized one
    tok.add_tokens([AddedToken("<tool_call>", special=False, normalized=False),
                    AddedToken("</tool_call>", special=False, normalized=False),
                    AddedToken("<think>", special=False, normalized=True)])
    spec = json.loads(tok.to_str())
    if style == "llama3":
        spec["model"]["ignore_merges"] = True
    if style == "qwen2":  # the other spelling of merges: "left right"
        spec["model"]["merges"] = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    text = json.dumps(spec, ensure_ascii=False, indent=2)
    return Tokenizer.from_str(text), text


def variants(base):
    """(name, tokenizer.json text, GGUF pre name or None) made from the GPT-2 style tokenizer."""
    def variant(edit):
        spec = json.loads(base)
        edit(spec)
        return json.dumps(spec, ensure_ascii=False)

    def pre(*stages):
        return lambda s: s.update(pre_tokenizer={"type": "Sequence", "pretokenizers": list(stages)})

    def split(pattern, behavior, invert=False):
        return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}

    def byte_level(prefix, use_regex):
        return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": use_regex}

    def added(spec):
        """ids as tokenizers numbers them: the vocabulary's for "word" and <|im_end|>, then the next ones"""
        vocab = spec["model"]["vocab"]
        n = max(list(vocab.values()) + [a["id"] for a in spec["added_tokens"]]) + 1
        for content, special, flags in [("<L>", False, {"lstrip": True}), ("<R>", True, {"rstrip": True}),
                                        ("word", False, {"single_word": True, "normalized": True}),
                                        ("<|im_end|>", True, {"lstrip": True, "rstrip": True})]:
            tok = {"id": vocab.get(content, n), "content": content, "single_word": False, "lstrip": False,
                   "rstrip": False, "normalized": False, "special": special}
            tok.update(flags)
            n += content not in vocab
            if content == "<|im_end|>":
                spec["added_tokens"] = [a for a in spec["added_tokens"] if a["content"] != content]
            spec["added_tokens"].append(tok)

    return [
        ("prefix_space", variant(pre(byte_level(True, True))), None),
        ("digits_smollm", variant(pre({"type": "Digits", "individual_digits": True}, byte_level(False, True))),
         "smollm"),
        ("digits_runs", variant(pre({"type": "Digits", "individual_digits": False}, byte_level(False, True))), None),
        ("split_behaviors", variant(pre(split({"String": ","}, "MergedWithPrevious"),
                                        split({"Regex": "[.;]"}, "MergedWithNext"),
                                        split({"Regex": "\\p{N}"}, "Contiguous"),
                                        split({"String": "  "}, "Removed"),
                                        split({"Regex": "\\p{L}+"}, "Isolated", invert=True),
                                        split({"Regex": "\\s+"}, "Isolated"),
                                        byte_level(False, False))), None),
        ("split_after_byte_level", variant(pre(byte_level(False, True), split({"Regex": "\u0120"}, "MergedWithNext"))),
         None),
        ("nfc_sequence", variant(lambda s: s.update(normalizer={"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Sequence", "normalizers": [{"type": "NFC"}]}]})), None),
        ("added_flags", variant(added), None),
    ]


def write_docs(path, docs):
    with open(path, "wb") as f:
        for d in docs:
            b = d if isinstance(d, bytes) else d.encode("utf-8")
            f.write(struct.pack("<I", len(b)))
            f.write(b)


def run_dump(tok_path, docs_path, out_path):
    r = subprocess.run([dump, tok_path, docs_path, out_path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"hf_tok_dump {tok_path}: exit {r.returncode}: {r.stderr.strip()[:2000]}")
        return None
    with open(out_path) as f:
        lines = [line for line in f.read().split("\n") if line]
    ids = [[int(x) for x in line.split()[1:]] for line in lines if line[0] in "ES"]
    texts = [bytes.fromhex(line[2:]) for line in lines if line[0] == "D"]
    return r.stdout.strip(), ids[0::2], ids[1::2], texts[0::2], texts[1::2]


def reference(tok, docs):
    """ids of encode with encode_special_tokens = True, then with the default."""
    tok.encode_special_tokens = True
    plain = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
    tok.encode_special_tokens = False
    specials = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
    return plain, specials


def check_decode(name, tok, docs, got, exact=True):
    """rlvr's decode of its ids gives the document back: exactly without a
    normalizer, else (or when not `exact`: a variant may drop text) what
    tokenizers' decode gives for the same ids."""
    _, plain, specials, text_plain, text_specials = got
    for mode, rows, texts, skip in (("encode", plain, text_plain, True),
                                    ("encode_specials", specials, text_specials, False)):
        for i, (ids, text) in enumerate(zip(rows, texts)):
            lossless = exact and tok.normalizer is None
            want = docs[i] if lossless else tok.decode(ids, skip_special_tokens=skip)
            if text != want.encode("utf-8"):
                fail(f"{name}: decode({mode}(x)) != x for document {i} {docs[i][:200]!r}: {text[:200]!r}")
                break


def compare(name, docs, got, want_plain, want_specials):
    """Counts ids compared; prints the first mismatch of each mode."""
    _, plain, specials = got[:3]
    n_ids = 0
    for mode, rows, want in (("encode", plain, want_plain), ("encode_specials", specials, want_specials)):
        if len(rows) != len(docs):
            fail(f"{name} {mode}: {len(rows)} results for {len(docs)} documents")
            continue
        for i, (g, w) in enumerate(zip(rows, want)):
            n_ids += len(w)
            if g != w:
                k = next((j for j in range(min(len(g), len(w))) if g[j] != w[j]), min(len(g), len(w)))
                fail(f"{name} {mode}: document {i} {docs[i][:300]!r}\n  first difference at id {k}\n"
                     f"  rlvr       {g[max(0, k - 5):k + 10]}\n  tokenizers {w[max(0, k - 5):k + 10]}")
                break
    return n_ids


def check_special_semantics(tok):
    """encode_special_tokens = True really makes tokenizers encode the text
    of special tokens as ordinary text, and leaves non-special added tokens
    matched: the behaviour rlvr_tokenizer_encode copies."""
    sid = tok.token_to_id("<|im_end|>")
    tid = tok.token_to_id("<tool_call>")
    tok.encode_special_tokens = True
    ids = tok.encode("a<|im_end|>b<tool_call>c", add_special_tokens=False).ids
    tok.encode_special_tokens = False
    if sid in ids or tid not in ids:
        fail(f"tokenizers with encode_special_tokens = True gives {ids} (special {sid}, <tool_call> {tid})")


# ---- GGUF ----------------------------------------------------------------------------------

GGUF_PRE = {"gpt2": "gpt-2", "llama3": "llama-bpe", "qwen2": "qwen2"}


def write_gguf(path, spec, pre, model="gpt2"):
    import gguf
    vocab = spec["model"]["vocab"]
    added = {a["id"]: a for a in spec["added_tokens"]}
    n = max(list(vocab.values()) + list(added)) + 1
    tokens, types = [""] * n, [gguf.TokenType.UNUSED] * n
    for s, i in vocab.items():
        tokens[i], types[i] = s, gguf.TokenType.NORMAL
    for i, a in added.items():
        tokens[i] = a["content"]
        types[i] = gguf.TokenType.CONTROL if a["special"] else gguf.TokenType.USER_DEFINED
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_fields(path):
    """The tokenizer keys of a GGUF file, as gguf-py reads them."""
    import gguf
    rd = gguf.GGUFReader(path)
    out = {}
    for name, f in rd.fields.items():
        if not name.startswith("tokenizer."):
            continue
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            out[name] = [bytes(f.parts[i]).decode("utf-8", "surrogateescape") if f.types[-1] ==
                         gguf.GGUFValueType.STRING else int(f.parts[i][0]) for i in f.data]
        elif f.types[0] == gguf.GGUFValueType.STRING:
            out[name] = bytes(f.parts[f.data[0]]).decode("utf-8")
        else:
            out[name] = int(f.parts[f.data[0]][0])
    return out


def rlvr_to_gguf(json_path, out, pre):
    """rlvr writes the tokenizer's GGUF keys (io/gguf_tokenizer.h): with a
    pre-tokenizer llama.cpp names, the same keys as the converter-like
    write_gguf; without one, a refusal naming the file and --no-tokenizer."""
    r = subprocess.run([dump, "--to-gguf", json_path, out], capture_output=True, text=True)
    name = os.path.basename(json_path)
    if pre is None:
        if r.returncode != 2 or json_path not in r.stderr or "--no-tokenizer" not in r.stderr:
            fail(f"{name}: rlvr wrote GGUF keys it cannot carry (exit {r.returncode}: {r.stderr.strip()})")
        else:
            print(f"{name}: no GGUF form, refused: {r.stderr.strip()}")
        return False
    if r.returncode != 0:
        fail(f"{name}: rlvr's GGUF tokenizer: exit {r.returncode}: {r.stderr.strip()}")
        return False
    ref = out + ".ref.gguf"
    with open(json_path) as f:
        write_gguf(ref, json.loads(f.read()), pre)
    got, want = gguf_fields(out), gguf_fields(ref)
    if got.pop("tokenizer.ggml.add_bos_token", None) != 0:
        fail(f"{name}: rlvr's GGUF tokenizer lacks add_bos_token false (the dump's spec has no chat format)")
    if got != want:
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        fail(f"{name}: rlvr's GGUF tokenizer keys differ from the converter's in {diff}")
        return False
    print(f"{name}: rlvr's GGUF tokenizer keys equal the converter's ({len(got['tokenizer.ggml.tokens'])} tokens, "
          f"pre {got['tokenizer.ggml.pre']})")
    return True


# ---- refused files -------------------------------------------------------------------------

def refused_cases(base):
    """(name, tokenizer.json text, words the message must hold)."""
    def variant(edit):
        spec = json.loads(base)
        edit(spec)
        return json.dumps(spec)

    def set_model_type(t):
        return lambda s: s["model"].update(type=t)

    cases = [
        ("wordpiece", variant(set_model_type("WordPiece")), ["model.type", "WordPiece", "byte-level BPE"]),
        ("unigram", variant(set_model_type("Unigram")), ["model.type", "Unigram", "byte-level BPE"]),
        ("wordlevel", variant(set_model_type("WordLevel")), ["model.type", "WordLevel"]),
        ("metaspace", variant(lambda s: s.update(pre_tokenizer={"type": "Metaspace", "replacement": "\u2581"})),
         ["pre_tokenizer", "Metaspace"]),
        ("byte_fallback", variant(lambda s: s["model"].update(byte_fallback=True)), ["byte_fallback"]),
        ("nfkc", variant(lambda s: s.update(normalizer={"type": "NFKC"})), ["normalizer", "NFKC"]),
        ("decoder", variant(lambda s: s.update(decoder={"type": "WordPiece"})), ["decoder", "WordPiece"]),
        ("no_bytelevel", variant(lambda s: s.update(pre_tokenizer={"type": "Split", "pattern": {"String": " "},
                                                                   "behavior": "Isolated", "invert": False})),
         ["ByteLevel"]),
        ("bad_merge", variant(lambda s: s["model"]["merges"].insert(0, "nosuchtoken x")),
         ["model.merges[0]", "nosuchtoken"]),
        ("bad_merge_form", variant(lambda s: s["model"]["merges"].insert(3, "a b c")), ["model.merges[3]"]),
        ("truncated", base[:len(base) // 2], ["not valid JSON"]),
        ("id_range", variant(lambda s: s["model"]["vocab"].update({"zzz_big": 1 << 30})),
         ["model.vocab", "out of range"]),
        ("id_negative", variant(lambda s: s["added_tokens"][0].update(id=-5)), ["added_tokens", "out of range"]),
        ("id_twice", variant(lambda s: s["model"]["vocab"].update({"zzz_dup": 7})), ["model.vocab", "id 7"]),
        ("added_twice", variant(lambda s: s["added_tokens"].append(dict(s["added_tokens"][-1], content="<x>"))),
         ["added_tokens", "two tokens"]),
        ("added_renumbered", variant(lambda s: s["added_tokens"][-1].update(id=s["added_tokens"][-1]["id"] + 5)),
         ["added_tokens[5]", "tokenizers numbers it"]),
        ("bad_regex", variant(lambda s: s["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": "(["})),
         ["Regex", "does not compile"]),
    ]
    return cases


def check_refused_gguf(base):
    """A SentencePiece GGUF and an unknown pre-tokenizer, refused naming the key."""
    for name, pre, model, words in (("spm", "default", "llama", ["tokenizer.ggml.model", "\"llama\"", "gpt2"]),
                                    ("pre", "deepseek-llm", "gpt2", ["tokenizer.ggml.pre", "deepseek-llm"])):
        path = os.path.join(work, f"bad_{name}.gguf")
        write_gguf(path, json.loads(base), pre, model)
        r = subprocess.run([dump, path], capture_output=True, text=True)
        msg = r.stderr.strip()
        if r.returncode != 2 or path not in msg or not all(w in msg for w in words):
            fail(f"{name}.gguf: exit {r.returncode}, message {msg!r} should name {path} and hold {words}")
        else:
            print(f"refused {name}.gguf: {msg}")


def check_refused(base):
    for name, text, words in refused_cases(base):
        path = os.path.join(work, f"bad_{name}.json")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([dump, path], capture_output=True, text=True)
        msg = r.stderr.strip()
        if r.returncode != 2:
            fail(f"{name}: accepted (exit {r.returncode}): {r.stdout.strip()}")
        elif path not in msg or not all(w in msg for w in words):
            fail(f"{name}: message {msg!r} should name {path} and hold {words}")
        else:
            print(f"refused {name}: {msg}")


def check_invalid_utf8(json_path):
    """rlvr encodes any bytes: invalid UTF-8 (which tokenizers cannot take)
    decodes back unchanged in both modes."""
    docs = [b"\x80", b"a\xffb", b"caf\xc3", b"\xe2\x82 euro \xe2\x82\xac", b"\xc3\xa9\xcc",
            b"<|im_end|>\xfe<tool_call>\xc0\xaf", b"\xf0\x9f\x98 \xed\xa0\x80 x\x00y", bytes(range(256))]
    path = os.path.join(work, "invalid.bin")
    write_docs(path, docs)
    got = run_dump(json_path, path, path + ".ids")
    if got:
        for i, d in enumerate(docs):
            if got[3][i] != d or got[4][i] != d:
                fail(f"invalid UTF-8: decode(encode({d!r})) gave {got[3][i]!r} / {got[4][i]!r}")
        print(f"invalid UTF-8: {len(docs)} documents decode back")


def check_variants(base, docs, docs_path):
    total = 0
    for name, text, gguf_pre in variants(base):
        tok = Tokenizer.from_str(text)
        path = os.path.join(work, f"{name}.json")
        with open(path, "w") as f:
            f.write(text)
        want_plain, want_specials = reference(tok, docs)
        paths = [path]
        if gguf_pre:
            paths.append(os.path.join(work, f"{name}.gguf"))
            write_gguf(paths[-1], json.loads(text), gguf_pre)
        if rlvr_to_gguf(path, os.path.join(work, f"{name}.rlvr.gguf"), gguf_pre):
            paths.append(os.path.join(work, f"{name}.rlvr.gguf"))
        for p in paths:
            got = run_dump(p, docs_path, p + ".ids")
            if got:
                check_decode(name, tok, docs, got, exact=False)
                n = compare(os.path.basename(p), docs, got, want_plain, want_specials)
                total += n
                print(f"{os.path.basename(p)}: {n} ids equal")
    return total


def main():
    docs = build_corpus()
    size = sum(len(d.encode("utf-8")) for d in docs)
    print(f"corpus: {len(docs)} documents, {size} bytes")
    if size < 200_000:
        fail(f"the corpus has only {size} bytes (at least 200000 wanted)")
    docs_path = os.path.join(work, "docs.bin")
    write_docs(docs_path, docs)
    total_ids = 0
    llama3_text = gpt2_text = None
    for style in ("gpt2", "llama3", "qwen2"):
        tok, text = train(style, docs)
        if style == "llama3":
            llama3_text = text
        if style == "gpt2":
            gpt2_text = text
        check_special_semantics(tok)
        json_path = os.path.join(work, f"{style}.json")
        with open(json_path, "w") as f:
            f.write(text)
        if style != "qwen2":  # NFC would change the valid runs around the invalid bytes
            check_invalid_utf8(json_path)
        want_plain, want_specials = reference(tok, docs)
        got = run_dump(json_path, docs_path, os.path.join(work, f"{style}.ids"))
        if got:
            check_decode(style, tok, docs, got)
            n = compare(style, docs, got, want_plain, want_specials)
            total_ids += n
            print(f"{style}: {got[0]}: {len(docs)} documents, {n} ids equal to tokenizers' in both modes")
        gguf_path = os.path.join(work, f"{style}.gguf")
        write_gguf(gguf_path, json.loads(text), GGUF_PRE[style])
        got = run_dump(gguf_path, docs_path, os.path.join(work, f"{style}.gguf.ids"))
        if got:
            check_decode(style + " (gguf)", tok, docs, got)
            n = compare(style + " (gguf)", docs, got, want_plain, want_specials)
            total_ids += n
            print(f"{style} gguf: {got[0]}: {n} ids equal")
        rlvr_gguf = os.path.join(work, f"{style}.rlvr.gguf")
        if rlvr_to_gguf(json_path, rlvr_gguf, GGUF_PRE[style]):
            got = run_dump(rlvr_gguf, docs_path, rlvr_gguf + ".ids")
            if got:
                n = compare(style + " (rlvr's gguf)", docs, got, want_plain, want_specials)
                total_ids += n
                print(f"{style} gguf written by rlvr: {n} ids equal")
    total_ids += check_variants(gpt2_text, docs, docs_path)
    check_refused(llama3_text)
    check_refused_gguf(llama3_text)
    print(f"compared {total_ids} ids")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    print("ok")


main()
