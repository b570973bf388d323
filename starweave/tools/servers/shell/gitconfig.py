"""Find the repository a git command will use and refuse it when its configuration could run a
program.

Direct writes to ``.git/`` are refused by the path rules, but an archive, a copy or a clone can still
plant a ``.git/config`` in the workspace, and git executes what it names (``core.fsmonitor``,
``core.pager``, ``diff.*.textconv``, ``filter.*.smudge``, ``alias.* = !cmd``, ``include.path`` ...).
So before git runs in a repository inside the workspace, its config files are read (a regular file,
bounded) and every key must be on a list of settings that run nothing and read no other file. A
repository outside the workspace belongs to the user: git may read it but not change it.
"""

from __future__ import annotations

import os
import re

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.safeopen import read_checked

MAX_CONFIG = 262_144
SAFE_KEY = re.compile(
    r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks"
    r"|autocrlf|eol|safecrlf|quotepath|abbrev|compression|loosecompression|bigfilethreshold|checkstat"
    r"|trustctime|untrackedcache|splitindex|sparsecheckout|sparsecheckoutcone|preloadindex|commentchar"
    r"|whitespace|multipackindex|commitgraph|warnambiguousrefs|protecthfs|protectntfs)"
    r"|(user|author|committer)\.(name|email)|init\.defaultbranch"
    r"|remote\..+\.(url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|skipdefaultupdate|skipfetchall)"
    r"|branch\..+\.(remote|pushremote|merge|rebase|description)"
    r"|color\.[a-z.]+|advice\.[a-z]+|log\.(abbrevcommit|date|decorate|follow|graphcolors|showroot|mailmap)"
    r"|pull\.(rebase|ff)|push\.(default|autosetupremote|followtags)"
    r"|merge\.(ff|conflictstyle|log|renames|renamelimit|stat|autostash|defaulttoupstream|verbosity)"
    r"|diff\.(renames|algorithm|indentheuristic|mnemonicprefix|noprefix|relative|context|interhunkcontext"
    r"|statgraphwidth|colormoved|colormovedws|suppressblankempty|dirstat|ignoresubmodules|renamelimit"
    r"|wserrorhighlight|autorefreshindex)"
    r"|status\.[a-z]+|fetch\.(prune|prunetags|writecommitgraph|parallel|output|fsckobjects|showforcedupdates)"
    r"|gc\.(auto|autopacklimit|autodetach|packrefs|pruneexpire|reflogexpire|reflogexpireunreachable"
    r"|writecommitgraph)"
    r"|pack\.[a-z]+|rerere\.(enabled|autoupdate)|commit\.(verbose|cleanup|status)|tag\.sort|column\.[a-z]+"
    r"|i18n\.[a-z]+|rebase\.(autosquash|autostash|stat|missingcommitscheck|abbreviatecommands|updaterefs)"
    r"|index\.[a-z]+|feature\.[a-z]+|checkout\.(defaultremote|workers)|extensions\.(objectformat|worktreeconfig)"
    r"|blame\.(blankboundary|showroot|showemail|date|coloring)|grep\.(linenumber|column|patterntype|fullname)"
    r"|transfer\.fsckobjects|receive\.(fsckobjects|denycurrentbranch|denynonfastforwards)",
    re.IGNORECASE,
)
SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]')
KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=.*)?$")


def config_keys(text: str) -> list[str]:
    """The ``section[.subsection].name`` keys of a git config file, in order; PolicyViolation for
    anything that does not parse (git might read it differently)."""
    keys: list[str] = []
    section = ""
    lines = text.replace("\\\n", "").splitlines()
    for raw in lines:
        line = raw.strip()
        while line.startswith("["):
            m = SECTION.match(line)
            if not m:
                raise PolicyViolation(
                    f"git: the repository config has a line git may read differently: {raw!r}"
                )
            section = m.group(1) + (f".{m.group(2)}" if m.group(2) is not None else "")
            line = line[m.end() :].strip()
        if not line or line[0] in "#;":
            continue
        m = KEY.match(line)
        if not m or not section:
            raise PolicyViolation(f"git: the repository config has a line git may read differently: {raw!r}")
        keys.append(f"{section}.{m.group(1)}")
    return keys


def find_git_dir(start: str, guard: PathGuard) -> str | None:
    """The git directory git would use from ``start`` (walking up), or None. A ``.git`` file inside
    the workspace that points outside it is refused: only an archive or a copy could have put it
    there."""
    d = start
    while True:
        dot = os.path.join(d, ".git")
        if os.path.isdir(dot):
            return os.path.realpath(dot)
        if os.path.isfile(dot):
            text = read_checked(os.path.realpath(dot), 4096, "the .git file").decode("utf-8", "replace")
            m = re.match(r"gitdir:\s*(.+)", text.strip())
            if not m:
                raise PolicyViolation(f"git: {dot} is not a valid .git file")
            target = os.path.realpath(os.path.join(d, m.group(1).strip()))
            if guard.in_workspace(os.path.realpath(dot)) and not guard.in_workspace(target):
                raise PolicyViolation(f"git: {dot} points to {target}, outside the workspace; refused")
            return target
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def check_repository(git_dir: str, guard: PathGuard) -> None:
    """Refuse a repository inside the workspace whose config (or worktree config) holds a key that
    could run a program or read another file."""
    dirs = [git_dir]
    common = os.path.join(git_dir, "commondir")
    if os.path.isfile(common):
        target = read_checked(os.path.realpath(common), 4096, "commondir").decode("utf-8", "replace").strip()
        dirs.append(os.path.realpath(os.path.join(git_dir, target)))
    for d in dirs:
        if not guard.in_workspace(d):
            raise PolicyViolation(
                f"git: the repository's git directory {d} is outside the workspace (named by a .git file "
                "or commondir); refused"
            )
        for name in ("config", "config.worktree"):
            path = os.path.join(d, name)
            if not os.path.lexists(path):
                continue
            real = os.path.realpath(path)
            if not guard.in_workspace(real):
                raise PolicyViolation(f"git: {path} points outside the workspace; refused")
            text = read_checked(real, MAX_CONFIG, "the git config").decode("utf-8", "replace")
            for key in config_keys(text):
                if not SAFE_KEY.fullmatch(key):
                    raise PolicyViolation(
                        f"git: {path} sets {key}, which could run a program or read other files; "
                        f"remove it first (git config --unset {key}) or ask the user"
                    )
