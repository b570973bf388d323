"""Rules for git, interpreters, network clients and wrappers (commands that run other commands)."""

from __future__ import annotations

import re

from starweave.tools.servers.shell.parser import ALLOWED_ASSIGNMENT
from starweave.tools.servers.shell.rulebook import Rule, RuleContext, check_reads, refuse, split_args

# ---- git -----------------------------------------------------------------------------------------

GIT_READ = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "grep",
        "describe",
        "shortlog",
        "cat-file",
        "reflog",
        "version",
        "count-objects",
        "whatchanged",
        "name-rev",
        "for-each-ref",
        "show-ref",
        "rev-list",
        "merge-base",
        "var",
        "check-ignore",
    }
)
GIT_WRITE = frozenset(
    {
        "init",
        "add",
        "commit",
        "checkout",
        "switch",
        "restore",
        "reset",
        "rm",
        "mv",
        "stash",
        "merge",
        "cherry-pick",
        "revert",
        "branch",
        "tag",
        "clean",
        "apply",
        "notes",
        "rebase",
        "config",
        "remote",
        "format-patch",
        "archive",
        "bundle",
        "gc",
        "prune",
        "worktree",
        "mktree",
        "update-index",
    }
)
GIT_NETWORK = frozenset({"clone", "fetch", "pull", "push", "ls-remote"})
# Settings a command line may pass with -c or write with git config: none of them runs a program.
GIT_SAFE_KEY = re.compile(
    r"(user\.(name|email)|color\.[a-z.]+|core\.quotepath|core\.autocrlf|init\.defaultbranch|advice\.[a-z]+"
    r"|log\.[a-z]+|pull\.rebase|push\.default|merge\.ff|commit\.gpgsign|safe\.directory|diff\.renames"
    r"|status\.[a-z]+|branch\.[^.]+\.(remote|merge)|remote\.[^.]+\.(url|fetch))",
    re.IGNORECASE,
)
# Injected before every git subcommand: no hooks, no fsmonitor program, no pager, no ext:: transport.
GIT_SAFETY = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "protocol.ext.allow=never",
]


def _git_key(setting: str, how: str) -> None:
    key = setting.split("=", 1)[0]
    if not GIT_SAFE_KEY.fullmatch(key):
        refuse(
            f"git {how} {key} is refused: only settings that run no program may be set "
            "(user.name, user.email, color.*, init.defaultBranch, ...); core.pager, core.sshCommand, "
            "core.hooksPath, alias.*, filters and the like could execute commands"
        )


def rule_git(argv: list[str], ctx: RuleContext) -> list[str]:
    """git: safe -c settings only; read subcommands always, writes in workspace mode, network ones
    need ALLOW_NETWORK; options that name a program to run are refused."""
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a.startswith(("--config-env", "--exec-path=", "--upload-pack", "--receive-pack")):
            refuse(f"git {a.split('=')[0]} is refused (it can run an arbitrary program)")
        if a == "-c":
            if i + 1 >= len(args):
                refuse("git -c needs a setting")
            _git_key(args[i + 1], "-c")
            i += 2
            continue
        if a in ("-C", "--git-dir", "--work-tree", "--namespace") or a.startswith(
            ("--git-dir=", "--work-tree=")
        ):
            value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            if a != "--namespace" and not ctx.guard.in_workspace(ctx.guard.resolve(value, ctx.cwd)):
                refuse(f"git {a.split('=')[0]} {value}: the repository must be inside the workspace")
            i += 1 if "=" in a else 2
            continue
        i += 1
    if i >= len(args):
        return argv
    sub, rest = args[i], args[i + 1 :]
    if sub in GIT_NETWORK or (sub == "remote" and rest[:1] == ["update"]):
        ctx.need_network(f"git {sub}")
    elif sub not in GIT_READ and sub not in GIT_WRITE:
        refuse(f"git {sub} is not allowed (allowed: {', '.join(sorted(GIT_READ | GIT_WRITE | GIT_NETWORK))})")
    readonly_ok = sub in GIT_READ or (
        sub == "config" and any(a in ("--get", "--list", "-l", "--get-all", "--get-regexp") for a in rest)
    )
    readonly_ok = readonly_ok or (sub in ("branch", "tag", "remote", "stash") and _listing(sub, rest))
    if ctx.mode == "readonly" and not readonly_ok:
        refuse(f"SHELL.MODE is readonly: git {sub} may change the repository")
    for a in rest:
        if a.startswith(("--upload-pack", "--receive-pack", "--exec", "-x", "--ext-diff", "--textconv")):
            refuse(f"git {sub} {a.split('=')[0]} is refused (it runs a program)")
        if a.startswith("--output=") or a.startswith("--output-directory="):
            ctx.write(a.split("=", 1)[1])
    for flag in ("-o", "--output", "--output-directory"):
        if flag in rest and rest.index(flag) + 1 < len(rest):
            ctx.write(rest[rest.index(flag) + 1])
    if sub == "config" and not readonly_ok:
        settings = [a for a in rest if not a.startswith("-")]
        if settings:
            _git_key(settings[0], "config")
    if sub == "clone":
        targets = [a for a in rest if not a.startswith("-")]
        ctx.write(targets[1] if len(targets) > 1 else ctx.cwd)
    if sub == "worktree" and rest[:1] == ["add"]:
        for a in rest[1:]:
            if not a.startswith("-"):
                ctx.write(a)
                break
    check_reads([a for a in rest if not a.startswith("-")], ctx)
    return [argv[0], *GIT_SAFETY, *args]


def _listing(sub: str, rest: list[str]) -> bool:
    if sub == "stash":
        return rest[:1] in (["list"], ["show"])
    if sub == "remote":
        return not rest or rest[0] in ("-v", "--verbose", "show", "get-url")
    return all(a.startswith("-") for a in rest) and not any(
        a in ("-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "-a", "-s", "-u")
        for a in rest
    )


# ---- interpreters --------------------------------------------------------------------------------

INTERPRETER = re.compile(
    r"(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|irb|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|luajit"
    r"|tclsh[0-9.]*|wish|Rscript|R|julia|bash|sh|dash|zsh|ksh|mksh|fish|csh|tcsh|pwsh|osascript|guile|ocaml)"
)
INLINE_SHORT = {
    "python": "cm",
    "pypy": "cm",
    "perl": "eEM",
    "ruby": "eI",
    "node": "epr",
    "php": "rRBFEa",
    "lua": "el",
    "Rscript": "e",
    "bash": "cs",
    "sh": "cs",
}
INLINE_LONG = (
    "--eval",
    "--print",
    "--require",
    "--import",
    "--command",
    "--loader",
    "--init-file",
    "--rcfile",
)
INTERP_VALUE = {"python": "WXQ", "pypy": "WX", "perl": "I", "ruby": "", "node": "", "bash": "o", "sh": "o"}


def _family(name: str) -> str:
    for fam in ("python", "pypy", "perl", "ruby", "php", "lua"):
        if name.startswith(fam):
            return fam
    if name in ("nodejs", "deno", "bun"):
        return "node"
    if name in ("dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh"):
        return "sh"
    return name


def rule_interpreter(argv: list[str], ctx: RuleContext) -> list[str]:
    """Interpreters: inline code (-c, -e ...) and code from stdin are refused; a script file inside
    the workspace may run only under the bubblewrap sandbox, which confines what it can write."""
    fam = _family(argv[0])
    inline, takes_value = INLINE_SHORT.get(fam, "ce"), INTERP_VALUE.get(fam, "")
    args, i, script = argv[1:], 0, None
    while i < len(args):
        a = args[i]
        if a == "-" or a == "--":
            if a == "-":
                break
            script = args[i + 1] if i + 1 < len(args) else None
            break
        if a.startswith("--"):
            if a.split("=")[0] in INLINE_LONG:
                refuse(f"{argv[0]} {a.split('=')[0]}: inline code is refused; write a script file instead")
        elif a.startswith("-"):
            letters = a[1:]
            for n, ch in enumerate(letters):
                if ch in inline:
                    refuse(f"{argv[0]} -{ch}: inline code is refused; write a script file in the workspace")
                if ch in takes_value:
                    i += 0 if n + 1 < len(letters) else 1
                    break
        else:
            script = a
            break
        i += 1
    if script is None:
        refuse(f"{argv[0]} without a script file would read code from stdin or start a REPL; refused")
    real = ctx.guard.check_read(script, ctx.cwd)
    if not ctx.guard.in_workspace(real):
        refuse(f"{argv[0]}: only scripts inside the workspace may run ({script!r} is outside)")
    if not ctx.sandboxed:
        refuse(
            f"{argv[0]} {script}: running scripts needs the bubblewrap sandbox (SHELL.SANDBOX auto/bwrap "
            "with bwrap installed), because a script's own file accesses cannot be checked"
        )
    return argv


# ---- network clients -----------------------------------------------------------------------------

SSH_BAD_OPTION = re.compile(r"(proxycommand|localcommand|permitlocalcommand|knownhostscommand|match)", re.I)


def rule_curl(argv: list[str], ctx: RuleContext) -> list[str]:
    """curl: needs the network; -o/--output and friends write; -K/--config is refused."""
    ctx.need_network("curl")
    value_long = (
        "--output",
        "--output-dir",
        "--config",
        "--upload-file",
        "--dump-header",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--libcurl",
        "--data",
        "--data-binary",
        "--form",
    )
    args = split_args(argv[1:], "oKTDcdFHuXAeEbr", value_long)
    if args.has("-K", "--config"):
        refuse("curl -K/--config reads options from a file; pass them on the command line")
    for out in args.values(
        "-o",
        "--output",
        "--output-dir",
        "-D",
        "--dump-header",
        "-c",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--libcurl",
    ):
        ctx.write(out)
    check_reads(args.values("-T", "--upload-file", "-d", "--data", "--data-binary", "-F", "--form"), ctx)
    return argv


def rule_wget(argv: list[str], ctx: RuleContext) -> list[str]:
    """wget: needs the network; -O/-o/-a/-P write; -e/--execute is refused."""
    ctx.need_network("wget")
    args = split_args(
        argv[1:],
        "OoaPei",
        (
            "--output-document",
            "--output-file",
            "--append-output",
            "--directory-prefix",
            "--execute",
            "--input-file",
        ),
    )
    if args.has("-e", "--execute", "--use-askpass"):
        refuse("wget -e/--execute runs wgetrc commands; refused")
    for out in args.values(
        "-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix"
    ):
        ctx.write(out)
    check_reads(args.values("-i", "--input-file"), ctx)
    return argv


def rule_ssh(argv: list[str], ctx: RuleContext) -> list[str]:
    """ssh/scp/sftp/rsync: need the network; options that run local programs are refused."""
    ctx.need_network(argv[0])
    for n, a in enumerate(argv[1:]):
        nxt = argv[n + 2] if n + 2 < len(argv) else ""
        if a in ("-F", "-S", "-e", "--rsh", "--rsync-path") or a.startswith(
            ("--rsh=", "--rsync-path=", "-oProxy")
        ):
            refuse(f"{argv[0]} {a} is refused (it names a config file or a program to run)")
        if (a == "-o" and SSH_BAD_OPTION.search(nxt)) or (a.startswith("-o") and SSH_BAD_OPTION.search(a)):
            refuse(f"{argv[0]} -o {nxt or a[2:]} is refused (it runs a local command)")
    local = [a for a in argv[1:] if not a.startswith("-") and ":" not in a]
    if argv[0] in ("scp", "rsync") and local and ":" in " ".join(argv[1:-1]):
        ctx.write(local[-1])
    check_reads(local, ctx)
    return argv


def rule_netcat(argv: list[str], ctx: RuleContext) -> list[str]:
    """nc/ncat: need the network; -e/-c/--exec/--sh-exec/--lua-exec run programs and are refused."""
    ctx.need_network(argv[0])
    for a in argv[1:]:
        if a in ("-e", "-c") or a.startswith(("--exec", "--sh-exec", "--lua-exec")):
            refuse(f"{argv[0]} {a} runs a program for the connection; refused")
    return argv


def rule_network_plain(argv: list[str], ctx: RuleContext) -> list[str]:
    """ping, dig, host, nslookup, traceroute: need the network."""
    ctx.need_network(argv[0])
    return argv


# ---- wrappers ------------------------------------------------------------------------------------


def _wrapped(argv: list[str], ctx: RuleContext, inner: list[str], *, stdin_args: bool = False) -> list[str]:
    if not inner:
        return argv
    checked = ctx.inner(inner, stdin_args=stdin_args)
    return argv[: len(argv) - len(inner)] + checked


def rule_env(argv: list[str], ctx: RuleContext) -> list[str]:
    """env [-i] [-u NAME] [NAME=value...] [COMMAND]: the command is checked; -S/-C and assignments of
    variables that change how programs load code are refused."""
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        a = args[i]
        if a.startswith(("-S", "--split-string", "-C", "--chdir")):
            refuse(f"env {a[:2] if not a.startswith('--') else a.split('=')[0]} is refused")
        i += 2 if a in ("-u", "--unset") else 1
    while i < len(args) and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", args[i]):
        name = args[i].split("=", 1)[0]
        if not ALLOWED_ASSIGNMENT.fullmatch(name):
            refuse(f"env {name}=...: setting {name} is refused (only LANG, LC_*, TZ)")
        i += 1
    return _wrapped(argv, ctx, args[i:])


def rule_xargs(argv: list[str], ctx: RuleContext) -> list[str]:
    """xargs: the command it runs is checked like any other; since its file names come from stdin,
    commands that modify files are refused unless the sandbox is on."""
    for a in argv[1:]:
        if a in ("-p", "--interactive", "-o", "--open-tty"):
            refuse(f"xargs {a} needs a terminal")
        if not a.startswith("-"):
            break
    args = split_args(
        argv[1:],
        "adEILnPs",
        (
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ),
        stop_at_first_pos=True,
    )
    check_reads(args.values("-a", "--arg-file"), ctx)
    return _wrapped(argv, ctx, args.pos or ["echo"], stdin_args=True) if args.pos else argv


def _prefix_wrapper(short_value: str, long_value: tuple[str, ...], operands: int = 0) -> Rule:
    """A wrapper written ``NAME [options] [operands...] COMMAND ARGS``: nice, nohup, timeout, stdbuf, time."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        args = split_args(argv[1:], short_value, long_value, stop_at_first_pos=True)
        if argv[0] == "time":
            for out in args.values("-o", "--output"):
                ctx.write(out)
        return _wrapped(argv, ctx, args.pos[operands:])

    return rule


TOOL_RULES: dict[str, Rule] = {
    "git": rule_git,
    "curl": rule_curl,
    "wget": rule_wget,
    "ssh": rule_ssh,
    "scp": rule_ssh,
    "sftp": rule_ssh,
    "rsync": rule_ssh,
    "nc": rule_netcat,
    "ncat": rule_netcat,
    "netcat": rule_netcat,
    "ping": rule_network_plain,
    "dig": rule_network_plain,
    "host": rule_network_plain,
    "nslookup": rule_network_plain,
    "traceroute": rule_network_plain,
    "env": rule_env,
    "xargs": rule_xargs,
    "nice": _prefix_wrapper("n", ("--adjustment",)),
    "nohup": _prefix_wrapper("", ()),
    "timeout": _prefix_wrapper("sk", ("--signal", "--kill-after"), operands=1),
    "stdbuf": _prefix_wrapper("ioe", ("--input", "--output", "--error")),
    "time": _prefix_wrapper("of", ("--output", "--format")),
}
