#!/usr/bin/env python3
"""Lists the functions of src/ (and include/) longer than a limit, longest first.

Usage: scripts/check_function_length.py [--max-lines 120] [--skip NAME ...] [paths...]
A function is a brace block opened after a parenthesised head at namespace or class level
(lambdas inside a function count towards that function). Strings, characters and comments are
skipped. Exit 1 when any function not skipped is over the limit, 0 otherwise.
"""
import argparse
import os
import re
import sys

NON_FUNCTION = re.compile(r"\b(namespace|struct|class|enum|union)\b[^()]*$|=\s*$|\bextern\s+\"C\"")


def strip(text):
    """The text with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j])); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


def functions(path):
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    # Preprocessor lines (and their continuations) are no part of a function's head.
    text = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    stack = []  # one entry per open brace: (is_function, start_line, head)
    head_start = 0
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";":
            head_start = i + 1
        elif c == "{":
            head = text[head_start:i]
            in_function = any(f for f, _, _ in stack)
            is_fn = (not in_function and "(" in head and ")" in head
                     and not NON_FUNCTION.search(head.split("(")[0] + "("[:0]))
            if is_fn and re.search(r"\b(namespace|struct|class|enum)\b", head.split("(")[0]):
                is_fn = False
            stack.append((is_fn, line, head))
            head_start = i + 1
        elif c == "}":
            if stack:
                is_fn, start, head = stack.pop()
                if is_fn:
                    name = re.findall(r"([~\w:]+(?:<[^()]*>)?)\s*\(", head)
                    yield (name[0] if name else "?"), start, line - start + 1
            head_start = i + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-lines", type=int, default=120)
    ap.add_argument("--skip", nargs="*", default=[], help="function names left out")
    ap.add_argument("paths", nargs="*", default=["src", "include"])
    a = ap.parse_args()
    long = []
    for root in a.paths:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith((".cpp", ".h", ".cu")):
                    p = os.path.join(d, f)
                    for name, start, n in functions(p):
                        if n > a.max_lines:
                            long.append((n, p, start, name))
    bad = 0
    for n, p, start, name in sorted(long, reverse=True):
        skipped = name in a.skip or name.split("::")[-1] in a.skip
        bad += not skipped
        print(f"{n:5d} {p}:{start} {name}{'  (skipped)' if skipped else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
