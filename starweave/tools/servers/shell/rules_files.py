"""Rules for commands that create, modify or delete files."""

from __future__ import annotations

from starweave.tools.servers.shell.rulebook import (
    Rule,
    RuleContext,
    check_reads,
    refuse,
    split_args,
    write_all_operands,
)


def rule_rm(argv: list[str], ctx: RuleContext) -> list[str]:
    """rm/rmdir/shred/unlink: every operand is deleted; never the workspace itself."""
    if "--no-preserve-root" in argv:
        refuse("rm --no-preserve-root is refused")
    write_all_operands(argv[1:], ctx)
    for a in split_args(argv[1:]).pos:
        if ctx.guard.resolve(a, ctx.cwd) == ctx.guard.workspace:
            refuse(f"{argv[0]} {a}: would delete the workspace itself; delete the files inside it instead")
    return argv


def rule_write_operands(argv: list[str], ctx: RuleContext) -> list[str]:
    """mkdir, touch, tee, truncate, chmod, chown, chgrp: every operand is modified."""
    write_all_operands(argv[1:], ctx)
    return argv


def _dest_and_sources(
    argv: list[str], short_value: str, long_value: tuple[str, ...]
) -> tuple[str | None, list[str]]:
    args = split_args(argv[1:], short_value, long_value)
    targets = args.values("-t", "--target-directory")
    if targets:
        return targets[-1], args.pos
    if len(args.pos) >= 2:
        return args.pos[-1], args.pos[:-1]
    return (args.pos[0] if args.pos else None), []


def rule_copy(argv: list[str], ctx: RuleContext) -> list[str]:
    """cp and install: the destination is written, the sources are read."""
    args = split_args(argv[1:], "tSmog", ("--target-directory", "--suffix", "--mode", "--owner", "--group"))
    if argv[0] == "install" and args.has("-d", "--directory"):
        for p in args.pos:
            ctx.write(p)
        return argv
    dest, sources = _dest_and_sources(argv, "tSmog", ("--target-directory", "--suffix", "--mode"))
    if dest is not None:
        ctx.write(dest)
    for s in sources:
        ctx.read(s)
    return argv


def rule_mv(argv: list[str], ctx: RuleContext) -> list[str]:
    """mv: the destination is written and the sources are removed, so both must be in the workspace."""
    dest, sources = _dest_and_sources(argv, "tS", ("--target-directory", "--suffix"))
    for p in [*sources, *([dest] if dest is not None else [])]:
        ctx.write(p)
    return argv


def rule_ln(argv: list[str], ctx: RuleContext) -> list[str]:
    """ln: the link is written; a hard link's source must be in the workspace too, since writing
    through a hard link modifies the original file."""
    args = split_args(argv[1:], "tS", ("--target-directory", "--suffix"))
    dest, sources = _dest_and_sources(argv, "tS", ("--target-directory", "--suffix"))
    if dest is not None:
        ctx.write(dest)
    symbolic = args.has("-s", "--symbolic")
    for s in sources:
        if symbolic:
            continue  # a symlink is resolved again (realpath) whenever it is used
        if not ctx.guard.in_workspace(ctx.guard.resolve(s, ctx.cwd)):
            refuse(f"ln: a hard link to {s!r} (outside the workspace) is refused; use ln -s or cp")
    return argv


def rule_dd(argv: list[str], ctx: RuleContext) -> list[str]:
    """dd: ``of=`` is written, ``if=`` is read."""
    for a in argv[1:]:
        key, _, value = a.partition("=")
        if key == "of":
            ctx.write(value)
        elif key == "if":
            ctx.read(value)
    return argv


def rule_compress(argv: list[str], ctx: RuleContext) -> list[str]:
    """gzip, bzip2, xz, zstd and their un- forms replace files unless they write to stdout or test."""
    args = split_args(argv[1:], "So", ("--suffix", "--output"))
    for out in args.values("-o", "--output"):
        ctx.write(out)
    to_stdout = args.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list")
    if argv[0] in ("zcat", "bzcat", "xzcat", "zstdcat") or to_stdout:
        check_reads(args.pos, ctx)
    else:
        for p in args.pos:
            if p != "-":
                ctx.write(p)
    return argv


def rule_zip(argv: list[str], ctx: RuleContext) -> list[str]:
    """zip ARCHIVE FILES...: the archive is written, the files are read; -T/-TT would run commands."""
    if any(a in ("-TT", "--unzip-command") or a.startswith("--unzip-command") for a in argv[1:]):
        refuse("zip -TT/--unzip-command runs a command")
    args = split_args(argv[1:], "bnitxO", ("--temp-path", "--output-file"))
    targets = args.values("-O", "--output-file", "-b", "--temp-path")
    if args.pos:
        targets.append(args.pos[0])
    for t in targets:
        ctx.write(t)
    check_reads(args.pos[1:], ctx)
    return argv


def rule_unzip(argv: list[str], ctx: RuleContext) -> list[str]:
    """unzip: extracts into -d DIR or the working directory unless it only lists, tests or pipes."""
    args = split_args(argv[1:], "d")
    check_reads(args.pos, ctx)
    if args.has("-l", "-t", "-p", "-v", "-Z", "-z"):
        return argv
    ctx.write(args.values("-d")[-1] if args.has("-d") else ctx.cwd)
    return argv


def rule_in_out(argv: list[str], ctx: RuleContext) -> list[str]:
    """uniq and xxd: ``[INPUT [OUTPUT]]``, the second operand is written."""
    args = split_args(argv[1:], "fswcgloOn" if argv[0] == "xxd" else "fsw")
    if args.pos:
        check_reads(args.pos[:1], ctx)
    if len(args.pos) > 1:
        ctx.write(args.pos[1])
    return argv


def rule_output_option(
    short: str, longs: tuple[str, ...], outputs: tuple[str, ...] = ("-o", "--output")
) -> Rule:
    """A read-only command whose ``-o FILE``-like option writes (tree -o, iconv -o, shuf -o)."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        args = split_args(argv[1:], short, longs)
        for name, value in args.opts:
            if value is not None and name in outputs:
                ctx.write(value)
            elif value is not None:
                check_reads([value], ctx)
        check_reads(args.pos, ctx)
        return argv

    return rule


FILE_RULES: dict[str, Rule] = {
    "rm": rule_rm,
    "rmdir": rule_rm,
    "unlink": rule_rm,
    "shred": rule_rm,
    "mkdir": rule_write_operands,
    "touch": rule_write_operands,
    "tee": rule_write_operands,
    "truncate": rule_write_operands,
    "chmod": rule_write_operands,
    "chown": rule_write_operands,
    "chgrp": rule_write_operands,
    "cp": rule_copy,
    "install": rule_copy,
    "mv": rule_mv,
    "ln": rule_ln,
    "dd": rule_dd,
    "gzip": rule_compress,
    "gunzip": rule_compress,
    "bzip2": rule_compress,
    "bunzip2": rule_compress,
    "xz": rule_compress,
    "unxz": rule_compress,
    "zstd": rule_compress,
    "unzstd": rule_compress,
    "zcat": rule_compress,
    "bzcat": rule_compress,
    "xzcat": rule_compress,
    "zip": rule_zip,
    "unzip": rule_unzip,
    "uniq": rule_in_out,
    "xxd": rule_in_out,
    "tree": rule_output_option("oLPIH", ("--charset", "--filelimit", "--timefmt")),
    "iconv": rule_output_option("oft", ("--output", "--from-code", "--to-code")),
    "shuf": rule_output_option("onie", ("--output", "--head-count", "--input-range", "--random-source")),
}
