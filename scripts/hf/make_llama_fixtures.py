#!/usr/bin/env python3
"""Tiny Llama-family Hugging Face folders (model_type llama, qwen2, mistral) with their expected
logits and token ids, for tests/checkpoint/llama_hf_checkpoint_test.cpp (written to
tests/checkpoint/fixtures/hf_llama/).

Independent of llmprof and of transformers: numpy and the standard library only, written from the
equations of LlamaForCausalLM / Qwen2ForCausalLM / MistralForCausalLM:
  RMSNorm      y = w * x / sqrt(mean(x^2) + eps)
  RoPE         rotate-half: x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1], with
               inv_freq_i = rope_theta^(-2i/head_dim), and Llama 3's rope_scaling of inv_freq
               (factor, low_freq_factor, high_freq_factor, original_max_position_embeddings)
  attention    causal softmax(q k^T / sqrt(head_dim)) v; grouped-query: query head h reads
               key/value head h // (num_attention_heads / num_key_value_heads)
  MLP          down(silu(gate(x)) * up(x)) (SwiGLU)
  head         lm_head.weight, or the token embedding when tie_word_embeddings
Qwen2 adds biases to q_proj, k_proj and v_proj. Logits are computed in float64 from the stored
weights (float32, or bfloat16 for qwen2_tiny).

model.safetensors is written by hand from the format: an 8-byte little-endian header length, the
JSON header (padded with spaces to 8 bytes), raw little-endian data.

tokenizer.json (the tokenizers library's format) is a small vocabulary trained here by BPE on a
tiny corpus: byte-level BPE with Llama 3's Split regex (llama_tiny, merges as "a b" strings,
BOS added by a TemplateProcessing post-processor), the same with Qwen2's regex and an NFC
normalizer (qwen2_tiny, merges as ["a", "b"] pairs, no BOS), and Metaspace with byte_fallback
(mistral_tiny, as Llama 2 and Mistral). The expected ids of hard strings come from this script's
own tokenizer: the two Split regexes hand-written as scanners over unicodedata categories (\\p{L}
is a category starting with L, \\p{N} with N, \\s is str.isspace), then byte-level BPE or
Metaspace + BPE with byte fallback; added tokens are split out first.

Run: python3 scripts/hf/make_llama_fixtures.py [--out DIR] (python3-numpy; deterministic: the
same bytes every run). --out defaults to the committed tests/checkpoint/fixtures/hf_llama. On a host
with transformers, scripts/hf/check_llama_transformers.py compares these folders with it.
"""
import argparse
import json
import os
import struct
import sys
import unicodedata

import numpy as np

COMMITTED = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                          "tests", "checkpoint", "fixtures", "hf_llama"))

# ---------------------------------------------------------------------------------------------
# safetensors


def bf16_round(a):
    """float32 array -> the nearest bfloat16 values (round to nearest even), as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return (u.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 array); dtype "F32" or "BF16" (values already rounded)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors:
        a = np.ascontiguousarray(a, dtype=np.float32)
        if dtype == "F32":
            blob = a.astype("<f4").tobytes()
        else:
            blob = (a.view(np.uint32) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# ---------------------------------------------------------------------------------------------
# the model, from the equations


def rms_norm(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def inv_freq(cfg):
    hd = cfg["head_dim"]
    f = 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    s = cfg.get("rope_scaling")
    if not s:
        return f
    # Llama 3: long wavelengths divided by factor, short ones kept, the band between blended.
    factor, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    wavelen = 2 * np.pi / f
    low_wavelen, high_wavelen = old / lo, old / hi
    out = np.where(wavelen > low_wavelen, f / factor, f)
    smooth = (old / wavelen - lo) / (hi - lo)
    blended = (1 - smooth) * out / factor + smooth * out
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return np.where(medium, blended, out)


def rope(x, pos, freqs):
    """x (T, H, D); rotate-half with cos/sin of pos * freqs, repeated for the two halves."""
    ang = np.outer(pos, freqs)
    cos = np.cos(np.concatenate([ang, ang], -1))[:, None, :]
    sin = np.sin(np.concatenate([ang, ang], -1))[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def forward(cfg, w, ids):
    """Logits (T, vocab) in float64 for one sequence."""
    W = {k: v.astype(np.float64) for k, v in w.items()}
    T, nh, nkv, hd = len(ids), cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    x = W["model.embed_tokens.weight"][ids]
    pos = np.arange(T, dtype=np.float64)
    freqs = inv_freq(cfg)
    causal = np.tril(np.ones((T, T), dtype=bool))
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        def lin(name, inp):
            y = inp @ W[p + name + ".weight"].T
            return y + W[p + name + ".bias"] if (p + name + ".bias") in W else y
        q = lin("self_attn.q_proj", h).reshape(T, nh, hd)
        k = lin("self_attn.k_proj", h).reshape(T, nkv, hd)
        v = lin("self_attn.v_proj", h).reshape(T, nkv, hd)
        q, k = rope(q, pos, freqs), rope(k, pos, freqs)
        heads = []
        for hq in range(nh):
            g = hq // (nh // nkv)
            s = q[:, hq, :] @ k[:, g, :].T / np.sqrt(hd)
            s = np.where(causal, s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            heads.append((s / s.sum(-1, keepdims=True)) @ v[:, g, :])
        x = x + lin("self_attn.o_proj", np.concatenate(heads, -1))
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = lin("mlp.gate_proj", h)
        x = x + lin("mlp.down_proj", gate / (1 + np.exp(-gate)) * lin("mlp.up_proj", h))
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return x @ head.T


def make_weights(cfg, seed, bf16):
    rng = np.random.default_rng(seed)
    C, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    out = []

    def add(name, shape, scale, center=0.0):
        a = (center + scale * rng.standard_normal(shape)).astype(np.float32)
        out.append((name, bf16_round(a) if bf16 else a))
    add("model.embed_tokens.weight", (V, C), 0.5)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        add(p + "input_layernorm.weight", (C,), 0.2, 1.0)
        add(p + "self_attn.q_proj.weight", (nh * hd, C), 0.4)
        add(p + "self_attn.k_proj.weight", (nkv * hd, C), 0.4)
        add(p + "self_attn.v_proj.weight", (nkv * hd, C), 0.4)
        if cfg["qkv_bias"]:
            add(p + "self_attn.q_proj.bias", (nh * hd,), 0.3)
            add(p + "self_attn.k_proj.bias", (nkv * hd,), 0.3)
            add(p + "self_attn.v_proj.bias", (nkv * hd,), 0.3)
        add(p + "self_attn.o_proj.weight", (C, nh * hd), 0.3)
        add(p + "post_attention_layernorm.weight", (C,), 0.2, 1.0)
        add(p + "mlp.gate_proj.weight", (F, C), 0.4)
        add(p + "mlp.up_proj.weight", (F, C), 0.4)
        add(p + "mlp.down_proj.weight", (C, F), 0.3)
    add("model.norm.weight", (C,), 0.2, 1.0)
    if not cfg["tie_word_embeddings"]:
        add("lm_head.weight", (V, C), 0.5)
    return out


# ---------------------------------------------------------------------------------------------
# tokenizers: the two Split regexes as scanners, byte-level BPE, Metaspace + byte fallback

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def is_letter(c):
    return unicodedata.category(c).startswith("L")


def is_number(c):
    return unicodedata.category(c).startswith("N")


def is_other(c):  # [^\s\p{L}\p{N}]
    return not c.isspace() and not is_letter(c) and not is_number(c)


def split_regex(text, max_digits):
    """The pieces LLAMA3_REGEX (max_digits 3) or QWEN2_REGEX (max_digits 1) finds, in order."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        end = None
        if c == "'":
            for s in ("s", "t", "re", "ve", "m", "ll", "d"):
                if text[i + 1:i + 1 + len(s)].lower() == s:
                    end = i + 1 + len(s)
                    break
        if end is None:
            j = i + 1 if (c not in "\r\n" and not is_letter(c) and not is_number(c)) else i
            if j < n and is_letter(text[j]):
                while j < n and is_letter(text[j]):
                    j += 1
                end = j
        if end is None and is_number(c):
            j = i
            while j < n and j - i < max_digits and is_number(text[j]):
                j += 1
            end = j
        if end is None:
            j = i + 1 if (c == " " and i + 1 < n and is_other(text[i + 1])) else i
            if j < n and is_other(text[j]):
                while j < n and is_other(text[j]):
                    j += 1
                while j < n and text[j] in "\r\n":
                    j += 1
                end = j
        if end is None:  # whitespace: \s*[\r\n]+ | \s+(?!\S) | \s+
            j = i
            while j < n and text[j].isspace():
                j += 1
            last_nl = max((k for k in range(i, j) if text[k] in "\r\n"), default=None)
            if last_nl is not None:
                end = last_nl + 1
            elif j == n or j - i == 1:
                end = j
            else:
                end = j - 1
        out.append(text[i:end])
        i = end
    return out


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (ByteLevel)."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHAR = bytes_to_unicode()


def bpe(symbols, ranks):
    """Merges the lowest-ranked adjacent pair (leftmost first) until none is ranked."""
    symbols = list(symbols)
    while len(symbols) > 1:
        best = None
        for k in range(len(symbols) - 1):
            r = ranks.get((symbols[k], symbols[k + 1]))
            if r is not None and (best is None or r < best[0]):
                best = (r, k)
        if best is None:
            break
        k = best[1]
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    return symbols


def train_merges(words, count, initial):
    """BPE training: words (list of symbol tuples); the most frequent pair first, ties by the pair."""
    vocab = set(initial)
    merges = []
    words = [list(w) for w in words]
    for _ in range(count):
        pairs = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
        if not pairs:
            break
        best = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        merges.append(best)
        vocab.add(best[0] + best[1])
        for w in words:
            k = 0
            while k < len(w) - 1:
                if (w[k], w[k + 1]) == best:
                    w[k:k + 2] = [best[0] + best[1]]
                k += 1
    return merges


CORPUS = ("The quick brown fox jumps over the lazy dog. I'm sure they'll say we've done it; "
          "don't they? The year 2024 had 365 days, 12 months and 52 weeks. Hello, hello world! "
          "the theory of the thing is that there are three thousand things.\n\n"
          "Another paragraph:   spaces, tabs\tand newlines.\n")

HARD_STRINGS = [
    "Hello world",
    "I'm sure they'll say WE'VE done it, don't you?",
    "digits 1234567 and 3.14159",
    "日本語のテキスト",
    "emoji 🙂👍🏽 ok",
    "trailing spaces   ",
    "a\n\nb\n\n",
    "  leading and   inner  spaces",
    "tab\tseparated\tvalues",
    "Ünïcödé café naïve",
]


def split_added(text, added):
    """Splits text on the added tokens' contents (longest first): [(piece, id or None)]."""
    out, i, start = [], 0, 0
    contents = sorted(added, key=lambda kv: -len(kv[0]))
    while i < len(text):
        hit = next(((c, t) for c, t in contents if text.startswith(c, i)), None)
        if hit:
            if start < i:
                out.append((text[start:i], None))
            out.append((hit[0], hit[1]))
            i += len(hit[0])
            start = i
        else:
            i += 1
    if start < len(text):
        out.append((text[start:], None))
    return out


class ByteLevelTokenizer:
    def __init__(self, max_digits, regex, nfc, bos, merges_as_pairs, ignore_merges):
        self.max_digits, self.regex, self.nfc = max_digits, regex, nfc
        words = [tuple(BYTE_CHAR[b] for b in p.encode()) for p in split_regex(CORPUS, max_digits)]
        base = [BYTE_CHAR[b] for b in range(256)]
        self.merges = train_merges(words, 48, base)
        self.vocab = {c: i for i, c in enumerate(base)}
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        specials = ["<|begin_of_text|>", "<|end_of_text|>"] if bos else ["<|endoftext|>",
                                                                         "<|im_end|>"]
        self.added = [(s, len(self.vocab) + k) for k, s in enumerate(specials)]
        self.bos = self.added[0][1] if bos else None
        self.merges_as_pairs, self.ignore_merges = merges_as_pairs, ignore_merges

    def vocab_size(self):
        return len(self.vocab) + len(self.added)

    def encode(self, text):
        ids = [] if self.bos is None else [self.bos]
        for piece, tid in split_added(text, self.added):
            if tid is not None:
                ids.append(tid)
                continue
            if self.nfc:
                piece = unicodedata.normalize("NFC", piece)
            for word in split_regex(piece, self.max_digits):
                chars = "".join(BYTE_CHAR[b] for b in word.encode())
                if self.ignore_merges and chars in self.vocab:
                    ids.append(self.vocab[chars])
                    continue
                ids.extend(self.vocab[s] for s in bpe(chars, self.ranks))
        return ids

    def tokenizer_json(self):
        split = {"type": "Split", "pattern": {"Regex": self.regex}, "behavior": "Isolated",
                 "invert": False}
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                      "use_regex": False}
        if self.bos is not None:
            bos = self.added[0][0]
            post = {"type": "TemplateProcessing",
                    "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                               {"Sequence": {"id": "A", "type_id": 0}}],
                    "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                             {"Sequence": {"id": "A", "type_id": 0}},
                             {"SpecialToken": {"id": bos, "type_id": 1}},
                             {"Sequence": {"id": "B", "type_id": 1}}],
                    "special_tokens": {bos: {"id": bos, "ids": [self.bos], "tokens": [bos]}}}
        else:
            post = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False}
        merges = [[a, b] for a, b in self.merges] if self.merges_as_pairs else \
            ["%s %s" % m for m in self.merges]
        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added_token(c, i) for c, i in self.added],
            "normalizer": {"type": "NFC"} if self.nfc else None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [split, byte_level]},
            "post_processor": post,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": self.ignore_merges, "vocab": self.vocab, "merges": merges},
        }


def added_token(content, tid):
    return {"id": tid, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


class MetaspaceTokenizer:
    """Llama 2 / Mistral: Metaspace (replacement U+2581, prepend_scheme first, no split) and BPE
    with byte_fallback: a character outside the vocabulary becomes its UTF-8 bytes <0xXX>."""
    SPACE = "\u2581"

    def __init__(self):
        specials = ["<unk>", "<s>", "</s>"]
        self.vocab = {s: i for i, s in enumerate(specials)}
        for b in range(256):
            self.vocab["<0x%02X>" % b] = len(self.vocab)
        words = [tuple(self.SPACE + w) for w in CORPUS.split()]
        chars = sorted({c for w in words for c in w})
        for c in chars:
            self.vocab[c] = len(self.vocab)
        self.merges = train_merges(words, 48, chars)
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self.added = [(s, i) for i, s in enumerate(specials)]

    def vocab_size(self):
        return len(self.vocab)

    def encode(self, text):
        ids = [self.vocab["<s>"]]
        for k, (piece, tid) in enumerate(split_added(text, self.added)):
            if tid is not None:
                ids.append(tid)
                continue
            piece = piece.replace(" ", self.SPACE)
            if k == 0 and not piece.startswith(self.SPACE):
                piece = self.SPACE + piece
            symbols = []
            for c in piece:  # unknown characters fall back to their bytes, which never merge
                symbols.extend([c] if c in self.vocab else
                               ["<0x%02X>" % b for b in c.encode()])
            ids.extend(self.vocab[s] for s in bpe(symbols, self.ranks))
        return ids

    def tokenizer_json(self):
        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [dict(added_token(c, i), special=True) for c, i in self.added],
            "normalizer": None,
            "pre_tokenizer": {"type": "Metaspace", "replacement": self.SPACE,
                              "prepend_scheme": "first", "split": False},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<s>", "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": self.SPACE}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                      "vocab": self.vocab, "merges": ["%s %s" % m for m in self.merges]},
        }


# ---------------------------------------------------------------------------------------------
# the folders

FOLDERS = {
    # Llama 3 style: GQA 4/2, head_dim 8 (not hidden/heads), llama3 rope_scaling, untied head.
    "llama_tiny": dict(model_type="llama", arch="LlamaForCausalLM", hidden_size=16,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                       intermediate_size=24, num_hidden_layers=2, max_position_embeddings=64,
                       rms_norm_eps=1e-5, rope_theta=500000.0,
                       rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                         high_freq_factor=4.0,
                                         original_max_position_embeddings=256),
                       tie_word_embeddings=False, qkv_bias=False, bf16=False, seed=1,
                       tokenizer="llama3"),
    # Qwen2.5 style: q/k/v biases, tied embeddings (no lm_head.weight), bf16 weights, a sliding
    # window that is switched off (use_sliding_window false), NFC + Qwen2's regex.
    "qwen2_tiny": dict(model_type="qwen2", arch="Qwen2ForCausalLM", hidden_size=16,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=4,
                       intermediate_size=32, num_hidden_layers=2, max_position_embeddings=64,
                       rms_norm_eps=1e-6, rope_theta=1000000.0, rope_scaling=None,
                       tie_word_embeddings=True, qkv_bias=True, bf16=True, seed=2,
                       sliding_window=4, use_sliding_window=False, tokenizer="qwen2"),
    # Mistral style: sliding window 32 (at least the block the tests use), Metaspace + byte
    # fallback tokenizer, head_dim 8 given explicitly.
    "mistral_tiny": dict(model_type="mistral", arch="MistralForCausalLM", hidden_size=16,
                         num_attention_heads=4, num_key_value_heads=1, head_dim=8,
                         intermediate_size=24, num_hidden_layers=2, max_position_embeddings=64,
                         rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                         tie_word_embeddings=False, qkv_bias=False, bf16=False, seed=3,
                         sliding_window=32, tokenizer="metaspace"),
}

IDS_TEXT = "The quick brown fox jumps over 12 lazy dogs."


def make_tokenizer(kind):
    if kind == "llama3":
        return ByteLevelTokenizer(3, LLAMA3_REGEX, nfc=False, bos=True, merges_as_pairs=False,
                                  ignore_merges=True)
    if kind == "qwen2":
        return ByteLevelTokenizer(1, QWEN2_REGEX, nfc=True, bos=False, merges_as_pairs=True,
                                  ignore_merges=False)
    return MetaspaceTokenizer()


def config_json(spec, tok):
    c = {
        "architectures": [spec["arch"]], "model_type": spec["model_type"],
        "hidden_size": spec["hidden_size"], "intermediate_size": spec["intermediate_size"],
        "num_attention_heads": spec["num_attention_heads"],
        "num_key_value_heads": spec["num_key_value_heads"],
        "num_hidden_layers": spec["num_hidden_layers"],
        "max_position_embeddings": spec["max_position_embeddings"],
        "rms_norm_eps": spec["rms_norm_eps"], "rope_theta": spec["rope_theta"],
        "rope_scaling": spec["rope_scaling"], "hidden_act": "silu",
        "tie_word_embeddings": spec["tie_word_embeddings"], "vocab_size": tok.vocab_size(),
        "torch_dtype": "bfloat16" if spec["bf16"] else "float32",
        "attention_dropout": 0.0, "initializer_range": 0.02, "use_cache": True,
    }
    if spec["model_type"] != "qwen2":  # Qwen2Config has no head_dim: hidden_size / heads
        c["head_dim"] = spec["head_dim"]
    if spec["model_type"] == "llama":
        c.update(attention_bias=False, mlp_bias=False, pretraining_tp=1)
    if "sliding_window" in spec:
        c["sliding_window"] = spec["sliding_window"]
    if "use_sliding_window" in spec:
        c["use_sliding_window"] = spec["use_sliding_window"]
    if isinstance(tok, MetaspaceTokenizer):
        c.update(bos_token_id=1, eos_token_id=2)
    elif tok.bos is not None:
        c.update(bos_token_id=tok.added[0][1], eos_token_id=tok.added[1][1])
    else:
        c.update(bos_token_id=None, eos_token_id=tok.added[0][1])
    return c


def tokenizer_config_json(spec, tok):
    if isinstance(tok, MetaspaceTokenizer):
        bos, eos = "<s>", "</s>"
    else:
        bos, eos = (tok.added[0][0] if tok.bos is not None else None), tok.added[-1][0]
    return {"bos_token": bos, "eos_token": eos, "model_max_length": spec["max_position_embeddings"],
            "tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False}


def dump(path, obj, indent=2):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def write_folder(out, name, spec):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    tok = make_tokenizer(spec["tokenizer"])
    cfg = config_json(spec, tok)
    model = dict(cfg, head_dim=spec["head_dim"], qkv_bias=spec["qkv_bias"])
    weights = make_weights(model, spec["seed"], spec["bf16"])
    write_safetensors(os.path.join(folder, "model.safetensors"), weights,
                      "BF16" if spec["bf16"] else "F32")
    dump(os.path.join(folder, "config.json"), cfg)
    dump(os.path.join(folder, "tokenizer.json"), tok.tokenizer_json())
    dump(os.path.join(folder, "tokenizer_config.json"), tokenizer_config_json(spec, tok))
    ids = tok.encode(IDS_TEXT)[:8]
    logits = forward(model, dict(weights), np.array(ids))
    expected = {
        "ids": ids,
        "logits": [[float("%.7g" % v) for v in row] for row in logits],
        "texts": [{"text": t, "ids": tok.encode(t)} for t in HARD_STRINGS + [
            "hi" + tok.added[-1][0] + "there"]],
    }
    dump(os.path.join(folder, "expected.json"), expected, indent=None)
    print("wrote %s (vocab %d, %d tensors)" % (folder, tok.vocab_size(), len(weights)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", metavar="DIR", default=COMMITTED,
                    help="where the folders go (default: %(default)s)")
    args = ap.parse_args()
    for name, spec in FOLDERS.items():
        write_folder(args.out, name, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
