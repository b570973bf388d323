"""Rules for archivers: tar, zip and unzip.

Archivers run helper programs (``tar -I``, ``--to-command``, ``--checkpoint-action``, ``zip -TT``),
read whole trees (so a recursive archive may not start above a place holding secrets, and secret
file names are excluded) and, when extracting, create whatever the archive holds: set-id files,
devices, and symlinks that a later member (or a later command) writes through.

Extraction therefore always gets ``--no-same-owner --no-same-permissions`` (no set-id bits, no foreign
owner). Under the sandbox that is enough: the kernel confines the writes. Without it the archive is
listed first, within a budget, and refused if a member is absolute, climbs with ``..``, is a link
or a special file, or would land outside the workspace through a link already there.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from typing import IO

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.optables_custom import TAR
from starweave.tools.servers.shell.options import REQUIRED, Args
from starweave.tools.servers.shell.paths import SECRET_DIR_NAMES, SECRET_FILE_NAMES
from starweave.tools.servers.shell.rulebook import Rule, RuleContext, check_reads, refuse
from starweave.tools.servers.shell.safeopen import open_checked_read

MAX_MEMBERS = 10_000
MAX_LISTED_BYTES = 512 * 1024 * 1024
TAR_REFUSED = {
    "--to-command": "runs a command for every member",
    "-I": "runs a compression program",
    "--use-compress-program": "runs a compression program",
    "--checkpoint-action": "can run a command",
    "-F": "runs a script between volumes",
    "--info-script": "runs a script between volumes",
    "--new-volume-script": "runs a script between volumes",
    "--rsh-command": "runs a remote shell",
    "--rmt-command": "runs a remote tape program",
    "-M": "asks for volumes on a terminal",
    "--multi-volume": "asks for volumes on a terminal",
    "-P": "writes absolute paths",
    "--absolute-names": "writes absolute paths",
    "-T": "reads names (and options) from a file; list the files on the command line",
    "--files-from": "reads names (and options) from a file; list the files on the command line",
    "-w": "asks on a terminal",
    "--interactive": "asks on a terminal",
    "--confirmation": "asks on a terminal",
    "--same-owner": "gives extracted files their archived owner",
    "-p": "keeps set-id bits of extracted files",
    "--preserve-permissions": "keeps set-id bits of extracted files",
    "--same-permissions": "keeps set-id bits of extracted files",
    "--xattrs": "restores extended attributes (file capabilities)",
    "--selinux": "restores SELinux contexts",
}
TAR_CREATE = (
    "-c",
    "--create",
    "-r",
    "--append",
    "-u",
    "--update",
    "-A",
    "--catenate",
    "--concatenate",
    "--delete",
)
TAR_EXTRACT = ("-x", "--extract", "--get")


def secret_excludes(flag: str) -> list[str]:
    """``flag=NAME`` for every secret file and credentials-folder name (tar --exclude, grep ...)."""
    return [f"{flag}={name}" for name in (*SECRET_FILE_NAMES, *SECRET_DIR_NAMES)]


def _new_style(words: list[str]) -> list[str]:
    """tar's old style ``tar czf a.tgz dir``: the first word is a bundle of letters whose values
    follow in order; rewritten as ``-c -z -f a.tgz dir``."""
    if not words or words[0].startswith("-"):
        return words
    bundle, rest, out = words[0], list(words[1:]), []
    for letter in bundle:
        out.append(f"-{letter}")
        if TAR.short.get(letter) == REQUIRED:
            if not rest:
                refuse(f"tar: the letter {letter} of {bundle!r} needs a value")
            out.append(rest.pop(0))
    return out + rest


def rule_tar(argv: list[str], ctx: RuleContext) -> list[str]:
    """tar: no helper programs, no absolute or set-id extraction; archives and folders checked."""
    words = _new_style(argv[1:])
    args = ctx.opts(["tar", *words])
    for name, _ in args.opts:
        if name in TAR_REFUSED:
            refuse(f"tar {name} is refused: it {TAR_REFUSED[name]}")
    creating, extracting = args.has(*TAR_CREATE), args.has(*TAR_EXTRACT)
    for name in ("-g", "--listed-incremental", "--index-file", "--volno-file"):
        for value in args.values(name):
            ctx.write(value)
    check_reads(args.values("-X", "--exclude-from", "-N", "--newer", "--after-date"), ctx)
    archives = args.values("-f", "--file") or ["-"]
    for archive in archives:
        if archive == "-":
            continue
        if creating:
            ctx.write(archive)
        else:
            ctx.read(archive)
    extra = ["--force-local"]
    if creating:
        _tar_sources(args, ctx)
        extra += secret_excludes("--exclude")
    if extracting and not args.has("-O", "--to-stdout"):
        extra += ["--no-same-owner", "--no-same-permissions"]
        ctx.relinks("tar extracts links")
        dirs = _tar_dirs(args, ctx)
        if not ctx.sandboxed:
            _check_tar_members(archives, args, dirs[-1], ctx)
    return ["tar", *extra, *words]


def _tar_dirs(args: Args, ctx: RuleContext) -> list[str]:
    """Every folder extraction writes to: each -C resolved against the previous one (-C is
    cumulative), and --one-top-level below the last."""
    current, dirs = ctx.cwd, [ctx.cwd]
    for name, value in args.seq:
        if name in ("-C", "--directory") and value is not None:
            current = ctx.guard.resolve(value, current)
            dirs.append(current)
    for top in args.values("--one-top-level"):
        dirs.append(ctx.guard.resolve(top, current))
    for d in dirs:
        ctx.write(d)
    return dirs


def _tar_sources(args: Args, ctx: RuleContext) -> None:
    if args.has("-h", "--dereference", "--hard-dereference") and not ctx.sandboxed:
        refuse("tar -h/--dereference archives what links point to, anywhere; refused without the sandbox")
    recursive = not args.has("--no-recursion")
    current = ctx.cwd
    for name, value in args.seq:
        if name in ("-C", "--directory") and value is not None:
            current = ctx.guard.resolve(value, current)
            ctx.look(current)
        elif name == "" and value is not None:
            path = os.path.join(current, value)
            if recursive:
                ctx.recursive(path, "tar")
            else:
                ctx.read(path)
            if args.has("--remove-files"):
                ctx.write(path)


def _check_tar_members(archives: list[str], args: Args, dest: str, ctx: RuleContext) -> None:
    if archives == ["-"]:
        refuse("tar: extracting from stdin cannot be checked without the sandbox; name the archive with -f")
    strip = int((args.values("--strip-components") or ["0"])[-1] or 0)
    if args.has("--transform", "--xform"):
        refuse("tar --transform renames members, which cannot be checked without the sandbox")
    real = ctx.guard.check_read(archives[-1], ctx.cwd)
    if not os.path.exists(real):
        return  # made by an earlier command of the line: checked again right before tar runs
    try:
        fd = open_checked_read(real)
    except OSError as exc:
        refuse(f"tar: {archives[-1]} cannot be read to check it: {exc.strerror}")
    with os.fdopen(fd, "rb") as raw:
        try:
            members = _tar_members(raw, ctx)
        except (tarfile.TarError, EOFError, OSError) as exc:
            refuse(
                f"tar: {archives[-1]} cannot be listed to check it ({exc}); without the sandbox only "
                "plain, gzip, bzip2 and xz archives can be extracted"
            )
    for name, kind in members:
        _check_member(name, kind, strip, dest, ctx, "tar")


def _tar_members(raw: IO[bytes], ctx: RuleContext) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    total = 0
    with tarfile.open(fileobj=raw, mode="r:*") as tf:
        while True:
            info = tf.next()
            if info is None:
                return out
            total += info.size
            if len(out) >= MAX_MEMBERS or total > MAX_LISTED_BYTES:
                refuse("tar: the archive is too large to check without the sandbox")
            ctx.budget.spend(1, "listing the archive")
            kind = (
                "link"
                if info.issym() or info.islnk()
                else "file"
                if info.isfile() or info.isdir()
                else "special"
            )
            out.append((info.name, kind))


def _check_member(name: str, kind: str, strip: int, dest: str, ctx: RuleContext, tool: str) -> None:
    if kind == "link":
        refuse(f"{tool}: the archive holds the link {name!r}; archives with links need the sandbox")
    if kind == "special":
        refuse(f"{tool}: the archive holds the device, FIFO or socket {name!r}; refused")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts:
        refuse(f"{tool}: the archive member {name!r} would be written outside the folder; refused")
    parts = parts[strip:]
    if parts:
        try:
            ctx.write(os.path.join(dest, *parts))
        except PolicyViolation as exc:
            refuse(f"{tool}: the archive member {name!r}: {exc}")


# ---- zip and unzip ------------------------------------------------------------------------------

ZIP_BUNDLE = frozenset("rqjy0123456789")
ZIP_WORDS = frozenset(
    {
        "-FS",
        "-nw",
        "-ws",
        "-ic",
        "-RE",
        "-sf",
        "-h",
        "--help",
        "-v",
        "-u",
        "-f",
        "-d",
        "-m",
        "-D",
        "-X",
        "-l",
        "-o",
        "-q",
    }
)
ZIP_LIST = ("-x", "-i")
ZIP_VALUE = ("-t", "-tt", "-n", "-Z", "-O", "--out", "--output-file")


def rule_zip(argv: list[str], ctx: RuleContext) -> list[str]:
    """zip ARCHIVE FILES...: the archive is written, the files read; only common options are
    accepted (zip's parser has many multi-letter options); -T/-TT run programs, -@ reads names
    from stdin. Symlinks are stored as links (-y) and secret names excluded."""
    words, i, operands, outputs = argv[1:], 0, [], []
    while i < len(words):
        w = words[i]
        if w == "--":
            refuse("zip --: not supported by the policy; name files that do not start with -")
        if w in ZIP_LIST:
            i += 1
            while i < len(words) and not words[i].startswith("-"):
                i += 1
            continue
        if w in ZIP_VALUE:
            if i + 1 >= len(words):
                refuse(f"zip {w} needs a value")
            if w in ("-O", "--out", "--output-file"):
                outputs.append(words[i + 1])
            i += 2
            continue
        if w.startswith("-") and w != "-":
            if w in ("-T", "-TT") or w.startswith(("--unzip-command", "-TT")):
                refuse(f"zip {w} runs a program to test the archive; test it with unzip -t afterwards")
            if w not in ZIP_WORDS and not (len(w) > 1 and set(w[1:]) <= ZIP_BUNDLE):
                refuse(
                    f"zip {w}: not an option the policy accepts (allowed: -r -q -j -0..-9, -u -f -d -m as "
                    "separate words, -x/-i PATTERNS, -O FILE); write options as separate words"
                )
        else:
            operands.append(w)
        i += 1
    if not operands:
        refuse("zip: name the archive")
    for out in [operands[0], *outputs]:
        if out != "-":
            ctx.write(out)
    recursive = any(w.startswith("-") and "r" in w and not w.startswith("--") for w in words)
    for src in operands[1:]:
        if src == "-":
            continue
        if recursive:
            ctx.recursive(src, "zip -r")
        else:
            ctx.read(src)
        if "-m" in words:  # the sources are deleted afterwards
            ctx.write(src)
    # -y stores symlinks as links instead of what they point to; the excludes drop secret names.
    patterns = [
        p for n in (*SECRET_FILE_NAMES, *SECRET_DIR_NAMES) for p in (n, f"*/{n}", f"*/{n}/*", f"{n}/*")
    ]
    return ["zip", "-y", *argv[1:], "-x", *patterns]


UNZIP_FLAGS = frozenset("lvtzpcfunoqajCLUsbB")


def rule_unzip(argv: list[str], ctx: RuleContext) -> list[str]:
    """unzip: extracts into -d DIR or the working directory unless it only lists, tests or pipes;
    -: (allow ..), -K (keep set-id bits), -X (restore owners), -M (pager) and -Z are refused."""
    words, i, operands, dest, letters = argv[1:], 0, [], ctx.cwd, ""
    excluding = False
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) > 1:
            excluding = False
            j = 1
            while j < len(w):
                ch = w[j]
                if ch == "d":
                    value = w[j + 1 :] or (words[i + 1] if i + 1 < len(words) else "")
                    if not value:
                        refuse("unzip -d needs a folder")
                    i += 0 if w[j + 1 :] else 1
                    dest = ctx.guard.resolve(value, ctx.cwd)
                    break
                if ch == "x":
                    excluding = True
                elif ch not in UNZIP_FLAGS:
                    refuse(
                        f"unzip -{ch} is refused or unknown "
                        "(allowed: -l -v -t -p -o -n -q -j -d DIR -x NAMES)"
                    )
                letters += ch
                j += 1
        elif not excluding:
            operands.append(w)
        i += 1
    if not operands:
        refuse("unzip: name the archive")
    archive = ctx.read(operands[0])
    if set(letters) & set("lvtzpc"):
        return argv
    ctx.write(dest)
    ctx.relinks("unzip extracts links")
    if not ctx.sandboxed and os.path.exists(archive):
        for name, kind in _zip_members(archive, ctx):
            _check_member(name, kind, 0, dest, ctx, "unzip")
    return argv


def _zip_members(real: str, ctx: RuleContext) -> list[tuple[str, str]]:
    try:
        fd = open_checked_read(real)
    except OSError as exc:
        refuse(f"unzip: {real} cannot be read to check it: {exc.strerror}")
    with os.fdopen(fd, "rb") as raw:
        try:
            with zipfile.ZipFile(raw) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, OSError) as exc:
            refuse(f"unzip: {real} cannot be listed to check it ({exc})")
    if len(infos) > MAX_MEMBERS:
        refuse("unzip: the archive has too many members to check without the sandbox")
    ctx.budget.spend(len(infos), "listing the archive")
    out = []
    for info in infos:
        mode = info.external_attr >> 16
        kind = (
            "link"
            if stat.S_ISLNK(mode)
            else "special"
            if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR)
            else "file"
        )
        out.append((info.filename, kind))
    return out


ARCHIVE_RULES: dict[str, Rule] = {"tar": rule_tar, "zip": rule_zip, "unzip": rule_unzip}
