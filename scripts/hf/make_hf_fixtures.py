#!/usr/bin/env python3
"""Tiny Hugging Face checkpoint folders with their expected logits and token ids, for
tests/checkpoint/hf_checkpoint_test.cpp (written to tests/checkpoint/fixtures/hf/).

Independent of llmprof: the weights are written with Python's struct in the layout transformers'
save_pretrained uses (GPT2 as the hub's gpt2 model.safetensors: no "transformer." prefix, the
causal-mask buffers h.N.attn.bias included; DistilBertForMaskedLM: "distilbert." prefix and the
tied vocab_projector.weight), and the logits are computed here in plain Python (float64) from
transformers' modeling_gpt2.py / modeling_distilbert.py equations: GPT-2's Conv1D is x @ W + b with
W stored (in, out), gelu_new is the tanh approximation, LayerNorm eps 1e-5 (GPT-2) and 1e-12
(DistilBERT), masked scores are filled with float32's lowest value.

The token ids come from references written here too: OpenAI's GPT-2 BPE (encoder.py's bpe(), on
ASCII text, where its \\p{L}/\\p{N} pattern equals the ASCII classes used below) and BERT's basic
tokenizer + greedy longest-match WordPiece (tokenization.py) on ASCII text.

Run: python3 scripts/hf/make_hf_fixtures.py [--out DIR] (stdlib only; deterministic: the same
bytes every run). --out defaults to the committed tests/checkpoint/fixtures/hf, since rewriting those is
what the script is for; give another folder to compare or inspect. On a host with transformers, the
folders also load with GPT2LMHeadModel / DistilBertForMaskedLM.from_pretrained.
"""
import argparse
import json
import math
import os
import random
import struct

import re
import sys

# The fixtures tests/checkpoint/hf_checkpoint_test.cpp reads (the default of --out).
COMMITTED = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                          "tests", "checkpoint", "fixtures", "hf"))


def write_safetensors(path, tensors):
    """tensors: list of (name, shape, flat float list), stored F32 in the given order."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shape, values in tensors:
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


class Params:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.tensors = []  # (name, shape, values)

    def add(self, name, shape, std=0.2, const=None, mean=0.0):
        n = 1
        for s in shape:
            n *= s
        vals = [f32(const if const is not None else self.rng.gauss(mean, std)) for _ in range(n)]
        self.tensors.append((name, shape, vals))
        return matrix(vals, shape)


def matrix(vals, shape):
    if len(shape) == 1:
        return list(vals)
    rows, cols = shape
    return [vals[r * cols:(r + 1) * cols] for r in range(rows)]


def matmul(a, b):  # (n,k) x (k,m)
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def transpose(m):
    return [list(r) for r in zip(*m)]


def add_bias(x, b):
    return [[v + b[j] for j, v in enumerate(row)] for row in x]


def layer_norm(x, w, b, eps):
    out = []
    for row in x:
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        out.append([(v - mean) / math.sqrt(var + eps) * w[j] + b[j] for j, v in enumerate(row)])
    return out


def softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def gelu_new(x):
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu(x):
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def attention(q, k, v, n_head, allowed):
    """q, k, v: (T, C); allowed(i, j): query i may see key j. Returns (T, C)."""
    T, C = len(q), len(q[0])
    hd = C // n_head
    out = [[0.0] * C for _ in range(T)]
    lowest = -3.4028234663852886e38
    for h in range(n_head):
        sl = slice(h * hd, (h + 1) * hd)
        for i in range(T):
            scores = [sum(a * b for a, b in zip(q[i][sl], k[j][sl])) / math.sqrt(hd)
                      if allowed(i, j) else lowest for j in range(T)]
            p = softmax(scores)
            for d in range(hd):
                out[i][h * hd + d] = sum(p[j] * v[j][h * hd + d] for j in range(T))
    return out


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def gpt2_bpe_ids(text, vocab, merges):
    """OpenAI encoder.py: pre-tokenize, map bytes to unicode, merge by rank, look up ids."""
    b2u = bytes_to_unicode()
    ranks = {m: i for i, m in enumerate(merges)}
    pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
    ids = []
    for piece in pat.findall(text):
        word = [b2u[b] for b in piece.encode("utf-8")]
        while len(word) > 1:
            pairs = [(word[i], word[i + 1]) for i in range(len(word) - 1)]
            best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
            if best not in ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        ids.extend(vocab[t] for t in word)
    return ids


def wordpiece_ids(text, tokens):
    """BERT's basic tokenizer (lower case, split on white space and punctuation) + WordPiece."""
    ids_of = {t: i for i, t in enumerate(tokens)}
    words = []
    for w in text.lower().split():
        cur = ""
        for ch in w:
            if not ch.isalnum():
                if cur:
                    words.append(cur)
                words.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            words.append(cur)
    ids = []
    for w in words:
        start, pieces = 0, []
        while start < len(w):
            end = len(w)
            while end > start:
                sub = ("##" if start > 0 else "") + w[start:end]
                if sub in ids_of:
                    pieces.append(ids_of[sub])
                    break
                end -= 1
            if end == start:
                pieces = [ids_of["[UNK]"]]
                break
            start = end
        ids.extend(pieces)
    return ids


def gpt2_fixture(root):
    out = os.path.join(root, "gpt2_tiny")
    os.makedirs(out, exist_ok=True)
    L, H, C, P = 2, 2, 8, 16
    byte_chars = [bytes_to_unicode()[b] for b in range(256)]
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w")]
    vocab = {c: i for i, c in enumerate(byte_chars)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    V = len(vocab)
    with open(os.path.join(out, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    with open(os.path.join(out, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n" + "".join("%s %s\n" % m for m in merges))
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": L,
              "n_head": H, "n_embd": C, "n_positions": P, "n_ctx": P, "vocab_size": V,
              "layer_norm_epsilon": 1e-05, "activation_function": "gelu_new",
              "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
              "bos_token_id": V - 1, "eos_token_id": V - 1, "initializer_range": 0.02}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    p = Params(1)
    wte = p.add("wte.weight", [V, C])
    wpe = p.add("wpe.weight", [P, C])
    layers = []
    for i in range(L):
        t = "h.%d." % i
        lay = {
            "ln_1.w": p.add(t + "ln_1.weight", [C], std=0.1, mean=1.0),
            "ln_1.b": p.add(t + "ln_1.bias", [C]),
            "c_attn.w": p.add(t + "attn.c_attn.weight", [C, 3 * C]),
            "c_attn.b": p.add(t + "attn.c_attn.bias", [3 * C]),
            "c_proj.w": p.add(t + "attn.c_proj.weight", [C, C]),
            "c_proj.b": p.add(t + "attn.c_proj.bias", [C]),
            "ln_2.w": p.add(t + "ln_2.weight", [C], std=0.1, mean=1.0),
            "ln_2.b": p.add(t + "ln_2.bias", [C]),
            "fc.w": p.add(t + "mlp.c_fc.weight", [C, 4 * C]),
            "fc.b": p.add(t + "mlp.c_fc.bias", [4 * C]),
            "proj.w": p.add(t + "mlp.c_proj.weight", [4 * C, C]),
            "proj.b": p.add(t + "mlp.c_proj.bias", [C]),
        }
        layers.append(lay)
        # The hub's gpt2 file carries the causal-mask buffer; loaders must skip it.
        p.tensors.append((t + "attn.bias", [1, 1, P, P],
                          [1.0 if c <= r else 0.0 for r in range(P) for c in range(P)]))
    ln_f_w = p.add("ln_f.weight", [C], std=0.1, mean=1.0)
    ln_f_b = p.add("ln_f.bias", [C])
    write_safetensors(os.path.join(out, "model.safetensors"), p.tensors)

    ids = [5, 7, 200, V - 2, 3, 42]
    T = len(ids)
    x = [[wte[t][c] + wpe[i][c] for c in range(C)] for i, t in enumerate(ids)]
    for lay in layers:
        a = layer_norm(x, lay["ln_1.w"], lay["ln_1.b"], 1e-5)
        qkv = add_bias(matmul(a, lay["c_attn.w"]), lay["c_attn.b"])
        q = [r[:C] for r in qkv]
        k = [r[C:2 * C] for r in qkv]
        v = [r[2 * C:] for r in qkv]
        y = attention(q, k, v, H, lambda i, j: j <= i)
        y = add_bias(matmul(y, lay["c_proj.w"]), lay["c_proj.b"])
        x = [[a_ + b_ for a_, b_ in zip(r1, r2)] for r1, r2 in zip(x, y)]
        m = layer_norm(x, lay["ln_2.w"], lay["ln_2.b"], 1e-5)
        h = [[gelu_new(v_) for v_ in r] for r in add_bias(matmul(m, lay["fc.w"]), lay["fc.b"])]
        h = add_bias(matmul(h, lay["proj.w"]), lay["proj.b"])
        x = [[a_ + b_ for a_, b_ in zip(r1, r2)] for r1, r2 in zip(x, h)]
    x = layer_norm(x, ln_f_w, ln_f_b, 1e-5)
    logits = matmul(x, transpose(wte))
    text = "hello world, he said: 'well'  42!"
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"ids": ids, "logits": logits, "text": text,
                   "text_ids": gpt2_bpe_ids(text, vocab, merges)}, f)


def distilbert_fixture(root):
    out = os.path.join(root, "distilbert_tiny")
    os.makedirs(out, exist_ok=True)
    L, H, C, F, P = 2, 2, 8, 16, 12
    tokens = ["[PAD]"] + ["[unused%d]" % i for i in range(4)] + ["[UNK]", "[CLS]", "[SEP]",
                                                                   "[MASK]"] + \
        ["the", "cat", "sat", "on", "mat", ".", "a", "dog", "##s", "run", "!"]
    V = len(tokens)
    with open(os.path.join(out, "vocab.txt"), "w") as f:
        f.write("".join(t + "\n" for t in tokens))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "model_max_length": P}, f)
    config = {"architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert",
              "n_layers": L, "n_heads": H, "dim": C, "hidden_dim": F,
              "max_position_embeddings": P, "vocab_size": V, "activation": "gelu",
              "dropout": 0.1, "attention_dropout": 0.1, "sinusoidal_pos_embds": False,
              "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
              "initializer_range": 0.02}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    p = Params(2)
    d = "distilbert."
    word = p.add(d + "embeddings.word_embeddings.weight", [V, C])
    pos = p.add(d + "embeddings.position_embeddings.weight", [P, C])
    emb_w = p.add(d + "embeddings.LayerNorm.weight", [C], const=1.0)
    emb_b = p.add(d + "embeddings.LayerNorm.bias", [C])
    layers = []
    for i in range(L):
        t = d + "transformer.layer.%d." % i
        lay = {}
        for m, (o, n) in {"q_lin": (C, C), "k_lin": (C, C), "v_lin": (C, C),
                          "out_lin": (C, C)}.items():
            lay[m + ".w"] = p.add(t + "attention.%s.weight" % m, [o, n])
            lay[m + ".b"] = p.add(t + "attention.%s.bias" % m, [o])
        lay["sa.w"] = p.add(t + "sa_layer_norm.weight", [C], const=1.0)
        lay["sa.b"] = p.add(t + "sa_layer_norm.bias", [C])
        lay["lin1.w"] = p.add(t + "ffn.lin1.weight", [F, C])
        lay["lin1.b"] = p.add(t + "ffn.lin1.bias", [F])
        lay["lin2.w"] = p.add(t + "ffn.lin2.weight", [C, F])
        lay["lin2.b"] = p.add(t + "ffn.lin2.bias", [C])
        lay["out.w"] = p.add(t + "output_layer_norm.weight", [C], const=1.0)
        lay["out.b"] = p.add(t + "output_layer_norm.bias", [C])
        layers.append(lay)
    vt_w = p.add("vocab_transform.weight", [C, C])
    vt_b = p.add("vocab_transform.bias", [C])
    vln_w = p.add("vocab_layer_norm.weight", [C], const=1.0)
    vln_b = p.add("vocab_layer_norm.bias", [C])
    p.tensors.append(("vocab_projector.weight", [V, C], [v for row in word for v in row]))  # tied
    vp_b = p.add("vocab_projector.bias", [V])
    write_safetensors(os.path.join(out, "model.safetensors"), p.tensors)

    def linear(x, w, b):  # nn.Linear: x @ W^T + b, W stored (out, in)
        return add_bias(matmul(x, transpose(w)), b)

    ids = [6, 9, 10, 8, 13, 7, 0, 0]  # [CLS] the cat [MASK] on [SEP] [PAD] [PAD]
    mask = [1, 1, 1, 1, 1, 1, 0, 0]
    T = len(ids)
    x = [[word[t][c] + pos[i][c] for c in range(C)] for i, t in enumerate(ids)]
    x = layer_norm(x, emb_w, emb_b, 1e-12)
    for lay in layers:
        q = linear(x, lay["q_lin.w"], lay["q_lin.b"])
        k = linear(x, lay["k_lin.w"], lay["k_lin.b"])
        v = linear(x, lay["v_lin.w"], lay["v_lin.b"])
        y = attention(q, k, v, H, lambda i, j: mask[j] == 1)
        y = linear(y, lay["out_lin.w"], lay["out_lin.b"])
        sa = layer_norm([[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(y, x)],
                        lay["sa.w"], lay["sa.b"], 1e-12)
        h = [[gelu(v_) for v_ in r] for r in linear(sa, lay["lin1.w"], lay["lin1.b"])]
        h = linear(h, lay["lin2.w"], lay["lin2.b"])
        x = layer_norm([[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(h, sa)],
                       lay["out.w"], lay["out.b"], 1e-12)
    h = [[gelu(v_) for v_ in r] for r in linear(x, vt_w, vt_b)]
    h = layer_norm(h, vln_w, vln_b, 1e-12)
    logits = add_bias(matmul(h, transpose(word)), vp_b)
    text = "The cats sat on a mat. Dogs run!"
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"ids": ids, "mask": mask, "logits": logits, "text": text,
                   "text_ids": wordpiece_ids(text, tokens)}, f)


def main(argv):
    parser = argparse.ArgumentParser(
        description="Write the tiny GPT-2 and DistilBERT checkpoint folders (gpt2_tiny/, "
        "distilbert_tiny/) with their expected logits and token ids. Standard library only; "
        "deterministic.")
    parser.add_argument("--out", default=COMMITTED, metavar="DIR",
                        help="folder to write gpt2_tiny/ and distilbert_tiny/ into (created when "
                        "missing; default: the committed fixtures, %(default)s)")
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        parser.error("--out %s: exists and is not a folder" % args.out)
    try:
        gpt2_fixture(args.out)
        distilbert_fixture(args.out)
    except OSError as e:
        print("make_hf_fixtures.py: error: cannot write under %s: %s" % (args.out, e),
              file=sys.stderr)
        return 1
    print("wrote %s and %s" % (os.path.join(args.out, "gpt2_tiny"),
                               os.path.join(args.out, "distilbert_tiny")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
