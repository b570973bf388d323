"""Rules for interpreters, network clients and wrappers (commands that run other commands)."""

from __future__ import annotations

import re

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.parser import check_assignment
from starweave.tools.servers.shell.rulebook import (
    Rule,
    RuleContext,
    check_reads,
    option_values_read,
    refuse,
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
    the workspace may run only under the sandbox, which confines what it can do."""
    fam = _family(argv[0])
    inline, takes_value = INLINE_SHORT.get(fam, "ce"), INTERP_VALUE.get(fam, "")
    args, i, script = argv[1:], 0, None
    while i < len(args):
        a = args[i]
        if a == "-":
            break
        if a == "--":
            script = args[i + 1] if i + 1 < len(args) else None
            break
        if a.startswith("--"):
            if a.split("=")[0] in INLINE_LONG:
                refuse(f"{argv[0]} {a.split('=')[0]}: inline code is refused; write a script file instead")
            if fam == "python" and a not in ("--version", "--help"):
                refuse(f"{argv[0]} {a}: only python3 [-u -B -I -E -s -S -O -W arg -X opt] SCRIPT is accepted")
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
    real = ctx.read(script)
    if not ctx.guard.in_workspace(real):
        refuse(f"{argv[0]}: only scripts inside the workspace may run ({script!r} is outside)")
    if not ctx.sandboxed:
        refuse(
            f"{argv[0]} {script}: running scripts needs a sandbox (SHELL.SANDBOX auto, bwrap or landlock), "
            "because a script's own file accesses cannot be checked"
        )
    ctx.relinks(f"the script {script} can do anything in the workspace")
    return argv


# ---- network clients -----------------------------------------------------------------------------

CURL_WRITES = (
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
    "--etag-save",
    "--hsts",
    "--alt-svc",
)
CURL_REFUSED = {
    "-K": "(-K/--config) reads options from a file; pass them on the command line",
    "--config": "(-K/--config) reads options from a file; pass them on the command line",
    "--unix-socket": "connects to a local service socket",
    "--abstract-unix-socket": "connects to a local service socket",
    "--engine": "loads a crypto engine library",
}
LOCAL_URL = re.compile(r"\s*(file|scp|sftp|telnet|dict|ldapi?):", re.IGNORECASE)


def rule_curl(argv: list[str], ctx: RuleContext) -> list[str]:
    """curl: needs the network; output options write in the workspace; config files, local sockets,
    engines and file:// (and scp:, sftp:) URLs are refused; ~/.curlrc is ignored (-q)."""
    ctx.need_network("curl")
    args = ctx.opts(argv)
    for name, _ in args.opts:
        if name in CURL_REFUSED:
            refuse(f"curl {name} is refused: it {CURL_REFUSED[name]}")
    for name, value in args.opts:
        if value is None:
            continue
        if name in CURL_WRITES:
            ctx.write(value)
        else:
            for cand in re.split(r"[@<]", value, maxsplit=1)[1:] or [value]:
                check_reads([cand], ctx)
    for url in [*args.pos, *args.values("--url")]:
        if LOCAL_URL.match(url):
            refuse(f"curl {url}: only network URLs are allowed; read local files with cat")
    return [argv[0], "-q", *argv[1:]]


WGET_WRITES = (
    "-O",
    "--output-document",
    "-o",
    "--output-file",
    "-a",
    "--append-output",
    "-P",
    "--directory-prefix",
    "--save-cookies",
    "--rejected-log",
    "--warc-file",
    "--hsts-file",
    "--save-headers",
)


def rule_wget(argv: list[str], ctx: RuleContext) -> list[str]:
    """wget: needs the network; output options write in the workspace; -e/--execute, --config and
    --use-askpass are refused; no wgetrc is read (--no-config)."""
    ctx.need_network("wget")
    args = ctx.opts(argv)
    for bad in ("-e", "--execute", "--use-askpass", "--config"):
        if args.has(bad):
            refuse(f"wget {bad} runs wgetrc commands or a program; refused")
    for name, value in args.opts:
        if value is not None:
            (ctx.write if name in WGET_WRITES else lambda v: check_reads([v], ctx))(value)
    return [argv[0], "--no-config", *argv[1:]]


SSH_SAFE_OPTION = re.compile(
    r"(batchmode|connecttimeout|connectionattempts|port|user|hostname|stricthostkeychecking|"
    r"serveraliveinterval|serveralivecountmax|loglevel|compression|addressfamily|passwordauthentication|"
    r"pubkeyauthentication|identitiesonly|preferredauthentications|requesttty|numberofpasswordprompts|"
    r"checkhostip|hashknownhosts|ciphers|macs|kexalgorithms|hostkeyalgorithms|tcpkeepalive)",
    re.IGNORECASE,
)
SSH_REFUSED = {
    "-F": "names a configuration file",
    "-S": "names a control socket or a program",
    "-f": "goes to the background",
    "-M": "starts a connection master",
    "-O": "controls a connection master",
    "-w": "opens a tunnel device",
    "-I": "loads a PKCS#11 library",
    "-b": "runs batch commands (which may run local commands)",
    "-s": "runs a subsystem or server program",
    "-P": "",
}


def _ssh_opts(tool: str, argv: list[str], ctx: RuleContext) -> list[str]:
    """Parse ssh-style options, which may follow the destination too (ssh HOST -o X CMD)."""
    rest = argv[1:]
    operands: list[str] = []
    while True:
        args = ctx.opts([tool, *rest])
        for name, value in args.opts:
            if name == "-P" and tool != "ssh":
                continue
            if name == "-D" and tool != "ssh":
                refuse(f"{tool} -D runs a local sftp server program; refused")
            if SSH_REFUSED.get(name):
                refuse(f"{tool} {name} is refused: it {SSH_REFUSED[name]}")
            if (
                name == "-o"
                and value is not None
                and not SSH_SAFE_OPTION.fullmatch(re.split(r"[=\s]", value)[0])
            ):
                refuse(
                    f"{tool} -o {value}: a setting that names files or runs a local command is refused; "
                    "only plain connection settings (Port, User, BatchMode ...) are allowed"
                )
            if name == "-E" and value is not None:
                ctx.write(value)
            if name == "-i" and value is not None:
                ctx.read(value)
        if tool != "ssh" or not args.pos:
            return operands + args.pos
        operands.append(args.pos[0])
        rest = args.pos[1:]
        if not rest or not rest[0].startswith("-"):
            return operands + rest


def rule_ssh(argv: list[str], ctx: RuleContext) -> list[str]:
    """ssh/scp/sftp: need the network; options that run local programs or read config are refused;
    scp's local source is read and its local target written."""
    ctx.need_network(argv[0])
    operands = _ssh_opts(argv[0], argv, ctx)
    if argv[0] == "scp" and operands:
        *sources, target = operands
        for s in sources:
            if ":" not in s.split("/")[0]:
                ctx.read(s)
        if ":" not in target.split("/")[0]:
            ctx.write(target)
    return argv


def rule_netcat(argv: list[str], ctx: RuleContext) -> list[str]:
    """nc/ncat: need the network; running programs, local sockets and output files are refused."""
    ctx.need_network(argv[0])
    for word in argv[1:]:
        if word.startswith(("--exec", "--sh-exec", "--lua-exec")) or (
            argv[0] != "ncat" and re.fullmatch(r"-[A-Za-z0-9]*[ec][A-Za-z0-9]*", word)
        ):
            refuse(f"{argv[0]} {word} runs a program for the connection; refused")
    args = ctx.opts(argv)
    for bad in ("-e", "--exec", "-c", "--sh-exec", "--lua-exec", "-U", "--unixsock"):
        if args.has(bad):
            refuse(f"{argv[0]} {bad} runs a program or connects to a local socket; refused")
    for out in args.values("-o", "--output", "-x", "--hex-dump", "--append-output"):
        ctx.write(out)
    return argv


def rule_network_plain(argv: list[str], ctx: RuleContext) -> list[str]:
    """ping, dig, host, nslookup, traceroute: need the network; they write nothing."""
    ctx.need_network(argv[0])
    args = ctx.opts(argv)
    option_values_read(args, ctx)
    check_reads([a for a in args.pos if not a.startswith(("@", "+"))], ctx)
    return argv


# ---- wrappers ------------------------------------------------------------------------------------


def _wrapped(argv: list[str], ctx: RuleContext, inner: list[str], *, stdin_args: bool = False) -> list[str]:
    if not inner:
        return argv
    checked = ctx.inner(inner, stdin_args=stdin_args)
    return argv[: len(argv) - len(inner)] + checked


def rule_env(argv: list[str], ctx: RuleContext) -> list[str]:
    """env [-i] [-u NAME] [NAME=value...] [COMMAND]: the command is checked; -S (split a string into
    a command), -C (change folder) and variables that change how programs load code are refused."""
    args = ctx.opts(argv)
    for bad in ("-S", "--split-string", "-C", "--chdir"):
        if args.has(bad):
            refuse(f"env {bad} is refused; write the command out directly")
    rest = list(args.pos)
    while rest and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
        name, value = rest[0].split("=", 1)
        try:
            check_assignment(name, value)
        except PolicyViolation as exc:
            refuse(f"env {name}=...: setting {name} is refused ({exc})")
        rest.pop(0)
    if rest and "=" in rest[0] and not rest[0].startswith("/"):
        refuse(f"env {rest[0]}: not a variable name the policy accepts")
    return _wrapped(argv, ctx, rest)


def rule_xargs(argv: list[str], ctx: RuleContext) -> list[str]:
    """xargs: the command it runs is checked like any other; since its file names come from stdin,
    only commands that open no file may follow it without a sandbox."""
    args = ctx.opts(argv)
    for bad in ("-p", "--interactive", "-o", "--open-tty", "--process-slot-var"):
        if args.has(bad):
            refuse(f"xargs {bad} is refused (needs a terminal or sets a variable in the command)")
    check_reads(args.values("-a", "--arg-file"), ctx)
    return _wrapped(argv, ctx, args.pos, stdin_args=True) if args.pos else argv


def rule_nice(argv: list[str], ctx: RuleContext) -> list[str]:
    """nice [-n N | -N] COMMAND."""
    words = argv[1:]
    if words and re.fullmatch(r"--?[0-9]+", words[0]):
        words = words[1:]
    args = ctx.opts(["nice", *words])
    return _wrapped(argv, ctx, args.pos)


def _prefix_wrapper(operands: int = 0) -> Rule:
    """A wrapper written ``NAME [options] [operands...] COMMAND ARGS``: nohup, timeout, stdbuf, time."""

    def rule(argv: list[str], ctx: RuleContext) -> list[str]:
        args = ctx.opts(argv)
        for out in args.values("-o", "--output"):
            if argv[0] == "time":
                ctx.write(out)
        return _wrapped(argv, ctx, args.pos[operands:])

    return rule


TOOL_RULES: dict[str, Rule] = {
    "curl": rule_curl,
    "wget": rule_wget,
    "ssh": rule_ssh,
    "scp": rule_ssh,
    "sftp": rule_ssh,
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
    "nice": rule_nice,
    "nohup": _prefix_wrapper(),
    "timeout": _prefix_wrapper(operands=1),
    "stdbuf": _prefix_wrapper(),
    "time": _prefix_wrapper(),
}
