#!/usr/bin/env python3
"""An independent reference for tokenizer.json BPE tokenizers (the Hugging Face tokenizers
format), written from the format's description, for llmprof's tests: it does not import
`tokenizers` or `transformers`. Needs Python's `regex` module (Debian python3-regex) for \\p{L}.

    python3 scripts/hf/tokenizer_reference.py TOKENIZER_JSON [--plain] < texts.json > ids.json

texts.json is a JSON array of strings; the output is a JSON array of id lists, one per text, with
the post-processor's special tokens (as `tokenizer(text)`) unless --plain. Supported: model BPE
(vocab, merges as strings or pairs, byte_fallback, unk_token, fuse_unk, ignore_merges);
normalizers NFC, Prepend, Replace, Sequence; pre-tokenizers Split, ByteLevel, Digits, Metaspace,
Sequence; added tokens (lstrip, rstrip, normalized); post-processors TemplateProcessing, ByteLevel,
RobertaProcessing, BertProcessing, Sequence. Anything else: exit 2 with a message.
"""
import json
import sys
import unicodedata

import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def unsupported(what):
    sys.stderr.write('tokenizer_reference: not supported: %s\n' % what)
    sys.exit(2)


def byte_alphabet():
    """GPT-2's bytes_to_unicode: byte -> printable stand-in character."""
    keep = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHAR = byte_alphabet()


def compile_pattern(p):
    if 'String' in p:
        return regex.compile(regex.escape(p['String']))
    if 'Regex' in p:
        return regex.compile(p['Regex'])
    unsupported('pattern %r' % p)


# Splitting: a piece is (text, at_start) ------------------------------------------------------

def split_text(pattern, text, behavior, invert=False):
    """Returns the (begin, end) ranges kept, as the Split pre-tokenizer defines them."""
    parts, prev = [], 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        if m.start() > prev:
            parts.append([prev, m.start(), invert])
        parts.append([m.start(), m.end(), not invert])
        prev = m.end()
    if prev < len(text):
        parts.append([prev, len(text), invert])
    out = []
    if behavior == 'Isolated':
        out = parts
    elif behavior == 'Removed':
        out = [p for p in parts if not p[2]]
    elif behavior == 'Contiguous':
        last = False
        for p in parts:
            if out and p[2] and last:
                out[-1][1] = p[1]
            else:
                out.append(list(p))
            last = p[2]
    elif behavior == 'MergedWithPrevious':
        last = False
        for p in parts:
            if p[2] and not last and out:
                out[-1][1] = p[1]
            else:
                out.append(list(p))
            last = p[2]
    elif behavior == 'MergedWithNext':
        last = False
        for p in reversed(parts):
            if p[2] and not last and out:
                out[-1][0] = p[0]
            else:
                out.append(list(p))
            last = p[2]
        out.reverse()
    else:
        unsupported('behavior %s' % behavior)
    return [(b, e) for b, e, _ in out if e > b]


class PreTokenizer:
    def __init__(self, spec):
        self.spec = spec
        t = spec['type']
        if t == 'Split':
            self.pattern = compile_pattern(spec['pattern'])
        elif t == 'ByteLevel':
            self.pattern = regex.compile(GPT2_PATTERN) if spec.get('use_regex', True) else None
        elif t == 'Digits':
            self.pattern = regex.compile(r'\p{N}' if spec.get('individual_digits') else r'\p{N}+')
        elif t == 'Sequence':
            self.parts = [PreTokenizer(s) for s in spec['pretokenizers']]
        elif t != 'Metaspace':
            unsupported('pre-tokenizer %s' % t)

    def run(self, pieces):
        t = self.spec['type']
        if t == 'Sequence':
            for p in self.parts:
                pieces = p.run(pieces)
            return pieces
        out = []
        for text, at_start in pieces:
            out.extend(self.one(text, at_start))
        return out

    def one(self, text, at_start):
        s, t = self.spec, self.spec['type']
        if t == 'Split':
            rs = split_text(self.pattern, text, s['behavior'], s.get('invert', False))
            return [(text[b:e], at_start and b == 0) for b, e in rs]
        if t == 'Digits':
            return [(text[b:e], at_start and b == 0)
                    for b, e in split_text(self.pattern, text, 'Isolated')]
        if t == 'ByteLevel':
            if s.get('add_prefix_space', True) and text and not text.startswith(' '):
                text = ' ' + text
            rs = split_text(self.pattern, text, 'Isolated') if self.pattern else [(0, len(text))]
            return [(''.join(BYTE_CHAR[b] for b in text[b0:e].encode('utf-8')), at_start and b0 == 0)
                    for b0, e in rs if e > b0]
        # Metaspace
        rep = s.get('replacement', '\u2581')
        scheme = s.get('prepend_scheme')
        if scheme is None:
            scheme = 'always' if s.get('add_prefix_space', True) else 'never'
        text = text.replace(' ', rep)
        if text and not text.startswith(rep) and (
                scheme == 'always' or (scheme == 'first' and at_start)):
            text = rep + text
        if not s.get('split', True):
            return [(text, at_start)] if text else []
        rs = split_text(regex.compile(regex.escape(rep)), text, 'MergedWithNext')
        return [(text[b:e], at_start and b == 0) for b, e in rs]


def normalize(spec, text):
    if spec is None:
        return text
    t = spec['type']
    if t == 'NFC':
        return unicodedata.normalize('NFC', text)
    if t == 'Prepend':
        return spec['prepend'] + text if text else text
    if t == 'Replace':
        return compile_pattern(spec['pattern']).sub(lambda m: spec['content'], text)
    if t == 'Sequence':
        for n in spec['normalizers']:
            text = normalize(n, text)
        return text
    unsupported('normalizer %s' % t)


# The model ---------------------------------------------------------------------------------------

class Bpe:
    def __init__(self, m):
        if m.get('type', 'BPE') != 'BPE':
            unsupported('model %s' % m.get('type'))
        self.vocab = m['vocab']
        self.ranks = {}
        for i, mg in enumerate(m['merges']):
            a, b = mg.split(' ') if isinstance(mg, str) else mg
            self.ranks.setdefault((a, b), i)
        self.unk = m.get('unk_token')
        self.fuse_unk = m.get('fuse_unk', False)
        self.byte_fallback = m.get('byte_fallback', False)
        self.ignore_merges = m.get('ignore_merges', False)

    def symbols(self, word):
        out, last_unk = [], False
        for ch in word:
            if ch in self.vocab:
                out.append(ch)
                last_unk = False
                continue
            if self.byte_fallback:
                names = ['<0x%02X>' % b for b in ch.encode('utf-8')]
                if all(n in self.vocab for n in names):
                    out.extend(names)
                    last_unk = False
                    continue
            if self.unk is not None:
                if not (self.fuse_unk and last_unk):
                    out.append(self.unk)
                last_unk = True
        return out

    def tokenize(self, word):
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        syms = self.symbols(word)
        while len(syms) > 1:  # one merge at a time: the lowest rank, leftmost
            best = None
            for i in range(len(syms) - 1):
                r = self.ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            syms[i:i + 2] = [syms[i] + syms[i + 1]]
        return [self.vocab[s] for s in syms]


def post_ids(spec):
    """(prefix, suffix) ids the post-processor adds around a single sequence."""
    if spec is None or spec['type'] == 'ByteLevel':
        return [], []
    t = spec['type']
    if t == 'TemplateProcessing':
        pre, suf, seen = [], [], False
        for piece in spec['single']:
            if 'Sequence' in piece:
                seen = True
                continue
            ids = spec['special_tokens'][piece['SpecialToken']['id']]['ids']
            (suf if seen else pre).extend(ids)
        return pre, suf
    if t in ('RobertaProcessing', 'BertProcessing'):
        return [spec['cls'][1]], [spec['sep'][1]]
    if t == 'Sequence':
        pre, suf = [], []
        for p in spec['processors']:
            a, b = post_ids(p)
            pre, suf = a + pre, suf + b
        return pre, suf
    unsupported('post-processor %s' % t)


class Tokenizer:
    def __init__(self, j):
        self.j = j
        self.model = Bpe(j['model'])
        self.pre = PreTokenizer(j['pre_tokenizer']) if j.get('pre_tokenizer') else None
        self.prefix, self.suffix = post_ids(j.get('post_processor'))
        raw, norm = [], []
        for t in j.get('added_tokens', []):
            if t.get('single_word'):
                unsupported('single_word')
            normalized = t.get('normalized', not t.get('special', False))
            content = normalize(j.get('normalizer'), t['content']) if normalized else t['content']
            (norm if normalized else raw).append((content, t))
        self.raw = self.added_pattern(raw)
        self.norm = self.added_pattern(norm)

    @staticmethod
    def added_pattern(tokens):
        if not tokens:
            return None
        tokens = sorted(tokens, key=lambda ct: -len(ct[0].encode('utf-8')))
        alts = []
        for content, t in tokens:
            alts.append('%s%s%s' % (r'\s*' if t.get('lstrip') else '', regex.escape(content),
                                    r'\s*' if t.get('rstrip') else ''))
        by_content = {c: t['id'] for c, t in tokens}
        pattern = regex.compile('|'.join('(%s)' % a for a in alts))
        return pattern, [t['id'] for _, t in tokens]

    @staticmethod
    def cut(added, pieces):
        """pieces: list of (text, at_start, id or None)."""
        if added is None:
            return pieces
        pattern, ids = added
        out = []
        for text, at_start, tid in pieces:
            if tid is not None:
                out.append((text, at_start, tid))
                continue
            prev = 0
            for m in pattern.finditer(text):
                if m.start() > prev:
                    out.append((text[prev:m.start()], at_start and prev == 0, None))
                out.append(('', False, ids[m.lastindex - 1]))
                prev = m.end()
            if prev < len(text):
                out.append((text[prev:], at_start and prev == 0, None))
        return out

    def encode(self, text, plain=False):
        pieces = self.cut(self.raw, [(text, True, None)])
        norm = self.j.get('normalizer')
        pieces = [(normalize(norm, t) if tid is None else t, s, tid) for t, s, tid in pieces]
        pieces = self.cut(self.norm, pieces)
        ids = []
        for t, s, tid in pieces:
            if tid is not None:
                ids.append(tid)
                continue
            words = self.pre.run([(t, s)]) if self.pre else [(t, s)]
            for w, _ in words:
                if w:
                    ids.extend(self.model.tokenize(w))
        return ids if plain else self.prefix + ids + self.suffix


def main():
    args = sys.argv[1:]
    plain = '--plain' in args
    args = [a for a in args if a != '--plain']
    if len(args) != 1:
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(args[0], encoding='utf-8') as f:
        tok = Tokenizer(json.load(f))
    texts = json.load(sys.stdin)
    json.dump([tok.encode(t, plain) for t in texts], sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
