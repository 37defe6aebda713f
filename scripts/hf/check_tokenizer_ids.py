#!/usr/bin/env python3
"""Compares llmprof's ids for a tokenizer.json with the tokenizers library's (where it is
installed) on hard strings: contractions, digit runs, CJK, emoji, trailing spaces, "\\n\\n", mixed
scripts. Exit 0 when every list agrees, 1 when one differs, 2 on bad usage.

    python3 scripts/hf/check_tokenizer_ids.py TOKENIZER_JSON [--llmprof build/llmprof]
        [--reference]   # also compare with scripts/hf/tokenizer_reference.py

Give any tokenizer.json: a model folder's (SmolLM2, Qwen2, TinyLlama ...) or the test suite's
shapes, which `LLMPROF_KEEP_HF_FIXTURES=DIR build/test_data --gtest_filter='HfTokenizer.Matches*'`
writes to DIR (llama3.json, qwen2.json, smollm2.json, tinyllama.json, mistral.json).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HARD = [
    "Hello world",
    "I'm here, don't you're we'VE they'LL he'd",
    "1234567 and 89 or 12345",
    "日本語のテキスト",
    "emoji 🤖🎉 ok 👍🏽",
    "trailing spaces   ",
    "a\n\nb\n\n\nc",
    "café cafe\u0301 naïve Ελληνικά русский عربي",
    "  leading and\ttab\r\nwindows  \n  x",
    "",
    " ",
    "the<|begin_of_text|>the <|endoftext|> <s>Hello</s>",
    "!!! ... ??? --- ***",
    "hello Hello HELLO",
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.",
]


def llmprof_ids(binary, path, texts, plain):
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False, encoding='utf-8') as f:
        json.dump(texts, f)
        name = f.name
    try:
        cmd = [binary, 'tokenize', '--tokenizer', path, '--texts-json', name]
        if plain:
            cmd.append('--plain')
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            sys.exit('llmprof tokenize failed (%d): %s' % (out.returncode, out.stderr.strip()))
        return json.loads(out.stdout)
    finally:
        os.unlink(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('tokenizer_json')
    ap.add_argument('--llmprof', default='build/llmprof')
    ap.add_argument('--reference', action='store_true',
                    help='also compare with scripts/hf/tokenizer_reference.py')
    a = ap.parse_args()
    ours = llmprof_ids(a.llmprof, a.tokenizer_json, HARD, False)
    ours_plain = llmprof_ids(a.llmprof, a.tokenizer_json, HARD, True)
    others = {}
    try:
        import tokenizers
        tok = tokenizers.Tokenizer.from_file(a.tokenizer_json)
        others['tokenizers %s' % tokenizers.__version__] = (
            [tok.encode(t).ids for t in HARD],
            [tok.encode(t, add_special_tokens=False).ids for t in HARD])
        decoded = [tok.decode(ids) for ids in ours]
    except ImportError:
        print('tokenizers is not installed: compared with the reference only')
        a.reference = True
        decoded = None
    if a.reference:
        ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tokenizer_reference.py')
        runs = []
        for plain in (False, True):
            out = subprocess.run([sys.executable, ref, a.tokenizer_json] + (['--plain'] if plain else []),
                                 input=json.dumps(HARD), capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                sys.exit('tokenizer_reference.py failed: ' + out.stderr.strip())
            runs.append(json.loads(out.stdout))
        others['tokenizer_reference.py'] = tuple(runs)
    bad_total = 0
    for name, (full, plain) in others.items():
        bad = 0
        for i, text in enumerate(HARD):
            for label, x, y in (('with specials', ours[i], full[i]), ('plain', ours_plain[i], plain[i])):
                if x != y:
                    bad += 1
                    print('DIFFER %s (%s) text %d %r:\n  llmprof %s\n  %s %s' % (name, label, i, text, x, name, y))
        print('%s: %d texts, %s' % (name, len(HARD), 'all ids equal' if bad == 0 else '%d lists differ' % bad))
        bad_total += bad
    if decoded is not None:
        same = sum(d == t for d, t in zip(decoded, HARD))
        print('tokenizers decode(llmprof ids) == text for %d of %d texts (special tokens and '
              'normalization change some by design)' % (same, len(HARD)))
    sys.exit(1 if bad_total else 0)


if __name__ == '__main__':
    main()
