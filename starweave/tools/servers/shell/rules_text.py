"""Rules for text and search tools that can hide writes, helper programs or whole-tree reads in
their arguments: sort, sed, awk, grep, diff, find, jq and file."""

from __future__ import annotations

import re

from starweave.tools.servers.shell.awkcheck import check_awk_program
from starweave.tools.servers.shell.options import insert_options
from starweave.tools.servers.shell.rulebook import (
    Rule,
    RuleContext,
    check_looks,
    check_reads,
    option_values_read,
    refuse,
)
from starweave.tools.servers.shell.rules_archive import secret_excludes
from starweave.tools.servers.shell.safeopen import read_checked
from starweave.tools.servers.shell.sedcheck import check_sed_script

MAX_SCRIPT_FILE = 65536
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")


def script_file(path: str, ctx: RuleContext, what: str) -> str:
    """The text of a script file the policy must read to check (sed -f, awk -f, jq -f): a regular
    file, read without following a swapped-in symlink and with a size cap."""
    if path == "-":
        refuse(f"{what}: a script from stdin cannot be checked; write it to a file first")
    real = ctx.read(path)
    try:
        return read_checked(real, MAX_SCRIPT_FILE, f"{what} script file").decode("utf-8", errors="replace")
    except OSError as exc:
        refuse(f"{what} script file {path!r} cannot be read: {exc.strerror}")


def rule_sort(argv: list[str], ctx: RuleContext) -> list[str]:
    """sort: --compress-program runs a program, --files0-from reads names nobody checked; -o and -T
    write."""
    args = ctx.opts(argv)
    if args.has("--compress-program"):
        refuse("sort --compress-program runs an arbitrary program; refused")
    if args.has("--files0-from"):
        refuse("sort --files0-from reads file names from a file; name the files instead")
    for out in args.values("-o", "--output", "-T", "--temporary-directory"):
        ctx.write(out)
    check_reads(args.pos + args.values("--random-source"), ctx)
    return argv


def rule_sed(argv: list[str], ctx: RuleContext) -> list[str]:
    """sed: runs with --sandbox (no e, r or w commands); -i edits its files in place (workspace
    only, backups only next to them); scripts from -f are read safely."""
    args = ctx.opts(argv)
    scripts = args.values("-e", "--expression")
    scripts += [script_file(f, ctx, "sed") for f in args.values("-f", "--file")]
    files = args.pos
    if not scripts and not args.has("-e", "--expression", "-f", "--file"):
        if not files:
            refuse("sed: no script given")
        scripts, files = [files[0]], files[1:]
    for script in scripts:
        check_sed_script(script)
    in_place = args.has("-i", "--in-place")
    for suffix in args.values("-i", "--in-place"):
        if "/" in suffix:
            refuse("sed -i: a backup suffix with / writes the backup elsewhere; use a plain suffix like .bak")
    for f in files:
        if in_place:
            ctx.write(f)
        else:
            check_reads([f], ctx)
    return [argv[0], "--sandbox", *argv[1:]]


def rule_awk(argv: list[str], ctx: RuleContext) -> list[str]:
    """awk (mawk), gawk: the program is checked by a tokenizer; options that load code, write
    profiles or take the program from an unchecked place are refused; gawk also gets --sandbox."""
    args = ctx.opts(argv)
    gawk = ctx.real.endswith("/gawk") or argv[0] == "gawk"
    for name, value in args.opts:
        if name in ("-l", "--load", "-i", "--include", "-E", "--exec"):
            refuse(f"awk {name} loads code from a library or file that cannot be checked; refused")
        if name in ("-p", "--profile", "-o", "--pretty-print", "-d", "--dump-variables", "-D", "--debug"):
            refuse(f"awk {name} writes a file or reads debugger commands; refused")
        if name == "-W" and value is not None and "exec".startswith(value.split("=")[0].strip() or "x"):
            refuse("awk -W exec takes the program from a file without the usual checks; use -f")
        if name in ("-v", "--assign") and value is not None:
            _check_assignment(value)
    programs = args.values("-e", "--source") + [
        script_file(f, ctx, "awk") for f in args.values("-f", "--file")
    ]
    files = args.pos
    if not programs:
        if not files:
            refuse("awk: no program given")
        programs, files = [files[0]], files[1:]
    for program in programs:
        check_awk_program(program)
    for f in files:
        if ASSIGNMENT.match(f):
            _check_assignment(f)
        else:
            check_reads([f], ctx)
    return [argv[0], "--sandbox", *argv[1:]] if gawk else argv


def _check_assignment(text: str) -> None:
    name = text.split("=", 1)[0].strip()
    if name in ("ARGV", "ARGC", "ENVIRON"):
        refuse(f"awk: assigning {name} is refused; pass file names as arguments")


def rule_grep(argv: list[str], ctx: RuleContext) -> list[str]:
    """grep: a recursive search may not start above a place holding secrets and skips secret file
    names and credentials folders; -R (follow every link) needs the sandbox."""
    args = ctx.opts(argv)
    check_reads(args.values("-f", "--file", "--exclude-from"), ctx)
    for how in args.values("-d", "--directories"):
        if "recurse".startswith(how) and how:
            args.opts.append(("-r", None))
    if args.has("-R", "--dereference-recursive") and not ctx.sandboxed:
        refuse("grep -R follows links anywhere; use grep -r (links met while recursing are not followed)")
    if args.has("-D", "--devices") and not ctx.sandboxed:
        refuse("grep -D/--devices is refused; devices, FIFOs and sockets are not read")
    operands = list(args.pos)
    if not (args.has("-e", "--regexp", "-f", "--file")) and operands:
        operands = operands[1:]  # the pattern
    if args.has("-r", "-R", "--recursive", "--dereference-recursive"):
        for start in operands or ["."]:
            ctx.recursive(start, "grep -r")
        excludes = secret_excludes("--exclude") + [
            e.replace("--exclude=", "--exclude-dir=") for e in secret_excludes("--exclude")
        ]
        return insert_options(argv, args, excludes)
    check_reads(operands, ctx)
    return argv


def rule_diff(argv: list[str], ctx: RuleContext) -> list[str]:
    """diff: a recursive comparison may not start above a place holding secrets, does not follow
    links and skips secret names."""
    args = ctx.opts(argv)
    option_values_read(args, ctx)
    if args.has("-r", "--recursive"):
        for start in args.pos + args.values("--from-file", "--to-file"):
            ctx.recursive(start, "diff -r")
        extra = ["--no-dereference", *secret_excludes("--exclude")]
        return insert_options(argv, args, extra)
    check_reads(args.pos, ctx)
    return argv


FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
FIND_FILE_OUTPUT = ("-fprint", "-fprint0", "-fprintf", "-fls")
FIND_REFERENCE = ("-newer", "-anewer", "-cnewer", "-samefile")


def rule_find(argv: list[str], ctx: RuleContext) -> list[str]:
    """find: -exec/-ok run commands and -fprint writes (refused); -delete only under the workspace;
    -files0-from (start points nobody checked) is refused."""
    args = argv[1:]
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P", "-D") or args[i].startswith("-O")):
        i += 2 if args[i] == "-D" else 1
    follows = "-L" in args[:i] or "-follow" in args
    if i < len(args) and args[i] == "--":
        i += 1
    starts: list[str] = []
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ")", ","):
        starts.append(args[i])
        i += 1
    starts = starts or ["."]
    check_looks(starts, ctx)
    expr = args[i:]
    for n, a in enumerate(expr):
        if a in FIND_EXEC:
            refuse(f"find {a} runs a command for every file; print the names and use another command")
        if a in FIND_FILE_OUTPUT:
            refuse(f"find {a} writes to a file; use -print and a shell redirection instead")
        if a == "-files0-from":
            refuse("find -files0-from reads start points from a file; name them instead")
        if a == "-delete":
            if follows:
                refuse("find -L/-follow with -delete deletes through links, anywhere; drop -L")
            for s in starts:
                ctx.write(s)
        if a in FIND_REFERENCE and n + 1 < len(expr):
            ctx.look(expr[n + 1])
    return argv


def rule_jq(argv: list[str], ctx: RuleContext) -> list[str]:
    """jq: the filter may not import or include modules (they read files by name); -L is refused;
    --slurpfile/--rawfile/-f files are read."""
    words, i, program, operands, strings = argv[1:], 0, None, [], False
    two = ("--arg", "--argjson", "--slurpfile", "--rawfile")
    while i < len(words):
        w = words[i]
        if strings or (not w.startswith("-") or w == "-"):
            operands.append(w)
        elif w in two:
            if i + 2 >= len(words):
                refuse(f"jq {w} needs a name and a value")
            if w in ("--slurpfile", "--rawfile"):
                ctx.read(words[i + 2])
            i += 2
        elif w in ("-f", "--from-file"):
            if i + 1 >= len(words):
                refuse("jq -f needs a file")
            program = script_file(words[i + 1], ctx, "jq")
            i += 1
        elif w == "--indent":
            i += 1
        elif w in ("--args", "--jsonargs"):
            strings = True
        elif w in ("-L",) or w.startswith("-L"):
            refuse("jq -L adds a module search path; refused")
        elif w.startswith("--"):
            if w[2:] not in JQ_LONG:
                refuse(f"jq: unknown option {w}; see jq --help")
        elif not set(w[1:]) <= set("nrjascCMSeRhV"):
            refuse(f"jq: unknown option {w}; see jq --help")
        i += 1
    if program is None:
        if not operands:
            refuse("jq: no filter given")
        program, operands = operands[0], operands[1:]
    if re.search(r"\b(import|include|modulemeta|get_search_list)\b", program):
        refuse("jq: import/include read modules from files; put the whole filter on the command line")
    if not strings:
        check_reads(operands, ctx)
    return argv


JQ_LONG = frozenset(
    [
        "seq",
        "stream",
        "stream-errors",
        "slurp",
        "raw-input",
        "null-input",
        "compact-output",
        "tab",
        "ascii-output",
        "unbuffered",
        "sort-keys",
        "color-output",
        "monochrome-output",
        "raw-output",
        "join-output",
        "exit-status",
        "help",
        "version",
    ]
)


def rule_file(argv: list[str], ctx: RuleContext) -> list[str]:
    """file: reads only enough to name each file's type; -C writes a magic file, -s reads devices,
    -f reads names from a file."""
    args = ctx.opts(argv)
    for bad in ("-C", "--compile", "-s", "--special-files", "-f", "--files-from"):
        if args.has(bad):
            refuse(f"file {bad} is refused (it writes a file, reads devices or reads names from a file)")
    check_reads(args.values("-m", "--magic-file"), ctx)
    check_looks(args.pos, ctx)
    return argv


def rule_counting(argv: list[str], ctx: RuleContext) -> list[str]:
    """wc and du: --files0-from takes names from a file; for wc (which reads contents) refused."""
    args = ctx.opts(argv)
    if argv[0] == "wc" and args.has("--files0-from"):
        refuse("wc --files0-from reads file names from a file; name the files instead")
    option_values_read(args, ctx)
    (check_looks if argv[0] == "du" else check_reads)(args.pos, ctx)
    return argv


TEXT_RULES: dict[str, Rule] = {
    "sort": rule_sort,
    "sed": rule_sed,
    "awk": rule_awk,
    "gawk": rule_awk,
    "mawk": rule_awk,
    "nawk": rule_awk,
    "grep": rule_grep,
    "egrep": rule_grep,
    "fgrep": rule_grep,
    "zgrep": rule_grep,
    "diff": rule_diff,
    "zdiff": rule_diff,
    "find": rule_find,
    "jq": rule_jq,
    "file": rule_file,
    "wc": rule_counting,
    "du": rule_counting,
}
