"""Flag commands that the policy allows but that destroy or overwrite data, so the agent can ask the
user to confirm first. Pure and cheap: no workspace, no file system access.

Creating files is the agent's everyday work, so plain output (``>``, ``cp``, ``tee``, ``sort -o``)
is not flagged: those writes are confined to the workspace by the policy anyway. Deleting,
moving, editing in place, changing permissions and stopping processes are.
"""

from __future__ import annotations

import shlex

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.lexer import Op, Word, tokenize

WRAPPERS = frozenset({"xargs", "env", "nice", "nohup", "timeout", "stdbuf", "time", "sudo", "doas"})
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
    "mkfs": "mkfs formats a file system",
    "shutdown": "shutdown stops the machine",
    "reboot": "reboot restarts the machine",
}


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


def _command_reason(argv: list[str]) -> str | None:
    while argv and argv[0].rsplit("/", 1)[-1] in WRAPPERS:
        rest = argv[1:]
        argv = next((rest[i:] for i, a in enumerate(rest) if a.rsplit("/", 1)[-1] in _ALL_NAMES), [])
    if not argv:
        return None
    name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name in ALWAYS or name.startswith("mkfs"):
        return ALWAYS.get(name, "mkfs formats a file system")
    if name == "mv" and not {"-n", "--no-clobber"} & set(args):
        return "mv moves files and can overwrite the destination"
    if name == "ln" and any(a.startswith("-") and "f" in a.lstrip("-")[:3] for a in args):
        return "ln -f replaces existing files"
    if name == "sed" and any(a.startswith("-i") or a.startswith("--in-place") for a in args):
        return "sed -i edits files in place"
    if name == "find" and "-delete" in args:
        return "find -delete deletes files"
    if name == "git" and _git_reason(args):
        return _git_reason(args)
    return None


def _git_reason(args: list[str]) -> str | None:
    words = [a for a in args if not a.startswith("-")]
    sub = words[0] if words else ""
    if sub == "reset" and "--hard" in args:
        return "git reset --hard discards uncommitted changes"
    if sub == "clean":
        return "git clean deletes untracked files"
    if sub in ("checkout", "restore") and ("--" in args or "." in words[1:] or "-f" in args):
        return f"git {sub} can discard uncommitted changes"
    if sub == "push" and any(a in ("-f", "--force", "--force-with-lease") for a in args):
        return "git push --force rewrites remote history"
    if sub == "branch" and any(a in ("-D", "-d", "--delete") for a in args):
        return "git branch -D deletes a branch"
    if sub == "stash" and words[1:2] in (["drop"], ["clear"]):
        return "git stash drop/clear deletes stashed changes"
    return None


_ALL_NAMES = set(ALWAYS) | {"mv", "ln", "sed", "find", "git"}


def dangerous_reason(command: str) -> str | None:
    """Why ``command`` may destroy or overwrite data (the user should confirm), or None."""
    for part in _words(command):
        if isinstance(part, str):
            continue
        reason = _command_reason(part)
        if reason:
            return reason
    return None
