"""Rules for commands that create, modify or delete files."""

from __future__ import annotations

from starweave.tools.servers.shell.modes import (
    check_owner_spec,
    has_setid,
    refuse_setid_mode,
    scan_setid,
)
from starweave.tools.servers.shell.options import Args
from starweave.tools.servers.shell.rulebook import (
    Rule,
    RuleContext,
    check_looks,
    check_reads,
    option_values_read,
    refuse,
)

CHMOD_MODE_LETTERS = frozenset("rwxXstugoa,+=01234567")


def rule_rm(argv: list[str], ctx: RuleContext) -> list[str]:
    """rm/rmdir/shred/unlink: every operand is deleted; never the workspace itself."""
    args = ctx.opts(argv)
    if args.has("--no-preserve-root"):
        refuse("rm --no-preserve-root is refused")
    check_reads(args.values("--random-source"), ctx)
    for a in args.pos:
        if ctx.guard.resolve(a, ctx.cwd) == ctx.guard.workspace:
            refuse(f"{argv[0]} {a}: would delete the workspace itself; delete the files inside it instead")
        ctx.write(a)
    return argv


def rule_write_operands(argv: list[str], ctx: RuleContext) -> list[str]:
    """mkdir, touch, tee, truncate: every operand is created or modified; references are read."""
    args = ctx.opts(argv)
    for mode in args.values("-m", "--mode"):
        refuse_setid_mode(argv[0], mode)
    check_reads(args.values("-r", "--reference"), ctx)
    for a in args.pos:
        ctx.write(a)
    return argv


def rule_chmod(argv: list[str], ctx: RuleContext) -> list[str]:
    """chmod: the files must be in the workspace and no mode may set an s bit (``chmod -x+s`` is
    a mode too: chmod reads mode-like options as part of the mode)."""
    args = ctx.opts(argv)
    words = argv[1:] if args.dashdash is None else argv[1 : 1 + args.dashdash]
    pieces = [
        w for w in words if w.startswith("-") and not w.startswith("--") and set(w[1:]) <= CHMOD_MODE_LETTERS
    ]
    operands = list(args.pos)
    for ref in args.values("--reference"):
        if has_setid(ctx.read(ref)):
            refuse(f"chmod --reference={ref}: that file has a set-id bit, which would be copied; refused")
    if not pieces and not args.has("--reference"):
        if not operands:
            refuse("chmod: no mode given")
        pieces, operands = [operands[0]], operands[1:]
    for piece in pieces:
        refuse_setid_mode("chmod", piece)
    for a in operands:
        ctx.write(a)
    return argv


def rule_chown(argv: list[str], ctx: RuleContext) -> list[str]:
    """chown/chgrp: only files in the workspace, and only to the current user and its groups."""
    args = ctx.opts(argv)
    if args.has("--reference"):
        refuse(f"{argv[0]} --reference copies another file's owner; name the owner instead")
    if not args.pos:
        refuse(f"{argv[0]}: no owner given")
    for a in args.pos[1:]:
        ctx.write(a)
    check_owner_spec(argv[0], args.pos[0], group_only=argv[0] == "chgrp")
    return argv


def _dest_and_sources(args: Args) -> tuple[str | None, list[str]]:
    targets = args.values("-t", "--target-directory")
    if targets:
        return targets[-1], args.pos
    if len(args.pos) >= 2:
        return args.pos[-1], args.pos[:-1]
    return (args.pos[0] if args.pos else None), []


def _preserves_mode(args: Args) -> bool:
    keep = False
    for name, value in args.opts:
        if name in ("-p", "-a", "--archive"):
            keep = True
        elif name == "--preserve":
            keep = value is None or any(v in ("mode", "all") for v in value.split(","))
        elif name == "--no-preserve" and value and any(v in ("mode", "all") for v in value.split(",")):
            keep = False
    return keep


def rule_copy(argv: list[str], ctx: RuleContext) -> list[str]:
    """cp and install: the destination is written, the sources are read. A recursive copy may not
    start above a place holding secrets, a copy never preserves a set-id bit, install never runs
    a strip program and hard links (``cp -l``) only link files of the workspace."""
    args = ctx.opts(argv)
    tool = argv[0]
    if args.has("--copy-contents"):
        refuse("cp --copy-contents reads devices and FIFOs as files; refused")
    if tool == "install":
        if args.has("-s", "--strip", "--strip-program"):
            refuse("install -s/--strip runs a strip program; refused")
        for mode in args.values("-m", "--mode"):
            refuse_setid_mode("install", mode)
        for owner in args.values("-o", "--owner"):
            check_owner_spec("install", owner)
        for group in args.values("-g", "--group"):
            check_owner_spec("install", group, group_only=True)
        if args.has("-d", "--directory"):
            for p in args.pos:
                ctx.write(p)
            return argv
    dest, sources = _dest_and_sources(args)
    if dest is not None:
        ctx.write(dest)
    recursive = tool == "cp" and args.has("-r", "-R", "--recursive", "-a", "--archive")
    if recursive:
        ctx.relinks("cp -r copies symlinks")
        if args.has("-L", "--dereference") and not ctx.sandboxed:
            refuse(
                "cp -r with -L/--dereference copies what links point to, anywhere; refused without a sandbox"
            )
    if args.has("-s", "--symbolic-link"):
        ctx.relinks("cp -s makes symlinks")
    preserve = tool == "cp" and _preserves_mode(args)
    for s in sources:
        real = ctx.recursive(s, f"{tool} -r") if recursive else ctx.read(s)
        if args.has("-l", "--link") and not ctx.guard.in_workspace(real):
            refuse(f"cp -l: a hard link to {s!r} (outside the workspace) is refused; copy it instead")
        if preserve:
            found = scan_setid(real, ctx, f"{tool} {s}") if recursive and not ctx.sandboxed else None
            if found or has_setid(real):
                refuse(
                    f"{tool}: {found or s} has a set-user-ID or set-group-ID bit that -p/-a would keep; "
                    "copy without -p/-a (plain cp drops it)"
                )
    option_values_read(_without(args, "-t", "--target-directory", "-m", "--mode", "-o", "--owner"), ctx)
    return argv


def _without(args: Args, *names: str) -> Args:
    return Args([(n, v) for n, v in args.opts if n not in names], args.pos, args.dashdash)


def rule_mv(argv: list[str], ctx: RuleContext) -> list[str]:
    """mv: the destination is written and the sources are removed, so both must be in the workspace;
    moving can put a link in place of another path."""
    args = ctx.opts(argv)
    dest, sources = _dest_and_sources(args)
    for p in [*sources, *([dest] if dest is not None else [])]:
        ctx.write(p)
    ctx.relinks("mv renames files and links")
    return argv


def rule_ln(argv: list[str], ctx: RuleContext) -> list[str]:
    """ln: the link is written; a hard link's source must be in the workspace too, since writing
    through a hard link modifies the original file."""
    args = ctx.opts(argv)
    dest, sources = _dest_and_sources(args)
    if dest is not None:
        ctx.write(dest)
    ctx.relinks("ln creates links")
    symbolic = args.has("-s", "--symbolic")
    for s in sources:
        if symbolic:
            continue  # a symlink is resolved again (realpath) whenever it is used
        if not ctx.guard.in_workspace(ctx.guard.resolve(s, ctx.cwd)):
            refuse(f"ln: a hard link to {s!r} (outside the workspace) is refused; use ln -s or cp")
    return argv


def rule_dd(argv: list[str], ctx: RuleContext) -> list[str]:
    """dd: ``of=`` is written, ``if=`` is read."""
    ctx.opts([a for a in argv if not (a and "=" in a and not a.startswith("-"))])
    for a in argv[1:]:
        key, _, value = a.partition("=")
        if key == "of":
            ctx.write(value)
        elif key == "if":
            ctx.read(value)
    return argv


def rule_compress(argv: list[str], ctx: RuleContext) -> list[str]:
    """gzip, bzip2, xz, zstd and their un- forms replace files unless they write to stdout or test."""
    args = ctx.opts(argv)
    if args.has("--files", "--files0"):
        refuse(f"{argv[0]} --files reads file names from a file; name the files instead")
    if argv[0] in ("zstd", "unzstd", "zstdcat"):
        for word in argv[1:]:
            if word.startswith("-") and not word.startswith("--") and any(c in word[1:-1] for c in "oD"):
                refuse(f"{argv[0]} {word}: write -o FILE and -D FILE as words of their own")
    for out in args.values("-o", "--output-dir-flat", "--output-dir-mirror"):
        ctx.write(out)
    check_reads(args.values("-D", "--patch-from"), ctx)
    to_stdout = args.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list")
    if argv[0] in ("zcat", "bzcat", "xzcat", "zstdcat") or to_stdout:
        check_reads(args.pos, ctx)
    else:
        for p in args.pos:
            if p != "-":
                ctx.write(p)
    return argv


def rule_in_out(argv: list[str], ctx: RuleContext) -> list[str]:
    """uniq and xxd: ``[INPUT [OUTPUT]]``, the second operand is written."""
    args = ctx.opts(argv)
    if args.pos:
        check_reads(args.pos[:1], ctx)
    if len(args.pos) > 1:
        ctx.write(args.pos[1])
    return argv


XXD_VALUE = frozenset("cglnosR")


def rule_xxd(argv: list[str], ctx: RuleContext) -> list[str]:
    """xxd [options] [INPUT [OUTPUT]]: each word is one option known by its first letter (``-ps`` is
    -p); -c -g -l -n -o -s -R take the rest of the word or the next one. The output is written."""
    words, i, operands = argv[1:], 0, []
    while i < len(words):
        w = words[i]
        if w == "--":
            operands += words[i + 1 :]
            break
        if w.startswith("-") and len(w) > 1 and not operands:
            if w[1] not in "abCdEeiprRuvhcglnos":
                refuse(f"xxd: unknown option {w}; see xxd -h")
            if w[1] in XXD_VALUE and len(w) == 2:
                i += 1
        else:
            operands.append(w)
        i += 1
    if operands:
        check_reads(operands[:1], ctx)
    if len(operands) > 1:
        ctx.write(operands[1])
    if len(operands) > 2:
        refuse("xxd takes at most an input and an output file")
    return argv


def rule_tree(argv: list[str], ctx: RuleContext) -> list[str]:
    """tree: lists metadata; -o writes; -R writes HTML files into every folder (refused)."""
    args = ctx.opts(argv)
    if args.has("-R"):
        refuse("tree -R writes files into the listed folders; refused")
    for out in args.values("-o"):
        ctx.write(out)
    check_reads(args.values("--gitfile", "--hintro", "--houtro", "--infofile"), ctx)
    if args.has("--fromfile"):
        check_reads(args.pos, ctx)
    else:
        check_looks(args.pos, ctx)
    return argv


def rule_output_option(outputs: tuple[str, ...] = ("-o", "--output")) -> Rule:
    """A read-only command whose ``-o FILE``-like option writes (iconv -o, shuf -o)."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        args = ctx.opts(argv)
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
    "chmod": rule_chmod,
    "chown": rule_chown,
    "chgrp": rule_chown,
    "cp": rule_copy,
    "install": rule_copy,
    "mv": rule_mv,
    "ln": rule_ln,
    "dd": rule_dd,
    **dict.fromkeys(
        [
            "gzip",
            "gunzip",
            "zcat",
            "bzip2",
            "bunzip2",
            "bzcat",
            "xz",
            "unxz",
            "xzcat",
            "zstd",
            "unzstd",
            "zstdcat",
        ],
        rule_compress,
    ),
    "uniq": rule_in_out,
    "xxd": rule_xxd,
    "tree": rule_tree,
    "iconv": rule_output_option(),
    "shuf": rule_output_option(),
}
