"""The vocabulary of per-command rules: the context a rule sees, option parsing and path checks.

A rule is ``rule(argv, ctx) -> argv``: it raises :class:`PolicyViolation` with a specific reason,
or returns the argv to run (usually unchanged; some get safety options injected, e.g. ``git``'s
closed configuration or ``grep -r``'s exclusion of secret files). ``argv[0]`` is the name the rule
is known by (the real program's, see :mod:`targets`); ``ctx.real`` is the program's resolved path.

While a rule checks paths it records them in ``ctx.effects``, which the policy uses to keep the
stages of one pipeline from racing each other (see ``policy.check_pipeline_races``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import NoReturn

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.budget import Budget
from starweave.tools.servers.shell.optables import spec_for
from starweave.tools.servers.shell.options import Args, parse_options
from starweave.tools.servers.shell.paths import PathGuard

__all__ = ["Args", "Effects", "Rule", "RuleContext", "refuse"]

# Targets that are never "a file the command changes" for the pipeline race rule.
STREAM_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
# Tools that may read /dev/zero, /dev/urandom and friends: they stop after a count they are given
# (head -c, dd count=, od -N ...). Any other tool would read an endless device until its time runs out.
DEVICE_READERS = frozenset({"head", "dd", "od", "xxd", "cmp", "hexdump"})


@dataclass
class Effects:
    """What one simple command may do: the paths it names (resolved), those it writes, whether it
    may create, move or replace links (``relinks``: ln, mv, cp -r, archive extraction, git
    checkout, any script), so that a concurrent stage's path could change under it."""

    paths: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    relinks: str | None = None  # what makes it relink, for the message


@dataclass
class RuleContext:
    """What a rule may consult: paths, mode, the sandbox, the check's budget and a way to check a
    wrapped command."""

    guard: PathGuard
    cwd: str
    mode: str
    allow_network: bool
    sandboxed: bool
    check_inner: Callable[[list[str], RuleContext], list[str]]
    # Set while checking the command xargs runs: its real arguments arrive on stdin, unseen.
    stdin_args: bool = False
    budget: Budget = field(default_factory=Budget)
    real: str = ""  # the resolved path of the program being checked ("" when not installed)
    tool: str = ""  # the name of the rule being applied
    # The check of the whole line before anything runs: files an earlier pipeline creates may be
    # missing, so rules that depend on them defer to the check right before the pipeline runs.
    upfront: bool = False
    effects: Effects = field(default_factory=Effects)
    root: bool = field(default_factory=lambda: os.geteuid() == 0)

    # ---- paths -----------------------------------------------------------------------------------

    def read(self, path: str) -> str:
        """Check that ``path`` may be read (not a secret, not a FIFO, device or socket); returns
        the resolved path."""
        real = self.guard.check_read(path, self.cwd)
        self.guard.check_type(real, path, tool_devices=self.tool in DEVICE_READERS)
        self.effects.paths.append(real)
        return real

    def look(self, path: str) -> str:
        """Check a path whose metadata only is used (ls, stat, du, find's start): any file type."""
        real = self.guard.check_read(path, self.cwd)
        self.effects.paths.append(real)
        return real

    def write(self, path: str) -> str:
        """Check that ``path`` may be created, modified or deleted: inside the workspace, writable in
        this mode, and not a FIFO, device or socket. Returns the resolved path."""
        real = self.guard.check_write(path, self.cwd)
        if real not in STREAM_TARGETS:
            self.guard.check_type(real, path, tool_devices=False)
            self.effects.paths.append(real)
            self.effects.writes.append(real)
        return real

    def relinks(self, why: str) -> None:
        """Record that this command may create, move or replace links (``why`` names it)."""
        self.effects.relinks = self.effects.relinks or why

    def recursive(self, path: str, what: str) -> str:
        """Check the start of a recursive read: not at or above a place that holds secrets."""
        # A folder is listed (any entry type is fine there); a file is read like any other.
        real = self.look(path) if os.path.isdir(self.guard.resolve(path, self.cwd)) else self.read(path)
        why = self.guard.recursive_reason(real)
        if why:
            refuse(f"{what}: {why}")
        return real

    # ---- options and wrapped commands ------------------------------------------------------------

    def opts(self, argv: list[str]) -> Args:
        """``argv[1:]`` parsed with the option table of ``argv[0]`` (or of the real program)."""
        spec = spec_for(argv[0], self.real)
        if spec is None:
            refuse(f"{argv[0]}: the policy has no option table for it; ask the user to allow it")
        return parse_options(argv[0], argv[1:], spec)

    def inner(self, argv: list[str], *, stdin_args: bool = False) -> list[str]:
        """Check the command a wrapper runs with the full policy; returns its argv."""
        ctx = replace(self, stdin_args=self.stdin_args or stdin_args, real="", tool="")
        return self.check_inner(argv, ctx)

    def need_network(self, name: str) -> None:
        """Refuse ``name`` unless SHELL.ALLOW_NETWORK is on."""
        if not self.allow_network:
            refuse(f"{name} uses the network, which is off (set SHELL.ALLOW_NETWORK: true to allow it)")


Rule = Callable[[list[str], RuleContext], list[str]]


def refuse(reason: str) -> NoReturn:
    """Raise the policy violation for ``reason``."""
    raise PolicyViolation(reason)


def looks_like_path(arg: str, cwd: str) -> bool:
    """Whether an argument should be checked as a path: it has a slash, starts with a dot, or names
    an existing entry of ``cwd``."""
    if not arg or "\0" in arg:
        return False
    if "/" in arg or arg.startswith("."):
        return True
    return os.path.lexists(os.path.join(cwd, arg))


def path_candidates(arg: str) -> list[str]:
    """The strings inside one argument that may be paths: the argument itself, the value of
    ``--opt=value``/``key=value`` and ``@file``."""
    out = [arg]
    if "=" in arg:
        out.append(arg.split("=", 1)[1])
    if arg.startswith("@"):
        out.append(arg[1:])
    return out


def check_reads(args: Iterable[str], ctx: RuleContext) -> None:
    """Refuse any argument (or value inside it) that names a secret or a special file."""
    for arg in args:
        if arg == "-":
            continue
        for cand in path_candidates(arg):
            if looks_like_path(cand, ctx.cwd):
                ctx.read(cand)
        _remember_name(arg, ctx)


def check_looks(args: Iterable[str], ctx: RuleContext) -> None:
    """Like :func:`check_reads` for tools that only look at metadata (any file type is fine)."""
    for arg in args:
        for cand in path_candidates(arg):
            if looks_like_path(cand, ctx.cwd):
                ctx.look(cand)
        _remember_name(arg, ctx)


def _remember_name(arg: str, ctx: RuleContext) -> None:
    """A word that names no file yet may still name one a concurrent stage creates (``ln -s x y |
    cat y``): the pipeline race rule counts it as a path."""
    if arg and "\0" not in arg and not looks_like_path(arg, ctx.cwd):
        ctx.effects.paths.append(os.path.join(ctx.cwd, arg))


def option_values_read(args: Args, ctx: RuleContext) -> None:
    """Check every option value that looks like a path as a read."""
    check_reads([v for _, v in args.opts if v is not None], ctx)


def generic_read(argv: list[str], ctx: RuleContext) -> list[str]:
    """Rule for commands that only read the files they are given: options must be known, and every
    operand or option value that looks like a path is checked."""
    args = ctx.opts(argv)
    option_values_read(args, ctx)
    check_reads(args.pos, ctx)
    return argv


def generic_look(argv: list[str], ctx: RuleContext) -> list[str]:
    """Rule for commands that only look at metadata (ls, stat, du, namei ...)."""
    args = ctx.opts(argv)
    option_values_read(args, ctx)
    check_looks(args.pos, ctx)
    return argv


def no_paths(argv: list[str], ctx: RuleContext) -> list[str]:
    """Rule for commands whose arguments are never opened as files (echo, basename, test ...)."""
    ctx.opts(argv)
    return argv


def refuser(reason: str) -> Rule:
    """A rule that always refuses with ``reason``."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        refuse(f"{argv[0]}: {reason}")

    return rule
