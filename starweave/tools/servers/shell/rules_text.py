"""Rules for text and search tools that can hide writes or command execution in their arguments:
sort, sed, awk, find, tar, plus date, hostname and top."""

from __future__ import annotations

import os
import re

from starweave.tools.servers.shell.rulebook import Rule, RuleContext, check_reads, refuse, split_args

MAX_SCRIPT_FILE = 65536


def rule_sort(argv: list[str], ctx: RuleContext) -> list[str]:
    """sort: --compress-program runs a program; -o and -T write."""
    if any(a.startswith("--compress-prog") for a in argv[1:]):
        refuse("sort --compress-program runs an arbitrary program")
    args = split_args(
        argv[1:],
        "kotST",
        ("--key", "--output", "--field-separator", "--buffer-size", "--temporary-directory"),
    )
    for out in args.values("-o", "--output", "-T", "--temporary-directory"):
        ctx.write(out)
    check_reads(args.pos + args.values("--files0-from", "--random-source"), ctx)
    return argv


def _script_file(path: str, ctx: RuleContext, what: str) -> str:
    ctx.read(path)
    real = ctx.guard.resolve(path, ctx.cwd)
    try:
        if os.path.getsize(real) > MAX_SCRIPT_FILE:
            refuse(f"{what} script file {path!r} is too large to check")
        with open(real, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        refuse(f"{what} script file {path!r} cannot be read: {exc.strerror}")


# ---- sed -----------------------------------------------------------------------------------------


def _sed_delimited(script: str, i: int, delim: str) -> int:
    """Index just past the next unescaped ``delim`` from ``i``."""
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delim:
            return i + 1
        i += 1
    refuse("sed: unterminated s or y command")


def _sed_address(script: str, i: int) -> int:
    for _ in range(2):
        while i < len(script) and script[i] in " \t":
            i += 1
        if i < len(script) and script[i] == "/":
            i = _sed_delimited(script, i + 1, "/")
            while i < len(script) and script[i] in "IM":
                i += 1
        elif i < len(script) and script[i] == "\\" and i + 1 < len(script):
            i = _sed_delimited(script, i + 2, script[i + 1])
        else:
            m = re.match(r"[0-9$]+(~[0-9]+)?|[+~][0-9]+", script[i:])
            if m:
                i += m.end()
        if i < len(script) and script[i] == ",":
            i += 1
            continue
        break
    while i < len(script) and script[i] in " \t!":
        i += 1
    return i


def _rest_of_line(script: str, i: int) -> tuple[str, int]:
    end = script.find("\n", i)
    end = len(script) if end < 0 else end
    return script[i:end].strip(), end


def check_sed_script(script: str, ctx: RuleContext) -> None:
    """Walk a sed script: refuse ``e`` (and the ``e`` flag of ``s``), check ``w``/``r`` files."""
    i = 0
    while i < len(script):
        if script[i] in " \t\n;{}":
            i += 1
            continue
        if script[i] == "#":
            i = _rest_of_line(script, i)[1]
            continue
        i = _sed_address(script, i)
        if i >= len(script):
            break
        cmd = script[i]
        i += 1
        if cmd == "e":
            refuse("sed: the e command executes its argument as a shell command")
        if cmd in "sy":
            delim = script[i]
            i = _sed_delimited(script, i + 1, delim)
            i = _sed_delimited(script, i, delim)
            m = re.match(r"[0-9gpiImMe]*", script[i:])
            flags = m.group() if m else ""
            i += len(flags)
            if "e" in flags:
                refuse("sed: the e flag of s executes the pattern space as a shell command")
            if i < len(script) and script[i] in "wW":
                target, i = _rest_of_line(script, i + 1)
                ctx.write(target)
        elif cmd in "wW":
            target, i = _rest_of_line(script, i)
            ctx.write(target)
        elif cmd in "rR":
            source, i = _rest_of_line(script, i)
            ctx.read(source)
        elif cmd in "aic":
            i = _rest_of_line(script, i)[1]
        elif cmd in "btT:":
            m = re.match(r"[^;\n}]*", script[i:])
            i += m.end() if m else 0
        elif cmd in "qQlL":
            m = re.match(r"\s*[0-9]*", script[i:])
            i += m.end() if m else 0
        elif cmd not in "pdDnNgGhHxzF=P":
            refuse(f"sed: the command {cmd!r} is not understood by the policy; keep sed scripts simple")


def rule_sed(argv: list[str], ctx: RuleContext) -> list[str]:
    """sed: -i edits its files in place (workspace only); scripts may not execute or write outside."""
    args = split_args(argv[1:], "efl", ("--expression", "--file", "--line-length"))
    scripts = args.values("-e", "--expression")
    scripts += [_script_file(f, ctx, "sed") for f in args.values("-f", "--file")]
    files = args.pos
    if not scripts:
        if not files:
            refuse("sed: no script given")
        scripts, files = [files[0]], files[1:]
    for script in scripts:
        check_sed_script(script, ctx)
    in_place = args.has("-i", "--in-place")
    for f in files:
        if in_place:
            ctx.write(f)
        else:
            check_reads([f], ctx)
    return argv


# ---- awk -----------------------------------------------------------------------------------------

AWK_FORBIDDEN = (
    (re.compile(r"\bsystem\s*\("), "calls system()"),
    (re.compile(r"\|&"), "uses a coprocess (|&)"),
    (re.compile(r"(?<!\|)\|(?!\|)"), "pipes to or from a command (|); use a shell pipe instead"),
    (re.compile(r"\bgetline\b[^;}\n]*<"), "reads a file with getline <"),
    (re.compile(r"\bprintf?\b[^;{}\n]*>"), "redirects print output to a file; use a shell redirection"),
    (re.compile(r"@(load|include)\b"), "loads an extension"),
    (re.compile(r"/inet[46]?/"), "opens a network connection"),
)


def check_awk_program(program: str) -> None:
    """Refuse awk programs that can run commands, write files or open sockets."""
    for pattern, what in AWK_FORBIDDEN:
        if pattern.search(program):
            refuse(f"awk: the program {what}")


def rule_awk(argv: list[str], ctx: RuleContext) -> list[str]:
    """awk/gawk/mawk: the program is checked; -l/-i/-E/--load/--include are refused."""
    for a in argv[1:]:
        if a in ("-l", "-i", "--load", "--include") or a.startswith(("--load=", "--include=")):
            refuse(f"awk: {a} loads code from a library")
    args = split_args(argv[1:], "fvFeE", ("--file", "--assign", "--field-separator", "--source", "--exec"))
    if args.has("-E", "--exec"):
        refuse("awk: -E/--exec loads the program from a file and disables option checking")
    programs = args.values("-e", "--source") + [
        _script_file(f, ctx, "awk") for f in args.values("-f", "--file")
    ]
    files = args.pos
    if not programs:
        if not files:
            refuse("awk: no program given")
        programs, files = [files[0]], files[1:]
    for program in programs:
        check_awk_program(program)
    check_reads([f for f in files if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", f)], ctx)
    return argv


# ---- find ----------------------------------------------------------------------------------------

FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
FIND_FILE_OUTPUT = ("-fprint", "-fprint0", "-fprintf", "-fls")
FIND_VALUE_OPTS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-user",
        "-group",
        "-perm",
        "-newer",
        "-anewer",
        "-cnewer",
        "-samefile",
        "-printf",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-wholename",
        "-iwholename",
        "-lname",
        "-ilname",
        "-used",
        "-fstype",
        "-regextype",
        "-context",
        "-files0-from",
    }
)


def rule_find(argv: list[str], ctx: RuleContext) -> list[str]:
    """find: -exec/-ok run commands and -fprint writes (refused); -delete only under the workspace."""
    args = argv[1:]
    i = 0
    while (i < len(args) and args[i] in ("-H", "-L", "-P")) or (
        i < len(args) and args[i].startswith(("-D", "-O"))
    ):
        i += 2 if args[i] == "-D" else 1
    starts: list[str] = []
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ")", ","):
        starts.append(args[i])
        i += 1
    starts = starts or ["."]
    check_reads(starts, ctx)
    expr = args[i:]
    for n, a in enumerate(expr):
        if a in FIND_EXEC:
            refuse(f"find {a} runs a command for every file; print the names and use another command")
        if a in FIND_FILE_OUTPUT:
            refuse(f"find {a} writes to a file; use -print and a shell redirection instead")
        if a == "-delete":
            for s in starts:
                ctx.write(s)
        if a in ("-newer", "-anewer", "-cnewer", "-samefile", "-files0-from") and n + 1 < len(expr):
            ctx.read(expr[n + 1])
    return argv


# ---- tar -----------------------------------------------------------------------------------------

TAR_FORBIDDEN_LONG = (
    "--to-command",
    "--use-compress-program",
    "--checkpoint-action",
    "--rsh-command",
    "--rmt-command",
    "--info-script",
    "--new-volume-script",
    "--absolute-names",
)
TAR_VALUE_LETTERS = "fCTXbFIKgVLNH"


def rule_tar(argv: list[str], ctx: RuleContext) -> list[str]:
    """tar: options that run programs are refused; the archive and the extraction target are checked."""
    args = list(argv[1:])
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # old style "tar czf x.tgz dir": the first word is a bundle of letters
    for a in args:
        if a.startswith(TAR_FORBIDDEN_LONG):
            refuse(f"tar {a.split('=')[0]} is refused (runs a program or escapes the directory)")
    parsed = split_args(args, TAR_VALUE_LETTERS, ("--file", "--directory", "--files-from", "--exclude-from"))
    for bad in ("-I", "-F", "-P"):
        if parsed.has(bad):
            refuse(f"tar {bad} is refused (runs a program or writes absolute paths)")
    creating = parsed.has(
        "-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--delete"
    )
    extracting = parsed.has("-x", "--extract", "--get")
    for archive in parsed.values("-f", "--file"):
        if archive == "-":
            continue
        if creating:
            ctx.write(archive)
        else:
            ctx.read(archive)
    if extracting and not parsed.has("-O", "--to-stdout"):
        dirs = parsed.values("-C", "--directory")
        ctx.write(dirs[-1] if dirs else ctx.cwd)
    check_reads(parsed.pos + parsed.values("-T", "--files-from", "-X", "--exclude-from"), ctx)
    return argv


# ---- system information tools with a setter ------------------------------------------------------


def rule_date(argv: list[str], ctx: RuleContext) -> list[str]:
    """date: printing is fine; setting the clock (-s, or an MMDDhhmm operand) is refused."""
    args = split_args(argv[1:], "dfrsI", ("--date", "--file", "--reference", "--set"))
    if args.has("-s", "--set") or any(not p.startswith("+") for p in args.pos):
        refuse("date: setting the system clock is refused")
    check_reads(args.values("-f", "--file", "-r", "--reference"), ctx)
    return argv


def rule_hostname(argv: list[str], ctx: RuleContext) -> list[str]:
    """hostname: printing is fine; setting it is refused."""
    args = split_args(argv[1:], "F", ("--file",))
    if args.pos or args.has("-F", "--file", "-b", "--boot"):
        refuse("hostname: setting the host name is refused")
    return argv


def rule_top(argv: list[str], ctx: RuleContext) -> list[str]:
    """top: only batch mode (``top -b -n 1``); the interactive screen cannot work here."""
    args = split_args(argv[1:], "dnpuUoOw")
    if not args.has("-b"):
        refuse("top is interactive; use 'top -b -n 1' (batch mode) or ps")
    if not args.has("-n"):
        refuse("top -b without -n never ends; add -n 1")
    return argv


TEXT_RULES: dict[str, Rule] = {
    "sort": rule_sort,
    "sed": rule_sed,
    "awk": rule_awk,
    "gawk": rule_awk,
    "mawk": rule_awk,
    "nawk": rule_awk,
    "find": rule_find,
    "tar": rule_tar,
    "date": rule_date,
    "hostname": rule_hostname,
    "top": rule_top,
}
