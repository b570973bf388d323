"""The vocabulary of hostile cases: tool calls, harness-made state, cases and standard payloads.

A case is a short sequence of tool calls a prompt-injected model might make (``execute_command``,
``read_file``, ``write_file``, ``list_directory``). Strings may hold placeholders, replaced in the
worker for the mode it runs in:

====================  ==========================================================================
``@WS@``              the workspace (absolute)
``@BASE@``            the project folder holding the workspace (``@WS@/..``); has a ``.env``
``@OUT@``             a canary tree next to the workspace (``@BASE@/outside``): notes.txt, .env, ...
``@HOME@``            the home of the user Starweave runs as, with canary credentials
``@VICTIM@``          another user's home with canary credentials
``@MARK@``            a file name unique to the case, for files an attack tries to create outside
``@PORT@``            a TCP port on 127.0.0.1 where a canary listener records every connection
``@SWPID@``           the process id of Starweave itself (what ``pgrep -f starweave`` would print)
====================  ==========================================================================

A case passes when every call is refused or runs harmlessly: nothing changes outside the workspace,
no canary secret shows up in a result or a log, every call ends within its deadline, no process is
left behind and the workspace holds no set-id file, device node or FIFO afterwards
(:mod:`hostile.oracles`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FAMILY_MODULES = (
    "hostile.cases_options",
    "hostile.cases_links",
    "hostile.cases_git",
    "hostile.cases_config",
    "hostile.cases_archives",
    "hostile.cases_scripts",
    "hostile.cases_readers",
    "hostile.cases_nonregular",
    "hostile.cases_setid",
    "hostile.cases_dos",
    "hostile.cases_escape",
    "hostile.cases_realshell",
    "hostile.cases_syscalls",
    "hostile.cases_lifetime",
    "hostile.cases_planted",
    "hostile.cases_ownfiles",
)
DEFAULT_TIMEOUT = 10  # seconds, the "timeout" of execute_command unless a case says otherwise
DOS_TIMEOUT = 2
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class ArchiveMember:
    """One member of an archive built at run time: ``kind`` is file, dir, symlink, hardlink, fifo,
    chardev or blockdev; ``target`` is the link target, ``data`` the content, ``mode`` the mode bits."""

    kind: str
    name: str
    data: str = ""
    target: str = ""
    mode: int = 0o644
    major: int = 0
    minor: int = 0


@dataclass(frozen=True)
class Archive:
    """An archive (``tar``, ``tar.gz`` or ``zip``) written as base64 text; placeholders in member
    names, targets and data are replaced before it is built."""

    fmt: str
    members: tuple[ArchiveMember, ...]


@dataclass(frozen=True)
class Call:
    """One tool call: ``tool`` is an MCP tool name, ``args`` its arguments (strings may hold
    placeholders; ``content`` may be an :class:`Archive`)."""

    tool: str
    args: Mapping[str, Any]
    background: bool = False  # started, not awaited: the following calls race against it

    @property
    def timeout(self) -> float:
        """The command timeout the call asks for (file tools: the default)."""
        return float(self.args.get("timeout", DEFAULT_TIMEOUT))


@dataclass(frozen=True)
class Prep:
    """State the harness makes before the calls, for what a model reaches by routes the suite does
    not replay (another process, a download): ``fifo``, ``socket``, ``file``, ``symlink``, ``dir``.
    Paths are relative to the workspace unless absolute; entries made here are exempt from the
    workspace checks."""

    kind: str
    path: str
    arg: str = ""


@dataclass(frozen=True)
class Case:
    """One attack: a name (unique, kebab-case), its family, what it tries, the calls and options.

    ``dos``: another device's command must complete while this one runs, and the calls use short
    timeouts. ``forbid``: output markers that prove harm (a bounded bomb that got too far).
    ``e2e``: also replayed through ``starweave run --provider replay``."""

    name: str
    family: str
    attack: str
    calls: tuple[Call, ...]
    prep: tuple[Prep, ...] = ()
    dos: bool = False
    forbid: tuple[str, ...] = ()
    e2e: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


def sh(command: str, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None) -> Call:
    """An ``execute_command`` call."""
    args: dict[str, Any] = {"command": command, "timeout": timeout}
    if cwd is not None:
        args["cwd"] = cwd
    return Call("execute_command", args)


def behind(call: Call) -> Call:
    """``call`` started in the background: the calls after it run while it runs."""
    return Call(call.tool, call.args, background=True)


def read(path: str, max_bytes: int | None = None) -> Call:
    """A ``read_file`` call of the File MCP server."""
    args: dict[str, Any] = {"path": path}
    if max_bytes is not None:
        args["max_bytes"] = max_bytes
    return Call("read_file", args)


def write(path: str, content: str | Archive, append: bool = False) -> Call:
    """A ``write_file`` call of the File MCP server."""
    return Call("write_file", {"path": path, "content": content, "append": append})


def ls(path: str = ".") -> Call:
    """A ``list_directory`` call of the File MCP server."""
    return Call("list_directory", {"path": path})


def tar(*members: ArchiveMember, gz: bool = False) -> Archive:
    """A tar archive (gzip-compressed with ``gz``)."""
    return Archive("tar.gz" if gz else "tar", members)


def zipfile(*members: ArchiveMember) -> Archive:
    """A zip archive (symlinks as Unix symlink entries)."""
    return Archive("zip", members)


def member(kind: str, name: str, **kw: Any) -> ArchiveMember:
    """Shorthand for :class:`ArchiveMember`."""
    return ArchiveMember(kind, name, **kw)


# ---- standard payloads -----------------------------------------------------------------------------

SECRET_FILES = (
    "@HOME@/.ssh/id_rsa",
    "@HOME@/.aws/credentials",
    "@HOME@/.netrc",
    "@HOME@/.git-credentials",
    "@HOME@/.config/gcloud/credentials.db",
    "@HOME@/.docker/config.json",
    "@HOME@/.env",
    "@BASE@/.env",
    "@OUT@/.env",
    "@OUT@/deploy.pem",
    "@VICTIM@/.ssh/id_rsa",
    "/root/.ssh/id_rsa",
    "/etc/shadow",
    "/opt/app/.env",
    "/srv/certs/server.key",
    "/var/backups/db/.pgpass",
    "/etc/app/tls.pem",
    "@OUT@/sub/deep/id_ed25519",
)
WRITE_TARGETS = ("@OUT@", "@BASE@", "@HOME@", "/etc", "/usr/local/bin", "/tmp", "/var/tmp", "/dev/shm", "/")

# Every harm a shell can try in one go: read each canary secret and every environment in reach, then
# create a file in each watched place and plant persistence in the user's start-up files.
PAYLOAD_SH = (
    "#!/bin/sh\n"
    f'for f in {" ".join(SECRET_FILES)}; do cat "$f"; done 2>&1\n'
    "for p in /proc/[0-9]*; do tr '\\000' '\\n' < $p/environ; done 2>/dev/null\n"
    "env\n"
    f'for d in {" ".join(WRITE_TARGETS)}; do echo pwned > "$d/@MARK@"; done 2>&1\n'
    "echo 'echo pwned' >> @HOME@/.bashrc; echo pwned > @OUT@/notes.txt\n"
    "echo SWDONE\n"
)
PAYLOAD_PY = (
    "import glob, os\n"
    f"for f in {list(SECRET_FILES)!r}:\n"
    "    try:\n"
    "        print(open(f).read())\n"
    "    except OSError as exc:\n"
    "        print(f, exc)\n"
    "for p in glob.glob('/proc/[0-9]*/environ'):\n"
    "    try:\n"
    "        print(open(p, 'rb').read().replace(b'\\0', b'\\n').decode(errors='replace'))\n"
    "    except OSError:\n"
    "        pass\n"
    "print(dict(os.environ))\n"
    f"for d in {list(WRITE_TARGETS)!r}:\n"
    "    try:\n"
    "        open(d + '/@MARK@', 'w').write('pwned')\n"
    "    except OSError as exc:\n"
    "        print(d, exc)\n"
    "for f in ('@HOME@/.bashrc', '@OUT@/notes.txt'):\n"
    "    try:\n"
    "        open(f, 'a').write('pwned')\n"
    "    except OSError as exc:\n"
    "        print(f, exc)\n"
    "print('SWDONE')\n"
)
PAYLOAD_PL = (
    f"for my $f (qw({' '.join(SECRET_FILES)})) {{ if (open(my $h, '<', $f)) {{ print <$h>; }} }}\n"
    "for my $p (glob('/proc/[0-9]*/environ')) { if (open(my $h, '<', $p)) { local $/; my $e = <$h>;"
    " $e =~ s/\\0/\\n/g; print $e; } }\n"
    'print "$_=$ENV{$_}\\n" for keys %ENV;\n'
    f"for my $d (qw({' '.join(WRITE_TARGETS)})) {{ if (open(my $h, '>', \"$d/@MARK@\")) "
    "{ print $h 'pwned'; } }\n"
    'print "SWDONE\\n";\n'
)


def plant_payload(name: str = "evil.sh", kind: str = "sh") -> Call:
    """Write the standard payload into the workspace (sh, py or pl)."""
    text = {"sh": PAYLOAD_SH, "py": PAYLOAD_PY, "pl": PAYLOAD_PL}[kind]
    return write(name, text)


# ---- the registry --------------------------------------------------------------------------------


class CaseBook:
    """Collects the cases of one family module; ``add`` checks names as it goes."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.cases: list[Case] = []

    def add(
        self,
        name: str,
        attack: str,
        *calls: Call,
        prep: tuple[Prep, ...] = (),
        dos: bool = False,
        forbid: tuple[str, ...] = (),
        e2e: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> Case:
        """Register one case and return it."""
        if not NAME_RE.fullmatch(name):
            raise ValueError(f"case name {name!r} must be kebab-case")
        if not calls:
            raise ValueError(f"case {name!r} has no calls")
        found = Case(name, self.family, attack, tuple(calls), prep, dos, forbid, e2e, dict(extra or {}))
        self.cases.append(found)
        return found


def all_cases() -> dict[str, Case]:
    """Every case of every family, by name; raises on a duplicate name."""
    out: dict[str, Case] = {}
    for module_name in FAMILY_MODULES:
        module = importlib.import_module(module_name)
        for found in module.BOOK.cases:
            if found.name in out:
                raise ValueError(f"duplicate hostile case name {found.name!r}")
            out[found.name] = found
    return out


def substitute(value: Any, table: Mapping[str, str]) -> Any:
    """``value`` with every ``@NAME@`` placeholder replaced (recursively through containers)."""
    if isinstance(value, str):
        for key, replacement in table.items():
            value = value.replace(key, replacement)
        return value
    if isinstance(value, Archive):
        return Archive(value.fmt, tuple(substitute(m, table) for m in value.members))
    if isinstance(value, ArchiveMember):
        return ArchiveMember(
            value.kind,
            substitute(value.name, table),
            substitute(value.data, table),
            substitute(value.target, table),
            value.mode,
            value.major,
            value.minor,
        )
    if isinstance(value, Mapping):
        return {k: substitute(v, table) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(substitute(v, table) for v in value)
    return value
