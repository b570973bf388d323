"""Set-user-ID and set-group-ID bits are never created, and files never given to another owner.

A first filter in front of the sandbox's seccomp filter (the boundary): chmod, install -m and mkdir -m
with an s bit in any form (``4755``, ``=4755``, ``+4000``, ``u+s``, ``-x+s``, ``g=rwxs``), chmod
--reference to a set-id file, copies that preserve the mode of a set-id file, and chown/chgrp to
anyone but the user Starweave runs as.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat

from starweave.tools.servers.shell.rulebook import RuleContext, refuse

SETID = stat.S_ISUID | stat.S_ISGID
ACTION = re.compile(r"([-+=])([^-+=,]*)")


def mode_sets_id(mode: str) -> bool:
    """Whether the chmod-style ``mode`` can turn on a set-user-ID or set-group-ID bit."""
    if re.fullmatch(r"[0-7]+", mode):
        return int(mode, 8) & SETID != 0
    for clause in mode.split(","):
        for op, perms in ACTION.findall(clause):
            if op == "-":
                continue
            if "s" in perms or (re.fullmatch(r"[0-7]+", perms) and int(perms, 8) & SETID):
                return True
    return False


def refuse_setid_mode(tool: str, mode: str) -> None:
    """Refuse a mode that sets an s bit."""
    if mode_sets_id(mode):
        refuse(
            f"{tool}: the mode {mode!r} would set a set-user-ID or set-group-ID bit, which is refused; "
            "drop the s (e.g. 755 or u+x)"
        )


def has_setid(real: str) -> bool:
    """Whether the existing file ``real`` carries a set-id bit (False when missing)."""
    try:
        return os.lstat(real).st_mode & SETID != 0
    except OSError:
        return False


def scan_setid(real: str, ctx: RuleContext, what: str) -> str | None:
    """The first file with a set-id bit at or below ``real`` (not following symlinks), walking
    within the check's budget; None when there is none."""
    if has_setid(real):
        return real
    if not os.path.isdir(real) or os.path.islink(real):
        return None
    stack = [real]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError:
            continue
        ctx.budget.spend(len(entries), what)
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_mode & SETID:
                return entry.path
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
    return None


def _own_groups() -> set[int]:
    return {os.getegid(), *os.getgroups()}


def _uid(name: str) -> int | None:
    if name.isdigit():
        return int(name)
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def _gid(name: str) -> int | None:
    if name.isdigit():
        return int(name)
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def check_owner_spec(tool: str, spec: str, *, group_only: bool = False) -> None:
    """Refuse an OWNER[:GROUP] (or GROUP for chgrp) that names anyone but this user and its groups."""
    if group_only:
        owner, group = "", spec
    else:
        # OWNER, OWNER:GROUP, OWNER:, :GROUP (and the old OWNER.GROUP)
        owner, _, group = spec.replace(".", ":", 1).partition(":") if ":" not in spec else spec.partition(":")
    if owner and _uid(owner) != os.geteuid():
        refuse(f"{tool}: giving files to {owner!r} is refused; files may only belong to the current user")
    if group and _gid(group) not in _own_groups():
        refuse(f"{tool}: the group {group!r} is not one of the current user's groups; refused")
