"""Parse a command line into pipelines of simple commands, and expand words like a shell would.

Grammar (a strict subset of POSIX sh)::

    line      := pipeline ( ("&&" | "||" | ";") pipeline )* [";"]
    pipeline  := command ( ("|" | "|&") command )*
    command   := [NAME=value ...] word ( word | redirection )*
    redirection := [fd] (">" | ">>" | ">|" | "<" | "&>" | "&>>" | ">&" fd)  target

Parsing keeps words unexpanded; :func:`expand_command` expands them later, right before a pipeline
runs, so that ``mkdir d && touch d/a && ls d/*`` sees ``d/a`` exactly as bash would.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
from dataclasses import dataclass, field

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.budget import (
    MAX_ARGV_BYTES,
    MAX_COMMAND_CHARS,
    MAX_PIPELINES,
    MAX_STAGES,
    MAX_WORDS,
    Budget,
)
from starweave.tools.servers.shell.globbing import bounded_glob
from starweave.tools.servers.shell.lexer import Op, Segment, Token, Word, tokenize

SHELL_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "function",
        "select",
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "coproc",
    }
)
# Environment assignments a command may carry (``LANG=C sort``); anything else could change how a
# program loads code (LD_PRELOAD, PYTHONPATH, GIT_*, BASH_ENV ...).
ALLOWED_ASSIGNMENT = re.compile(r"LANG|LANGUAGE|LC_[A-Z]+|TZ|COLUMNS")
# Their values are names, never paths: glibc loads a locale or a time zone from a path it is given.
ASSIGNMENT_VALUE = re.compile(r"[A-Za-z0-9_.,:@+<>-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.,+-]*)*")


def check_assignment(name: str, value: str) -> None:
    """Refuse ``NAME=value`` unless NAME is a locale, time zone or width setting with a plain value."""
    if not ALLOWED_ASSIGNMENT.fullmatch(name):
        raise PolicyViolation(
            f"environment assignment {name}=... is not supported (only LANG, LC_*, TZ, COLUMNS)"
        )
    if not ASSIGNMENT_VALUE.fullmatch(value) or value.startswith((":", "/", ".")) or "/." in value:
        raise PolicyViolation(
            f"{name}={value!r}: the value must be a plain name (like C.UTF-8 or Europe/Paris)"
        )


ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
# A brace group without nested braces; whether it expands (holds "," or "..") is checked on each
# match: one pattern with the separator inside backtracks quadratically on "{,,,,...".
BRACE_GROUP = re.compile(r"\{[^{}]*\}")


@dataclass
class RawRedirect:
    """A redirection before expansion: ``fd`` (0, 1, 2; -1 for both 1 and 2), operator and target."""

    fd: int
    op: str
    target: Word


@dataclass
class RawCommand:
    """A simple command before expansion."""

    words: list[Word] = field(default_factory=list)
    redirects: list[RawRedirect] = field(default_factory=list)
    assignments: dict[str, str] = field(default_factory=dict)


@dataclass
class Pipeline:
    """Commands joined by ``|``; stdout of one feeds stdin of the next."""

    commands: list[RawCommand] = field(default_factory=list)


@dataclass
class CommandLine:
    """Pipelines joined by connectors: ``connectors[i]`` sits between pipeline i and i + 1."""

    pipelines: list[Pipeline] = field(default_factory=list)
    connectors: list[str] = field(default_factory=list)


@dataclass
class Redirect:
    """An expanded redirection: ``kind`` is read, write, append or dup (``fd`` becomes ``dup_to``)."""

    fd: int
    kind: str
    target: str = ""
    dup_to: int | None = None


@dataclass
class SimpleCommand:
    """An expanded simple command, ready for the policy and the runner."""

    argv: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _redirect(fd: int | None, op: str, target: Word) -> RawRedirect:
    if op in ("<&", "<>"):
        raise PolicyViolation(f"the redirection {op} is not supported; use <, >, >>, 2>, 2>&1 or &>")
    default_fd = 0 if op == "<" else 1
    real_fd = default_fd if fd is None else fd
    if real_fd not in (0, 1, 2):
        raise PolicyViolation(f"redirecting file descriptor {real_fd} is not supported (only 0, 1 and 2)")
    if op in ("&>", "&>>"):
        real_fd = -1
    if op == ">&" and not (target.unquoted_literal and target.raw.isdigit()):
        op, real_fd = "&>", -1  # ">&file" means "&>file"
    return RawRedirect(real_fd, op, target)


def parse_command_line(command: str) -> CommandLine:
    """Parse ``command`` into a :class:`CommandLine`; raise PolicyViolation naming what is unsupported."""
    if len(command) > MAX_COMMAND_CHARS:
        raise PolicyViolation(
            f"the command line is {len(command)} characters long (at most {MAX_COMMAND_CHARS}); "
            "write long content to a file with the file tools instead"
        )
    tokens: list[Token] = tokenize(command)
    line = CommandLine()
    pipeline = Pipeline()
    current = RawCommand()
    i = 0

    def close_command() -> None:
        nonlocal current
        if not current.words:
            what = "a redirection without a command" if current.redirects else "an empty command"
            raise PolicyViolation(f"syntax error: {what} near {_near(tokens, i)!r}")
        pipeline.commands.append(current)
        if len(pipeline.commands) > MAX_STAGES:
            raise PolicyViolation(f"a pipeline may have at most {MAX_STAGES} commands")
        current = RawCommand()

    while i < len(tokens):
        tok = tokens[i]
        if isinstance(tok, Word):
            name = ASSIGNMENT.match(tok.raw) if tok.segments and not tok.segments[0].quoted else None
            if not current.words and name:
                check_assignment(name.group(1), tok.raw[name.end() :])
                current.assignments[name.group(1)] = tok.raw[name.end() :]
            else:
                if not current.words and tok.unquoted_literal and tok.raw in SHELL_KEYWORDS:
                    raise PolicyViolation(
                        f"the shell keyword {tok.raw!r} is not supported (no if/for/while/brace groups); "
                        "run one command at a time"
                    )
                current.words.append(tok)
            i += 1
            continue
        op = tok.text
        if op in ("<", ">", ">>", ">|", "&>", "&>>", ">&", "<&", "<>"):
            if i + 1 >= len(tokens) or not isinstance(tokens[i + 1], Word):
                raise PolicyViolation(f"syntax error: {op} needs a file name")
            target = tokens[i + 1]
            assert isinstance(target, Word)
            current.redirects.append(_redirect(tok.fd, ">" if op == ">|" else op, target))
            i += 2
            continue
        if op in ("(", ")"):
            raise PolicyViolation("subshells ( ... ) are not supported; run the commands one after another")
        if op == "&":
            raise PolicyViolation("background jobs (&) are not supported; commands run to completion")
        if op == ";;":
            raise PolicyViolation("case statements are not supported")
        if op in ("|", "|&"):
            if op == "|&":
                current.redirects.append(RawRedirect(2, ">&", _digit_word("1")))
            close_command()
        elif op in ("&&", "||", ";"):
            if op == ";" and not current.words and not current.redirects and (i + 1 >= len(tokens)):
                break  # a trailing ";" is harmless
            close_command()
            line.pipelines.append(pipeline)
            if len(line.pipelines) >= MAX_PIPELINES:
                raise PolicyViolation(f"a command line may hold at most {MAX_PIPELINES} pipelines")
            line.connectors.append(op)
            pipeline = Pipeline()
        i += 1
    if current.words or current.redirects or pipeline.commands:
        close_command()
        line.pipelines.append(pipeline)
    elif line.connectors and line.connectors[-1] == ";":
        line.connectors.pop()
    elif line.connectors:
        raise PolicyViolation(f"syntax error: the command ends with {line.connectors[-1]!r}")
    if not line.pipelines:
        raise PolicyViolation("the command is empty")
    return line


def _digit_word(text: str) -> Word:
    return Word([Segment(text, False)])


def _near(tokens: list[Token], i: int) -> str:
    if i < len(tokens):
        tok = tokens[i]
        return tok.text if isinstance(tok, Op) else tok.raw
    return "end of line"


def real_home() -> str:
    """The home directory of the user running Starweave (what ``~`` means)."""
    return pwd.getpwuid(os.getuid()).pw_dir


def expand_word(word: Word, *, cwd: str, workspace: str, budget: Budget | None = None) -> list[str]:
    """Expand ``~``, ``$HOME``/``$PWD`` and globs of one word (no match keeps the literal, like bash)."""
    value, pattern, has_glob = "", "", False
    for n, seg in enumerate(word.segments):
        if seg.var is not None:
            text = workspace if seg.var == "HOME" else cwd
            value, pattern = value + text, pattern + glob.escape(text)
            continue
        text = seg.text
        if not seg.quoted:
            if n == 0 and text.startswith("~"):
                head, _, rest = text.partition("/")
                if head != "~":
                    raise PolicyViolation(f"{head} (another user's home) is not supported")
                text = real_home() + ("/" + rest if "/" in text else "")
                value, pattern = value + text, pattern + glob.escape(text)
                continue
            if any("," in m or ".." in m for m in BRACE_GROUP.findall(text)):
                raise PolicyViolation(
                    f"brace expansion in {word.raw!r} is not supported; list the names explicitly"
                )
            if any(c in text for c in "*?["):
                has_glob = True
            value, pattern = value + text, pattern + text
        else:
            value, pattern = value + text, pattern + glob.escape(text)
    if not has_glob:
        return [value]
    matches = bounded_glob(pattern, cwd, budget or Budget(), word.raw)
    return matches if matches else [value]


def expand_command(
    raw: RawCommand, *, cwd: str, workspace: str, budget: Budget | None = None
) -> SimpleCommand:
    """Expand every word and redirection target of ``raw`` against ``cwd`` (globs drawing on
    ``budget``); the expanded command line is capped in words and bytes."""
    budget = budget or Budget()
    argv: list[str] = []
    for word in raw.words:
        argv.extend(expand_word(word, cwd=cwd, workspace=workspace, budget=budget))
        if len(argv) > MAX_WORDS:
            raise PolicyViolation(f"the command expands to more than {MAX_WORDS} words; name fewer files")
    if sum(len(a) + 1 for a in argv) > MAX_ARGV_BYTES:
        raise PolicyViolation(f"the command expands to more than {MAX_ARGV_BYTES} bytes of arguments")
    redirects: list[Redirect] = []
    for r in raw.redirects:
        if r.op == ">&":
            redirects.append(Redirect(r.fd, "dup", dup_to=int(r.target.raw)))
            continue
        targets = expand_word(r.target, cwd=cwd, workspace=workspace, budget=budget)
        if len(targets) != 1:
            raise PolicyViolation(f"ambiguous redirect: {r.target.raw!r} matches several files")
        target = targets[0]
        if r.fd == -1:
            redirects.append(Redirect(1, "append" if r.op == "&>>" else "write", target))
            redirects.append(Redirect(2, "dup", dup_to=1))
        elif r.op == "<":
            redirects.append(Redirect(r.fd, "read", target))
        else:
            redirects.append(Redirect(r.fd, "append" if r.op == ">>" else "write", target))
    return SimpleCommand(argv=argv, redirects=redirects, env=dict(raw.assignments))
