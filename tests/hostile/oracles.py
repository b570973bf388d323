"""How the hostile suite decides that a case did harm: canary secrets, outside changes, workspace
hygiene, left-over processes and Starweave's own process settings. Pure functions over the file
system and strings; the worker calls them before and after each case.
"""

from __future__ import annotations

import base64
import codecs
import ctypes
import hashlib
import os
import platform
import resource
import secrets
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# ---- canary secrets --------------------------------------------------------------------------------

# Environment variables of the process that runs Starweave (the parent of every command).
ENV_CANARIES = {
    "OPENAI_API_KEY": "OPENAI_API_KEY in Starweave's environment",
    "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY in Starweave's environment",
    "AWS_SECRET_ACCESS_KEY": "AWS_SECRET_ACCESS_KEY in Starweave's environment",
    "STARWEAVE_API_KEY": "STARWEAVE_API_KEY (the server key) in Starweave's environment",
    "GITHUB_TOKEN": "GITHUB_TOKEN in Starweave's environment",
}
# Files the policy calls secret: (path template, description, content template with {value}).
FILE_CANARIES = (
    ("@HOME@/.ssh/id_rsa", "the user's ~/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n{value}\n"),
    (
        "@HOME@/.aws/credentials",
        "the user's ~/.aws/credentials",
        "[default]\naws_secret_access_key = {value}\n",
    ),
    ("@HOME@/.netrc", "the user's ~/.netrc", "machine example.com login me password {value}\n"),
    ("@HOME@/.git-credentials", "the user's ~/.git-credentials", "https://me:{value}@example.com\n"),
    ("@HOME@/.config/gcloud/credentials.db", "the user's gcloud credentials", "token {value}\n"),
    (
        "@HOME@/.docker/config.json",
        "the user's docker config",
        '{{"auths": {{"x": {{"auth": "{value}"}}}}}}\n',
    ),
    ("@HOME@/.env", "a .env in the user's home", "OPENAI_API_KEY={value}\n"),
    ("@BASE@/.env", "the project's .env next to the workspace", "DATABASE_PASSWORD={value}\n"),
    ("@OUT@/.env", "a .env in a folder next to the workspace", "API_TOKEN={value}\n"),
    ("@OUT@/deploy.pem", "a .pem key next to the workspace", "-----BEGIN PRIVATE KEY-----\n{value}\n"),
    (
        "@VICTIM@/.ssh/id_rsa",
        "another user's ~/.ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{value}\n",
    ),
    ("/root/.ssh/id_rsa", "root's ~/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n{value}\n"),
)
# Secrets by name (the policy's .env, *.key, *.pem, .pgpass, id_*) scattered over the file system,
# readable by everyone as application secrets often are: the sandbox must hide them too.
SCATTERED_CANARIES = (
    ("/opt/app/.env", "an application's .env under /opt", "SECRET_KEY={value}\n"),
    ("/srv/certs/server.key", "a TLS key under /srv", "-----BEGIN PRIVATE KEY-----\n{value}\n"),
    ("/var/backups/db/.pgpass", "a .pgpass under /var/backups", "db:5432:*:app:{value}\n"),
    ("/etc/app/tls.pem", "a .pem under /etc/app", "-----BEGIN PRIVATE KEY-----\n{value}\n"),
    (
        "@OUT@/sub/deep/id_ed25519",
        "an SSH key deep in a folder next to the workspace",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{value}\n",
    ),
)
SHADOW_CANARY = "/etc/shadow (a canary account's hash)"
CMDLINE_CANARY = "the --api-key on another process's command line"
# Plain files of the canary tree and the home: they may be read, never changed.
PLAIN_FILES = (
    ("@OUT@/notes.txt", "public notes next to the workspace\n"),
    ("@OUT@/sub/data.txt", "1\n2\n3\n"),
    ("@HOME@/.bashrc", "# the user's shell start-up file\n"),
    ("@HOME@/.gitconfig", "[user]\n\tname = Someone\n"),
    ("@HOME@/.ssh/authorized_keys", "ssh-ed25519 AAAA someone\n"),
)


def new_canaries() -> dict[str, str]:
    """A fresh random value for every canary, keyed by its description."""
    descriptions = [
        *ENV_CANARIES.values(),
        *(d for _, d, _ in FILE_CANARIES),
        *(d for _, d, _ in SCATTERED_CANARIES),
        SHADOW_CANARY,
        CMDLINE_CANARY,
    ]
    return {d: "swc" + secrets.token_hex(12) for d in descriptions}


def _b64_cores(value: bytes) -> list[str]:
    """Substrings that any base64 encoding of a text containing ``value`` must contain, whatever
    the alignment of ``value`` in that text."""
    out = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + value).decode()
        out.append(encoded[4:-4])
    return out


def needles(value: str) -> list[tuple[str, bool]]:
    """``(needle, case_sensitive)`` pairs whose presence in a text proves ``value`` leaked: the value,
    long slices of it, hex (plain and spaced, as od/xxd print it), reversed, rot13 and base64."""
    raw = value.encode()
    hexed = raw.hex()
    return [
        (value.lower(), False),
        (value[:15].lower(), False),
        (value[-12:].lower(), False),
        (hexed, False),
        (" ".join(hexed[i : i + 2] for i in range(0, 24, 2)), False),
        (value[::-1].lower(), False),
        (codecs.encode(value, "rot13").lower(), False),
        *((core, True) for core in _b64_cores(raw)),
    ]


class CanaryScanner:
    """Finds canary values (in any of the encodings of :func:`needles`) in texts."""

    def __init__(self, canaries: Mapping[str, str]) -> None:
        self.table = [(desc, needles(value)) for desc, value in canaries.items()]

    def scan(self, text: str) -> list[str]:
        """The descriptions of the canaries found in ``text``."""
        if not text:
            return []
        lower = text.lower()
        squeezed = lower.replace("\n", "").replace(" ", "")
        found = []
        for desc, pairs in self.table:
            for needle, case_sensitive in pairs:
                hay = text if case_sensitive else lower
                if needle in hay or (not case_sensitive and needle.replace(" ", "") in squeezed):
                    found.append(desc)
                    break
        return found


# ---- snapshots of the places outside the workspace --------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """What a snapshot keeps of one path: type and mode bits, owner, size, mtime, content hash and
    extended attributes (ACLs included)."""

    kind: str
    mode: int
    uid: int
    gid: int
    size: int
    mtime_ns: int
    digest: str = ""
    xattrs: str = ""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "file"),
        (stat.S_ISDIR, "dir"),
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "char device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "other"


def _digest(path: str, size: int) -> str:
    if size > 1 << 20:
        return ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        return hashlib.sha256(os.read(fd, size + 1)).hexdigest()
    except OSError:
        return ""
    finally:
        os.close(fd)


def _xattrs(path: str) -> str:
    """A digest of the extended attributes of ``path`` itself (names and values)."""
    try:
        names = sorted(os.listxattr(path, follow_symlinks=False))
        values = [os.getxattr(path, name, follow_symlinks=False) for name in names]
    except OSError:
        return ""
    if not names:
        return ""
    return hashlib.sha256(repr(list(zip(names, values, strict=True))).encode()).hexdigest()


def mount_points() -> set[str]:
    """Every mount point in this mount namespace (an attack may bind-mount / into the workspace:
    the walkers below must never descend into another mount)."""
    points = set()
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            field = line.split()[4]
            points.add(field.encode().decode("unicode_escape"))
    return points


def snapshot(root: str, *, shown_as: str | None = None, exclude: Iterable[str] = ()) -> dict[str, Entry]:
    """Every path below ``root`` (reported as if ``root`` were ``shown_as``), without following
    symlinks or crossing into other mounts, minus the ``exclude`` subtrees (given as shown paths).
    Small regular files are hashed. Unreadable folders are skipped: the worker may run unprivileged."""
    shown_root = shown_as if shown_as is not None else root
    skip = tuple(e.rstrip("/") for e in exclude)
    mounts = mount_points() - {root}
    out: dict[str, Entry] = {}
    stack = [(root, shown_root)]
    while stack:
        real, shown = stack.pop()
        try:
            st = os.lstat(real)
        except OSError:
            continue
        kind = _kind(st.st_mode)
        digest = _digest(real, st.st_size) if kind == "file" else ""
        if kind == "symlink":
            try:
                digest = os.readlink(real)
            except OSError:
                digest = ""
        out[shown] = Entry(
            kind,
            stat.S_IMODE(st.st_mode),
            st.st_uid,
            st.st_gid,
            st.st_size,
            st.st_mtime_ns,
            digest,
            _xattrs(real),
        )
        if kind != "dir" or real in mounts:
            continue
        try:
            names = os.listdir(real)
        except OSError:
            continue
        for name in names:
            child_shown = shown.rstrip("/") + "/" + name
            if any(child_shown == s or child_shown.startswith(s + "/") for s in skip):
                continue
            stack.append((os.path.join(real, name), child_shown))
    return out


def shallow(folder: str) -> dict[str, Entry]:
    """The entries directly in ``folder`` (not below them)."""
    out: dict[str, Entry] = {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        out[path] = Entry(_kind(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, 0, 0)
    return out


def _whiteout(entry: Entry) -> bool:
    # overlayfs marks a deleted lower file with a 0/0 character device in the upper layer
    return entry.kind == "char device" and entry.size == 0


def diff(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> list[str]:
    """Human-readable changes between two snapshots (created, deleted, modified paths). A folder is
    reported only for what its children do not show: created empty, or its mode or owner changed
    (in the overlay's upper layer, parents of a changed file appear as created folders)."""
    changed = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
    changes = []
    for path in changed:
        old, new = before.get(path), after.get(path)
        folder = (new or old).kind == "dir"  # type: ignore[union-attr]
        same_owner_and_mode = (
            old is None
            or new is None
            or (old.mode, old.uid, old.gid, old.xattrs) == (new.mode, new.uid, new.gid, new.xattrs)
        )
        if folder and same_owner_and_mode and any(c.startswith(path.rstrip("/") + "/") for c in changed):
            continue
        if old is None and new is not None:
            # (in the overlay's upper layer a changed file of the host shows up as new, too)
            what = "deleted (overlay whiteout)" if _whiteout(new) else f"written ({new.kind})"
            changes.append(f"{path}: {what}")
        elif new is None:
            changes.append(f"{path}: deleted")
        elif old is not None:
            parts = []
            if old.kind != new.kind:
                parts.append(f"{old.kind} became {new.kind}")
            if old.mode != new.mode:
                parts.append(f"mode {old.mode:o} -> {new.mode:o}")
            if (old.uid, old.gid) != (new.uid, new.gid):
                parts.append(f"owner {old.uid}:{old.gid} -> {new.uid}:{new.gid}")
            if old.xattrs != new.xattrs:
                parts.append("extended attributes (or ACL) changed")
            if not folder and (old.digest != new.digest or old.size != new.size):
                parts.append("content changed")
            elif not folder and old.mtime_ns != new.mtime_ns:
                parts.append("modified (mtime)")
            elif folder and not parts:
                parts.append("entries changed")
            changes.append(f"{path}: {', '.join(parts)}")
    return changes


# ---- the workspace after a case --------------------------------------------------------------------


def workspace_problems(ws: str, exempt: set[str], max_file_bytes: int) -> list[str]:
    """Set-id files, device nodes, FIFOs and sockets, and files over ``max_file_bytes``, left in
    the workspace (``exempt``: paths the harness made itself)."""
    problems = []
    mounts = mount_points()
    for dirpath, dirnames, filenames in os.walk(ws):
        inside = [d for d in dirnames if os.path.join(dirpath, d) in mounts]
        problems += [
            f"{os.path.join(dirpath, d)}: a file system was mounted in the workspace" for d in inside
        ]
        dirnames[:] = [d for d in dirnames if d not in inside]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if path in exempt:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            mode = st.st_mode
            if stat.S_ISREG(mode):
                if mode & (stat.S_ISUID | stat.S_ISGID):
                    bits = "setuid" if mode & stat.S_ISUID else "setgid"
                    problems.append(f"{path}: a {bits} file was created (mode {stat.S_IMODE(mode):o})")
                if st.st_size > max_file_bytes:
                    problems.append(
                        f"{path}: a {st.st_size >> 20} MiB file was written (no file-size limit stopped it)"
                    )
            elif not stat.S_ISLNK(mode) and not stat.S_ISDIR(mode):
                problems.append(f"{path}: a {_kind(mode)} was left in the workspace")
    return problems


# ---- processes -------------------------------------------------------------------------------------


def processes(exclude: set[int]) -> dict[int, str]:
    """Every live process visible in /proc except ``exclude`` (and zombies), with its command line."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in exclude:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read(512).rsplit(b")", 1)[-1].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if state != b"Z":
            out[int(name)] = cmd or "[no command line]"
    return out


# ---- Starweave's own process ---------------------------------------------------------------------------

_RLIMITS = {name: getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")}
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
IOPRIO_WHO_PROCESS = 1


def _ioprio() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    number = IOPRIO_GET.get(platform.machine())
    return int(libc.syscall(number, IOPRIO_WHO_PROCESS, 0)) if number else 0


def own_settings() -> dict[str, object]:
    """What another process of the same user could change about this one without tracing it: its
    scheduling (nice value, policy, CPU affinity, I/O priority), its resource limits and its OOM
    score. A command that changes any of them reached Starweave's process."""
    with open("/proc/self/oom_score_adj") as fh:
        oom = fh.read().strip()
    return {
        "nice value": os.getpriority(os.PRIO_PROCESS, 0),
        "scheduling policy": os.sched_getscheduler(0),
        "CPU affinity": sorted(os.sched_getaffinity(0)),
        "I/O priority": _ioprio(),
        "OOM score adjustment": oom,
        **{f"limit {name}": resource.getrlimit(value) for name, value in sorted(_RLIMITS.items())},
    }


def settings_changes(before: Mapping[str, object], after: Mapping[str, object]) -> list[str]:
    """The settings of :func:`own_settings` that differ, as ``name: old -> new``."""
    return [f"{key}: {before[key]} -> {after.get(key)}" for key in before if before[key] != after.get(key)]
