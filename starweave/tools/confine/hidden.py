"""What the sandboxes hide: every existing path the policy calls secret, found on this machine.

Bubblewrap masks these (an empty read-only tmpfs over a folder, /dev/null over a file); Landlock,
which can only allow, grants reading everywhere around them. The list follows
:mod:`starweave.tools.confine.paths` (sensitive prefixes, credentials folders and secret file
names), applied to every home folder (``/root``, ``/home/*`` and the home of every login account), to
the top of ``/etc``, to a few places containers keep secrets (``/run/secrets``, ``/run/user``), to
container storage and the writable layers of overlay mounts (copies of any file, under any name),
to everything in ``/run`` but name resolution's and the lock and login records,
around the workspace (the folders above it and, within a budget, the tree next to it), and to every
file named like a secret that :mod:`.secret_scan` found on the machine.
The workspace and the read roots are never hidden (the policy lets the model read them).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import pwd
import re
from dataclasses import dataclass

from starweave.tools.confine.paths import (
    HISTORY_FILES,
    SENSITIVE_DIRS,
    SENSITIVE_NAMES,
    SENSITIVE_PREFIXES,
    SENSITIVE_SUBPATHS,
    is_within,
)
from starweave.tools.confine.secret_scan import SecretScan

# /proc and /dev are replaced as a whole by both sandboxes; their prefixes need no mask.
_REPLACED_TREES = ("/proc", "/dev")
EXTRA_HIDDEN = ("/run/secrets", "/var/run/secrets", "/run/user", "/var/lib/sss")
# Trees that hold other file systems' files (container images, layers and volumes): a copy of any
# secret may lie there under any path, and the machine scan does not walk them.
CONTAINER_STORAGE = (
    "/var/lib/docker",
    "/var/lib/containers",
    "/var/lib/containerd",
    "/var/lib/kubelet",
    "/var/lib/lxc",
    "/var/lib/lxd",
    "/var/lib/incus",
    "/var/lib/machines",
)
MOUNTINFO = "/proc/self/mountinfo"
# /run is where services, containers and sandboxes put what they share at run time (credentials,
# sockets, bind-mounted trees): all of it is hidden but what name resolution and a few readers need.
RUN = "/run"
RUN_KEPT = frozenset({"systemd", "resolvconf", "lock", "utmp"})
# Besides the policy's names: shell and REPL histories hold typed secrets; a few token files.
EXTRA_HOME_NAMES = (
    *HISTORY_FILES,
    ".vault-token",
    ".config/containers/auth.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
)
NEAR_DEPTH = 3  # folder levels searched below the workspace's parent
NEAR_BUDGET = 4000  # entries looked at around the workspace, per command
SYSTEM_HOMES = frozenset({"/", "/nonexistent", "/bin", "/sbin", "/usr", "/var", "/dev", "/proc", "/run"})


@dataclass(frozen=True)
class HiddenPath:
    """One existing secret path (real, not a symlink) and whether it is a folder."""

    path: str
    is_dir: bool


def home_dirs() -> list[str]:
    """``/root``, ``/home/*`` and the home folder of every account with a login uid (>= 1000) or of
    the user running Starweave, as real paths."""
    homes = {"/root"}
    with contextlib.suppress(OSError):
        homes.update(os.path.join("/home", name) for name in os.listdir("/home"))
    me = os.getuid()
    for entry in pwd.getpwall():
        if (entry.pw_uid >= 1000 or entry.pw_uid == me) and entry.pw_dir not in SYSTEM_HOMES:
            homes.add(entry.pw_dir)
    return sorted({os.path.realpath(h) for h in homes if os.path.isdir(h)} - SYSTEM_HOMES)


def _unescape_mount_path(value: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def overlay_layers(mountinfo: str = MOUNTINFO) -> list[str]:
    """The writable layers (``upperdir``, ``workdir``) of every overlay mount: each holds a copy of
    every file written to its overlay, secrets included, under its own path (a container's, or the
    overlay a whole root runs on). Lower layers are left alone: they are the original files, seen
    (and hidden by name) where they are."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    layers: list[str] = []
    for line in lines:
        _, sep, right = line.partition(" - ")
        fields = right.split()
        if not sep or len(fields) < 3 or fields[0] != "overlay":
            continue
        for option in fields[2].split(","):
            key, _, value = option.partition("=")
            if key in ("upperdir", "workdir") and value.startswith("/") and value != "/":
                layers.append(_unescape_mount_path(value))
    return layers


def run_entries(run: str = RUN) -> list[str]:
    """Every entry of ``/run`` but those in RUN_KEPT."""
    try:
        return [os.path.join(run, name) for name in sorted(os.listdir(run)) if name not in RUN_KEPT]
    except OSError:
        return []


def _prefix_matches(prefix: str) -> list[str]:
    if os.path.isdir(prefix) and not os.path.islink(prefix):
        return [prefix]  # "/root" is the folder, not "/rootfs"
    parent, stem = os.path.split(prefix)
    try:
        return [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(stem)]
    except OSError:
        return []


@functools.cache
def _secret_name() -> re.Pattern[str]:
    # One compiled pattern for all the policy's names (fnmatch name by name costs milliseconds in /etc).
    return re.compile("|".join(fnmatch.translate(p) for p in SENSITIVE_NAMES))


def _names_in(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    match = _secret_name().match
    return [os.path.join(folder, n) for n in names if match(n)]


def _is_secret_entry(name: str) -> bool:
    return name in SENSITIVE_DIRS or bool(_secret_name().match(name))


def secrets_near(roots: list[str], depth: int = NEAR_DEPTH, budget: int = NEAR_BUDGET) -> list[str]:
    """Secret files and credentials folders around ``roots`` (the workspace and the read roots):
    the entries of every folder above them, and the tree of each one's parent folder (a project's
    ``.env`` or ``deploy.pem`` next to the workspace), at most ``depth`` levels and ``budget``
    entries in all; the roots themselves are not searched (the policy lets the model read them)."""
    found: list[str] = []
    seen = 0
    for root in roots:
        parent = os.path.dirname(root)
        ancestor = parent
        while ancestor not in ("/", ""):
            found += _secret_entries(ancestor)
            ancestor = os.path.dirname(ancestor)
        if parent in ("/", "") or parent in SYSTEM_HOMES or is_within(parent, "/tmp"):
            continue  # both sandboxes hide /tmp as a whole
        queue = [(parent, 0)]
        while queue and seen < budget:
            folder, level = queue.pop(0)
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if entry.path in roots or any(is_within(entry.path, r) for r in roots):
                    continue
                if _is_secret_entry(entry.name):
                    found.append(entry.path)
                elif level + 1 < depth and entry.is_dir(follow_symlinks=False):
                    queue.append((entry.path, level + 1))
    return found


@functools.cache
def _machine_scan() -> SecretScan:
    return SecretScan(_is_secret_entry)


def _secret_entries(folder: str) -> list[str]:
    try:
        return [os.path.join(folder, n) for n in os.listdir(folder) if _is_secret_entry(n)]
    except OSError:
        return []


def candidate_paths(homes: list[str] | None = None, near: list[str] | None = None) -> list[str]:
    """Every path that would be hidden, existing or not yet filtered."""
    found: list[str] = secrets_near(near) if near else []
    found += _machine_scan().paths()
    for prefix in SENSITIVE_PREFIXES:
        if not any(is_within(prefix, tree) for tree in _REPLACED_TREES):
            found += _prefix_matches(prefix)
    found += [os.path.realpath(p) for p in (*EXTRA_HIDDEN, *CONTAINER_STORAGE, *overlay_layers())]
    found += run_entries()
    for home in homes if homes is not None else home_dirs():
        found += [os.path.join(home, d) for d in SENSITIVE_DIRS]
        found += [home + sub for (sub,) in SENSITIVE_SUBPATHS]
        found += [os.path.join(home, n) for n in EXTRA_HOME_NAMES]
        found += _names_in(home)
    found += _names_in("/etc")
    return found


def hidden_paths(exempt: list[str], homes: list[str] | None = None) -> list[HiddenPath]:
    """The existing secret paths, outermost first, none inside an ``exempt`` root (the workspace and
    the read roots, around which secrets are searched too); a secret folder that holds an exempt root
    is still listed (the caller binds the root back). Asked again for every command: a few
    milliseconds, as the machine scan lists only the folders that changed, so a secret made a moment
    ago is hidden too."""
    result: dict[str, HiddenPath] = {}
    for path in candidate_paths(homes, near=[os.path.realpath(r) for r in exempt]):
        if os.path.islink(path) or not os.path.lexists(path):
            continue  # a symlink's target is hidden on its own if it is secret
        real = os.path.realpath(path)
        if any(is_within(real, root) for root in exempt):
            continue
        result[real] = HiddenPath(real, os.path.isdir(real))
    ordered = sorted(result.values(), key=lambda h: (h.path.count("/"), h.path))
    # A path inside an already hidden folder needs nothing more.
    kept: list[HiddenPath] = []
    for item in ordered:
        if not any(k.is_dir and is_within(item.path, k.path) for k in kept):
            kept.append(item)
    return kept
