"""Check an awk program with a real (small) awk tokenizer, not a regular expression.

The tokenizer follows the awk lexical rules that matter: backslash-newline continues a line, ``#``
comments run to the end of the line, strings and regex literals are single tokens (a ``|`` inside
``"a|b"`` or ``/a|b/`` is text), and ``/`` starts a regex only where an operand is expected (after an
operator, ``(``, ``,``, a newline or a keyword like ``print``); everywhere else it is division, which
keeps whatever follows visible to the checks. Anything the tokenizer does not know is refused.

Refused: ``system()``, every ``|`` (pipes to and from commands) and ``|&`` (coprocesses), ``getline``
from a file (``getline < f``, ``getline var < f``), print/printf redirection to a file (``>``, ``>>``;
only ``> "/dev/stderr"`` and ``> "/dev/stdout"`` are kept), ``@load``/``@include``/indirect calls,
gawk's ``/inet`` special files, any use of ARGV or ARGC (a program that rewrites ARGV makes awk read
files nobody checked), and writes to ENVIRON. gawk is also run with ``--sandbox``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from starweave.errors import PolicyViolation

# Compound assignments: each is an operator, an assignment and a place where an operand follows.
# The operator tables are written as space-separated strings (noqa SIM905): one token per line
# would make them three screens long.
COMPOUND_ASSIGN = ("+=", "-=", "*=", "/=", "%=", "^=", "**=")
OPERATORS = sorted(
    [
        *COMPOUND_ASSIGN,
        *"|& || && == != <= >= >> ++ -- ** !~ ~ ! < > | + - * / % ^ ? : = ( ) [ ] { } , ; $".split(),  # noqa: SIM905
    ],
    key=len,
    reverse=True,
)
# After these tokens awk expects an operand, so "/" starts a regex literal.
REGEX_AFTER_OPS = frozenset(COMPOUND_ASSIGN).union(
    "!~ && || = == != <= >= ** ( , { } ; ! ~ ? : < > + - * % ^ |".split()  # noqa: SIM905
)
REGEX_AFTER_WORDS = frozenset({"print", "printf", "return", "case", "in", "do", "else"})
TERMINATORS = frozenset({"\n", ";", "}"})
ASSIGN_OPS = frozenset(["=", *COMPOUND_ASSIGN, "++", "--"])
SAFE_REDIRECTS = frozenset({"/dev/stderr", "/dev/stdout", "-"})
NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Tok:
    """One token: ``kind`` is name, number, string, regex, op or nl; ``text`` its value."""

    kind: str
    text: str


def _refuse(what: str) -> PolicyViolation:
    return PolicyViolation(f"awk: the program {what}")


def _quoted(src: str, i: int, end: str, what: str) -> tuple[str, int]:
    """The text of a string or regex literal starting after its opening character at ``i``."""
    out = []
    while i < len(src):
        c = src[i]
        if c == "\\" and i + 1 < len(src):
            out.append(src[i : i + 2])
            i += 2
            continue
        if c == end:
            return "".join(out), i + 1
        if c == "\n":
            break
        out.append(c)
        i += 1
    raise _refuse(f"has an unterminated {what}")


def tokenize(src: str) -> list[Tok]:
    """Split an awk program into tokens; raise PolicyViolation on anything unknown."""
    toks: list[Tok] = []
    i = 0
    while i < len(src):
        c = src[i]
        if c in " \t\r\f\v":
            i += 1
        elif c == "\\" and src[i + 1 : i + 2] == "\n":
            i += 2
        elif c == "\\" and src[i + 1 : i + 3] == "\r\n":
            i += 3
        elif c == "\n":
            toks.append(Tok("nl", "\n"))
            i += 1
        elif c == "#":
            end = src.find("\n", i)
            i = len(src) if end < 0 else end
        elif c == '"':
            text, i = _quoted(src, i + 1, '"', "string")
            toks.append(Tok("string", text))
        elif c == "/" and _regex_expected(toks):
            text, i = _quoted(src, i + 1, "/", "regular expression")
            toks.append(Tok("regex", text))
        elif c == "@":
            raise _refuse("uses @ (extension loading, @include or indirect calls)")
        elif (
            m := NUMBER.match(src, i)
            if (c.isdigit() or (c == "." and src[i + 1 : i + 2].isdigit()))
            else None
        ):
            toks.append(Tok("number", m.group()))
            i = m.end()
        elif m := NAME.match(src, i):
            toks.append(Tok("name", m.group()))
            i = m.end()
        else:
            op = next((o for o in OPERATORS if src.startswith(o, i)), None)
            if op is None:
                raise _refuse(f"has a character the policy cannot check: {c!r}")
            toks.append(Tok("op", op))
            i += len(op)
    return toks


def _regex_expected(toks: list[Tok]) -> bool:
    if not toks:
        return True
    last = toks[-1]
    if last.kind == "nl":
        return True
    if last.kind == "op":
        return last.text in REGEX_AFTER_OPS
    return last.kind == "name" and last.text in REGEX_AFTER_WORDS


def _skip_balanced(toks: list[Tok], j: int) -> int:
    """Index just past the bracket group opening at ``j`` (``(`` or ``[``)."""
    depth = 0
    while j < len(toks):
        t = toks[j].text if toks[j].kind == "op" else ""
        if t in ("(", "["):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def _after_lvalue(toks: list[Tok], j: int) -> int:
    """Index just past an optional lvalue (``var``, ``arr[...]``, ``$expr``) starting at ``j``."""
    if j < len(toks) and toks[j].kind == "op" and toks[j].text == "$":
        j += 1
        if j < len(toks) and toks[j].kind == "op" and toks[j].text == "(":
            return _skip_balanced(toks, j)
        return j + 1 if j < len(toks) and toks[j].kind in ("name", "number") else j
    if j < len(toks) and toks[j].kind == "name":
        j += 1
        if j < len(toks) and toks[j].kind == "op" and toks[j].text == "[":
            j = _skip_balanced(toks, j)
    return j


def _is(tok: Tok | None, *texts: str) -> bool:
    return tok is not None and tok.kind in ("op", "nl") and tok.text in texts


def _check_print(toks: list[Tok], i: int) -> None:
    depth, j = 0, i + 1
    while j < len(toks):
        t = toks[j]
        if t.kind == "nl" or (t.kind == "op" and t.text in (";", "}") and depth == 0):
            return
        if t.kind == "op" and t.text in ("(", "["):
            depth += 1
        elif t.kind == "op" and t.text in (")", "]"):
            depth -= 1
        elif t.kind == "op" and t.text in (">", ">>") and depth == 0:
            target = toks[j + 1] if j + 1 < len(toks) else None
            after = toks[j + 2] if j + 2 < len(toks) else None
            if not (target and target.kind == "string" and target.text in SAFE_REDIRECTS) or not (
                after is None or after.kind == "nl" or _is(after, ";", "}")
            ):
                raise _refuse(
                    f"redirects {toks[i].text} output to a file; print to stdout and use a shell "
                    "redirection (> file) instead"
                )
            return
        j += 1


def check_awk_program(program: str) -> None:
    """Refuse awk programs that can run commands, read or write files of their own choosing, open
    sockets or change the files awk reads."""
    toks = tokenize(program)
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if tok.kind == "op" and tok.text == "|&":
            raise _refuse("uses a coprocess (|&)")
        if tok.kind == "op" and tok.text == "|":
            raise _refuse("pipes to or from a command (|); use a shell pipe instead")
        if tok.kind == "string" and tok.text.startswith("/inet"):
            raise _refuse("opens a network connection (/inet)")
        if tok.kind != "name":
            continue
        if tok.text == "system":
            raise _refuse("calls system()")
        if tok.text in ("ARGV", "ARGC"):
            raise _refuse(
                f"uses {tok.text}, which can change the files awk reads; pass file names as arguments"
            )
        if tok.text == "getline":
            j = _after_lvalue(toks, i + 1)
            if j < len(toks) and _is(toks[j], "<"):
                raise _refuse("reads a file with getline <; pass the file as an argument instead")
        if tok.text in ("print", "printf"):
            _check_print(toks, i)
        if tok.text == "ENVIRON":
            end = _skip_balanced(toks, i + 1) if _is(nxt, "[") else None
            after = toks[end] if end is not None and end < len(toks) else None
            if (
                end is None
                or (after is not None and after.kind == "op" and after.text in ASSIGN_OPS)
                or (prev is not None and (_is(prev, "++", "--") or prev.text in ("delete", "getline")))
            ):
                raise _refuse("changes ENVIRON; refused")
