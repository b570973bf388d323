"""Tokenize a command line the way a POSIX shell would, without ever running a shell.

We keep, for every word, which characters were quoted: a quoted ``*`` is a literal star, an unquoted
one is a glob. ``shlex`` cannot report that, so this is a small lexer of our own that follows the
POSIX quoting rules (single quotes, double quotes with ``\\`` escapes, backslash escapes). Anything
whose meaning would need a real shell (``$(...)``, backticks, ``$VAR``, ``<(...)``, here-docs, ``&``)
is refused with a :class:`~starweave.errors.PolicyViolation` naming the construct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from starweave.errors import PolicyViolation

# Longest first: the lexer tries them in this order.
OPERATORS = (
    "&&",
    "||",
    ";;",
    "|&",
    "&>>",
    "&>",
    ">>",
    ">|",
    ">&",
    "<&",
    "<<",
    "<>",
    "|",
    ";",
    "&",
    ">",
    "<",
    "(",
    ")",
)
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Variables a command may mention: they name the workspace and the working directory.
ALLOWED_VARS = frozenset({"HOME", "PWD"})


@dataclass
class Segment:
    """A run of characters of one word, with its quoting (``quoted``) or a variable (``var``)."""

    text: str
    quoted: bool
    var: str | None = None


@dataclass
class Word:
    """One shell word: its segments and, when it is an I/O number such as ``2`` in ``2>``, ``fd``."""

    segments: list[Segment] = field(default_factory=list)

    @property
    def raw(self) -> str:
        """The word with quotes removed and variables left as ``$NAME`` (for messages and checks)."""
        return "".join(f"${s.var}" if s.var else s.text for s in self.segments)

    @property
    def unquoted_literal(self) -> bool:
        """True when no character of the word was quoted or came from a variable."""
        return all(not s.quoted and s.var is None for s in self.segments)


@dataclass
class Op:
    """An operator token: ``|``, ``&&``, ``>`` ..., or a newline given as ``;``."""

    text: str
    fd: int | None = None  # the I/O number written right before a redirection, e.g. 2 in 2>


Token = Word | Op


def _refuse(what: str, hint: str) -> PolicyViolation:
    return PolicyViolation(f"{what} is not supported ({hint})")


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.tokens: list[Token] = []
        self.word: Word | None = None

    def _add(self, text: str, quoted: bool, var: str | None = None) -> None:
        if self.word is None:
            self.word = Word()
        segs = self.word.segments
        if var is None and segs and segs[-1].quoted == quoted and segs[-1].var is None:
            segs[-1].text += text
        else:
            segs.append(Segment(text, quoted, var))

    def _end_word(self) -> None:
        if self.word is not None:
            self.tokens.append(self.word)
            self.word = None

    def run(self) -> list[Token]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self._end_word()
                self.i += 1
            elif c == "\n":
                self._end_word()
                self.tokens.append(Op(";"))
                self.i += 1
            elif c == "#" and self.word is None:
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\\":
                if self.i + 1 < len(s) and s[self.i + 1] == "\n":
                    self.i += 2  # line continuation
                    continue
                if self.i + 1 >= len(s):
                    raise PolicyViolation("the command ends with a lone backslash")
                self._add(s[self.i + 1], True)
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise PolicyViolation("unterminated single quote")
                self._add(s[self.i + 1 : end], True)
                self.i = end + 1
            elif c == '"':
                self._double_quoted()
            elif c == "`":
                raise _refuse("command substitution with backticks", "run the inner command on its own first")
            elif c == "$":
                self._dollar(quoted=False)
            elif c in "|&;<>()":
                self._operator()
            else:
                self._add(c, False)
                self.i += 1
        self._end_word()
        return self.tokens

    def _double_quoted(self) -> None:
        s = self.s
        self.i += 1
        if self.word is None:
            self.word = Word()
        self._add("", True)  # "" is an (empty) word
        while True:
            if self.i >= len(s):
                raise PolicyViolation("unterminated double quote")
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    self._add(s[self.i + 1], True)
                self.i += 2
            elif c == "`":
                raise _refuse("command substitution with backticks", "run the inner command on its own first")
            elif c == "$":
                self._dollar(quoted=True)
            else:
                self._add(c, True)
                self.i += 1

    def _dollar(self, quoted: bool) -> None:
        s = self.s
        nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
        if nxt == "(":
            if s.startswith("$((", self.i):
                raise _refuse("arithmetic expansion $((...))", "compute the value yourself or use expr")
            raise _refuse("command substitution $(...)", "run the inner command on its own first")
        if nxt == "{":
            end = s.find("}", self.i)
            name = s[self.i + 2 : end] if end > 0 else ""
            if not NAME_RE.fullmatch(name) or name not in ALLOWED_VARS:
                raise _refuse(f"variable expansion ${{{name}}}", "only $HOME and $PWD are expanded")
            self._add("", quoted, var=name)
            self.i = end + 1
            return
        if nxt == "'" and not quoted:
            raise _refuse("$'...' quoting", "use plain single quotes")
        m = NAME_RE.match(s, self.i + 1)
        if m:
            if m.group() not in ALLOWED_VARS:
                raise _refuse(f"variable expansion ${m.group()}", "only $HOME and $PWD are expanded")
            self._add("", quoted, var=m.group())
            self.i = m.end()
            return
        if nxt and nxt in "?#@*!$-0123456789":
            raise _refuse(f"special parameter ${nxt}", "commands run without a shell")
        self._add("$", quoted)  # a lone $ is literal, as in bash
        self.i += 1

    def _operator(self) -> None:
        s = self.s
        op = next(o for o in OPERATORS if s.startswith(o, self.i))
        fd: int | None = None
        if op[0] in "<>" and self.word is not None and self.word.unquoted_literal and self.word.raw.isdigit():
            fd = int(self.word.raw)  # "2>" : the digits just before are the descriptor
            self.word = None
        self._end_word()
        if op in ("<", ">") and s.startswith("(", self.i + 1):
            raise _refuse(f"process substitution {op}(...)", "write the output to a file first")
        if op == "<<":
            what = "here-string <<<" if s.startswith("<<<", self.i) else "here-document <<"
            raise _refuse(what, "write the text to a file with echo first")
        self.tokens.append(Op(op, fd))
        self.i += len(op)


def tokenize(command: str) -> list[Token]:
    """Split ``command`` into words and operators; raise PolicyViolation on unsupported syntax."""
    return _Lexer(command).run()
