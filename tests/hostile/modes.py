"""The ways the hostile suite runs the same cases.

The acceptance runs four: bubblewrap as root and as an unprivileged user, and the Landlock fallback
as root and as an unprivileged user (what runs where user namespaces are not allowed: no mount, PID
or IPC namespace, the supervisor makes chmod, chown, utimes and xattr changes, the seccomp filter
keeps the user's other processes out of reach). Three more are diagnostics, run on request
(``HOSTILE_MODES=policy,naked,bare``): ``policy`` is Starweave with ``SANDBOX: none`` (the seccomp
filter's ``basic`` profile and the limits only), ``naked`` is Starweave with no sandbox
(``MODE: unrestricted``), and ``bare`` is not Starweave at all but an agent without any defence
(:mod:`hostile.bare`): it shows that each case does harm when nothing stops it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """One way to run the cases: SHELL.SANDBOX, SHELL.MODE and whether Starweave runs unprivileged."""

    name: str
    sandbox: str
    unprivileged: bool
    shell_mode: str = "workspace"


MODES = {
    m.name: m
    for m in (
        Mode("bwrap-root", "bwrap", unprivileged=False),
        Mode("bwrap-user", "bwrap", unprivileged=True),
        Mode("landlock", "landlock", unprivileged=False),
        Mode("landlock-user", "landlock", unprivileged=True),
        Mode("policy", "none", unprivileged=False),
        Mode("naked", "none", unprivileged=False, shell_mode="unrestricted"),
        Mode("bare", "none", unprivileged=False, shell_mode="bare"),
    )
}
DEFAULT_MODES = ("bwrap-root", "bwrap-user", "landlock", "landlock-user")
# The end-to-end set runs as the hostile review ran it: bubblewrap, as root (HOSTILE_E2E_MODES=all for all).
E2E_MODES = ("bwrap-root",)
RUNNER_USER = "swhostile"
VICTIM_USER = "swvictim"


def selected_modes() -> list[str]:
    """The modes to run: the acceptance's four, plus those named in ``HOSTILE_MODES`` (``all`` for
    every mode)."""
    extra = os.environ.get("HOSTILE_MODES", "")
    names = list(DEFAULT_MODES)
    for name in (n.strip() for n in extra.split(",")):
        if name == "all":
            names += [m for m in MODES if m not in names]
        elif name in MODES and name not in names:
            names.append(name)
        elif name and name not in MODES:
            raise ValueError(f"HOSTILE_MODES: unknown mode {name!r}; known: {', '.join(MODES)}")
    return names


def selected_e2e_modes() -> list[str]:
    """The modes of the end-to-end set: bubblewrap as root, or every selected mode with
    ``HOSTILE_E2E_MODES=all`` (or a comma-separated list)."""
    from hostile.isolation import strategy

    wanted = os.environ.get("HOSTILE_E2E_MODES", "")
    if wanted == "all":
        return selected_modes()
    default = list(E2E_MODES) if strategy() == "root" else ["bwrap-user"]  # unprivileged runs
    names = [n.strip() for n in wanted.split(",") if n.strip()] or default
    unknown = [n for n in names if n not in MODES]
    if unknown:
        raise ValueError(f"HOSTILE_E2E_MODES: unknown mode {unknown[0]!r}; known: {', '.join(MODES)}")
    return names
