#!/usr/bin/env python3
"""Functions that fit on a screen: lists the C++ functions longer than a limit, longest first.

Usage: scripts/check_function_length.py [--max-lines 80] [paths...]
       scripts/check_function_length.py --self-test

What it reads: every .cpp, .cc, .cu, .h, .hpp and .cuh file under the paths, by default the
checkout's src/, include/, examples/ and scripts/bench/ (the house rule covers the library, its
public headers, the example a user copies and the benchmark programs). tests/ is left out: a
GoogleTest body is a straight list of expectations around one fixture, and it is read as such.

What a function is: a brace block at namespace or class scope (inside extern "C" too) whose head
is a function declarator, that is a parenthesised parameter list followed by nothing but
qualifiers (const, noexcept(...), override, final, &, &&), a trailing return type, a
constructor's member initialisers or `try`; member functions defined in a class body (named
Class::name), and lambdas outside any function body (a variable initialised with one, named after
the variable; one inside a table's initialiser or a constructor's member initialisers). Lambdas and local classes inside a function count
towards that function; a function-try-block's handlers count towards it. Its length is the lines
from its opening brace to its closing brace, both included.

What the reading leaves out: comments; string and character literals with their encoding
prefixes; raw strings (R"d(...)d", u8R"(...)" ...); digit separators (100'000); preprocessor
lines with their continuations (a macro's braces are no block). Where the branches of an
#if/#elif/#else leave braces unbalanced (each branch opening the same function, say), only the
first branch is read; #if 0 reads the others.

The declarative tables allowed past the limit are named in ALLOWED_LONG below, file and function,
each with its reason. Exit 0 when every other function is within the limit; 1 when one is not, or
when an entry of ALLOWED_LONG no longer names a function over the limit (so the list cannot rot);
2 on bad input (a path that does not exist, no source file or no function found, or a file
whose braces do not pair up once read: a gap in this reader, which it reports rather than skip).
--self-test runs the checks of this reader (unittest) instead.
"""
import argparse
import io
import os
import re
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ROOTS = ["src", "include", "examples", "scripts/bench"]
EXTENSIONS = (".cpp", ".cc", ".cu", ".h", ".hpp", ".cuh")
HOUSE_LIMIT = 80  # lines; the ctest Style.FunctionsFitOnAScreen runs at it

# Declarative tables: a list of entries read one by one, not control flow to follow. Each entry
# (path from the checkout's root, function as this script names it) with why it may be long.
ALLOWED_LONG = {
    ("src/config/key_table.cpp", "build_table"):
        "the config key table: one entry per key (its path, type, range and doc), a list read "
        "entry by entry; split, it would only be cut at arbitrary keys",
}

# ---------------------------------------------------------------------------------------------
# Reading: the text with comments, literals and preprocessor lines blanked (offsets and line
# breaks kept), so that every brace left is one the compiler sees.

_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")
_RAW_PREFIX = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s"]{0,16})\(')
_DIRECTIVE = re.compile(r"#\s*(\w*)")


def _blank(s):
    return re.sub(r"[^\n]", " ", s)


def _token_before(text, i):
    """The identifier/number characters (and digit separators) right before offset i."""
    j = i
    while j > 0 and (_IDENT_CHAR.match(text[j - 1]) or text[j - 1] in ".'"):
        j -= 1
    return text[j:i]


def _line_end(text, i):
    """The end of the (logical) line at i: past backslash-newline continuations."""
    n = len(text)
    while True:
        j = text.find("\n", i)
        if j < 0:
            return n
        k = j - 1
        if k >= 0 and text[k] == "\r":
            k -= 1
        if k >= 0 and text[k] == "\\":
            i = j + 1
            continue
        return j


def strip(text):
    """(blanked text, directives): comments, literals and preprocessor lines turned to spaces.

    directives: (offset, end, keyword) of each preprocessor line, in order.
    """
    out, directives = [], []
    i, n = 0, len(text)
    at_line_start = True  # only blanks since the last newline
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        if c == "#" and at_line_start:
            j = _line_end(text, i)
            # A comment opened on the directive's line runs on past it.
            k = text.find("/*", i, j)
            while k >= 0 and text.find("//", i, k) < 0:
                close = text.find("*/", k + 2)
                if close < 0 or close + 2 <= j:
                    break
                j = _line_end(text, close + 2)
                k = text.find("/*", close + 2, j)
            directives.append((i, j, _DIRECTIVE.match(text, i).group(1)))
            out.append(_blank(text[i:j]))
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = _line_end(text, i)
            out.append(_blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(_blank(text[i:j]))
            i = j
        elif c == '"' or c == "'":
            before = _token_before(text, i)
            raw = _RAW_PREFIX.match(text, i - len(before)) if before in (
                "R", "u8R", "uR", "UR", "LR") else None
            if raw and raw.start() == i - len(before):
                end = text.find(")" + raw.group(1) + '"', raw.end())
                j = n if end < 0 else end + len(raw.group(1)) + 2
                out.append(c + _blank(text[i + 1:j - 1]) + (c if j - 1 > i else ""))
                i = j
            elif c == "'" and before[:1].isdigit():
                out.append(" ")  # a digit separator: 100'000
                i += 1
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j = min(j, n - 1)
                out.append(c + _blank(text[i + 1:j]) + (c if text[j] == c else text[j]))
                i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), directives


def _conditional_groups(directives):
    """Each #if ... #endif: [(branch start, branch end, keyword)], innermost groups first."""
    groups, stack = [], []
    for start, end, kw in directives:
        if kw in ("if", "ifdef", "ifndef"):
            stack.append([(end, None, kw, start)])
        elif kw in ("elif", "else") and stack:
            b_end, _, b_kw, b_dir = stack[-1][-1]
            stack[-1][-1] = (b_end, start, b_kw, b_dir)
            stack[-1].append((end, None, kw, start))
        elif kw == "endif" and stack:
            branches = stack.pop()
            b_start, _, b_kw, b_dir = branches[-1]
            branches[-1] = (b_start, start, b_kw, b_dir)
            groups.append(branches)
    return groups


def _self_contained(code):
    depth = 0
    for c in code:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def resolve_conditionals(code, directives, raw_text):
    """The code with the branches the reading skips blanked (see the module's doc)."""
    chars = list(code)
    for branches in _conditional_groups(directives):
        if re.match(r"#\s*if\s+0\b", raw_text[branches[0][3]:]):
            dropped = branches[:1]
        elif all(_self_contained("".join(chars[s:e])) for s, e, _, _ in branches):
            continue
        else:
            dropped = branches[1:]
        for s, e, _, _ in dropped:
            chars[s:e] = list(_blank("".join(chars[s:e])))
    return "".join(chars)


# ---------------------------------------------------------------------------------------------
# Heads: the tokens between the last statement or block and a brace, with balanced (), [] and
# {} groups folded into one token each.

_TOKEN = re.compile(r"\s*(?:([A-Za-z_]\w*)|(\d[\w.']*)|(::|->|&&|\|\||[!=]=|\.\.\.|"
                    r"[-+*/%^&|~!=<>?:;,.()\[\]{}\"'#@$\\`]))")
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_QUALIFIERS = {"const", "volatile", "&", "&&", "noexcept", "override", "final", "mutable",
               "constexpr", "consteval", "throw", "try"}
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
              "alignas", "noexcept", "throw", "static_assert", "__attribute__", "__declspec",
              "new", "delete", "void", "int", "char", "bool", "float", "double", "auto",
              "operator", "typeid", "requires"}
_SCOPE_WORDS = {"namespace", "class", "struct", "union", "enum"}


class Group:
    """A balanced (...), [...] or {...}: its opening character and inner tokens."""

    def __init__(self, open_char, inner):
        self.open = open_char
        self.inner = inner

    def __eq__(self, other):
        return other == self.open + _PAIRS[self.open]

    def __hash__(self):
        return hash(self.open)

    def text(self):
        joined = " ".join(t.open + t.text() + _PAIRS[t.open] if isinstance(t, Group) else t
                          for t in self.inner)
        return re.sub(r"\s+([,)\]}])", r"\1", joined)


def tokens(head):
    """The head's tokens; balanced groups are Group tokens, unmatched openers stay strings."""
    flat = [m.group(m.lastindex) for m in _TOKEN.finditer(head) if m.lastindex]
    stack = [[]]
    for t in flat:
        if t in _PAIRS:
            stack.append([t])
        elif t in (")", "]", "}") and len(stack) > 1 and _PAIRS[stack[-1][0]] == t:
            inner = stack.pop()
            stack[-1].append(Group(inner[0], inner[1:]))
        else:
            stack[-1].append(t)
    while len(stack) > 1:  # unmatched openers: kept as tokens
        inner = stack.pop()
        stack[-1].extend(inner)
    return stack[0]


def _is_ident(t):
    return isinstance(t, str) and re.match(r"[A-Za-z_]\w*$", t) is not None


def _tail_is_function(tail):
    """Whether the tokens after a parameter list are what a function definition may have there."""
    i = 0
    while i < len(tail):
        t = tail[i]
        if t in _QUALIFIERS and isinstance(t, str):
            i += 1
            if t in ("noexcept", "throw") and i < len(tail) and tail[i] == "()":
                i += 1
        elif t == "[]" and isinstance(t, Group) and t.open == "[":
            i += 1  # an attribute: [[nodiscard]]
        elif t == "->" and isinstance(t, str):
            return i + 1 < len(tail)  # a trailing return type
        elif t == ":" and isinstance(t, str):
            # Member initialisers: the body's brace follows one's () or {}; a brace right after
            # a member's name (x_{1}) initialises it.
            last = tail[-1]
            return i + 1 < len(tail) and isinstance(last, Group) and last.open in "({"
        else:
            return False
    return True


def _qualified_name(toks, end):
    """The (possibly qualified, templated) name ending at toks[end]: (name, start index)."""
    i = end
    parts = []
    while i >= 0:
        t = toks[i]
        if t == ">" and isinstance(t, str):  # template arguments: back to the matching <
            depth, j = 0, i
            while j >= 0:
                if toks[j] == ">":
                    depth += 1
                elif toks[j] == "<":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j <= 0:
                return None, i
            parts.append("<" + " ".join(str(x) if not isinstance(x, Group) else x.open + x.text()
                                        + _PAIRS[x.open] for x in toks[j + 1:i]) + ">")
            i = j - 1
            continue
        if not _is_ident(t):
            return None, i
        parts.append(t)
        i -= 1
        if i >= 0 and toks[i] == "~":
            parts[-1] = "~" + parts[-1]
            i -= 1
        if i >= 0 and toks[i] == "::":
            parts.append("::")
            i -= 1
            continue
        break
    name = "".join(reversed(parts))
    return name, i + 1


def _operator_name(toks, g):
    """operator(), operator==, operator bool ... when the declarator at toks[g] is an operator."""
    for back in range(1, 4):
        k = g - back
        if k < 0:
            return None
        if toks[k] == "operator" and isinstance(toks[k], str):
            symbol = "".join(x.open + _PAIRS[x.open] if isinstance(x, Group) else x
                             if not _is_ident(x) else " " + x for x in toks[k + 1:g])
            scope, _ = _qualified_name(toks, k - 2) if k >= 2 and toks[k - 1] == "::" else ("", 0)
            return (scope + "::" if scope else "") + "operator" + symbol
    return None


def function_name(head):
    """The name of the function a head declares, or None when it declares none."""
    toks = tokens(head)
    if any(isinstance(t, str) and t in ("(", "[", "{") for t in toks):
        return None  # inside an unfinished call or initialiser: no declaration
    for g, t in enumerate(toks):
        if not (isinstance(t, Group) and t.open == "(") or g == 0:
            continue
        if not _tail_is_function(toks[g + 1:]):
            continue
        op = _operator_name(toks, g)
        if op:
            return op
        prev = toks[g - 1]
        if isinstance(prev, Group):
            continue
        name, _ = _qualified_name(toks, g - 1)
        if not name or name.split("::")[-1].lstrip("~") in _NOT_NAMES:
            continue
        if re.match(r"[A-Z][A-Z0-9_]{3,}$", name):  # a macro's definition: TEST(Suite, Name)
            name += "(" + t.text() + ")"
        return name
    return None


def lambda_name(head):
    """'<variable> (lambda)' or 'lambda' when the head ends with a lambda's introducer, else None."""
    toks = tokens(head)
    for k in range(len(toks) - 1, -1, -1):
        t = toks[k]
        if not (isinstance(t, Group) and t.open == "["):
            continue
        before = toks[k - 1] if k > 0 else None
        if before is not None and (isinstance(before, Group) or _is_ident(before)) \
                and before != "return":
            return None  # a subscript
        tail = toks[k + 1:]
        if tail and isinstance(tail[0], Group) and tail[0].open == "(":
            tail = tail[1:]
        if not _tail_is_function(tail):
            return None
        if before == "=" and k >= 2 and _is_ident(toks[k - 2]):
            return toks[k - 2] + " (lambda)"
        return "lambda"
    return None


def is_scope_head(head):
    """namespace, class, struct, union, enum or extern "C" heads."""
    toks = [t for t in tokens(head) if not isinstance(t, Group) or t.open != "["]
    words = [k for k, t in enumerate(toks) if isinstance(t, str) and t in _SCOPE_WORDS]
    if words:  # but not `struct Options kDefaults = {...}`
        return not any(isinstance(t, str) and t == "=" for t in toks[words[0]:])
    return len(toks) >= 2 and toks[0] == "extern" and toks[1] in ('"', "'")


# ---------------------------------------------------------------------------------------------
# Blocks: which braces open a function.

class ReadError(Exception):
    """The braces left after reading do not pair up: the reader missed a literal or a branch."""


class Block:
    __slots__ = ("kind", "line", "name", "head_start", "try_block")

    def __init__(self, kind, line, name=None, head_start=0, try_block=False):
        self.kind = kind  # scope | function | inner | init
        self.line = line
        self.name = name
        self.head_start = head_start
        self.try_block = try_block


def functions_in_text(text):
    """(name, first line, lines) of each function of a C++ source text, in order of its end."""
    code, directives = strip(text)
    code = resolve_conditionals(code, directives, text)
    found = []
    stack = []
    head_start = 0
    line = 1
    pending_try = None  # a function-try-block's body closed: its handlers may follow

    def flush():
        nonlocal pending_try
        if pending_try:
            found.append(pending_try)
            pending_try = None

    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";" or (c == "," and stack and stack[-1].kind == "init"):
            if not stack or stack[-1].kind in ("scope", "init"):
                head_start = i + 1  # a statement ends; an element of a table
            if not stack or stack[-1].kind == "scope":
                flush()
        elif c == "{":
            head = code[head_start:i]
            outer = stack[-1] if stack else None
            if outer and outer.kind in ("function", "inner"):
                stack.append(Block("inner", line))
                continue
            kind, name, try_block = "init", None, False
            if pending_try and re.match(r"\s*catch\s*\(", head):
                stack.append(Block("function", pending_try[1], pending_try[0], try_block=True))
                pending_try = None
                head_start = i + 1
                continue
            flush()
            in_table = outer is not None and outer.kind == "init"
            fn = None if in_table else function_name(head)
            if fn:
                kind, name = "function", fn
                try_block = re.search(r"\)[^()]*\btry\b", head) is not None
            elif not in_table and is_scope_head(head):
                kind = "scope"
                m = re.search(r"\b(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?([\w:]+)", head)
                name = m.group(1) if m else None
            else:
                lam = lambda_name(head)
                if lam:
                    kind, name = "function", lam
            if kind == "function" and outer and outer.kind == "scope" and outer.name \
                    and "::" not in name and "lambda" not in name:
                name = outer.name + "::" + name
            stack.append(Block(kind, line, name, head_start, try_block))
            head_start = i + 1
        elif c == "}":
            if not stack:
                raise ReadError(f"line {line}: a closing brace without its opening one")
            b = stack.pop()
            if b.kind == "function":
                entry = (b.name, b.line, line - b.line + 1)
                if b.try_block:
                    flush()
                    pending_try = entry
                else:
                    found.append(entry)
                head_start = i + 1
            elif b.kind == "init":
                head_start = b.head_start  # `a_{x}` in a head, or an element of a table
            elif b.kind == "scope":
                flush()
                head_start = i + 1
    if stack:
        raise ReadError(f"line {stack[-1].line}: a brace never closed")
    flush()
    return found


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        return functions_in_text(text)
    except ReadError as e:
        raise ReadError(f"{path}: {e}") from None


# ---------------------------------------------------------------------------------------------
# The check.

def source_files(roots):
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith(".") and not x.startswith("build"))
            for f in sorted(files):
                if f.endswith(EXTENSIONS):
                    yield os.path.join(d, f)


def relative(path, base):
    rel = os.path.relpath(os.path.abspath(path), base)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def check(roots, max_lines, allowed, base, out):
    """Prints the report; returns the exit code (see the module's doc)."""
    missing = [r for r in roots if not os.path.exists(r)]
    if missing:
        print(f"error: no such path: {', '.join(missing)}", file=out)
        return 2
    files = [relative(p, base) for p in source_files(roots)]
    if not files:
        print(f"error: no {'/'.join(EXTENSIONS)} file under {', '.join(roots)}", file=out)
        return 2
    lengths = {}  # (file, name) -> the longest of that name
    long, count, unread = [], 0, 0
    for rel in files:
        try:
            found = functions(os.path.join(base, rel) if not os.path.isabs(rel) else rel)
        except ReadError as e:
            print(f"error: cannot read the functions of {e}", file=out)
            unread += 1
            continue
        for name, start, n in found:
            count += 1
            lengths[(rel, name)] = max(n, lengths.get((rel, name), 0))
            if n > max_lines:
                long.append((n, rel, start, name))
    if unread or count == 0:
        if count == 0:
            print(f"error: no function found in {len(files)} files: the reader is broken",
                  file=out)
        return 2
    bad = 0
    for n, rel, start, name in sorted(long, key=lambda x: (-x[0], x[1], x[2])):
        reason = allowed.get((rel, name))
        bad += reason is None
        print(f"{n:5d} {rel}:{start} {name}" + (f"  (allowed: {reason})" if reason else ""),
              file=out)
    stale = 0
    scanned = set(files)
    abs_roots = [os.path.abspath(r) for r in roots]
    for (rel, name), reason in sorted(allowed.items()):
        path = os.path.abspath(os.path.join(base, rel))
        if rel not in scanned and not any(path == r or path.startswith(r + os.sep)
                                          for r in abs_roots):
            continue  # not under the paths read this time
        n = lengths.get((rel, name))
        if n is None:
            print(f"error: ALLOWED_LONG names {rel} {name}, which no longer exists: remove it",
                  file=out)
            stale += 1
        elif n <= max_lines:
            print(f"error: ALLOWED_LONG names {rel} {name}, {n} lines, no longer over "
                  f"{max_lines}: remove it", file=out)
            stale += 1
    print(f"{count} functions in {len(files)} files; {len(long)} over {max_lines} lines, "
          f"{len(long) - bad} of them allowed (ALLOWED_LONG)" +
          (f"; {bad} to split" if bad else "") + (f"; {stale} stale entries" if stale else ""),
          file=out)
    return 1 if bad or stale else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-lines", type=int, default=HOUSE_LIMIT)
    ap.add_argument("--self-test", action="store_true", help="check this reader, then exit")
    ap.add_argument("paths", nargs="*", help="files or folders (default: %s of the checkout)"
                    % ", ".join(DEFAULT_ROOTS))
    a = ap.parse_args(argv)
    if a.self_test:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
        return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1
    roots = a.paths or [os.path.join(REPO, r) for r in DEFAULT_ROOTS]
    return check(roots, a.max_lines, ALLOWED_LONG, REPO, sys.stdout)


# ---------------------------------------------------------------------------------------------
# --self-test: what the reader must see, so that a gap in it cannot pass silently.

def body(n):
    """n lines of a function body (n >= 2: the braces' lines included)."""
    return "{\n" + "  x();\n" * (n - 2) + "}\n"


class SelfTest(unittest.TestCase):
    def found(self, text):
        return [(name, n) for name, _, n in functions_in_text(text)]

    def test_free_and_member_functions(self):
        text = ("namespace a {\nint f(int x) " + body(5) +
                "struct S {\n  int g() const " + body(4) + "  S() : x_{1}, y_(2) " + body(3) +
                "  int x_{0};\n  std::function<void(int)> cb_{nullptr};\n};\n"
                "void S::h() noexcept " + body(6) + "}  // namespace a\n")
        self.assertEqual(self.found(text), [("f", 5), ("S::g", 4), ("S::S", 3), ("S::h", 6)])

    def test_qualifiers_trailing_return_operators(self):
        text = ("auto f() -> std::vector<int> " + body(3) +
                "bool T::operator()(int a) const " + body(4) +
                "bool operator==(const A& a, const B& b) " + body(3) +
                "T<int>::~T() override " + body(2) +
                "template <typename X>\nX g(X x) noexcept(true) " + body(3))
        self.assertEqual(self.found(text), [("f", 3), ("T::operator()", 4), ("operator==", 3),
                                            ("T<int>::~T", 2), ("g", 3)])

    def test_default_argument_braces_and_macros_before(self):
        text = ("void f(Opts o = {}, int n = int{3}) " + body(7) +
                "LLMPROF_EXPORT int g() " + body(3))
        self.assertEqual(self.found(text), [("f", 7), ("g", 3)])

    def test_lambdas(self):
        text = ("const auto kTwice = [](int x) -> int " + body(9) +
                ";\nint f() {\n  auto l = [&](int y) {\n    return y;\n  };\n  return l(1);\n}\n"
                "const std::vector<Entry> kTable = {\n  {\"a\", [](Config& c) " + body(5) +
                "},\n  {\"b\", nullptr},\n};\n")
        self.assertEqual(self.found(text), [("kTwice (lambda)", 9), ("f", 6), ("lambda", 5)])

    def test_literals_and_comments_hide_braces(self):
        text = ('void f() {\n  const char* a = "{ \\" {";\n  char b = \'{\', q = \'\\\'\';\n'
                '  auto r = R"x({ )" } ")x";\n  auto u = u8R"({)";\n'
                "  int big = 1'000'000 + 1'0;  // { \"\n  /* } { */\n  char c = '\"';\n}\n"
                "int g() " + body(3))
        self.assertEqual(self.found(text), [("f", 9), ("g", 3)])

    def test_preprocessor(self):
        text = ("#define OPEN() { {\n#define TWO_LINES \\\n  } }\n"
                "#ifdef X\nvoid f(int a) {\n#else\nvoid f(long a) {\n#endif\n  y();\n}\n"
                "#if HAVE_Y\nvoid g() " + body(3) + "#else\nvoid g() " + body(4) + "#endif\n"
                "#if 0\nvoid h() {\n#else\nvoid h(int) {\n#endif\n}\n")
        self.assertEqual(self.found(text), [("f", 6), ("g", 3), ("g", 4), ("h", 3)])

    def test_scopes_tables_and_try_blocks(self):
        text = ('extern "C" {\nint c_api() ' + body(3) + "}\n"
                "enum class E { kA, kB };\nconst int kT[] = {f(1), g(2)};\n"
                "const Table kMap{{1, make(2)}, {3, make(4)}};\n"
                "int main() try " + body(4) + "catch (const Error& e) " + body(3) +
                "S::S() try : a_(1) " + body(2) + "catch (...) " + body(2) +
                "int after() " + body(2))
        self.assertEqual(self.found(text),
                         [("c_api", 3), ("main", 7), ("S::S", 4), ("after", 2)])

    def test_braces_that_do_not_pair_up_are_an_error(self):
        for text in ("void f() {\n", "}\nvoid f() {}\n"):
            with self.assertRaises(ReadError):
                functions_in_text(text)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "bad.cpp"), "w") as f:
                f.write("int ok() " + body(3) + "void f() {\n")
            out = io.StringIO()
            self.assertEqual(check([d], 80, {}, d, out), 2)
            self.assertIn("bad.cpp: line 4: a brace never closed", out.getvalue())

    def test_check_exceptions_cannot_rot(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src"))
            with open(os.path.join(d, "src", "t.cpp"), "w") as f:
                f.write("int table() " + body(12) + "int small() " + body(3))
            src = os.path.join(d, "src")

            def run(allowed, max_lines=10, roots=None):
                out = io.StringIO()
                return check(roots or [src], max_lines, allowed, d, out), out.getvalue()

            code, text = run({})
            self.assertEqual(code, 1)
            self.assertIn("   12 src/t.cpp:1 table", text)
            self.assertEqual(run({("src/t.cpp", "table"): "a table"})[0], 0)
            code, text = run({("src/t.cpp", "table"): "a table"}, max_lines=12)
            self.assertEqual(code, 1)
            self.assertIn("no longer over 12", text)
            code, text = run({("src/t.cpp", "gone"): "a table"}, max_lines=20)
            self.assertEqual(code, 1)
            self.assertIn("no longer exists", text)
            self.assertEqual(run({}, roots=[os.path.join(d, "nowhere")])[0], 2)
            os.makedirs(os.path.join(d, "empty"))
            self.assertEqual(run({}, roots=[os.path.join(d, "empty")])[0], 2)

    def test_the_checkout_is_read(self):
        """The default paths hold hundreds of functions, and the named tables among them."""
        out = io.StringIO()
        code = check([os.path.join(REPO, r) for r in DEFAULT_ROOTS], 10**9, {}, REPO, out)
        self.assertEqual(code, 0, out.getvalue())  # every file read, braces paired
        count = int(re.match(r"(\d+) functions", out.getvalue().splitlines()[-1]).group(1))
        self.assertGreater(count, 1000)
        for rel, name in ALLOWED_LONG:
            self.assertIn(name, [f[0] for f in functions(os.path.join(REPO, rel))])


if __name__ == "__main__":
    sys.exit(main())
