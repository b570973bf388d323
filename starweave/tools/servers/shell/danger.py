"""Flag commands that the policy allows but that a user would want to approve first, so the agent
can ask for a confirmation (the CONFIRM status). Pure and cheap: no workspace, no file system access
(it also runs on an agent server, far from the device).

It sees through what the policy sees through: options are parsed with the tools' own tables
(``sed --in-pl`` is ``sed --in-place``), wrappers are unwrapped (``env``, ``nice``, ``timeout``,
``xargs`` ...), and a program named by a path outside the system folders is a workspace program.

Flagged: deleting, moving over, editing in place, changing permissions or owners, stopping
processes, discarding git work, running a script, an interpreter or a workspace program, and using
the network. Creating and overwriting files in the workspace (``>``, ``cp``, ``tee``, ``sort -o``) is
the agent's everyday work and is not flagged: the policy keeps those writes in the workspace.
"""

from __future__ import annotations

import os
import re
import shlex

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.lexer import Op, Word, tokenize
from starweave.tools.servers.shell.optables import spec_for
from starweave.tools.servers.shell.optables_git import GIT, GIT_SUBCOMMANDS
from starweave.tools.servers.shell.options import Args, parse_options
from starweave.tools.servers.shell.rules_tools import INTERPRETER
from starweave.tools.servers.shell.targets import SYSTEM_BIN_DIRS

ALWAYS: dict[str, str] = {
    "rm": "rm deletes files",
    "rmdir": "rmdir deletes directories",
    "unlink": "unlink deletes a file",
    "shred": "shred destroys file contents",
    "truncate": "truncate cuts files short",
    "chmod": "chmod changes file permissions",
    "chown": "chown changes file ownership",
    "chgrp": "chgrp changes file group ownership",
    "kill": "kill stops processes",
    "pkill": "pkill stops processes",
    "killall": "killall stops processes",
    "dd": "dd writes raw data",
    "shutdown": "shutdown stops the machine",
    "reboot": "reboot restarts the machine",
}
NETWORK = frozenset(
    {
        "curl",
        "wget",
        "ssh",
        "scp",
        "sftp",
        "nc",
        "ncat",
        "netcat",
        "ping",
        "dig",
        "host",
        "nslookup",
        "traceroute",
    }
)
GIT_NETWORK = frozenset({"clone", "fetch", "pull", "push", "ls-remote"})
WRAPPERS = frozenset({"xargs", "env", "nice", "nohup", "timeout", "stdbuf", "time", "sudo", "doas"})


def _words(command: str) -> list[list[str] | str]:
    """Simple commands as word lists, operators as strings; a command we cannot lex is split by shlex."""
    try:
        tokens = tokenize(command)
    except PolicyViolation:
        try:
            return [shlex.split(command, comments=True)]
        except ValueError:
            return [command.split()]
    out: list[list[str] | str] = []
    current: list[str] = []
    skip = False
    for tok in tokens:
        if isinstance(tok, Word):
            if not skip:
                current.append(tok.raw)
            skip = False
        elif isinstance(tok, Op):
            if tok.text in ("|", "||", "&&", ";", "|&", "&"):
                out.append(current)
                current = []
                out.append(tok.text)
                continue
            skip = True  # the redirection target is not an argument
    out.append(current)
    return out


def _parse(name: str, args: list[str]) -> Args | None:
    spec = spec_for(name)
    if spec is None:
        return None
    try:
        return parse_options(name, args, spec)
    except PolicyViolation:
        return None  # the policy refuses it anyway


def _unwrap(name: str, args: list[str]) -> list[str]:
    """The command a wrapper runs (empty when none)."""
    if name in ("sudo", "doas"):
        rest = list(args)
        while rest and rest[0].startswith("-"):
            rest.pop(0)
        return rest
    if name == "nice" and args and re.fullmatch(r"--?[0-9]+", args[0]):
        args = args[1:]
    parsed = _parse(name, args)
    if parsed is None:
        return []
    inner = list(parsed.pos)
    if name == "env":
        while inner and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", inner[0]):
            inner.pop(0)
    if name == "timeout":
        inner = inner[1:]
    return inner


def _command_reason(argv: list[str]) -> str | None:
    while argv and os.path.basename(argv[0]) in WRAPPERS:
        argv = _unwrap(os.path.basename(argv[0]), argv[1:])
    if not argv or not argv[0]:
        return None
    given = argv[0]
    if "/" in given and os.path.dirname(os.path.normpath(given)) not in SYSTEM_BIN_DIRS:
        return f"{given} runs a program from the workspace, which can do anything the sandbox allows"
    name, args = os.path.basename(given), argv[1:]
    if name in ALWAYS or name.startswith("mkfs"):
        return ALWAYS.get(name, "mkfs formats a file system")
    if name in NETWORK:
        return f"{name} uses the network"
    if INTERPRETER.fullmatch(name):
        return f"{name} runs a script, which can do anything the sandbox allows"
    if name == "git":
        return _git_reason(args)
    if name == "find" and "-delete" in args:
        return "find -delete deletes files"
    parsed = _parse(name, args)
    if parsed is None:
        return None
    if name == "mv" and not parsed.has("-n", "--no-clobber"):
        return "mv moves files and can overwrite the destination"
    if name == "ln" and parsed.has("-f", "--force"):
        return "ln -f replaces existing files"
    if name == "sed" and parsed.has("-i", "--in-place"):
        return "sed -i edits files in place"
    return None


def _git_reason(args: list[str]) -> str | None:
    try:
        top = parse_options("git", args, GIT)
    except PolicyViolation:
        return None
    if not top.pos:
        return None
    sub, rest = top.pos[0], top.pos[1:]
    if sub in GIT_NETWORK:
        return f"git {sub} uses the network"
    spec = GIT_SUBCOMMANDS.get(sub)
    try:
        parsed = parse_options(f"git {sub}", rest, spec) if spec is not None else None
    except PolicyViolation:
        parsed = None
    has = (
        (lambda *names: parsed.has(*names))
        if parsed is not None
        else (lambda *names: bool(set(names) & set(rest)))
    )
    words = parsed.pos if parsed is not None else [a for a in rest if not a.startswith("-")]
    if sub == "reset" and has("--hard"):
        return "git reset --hard discards uncommitted changes"
    if sub == "clean":
        return "git clean deletes untracked files"
    if sub in ("checkout", "restore") and ("--" in rest or "." in words or has("-f", "--force")):
        return f"git {sub} can discard uncommitted changes"
    if sub == "push" and has("-f", "--force", "--force-with-lease"):
        return "git push --force rewrites remote history"
    if sub == "branch" and has("-D", "-d", "--delete"):
        return "git branch -D deletes a branch"
    if sub == "stash" and words[:1] in (["drop"], ["clear"]):
        return "git stash drop/clear deletes stashed changes"
    return None


def dangerous_reason(command: str) -> str | None:
    """Why ``command`` may destroy or overwrite data, run code or use the network (the user
    should confirm), or None."""
    for part in _words(command):
        if isinstance(part, str):
            continue
        reason = _command_reason(part)
        if reason:
            return reason
    return None
