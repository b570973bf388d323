"""Which command lines a person should approve first (the CONFIRM status).

A short, generic, best-effort classifier of bash command lines; it never refuses anything. The
sandbox is the boundary and holds whatever this misses. Pure and cheap (linear in the line, no file
system access): it also runs on an agent server, far from the device.

It finds the words in command position (after ``;``, ``|``, ``&&``, ``(``, ``$(``, backticks,
``<(``, ``then``, ``do`` ..., behind wrappers such as ``sudo``, ``env``, ``timeout``, ``xargs`` and
``find -exec``), skipping redirection targets and the text of here-documents; the substitutions bash
runs from inside double quotes and unquoted here-documents are read as command lines of their own
(work bounded: a nesting too deep to read is flagged). Inline code (``bash -c '...'``,
``python3 -c``, ``eval``) is flagged as such, so nothing needs to look inside it. Flagged:
deleting, moving over, editing in place, changing permissions or owners, stopping processes,
discarding git work, running a script, an interpreter or a program of the workspace, and using the
network. Creating and overwriting files (``>``, ``cp``, ``tee``) is the agent's everyday work and is
not flagged: the sandbox keeps those writes in the workspace.
"""

from __future__ import annotations

import os
import re
import shlex

MAX_CHARS = 100_000  # longer lines are classified on their first part only (bounded work)
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
    "wipefs": "wipefs erases file system signatures",
    "shutdown": "shutdown stops the machine",
    "reboot": "reboot restarts the machine",
    "poweroff": "poweroff stops the machine",
}
NETWORK = frozenset(
    {
        "curl", "wget", "ssh", "scp", "sftp", "ftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet",
        "ping", "dig", "host", "nslookup", "traceroute",
    }
)  # fmt: skip
INTERPRETER = re.compile(
    r"(?:ba|da|z|k|c|tc|fi)?sh|python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|php[0-9.]*|lua[0-9.]*"
)
# Wrappers run the command that follows their own options; these options take a value.
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter", "--max-args"}),
    "timeout": frozenset({"-k", "-s", "--kill-after", "--signal"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "flock": frozenset({"-w", "-E", "--timeout"}),
}
SEPARATORS = frozenset({";", ";;", "&", "&&", "|", "||", "|&", "(", ")", "{", "}", "\n", "!", "`"})
PUNCTUATION = frozenset(";&|()<>")
REDIRECTION = re.compile(r"[0-9]*(?:[<>]+|&>>?)&?|<<-?|<<<")
KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "time", "{"})
SYSTEM_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
GIT_NETWORK = frozenset({"clone", "fetch", "pull", "push", "ls-remote"})
GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})


def _has(args: list[str], short: str, *longs: str) -> bool:
    """Whether ``args`` hold the short option letter ``short`` (alone or in a cluster) or any of
    ``longs`` (also abbreviated, as GNU tools accept: ``--in-pl`` is ``--in-place``)."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if len(name) > 3 and any(full.startswith(name) for full in longs):
                return True
        elif short and arg.startswith("-") and short in arg[1:].split("=", 1)[0]:
            return True
    return False


def _tokens(command: str) -> list[str]:
    """Words and operators of ``command`` (quotes removed); a line shlex cannot split (an open
    quote) is split on blanks, so it is still looked at."""
    lexer = shlex.shlex(command[:MAX_CHARS], posix=True, punctuation_chars="".join(PUNCTUATION))
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = False
    lexer.wordchars += "[]+%@:,{}^!$`"
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return command[:MAX_CHARS].replace("\n", " \n ").split(" ")


def _commands(tokens: list[str]) -> list[list[str]]:
    """The simple commands among ``tokens``: each a list of words starting in command position."""
    out: list[list[str]] = []
    current: list[str] = []
    heredocs: list[str] = []  # delimiters whose bodies start at the next newline
    carry: str | None = None  # the rest of a word that began with a backtick
    i = 0
    while i < len(tokens) or carry is not None:
        if carry is not None:
            tok, carry = carry, None
        else:
            tok = tokens[i]
            i += 1
        if tok == "\n" and heredocs:
            i = _skip_body(tokens, i, heredocs)
            heredocs = []
        if tok.startswith("`") and tok != "`":
            carry, tok = tok[1:], "`"
        redirection = REDIRECTION.fullmatch(tok)
        if tok in SEPARATORS or tok == "$" or (set(tok) <= PUNCTUATION and not redirection):
            if current:
                out.append(current)
            current = []
            continue
        if redirection:
            if tok.startswith("<<") and tok != "<<<" and i < len(tokens):
                heredocs.append(tokens[i].lstrip("-"))
            # The redirection's target is no argument, unless it is a process substitution
            # (``> >(cmd)``, ``< <(cmd)``): its command is a command of its own.
            if not (i < len(tokens) and "(" in tokens[i] and set(tokens[i]) <= PUNCTUATION):
                i += 1
            continue
        if not current and (tok in KEYWORDS or ASSIGNMENT.match(tok)):
            continue
        current.append(tok.rstrip("`"))
    if current:
        out.append(current)
    return out


def _skip_body(tokens: list[str], i: int, delimiters: list[str]) -> int:
    """The index after the here-document bodies that start at ``i`` (each ends at its delimiter
    alone on a line)."""
    for delimiter in delimiters:
        while i < len(tokens):
            line_end = (i + 1 < len(tokens) and tokens[i + 1] == "\n") or i + 1 == len(tokens)
            if tokens[i] == delimiter and (i == 0 or tokens[i - 1] == "\n") and line_end:
                i += 2
                break
            i += 1
    return i


def _unwrap(argv: list[str]) -> list[str]:
    """The command behind wrappers (``sudo -u x env A=1 nice -n 5 rm f`` is ``rm f``)."""
    while argv and os.path.basename(argv[0]) in WRAPPERS:
        name, rest = os.path.basename(argv[0]), argv[1:]
        valued = WRAPPERS[name]
        while rest and (rest[0].startswith("-") or (name == "env" and ASSIGNMENT.match(rest[0]))):
            opt = rest.pop(0)
            if opt == "--":
                break
            if opt in valued and rest:
                rest.pop(0)
        if name == "timeout" and rest:
            rest = rest[1:]  # the duration
        argv = rest
    return argv


def _git_reason(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in GIT_VALUED else 1  # git's own options before the subcommand
    sub, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", [])
    if sub in GIT_NETWORK:
        return f"git {sub} uses the network"
    if sub == "reset" and _has(rest, "", "--hard"):
        return "git reset --hard discards uncommitted changes"
    if sub == "clean":
        return "git clean deletes untracked files"
    if sub in ("checkout", "restore") and ("--" in rest or "." in rest or _has(rest, "f", "--force")):
        return f"git {sub} can discard uncommitted changes"
    if (sub == "branch" and _has(rest, "D", "--delete")) or (sub == "branch" and _has(rest, "d")):
        return "git branch -D deletes a branch"
    if sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        return "git stash drop/clear deletes stashed changes"
    return None


def _command_reason(argv: list[str]) -> str | None:
    argv = _unwrap(argv)
    if not argv or not argv[0]:
        return None
    given, args = argv[0], argv[1:]
    if "/" in given and os.path.dirname(os.path.normpath(given)) not in SYSTEM_BIN_DIRS:
        return f"{given} runs a program from the workspace, which can do anything the sandbox allows"
    name = os.path.basename(given)
    if name in ALWAYS:
        return ALWAYS[name]
    if name.startswith("mkfs"):
        return "mkfs formats a file system"
    if name in NETWORK:
        return f"{name} uses the network"
    if INTERPRETER.fullmatch(name):
        return f"{name} runs a script, which can do anything the sandbox allows"
    if name == "git":
        return _git_reason(args)
    if name == "eval" or name == "source" or name == ".":
        return f"{name} runs a command line built at run time"
    if name == "find":
        if "-delete" in args:
            return "find -delete deletes files"
        return None  # -exec's command is a command of its own (see _find_exec)
    if name == "mv" and not _has(args, "n", "--no-clobber"):
        return "mv moves files and can overwrite the destination"
    if name == "ln" and _has(args, "f", "--force"):
        return "ln -f replaces existing files"
    if name in ("sed", "perl") and _has(args, "i", "--in-place"):
        return f"{name} -i edits files in place"
    return None


def _find_exec(argv: list[str]) -> list[list[str]]:
    """The commands ``find`` runs with -exec, -execdir, -ok and -okdir."""
    out: list[list[str]] = []
    for i, word in enumerate(argv):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[str] = []
            for w in argv[i + 1 :]:
                if w in (";", "+", "\\;"):
                    break
                inner.append(w)
            out.append(inner)
    return out


# Where bash runs a command line that the tokenizer reads as one plain word: "$(...)" and "`...`"
# inside double quotes, and the bodies of here-documents whose delimiter is not quoted.
INTERESTING = re.compile(r"[\\'\"`$<\n]")
SUBSTITUTION = re.compile(r"\$\((?!\()|`")
HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([^\s'\"<>;&|()]+)\2")
MAX_NESTING = 8  # quoted substitutions looked into; a deeper nesting is flagged as unreadable


def _closing(text: str, start: int) -> int:
    """The index of the ``)`` that closes the parenthesis open before ``start`` (or the end)."""
    depth, quote, i = 1, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                i += 1
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _substitution_at(text: str, i: int, out: list[str]) -> int:
    """If a substitution starts at ``i`` ("$(" but not "$((", or a backtick), its command line goes
    to ``out``; the index after it (or ``i`` when there is none)."""
    if text.startswith("$(", i) and not text.startswith("$((", i):
        end = _closing(text, i + 2)
        out.append(text[i + 2 : end])
        return end + 1
    if text.startswith("`", i):
        end = text.find("`", i + 1)
        end = len(text) if end < 0 else end
        out.append(text[i + 1 : end])
        return end + 1
    return i


def _heredoc_bodies(text: str, i: int, pending: list[tuple[str, bool, bool]], out: list[str]) -> int:
    """Skip the bodies of the here-documents ``pending`` (delimiter, quoted, tabs stripped) that
    start at ``i``, keeping the substitutions of unquoted ones; the index after them."""
    for delimiter, quoted, strip in pending:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip else line) == delimiter:
                break
            j = 0
            while not quoted and (found := SUBSTITUTION.search(line, j)) is not None:
                j = max(_substitution_at(line, found.start(), out), found.start() + 1)
    return i


def _hidden_commands(text: str) -> list[str]:
    """The command lines bash runs from inside double quotes and unquoted here-document bodies
    (unquoted substitutions are in command position for the tokenizer already). Linear."""
    out: list[str] = []
    pending: list[tuple[str, bool, bool]] = []  # here-documents opened on the current line
    quote, i = "", 0
    while (found := INTERESTING.search(text, i)) is not None:
        i, c = found.start(), found.group()
        if quote == "'":
            quote, i = ("" if c == "'" else "'"), i + 1
        elif c == "\\":
            i += 2
        elif quote == '"':
            if c == '"':
                quote, i = "", i + 1
            else:
                i = max(_substitution_at(text, i, out), i + 1)
        elif c in "'\"":
            quote, i = c, i + 1
        elif c == "<" and (heredoc := HEREDOC.match(text, i)) and not text.startswith("<<<", i):
            pending.append((heredoc.group(3), bool(heredoc.group(2)), bool(heredoc.group(1))))
            i = heredoc.end()
        elif c == "\n" and pending:
            i = _heredoc_bodies(text, i + 1, pending, out)
            pending = []
        else:
            i += 1
    return out


def _reason(command: str, budget: list[int], depth: int = 0) -> str | None:
    """The first reason in ``command`` and the command lines hidden in it; ``budget`` is how many
    characters may still be read in all (nested substitutions are read again)."""
    command = command[:MAX_CHARS]
    budget[0] -= len(command)
    if budget[0] < 0 or depth > MAX_NESTING:
        return "the command line nests command substitutions too deeply to be read"
    for argv in _commands(_tokens(command)):
        for candidate in (argv, *_find_exec(argv)):
            reason = _command_reason(candidate)
            if reason:
                return reason
    for inner in _hidden_commands(command):
        reason = _reason(inner, budget, depth + 1)
        if reason:
            return reason
    return None


def dangerous_reason(command: str) -> str | None:
    """Why a person should approve ``command`` before it runs (it may destroy or overwrite data, run
    code or use the network), or None."""
    return _reason(command, [2 * MAX_CHARS])
