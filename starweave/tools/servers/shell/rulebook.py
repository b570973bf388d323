"""The vocabulary of per-command rules: the context a rule sees, option splitting and path checks.

A rule is ``rule(argv, ctx) -> argv``: it raises :class:`PolicyViolation` with a specific reason,
or returns the argv to run (usually unchanged; ``git`` gets safety settings injected).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import NoReturn

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.paths import PathGuard


@dataclass
class RuleContext:
    """What a rule may consult: paths, mode and a way to check a wrapped command."""

    guard: PathGuard
    cwd: str
    mode: str
    allow_network: bool
    sandboxed: bool
    check_inner: Callable[[list[str], RuleContext], list[str]]
    # Set while checking the command xargs runs: its real arguments arrive on stdin, unseen.
    stdin_args: bool = False

    def read(self, path: str) -> None:
        """Refuse reading ``path`` if it is sensitive."""
        self.guard.check_read(path, self.cwd)

    def write(self, path: str) -> None:
        """Refuse writing ``path`` unless it is inside the workspace (and the mode allows writes)."""
        self.guard.check_write(path, self.cwd)

    def inner(self, argv: list[str], *, stdin_args: bool = False) -> list[str]:
        """Check the command a wrapper runs with the full policy; returns its argv."""
        ctx = replace(self, stdin_args=self.stdin_args or stdin_args)
        return self.check_inner(argv, ctx)

    def need_network(self, name: str) -> None:
        """Refuse ``name`` unless SHELL.ALLOW_NETWORK is on."""
        if not self.allow_network:
            refuse(f"{name} uses the network, which is off (set SHELL.ALLOW_NETWORK: true to allow it)")


Rule = Callable[[list[str], RuleContext], list[str]]


def refuse(reason: str) -> NoReturn:
    """Raise the policy violation for ``reason``."""
    raise PolicyViolation(reason)


@dataclass
class Args:
    """Options (``(name, value)``, names with their dashes) and positional arguments."""

    opts: list[tuple[str, str | None]] = field(default_factory=list)
    pos: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        """True when any of ``names`` was given."""
        return any(name in names for name, _ in self.opts)

    def values(self, *names: str) -> list[str]:
        """The values given to any of ``names``."""
        return [v for name, v in self.opts if name in names and v is not None]


def split_args(
    args: Iterable[str],
    short_value: str = "",
    long_value: Iterable[str] = (),
    *,
    stop_at_first_pos: bool = False,
) -> Args:
    """getopt-style split. ``short_value`` lists short options that take a value (``-n 5``/``-n5``);
    ``long_value`` names long options taking one (``--file x``/``--file=x``). With
    ``stop_at_first_pos`` everything from the first positional on is positional (wrappers)."""
    long_set = set(long_value)
    out = Args()
    items = list(args)
    i = 0
    while i < len(items):
        a = items[i]
        if a == "--":
            out.pos.extend(items[i + 1 :])
            break
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if eq:
                out.opts.append((name, value))
            elif name in long_set and i + 1 < len(items):
                out.opts.append((name, items[i + 1]))
                i += 1
            else:
                out.opts.append((name, None))
        elif a.startswith("-") and a != "-":
            j = 1
            while j < len(a):
                ch = a[j]
                if ch in short_value:
                    if j + 1 < len(a):
                        out.opts.append(("-" + ch, a[j + 1 :]))
                    elif i + 1 < len(items):
                        out.opts.append(("-" + ch, items[i + 1]))
                        i += 1
                    else:
                        out.opts.append(("-" + ch, None))
                    break
                out.opts.append(("-" + ch, None))
                j += 1
        else:
            if stop_at_first_pos:
                out.pos.extend(items[i:])
                break
            out.pos.append(a)
        i += 1
    return out


def looks_like_path(arg: str, cwd: str) -> bool:
    """Whether an argument should be checked as a path: it has a slash, starts with a dot, or names
    an existing entry of ``cwd``."""
    if not arg or "\n" in arg:
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
    """Refuse any argument (or option value) that names a sensitive file."""
    for arg in args:
        for cand in path_candidates(arg):
            if looks_like_path(cand, ctx.cwd):
                ctx.read(cand)


def write_all_operands(args: list[str], ctx: RuleContext) -> None:
    """Treat every non-option argument as a write target (and option values as reads).

    Used by commands whose operands are all modified (rm, mkdir, touch, chmod ...). A mode such as
    ``755`` is checked too; it resolves inside the workspace, so that is harmless, and it means a
    file name can never hide behind an argument we misread as a mode."""
    ends = False
    for a in args:
        if not ends and a == "--":
            ends = True
        elif not ends and a.startswith("-") and a != "-":
            if "=" in a:
                check_reads([a], ctx)
        else:
            ctx.write(a)


def generic_read(argv: list[str], ctx: RuleContext) -> list[str]:
    """Rule for commands that only read the files they are given."""
    check_reads(argv[1:], ctx)
    return argv


def no_paths(argv: list[str], ctx: RuleContext) -> list[str]:
    """Rule for commands whose arguments are never opened as files (echo, basename, test ...)."""
    return argv


def refuser(reason: str) -> Rule:
    """A rule that always refuses with ``reason``."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        refuse(f"{argv[0]}: {reason}")

    return rule
