"""Rules for system tools: process listings and signals, the clock, the host name, sockets, top."""

from __future__ import annotations

import os
import re

from starweave.tools.servers.shell.rulebook import Rule, RuleContext, check_reads, refuse

# ps options that take a value: UNIX (-o), BSD (o, as the last letter of a word) and GNU (--format).
PS_UNIX_VALUE = frozenset("CGgOopqstuU")
PS_BSD_VALUE = frozenset("OopqtUk")
PS_LONG = frozenset(
    {
        "pid",
        "ppid",
        "quick-pid",
        "sid",
        "tty",
        "user",
        "User",
        "Group",
        "group",
        "format",
        "sort",
        "cols",
        "columns",
        "width",
        "rows",
        "lines",
    }
)
PS_LONG_SWITCH = frozenset(
    {"forest", "deselect", "context", "headers", "no-headers", "cumulative", "help", "info", "version"}
)
SIGNAL = re.compile(r"-(?:[0-9]+|(?:SIG)?[A-Z][A-Z0-9+-]*)")


def rule_ps(argv: list[str], ctx: RuleContext) -> list[str]:
    """ps: any listing, but never another process's environment (BSD ``e``: ``ps e``, ``ps eww``)."""
    words, i = argv[1:], 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            name, eq, _ = w[2:].partition("=")
            if name in PS_LONG:
                i += 1 if eq else 2
                continue
            if name not in PS_LONG_SWITCH:
                refuse(f"ps: unknown option {w}; see ps --help")
        elif w.startswith("-"):
            letters = w[1:]
            for n, ch in enumerate(letters):
                if not ch.isalpha():
                    refuse(f"ps: unknown option -{ch}; see ps --help")
                if ch in PS_UNIX_VALUE:
                    i += 0 if n + 1 < len(letters) else 1
                    break
        else:
            if "e" in w:
                refuse("ps e shows the environment of other processes, which may hold secrets; refused")
            if w and w[-1] in PS_BSD_VALUE:
                i += 1
        i += 1
    return argv


def _protected_pids() -> set[int]:
    """Starweave itself, its ancestors and init: a model must not stop the agent that runs it."""
    pids, pid = {0, 1}, os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def rule_kill(argv: list[str], ctx: RuleContext) -> list[str]:
    """kill: signals to single processes only: not to every process (-1), not to process groups,
    not to init, Starweave or its parents."""
    words = list(argv[1:])
    if words and SIGNAL.fullmatch(words[0]):
        words = words[1:]
    for word in words:
        if re.fullmatch(r"-[0-9]+", word):
            refuse(f"kill {word}: only process ids are accepted (no -1, process groups or job specs)")
    args = ctx.opts(["kill", *words])
    if args.has("-l", "--list", "-L", "--table"):
        return argv
    protected = _protected_pids()
    for target in args.pos:
        if not target.isdigit():
            refuse(f"kill {target}: only process ids are accepted (no -1, process groups or job specs)")
        if int(target) in protected:
            refuse(f"kill {target}: that is init, Starweave or one of its parent processes; refused")
    return argv


def rule_pkill(argv: list[str], ctx: RuleContext) -> list[str]:
    """pkill/killall match processes by name, which can hit Starweave itself: only under the
    sandbox (its own PID namespace); otherwise use ps and kill PID."""
    if argv[0] == "killall":
        words = argv[1:]
        if words and SIGNAL.fullmatch(words[0]):
            words = words[1:]
        ctx.opts(["killall", *words])
    else:
        ctx.opts(argv)
    if not ctx.sandboxed:
        refuse(f"{argv[0]} matches processes by name and could stop Starweave itself; use ps, then kill PID")
    return argv


def rule_date(argv: list[str], ctx: RuleContext) -> list[str]:
    """date: printing is fine; setting the clock (-s, or an MMDDhhmm operand) is refused."""
    args = ctx.opts(argv)
    if args.has("-s", "--set") or any(not p.startswith("+") for p in args.pos):
        refuse("date: setting the system clock is refused")
    check_reads(args.values("-f", "--file", "-r", "--reference"), ctx)
    return argv


def rule_hostname(argv: list[str], ctx: RuleContext) -> list[str]:
    """hostname: printing is fine; setting it is refused."""
    args = ctx.opts(argv)
    if args.pos or args.has("-F", "--file", "-b", "--boot"):
        refuse("hostname: setting the host name is refused")
    return argv


def rule_top(argv: list[str], ctx: RuleContext) -> list[str]:
    """top: only batch mode (``top -b -n 1``); the interactive screen cannot work here."""
    args = ctx.opts(argv)
    if not args.has("-b", "--batch-mode"):
        refuse("top is interactive; use 'top -b -n 1' (batch mode) or ps")
    if not args.has("-n", "--iterations"):
        refuse("top -b without -n never ends; add -n 1")
    return argv


def rule_ss(argv: list[str], ctx: RuleContext) -> list[str]:
    """ss: listing only; -K closes sockets, -D writes a dump file."""
    args = ctx.opts(argv)
    if args.has("-K", "--kill"):
        refuse("ss -K closes other programs' sockets; refused")
    for out in args.values("-D", "--diag"):
        ctx.write(out)
    check_reads(args.values("-F", "--filter"), ctx)
    return argv


SYSTEM_RULES: dict[str, Rule] = {
    "ps": rule_ps,
    "kill": rule_kill,
    "pkill": rule_pkill,
    "killall": rule_pkill,
    "date": rule_date,
    "hostname": rule_hostname,
    "top": rule_top,
    "ss": rule_ss,
}
