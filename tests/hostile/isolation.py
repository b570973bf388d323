"""An isolated root for one hostile worker, so that an attack that gets through changes nothing real.

As root, ``unshare`` gives the worker its own mount, PID, network, UTS and IPC namespaces; inside,
the host's ``/`` becomes the lower layer of an overlay whose upper layer is a tmpfs (every write
anywhere lands there, where the worker can list it), ``/tmp``, ``/dev/shm``, ``/root``, ``/home`` and
``/run`` are fresh tmpfs mounts, ``/dev`` holds only null, zero, full, random, urandom and tty,
``/proc/sys`` is read-only, and only the loopback interface exists. PID 1 is a small reaper. A pids
cgroup caps the worker's processes (a safety net for fork bombs: hitting it is reported as a failure).

The unprivileged variant is built the same way as root and drops to a user created inside the
overlay (so nothing is added to the real /etc/passwd).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time

PYTHON = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The folder of the packages Starweave needs (mcp, pydantic ...): the venv's, wherever pytest finds them.
_MCP = importlib.util.find_spec("mcp")
SITE = (
    os.path.dirname(os.path.dirname(_MCP.origin))
    if _MCP and _MCP.origin
    else sysconfig.get_paths()["purelib"]
)
CODE = "/run/swh-code"  # where the worker finds REPO and SITE inside the isolated root
LAYERS_SIZE = "3g"
PIDS_MAX = 1024

ROOT_SCRIPT = r"""
set -eu
L=$1; shift
mount -t tmpfs -o size=__SIZE__,mode=0755 swh-layers "$L"
mkdir -p "$L/upper" "$L/work" "$L/root"
R=$L/root
if [ "$SWH_FAKE_ROOT" = 0 ]; then
  mount -t overlay swh-root -o "lowerdir=/,upperdir=$L/upper,workdir=$L/work" "$R"
else
  # In a user namespace / cannot be a lower layer (its submounts are locked): a tmpfs root with one
  # overlay per top-level folder that has no mount below it; the others stay empty.
  mount -t tmpfs -o mode=0755,size=64m swh-top "$R"
  for entry in /*; do
    name=${entry#/}
    if [ -L "$entry" ]; then ln -s "$(readlink "$entry")" "$R/$name"; continue; fi
    [ -d "$entry" ] || continue
    mkdir -p "$R/$name"
    case "$name" in proc|sys|dev|tmp|run|home|root) continue ;; esac
    if mountpoint -q "$entry" || grep -q " $entry/" /proc/self/mountinfo; then continue; fi
    mkdir -p "$L/upper/$name" "$L/work/$name"
    layers="lowerdir=$entry,upperdir=$L/upper/$name,workdir=$L/work/$name,userxattr"
    mount -t overlay "swh-$name" -o "$layers" "$R/$name"
  done
fi
mount -t tmpfs -o mode=0755,size=1m swh-dev "$R/dev"
for n in null zero full random urandom tty; do : > "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"
ln -s /proc/self/fd/2 "$R/dev/stderr"
mkdir "$R/dev/shm" "$R/dev/pts"
mount -t tmpfs -o mode=1777,size=512m swh-shm "$R/dev/shm"
mount -t proc proc "$R/proc"
if [ "$SWH_PROTECT_PROC" = 1 ]; then
  # Root keeps its capabilities here: no kernel setting may change. (Not for the unprivileged
  # variant: a user namespace may mount a new /proc only where no part of /proc is covered.)
  mount --bind "$R/proc/sys" "$R/proc/sys"
  mount -o remount,bind,ro "$R/proc/sys"
  if [ -e "$R/proc/sysrq-trigger" ]; then mount --bind /dev/null "$R/proc/sysrq-trigger"; fi
fi
mount -t sysfs -o ro sysfs "$R/sys"
mount -t tmpfs -o mode=1777,size=1g swh-tmp "$R/tmp"
mount -t tmpfs -o mode=0700,size=256m swh-roothome "$R/root"
mount -t tmpfs -o mode=0755,size=2g swh-home "$R/home"
mount -t tmpfs -o mode=0755,size=1g swh-run "$R/run"
# The code under test, bound read-only where any user can reach it (the checkout may live under a
# folder only root may enter, such as /root); attacks still see it at its own path, in the overlay.
for part in repo site; do
  mkdir -p "$R/run/swh-code/$part"
  src=$SWH_REPO; [ "$part" = site ] && src=$SWH_SITE
  mount --bind "$src" "$R/run/swh-code/$part"
  mount -o remount,bind,ro "$R/run/swh-code/$part"
done
mkdir -p "$R/run/swh-layers" "$R/.swh-old"
mount --bind "$L" "$R/run/swh-layers"
mount -o remount,bind,ro "$R/run/swh-layers"
cd "$R"
pivot_root . .swh-old
cd /
umount -l /.swh-old
rmdir /.swh-old
ip link set lo up
exec "$@"
""".replace("__SIZE__", LAYERS_SIZE)

# PID 1 of the worker's namespace: runs the worker and reaps every orphan until the worker exits.
REAPER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    try:
        done, status = os.wait()
    except ChildProcessError:
        sys.exit(0)
    if done == pid:
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
"""

USERNS = ["unshare", "--user", "--map-root-user"]
UNSHARE = [
    "unshare",
    "--mount",
    "--pid",
    "--fork",
    "--kill-child",
    "--net",
    "--uts",
    "--ipc",
    "--propagation",
    "private",
]


def strategy() -> str:
    """``root`` (the isolated root is built as root) or ``userns`` (as root of a user namespace, when
    the tests do not run as root; then every mode runs as an unprivileged user). HOSTILE_ISOLATION
    forces one."""
    forced = os.environ.get("HOSTILE_ISOLATION", "")
    if forced in ("root", "userns"):
        return forced
    return "root" if os.geteuid() == 0 else "userns"


def available() -> str | None:
    """None when an isolated root can be built here, else why not."""
    for tool in ("unshare", "setpriv", "pivot_root", "ip", "mount"):
        if shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin") is None:
            return f"{tool} is not installed"
    if strategy() == "root":
        return None if os.geteuid() == 0 else "HOSTILE_ISOLATION=root needs root"
    probe = subprocess.run([*USERNS, "--mount", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"unprivileged user namespaces do not work here ({probe.stderr.strip()[:200]})"
    return None


def skip_reason(unprivileged: bool) -> str:
    """Why a mode cannot run under this strategy ('' when it can)."""
    if strategy() == "userns" and not unprivileged:
        return "the tests do not run as root, so this root mode cannot run (the others run unprivileged)"
    return ""


def isolated_command(layers: str, argv: list[str], cgroup: str | None, *, protect_proc: bool) -> list[str]:
    """The command line that runs ``argv`` as the child of a reaper in a fresh isolated root built
    on the empty folder ``layers``; it joins ``cgroup`` (a pids cgroup folder) first.
    ``protect_proc`` makes /proc/sys read-only (not possible when the worker drops to a user who
    must be able to mount a new /proc in its own namespaces)."""
    join = 'if [ -n "$1" ]; then echo $$ > "$1/cgroup.procs"; fi; shift; exec "$@"'
    inner = [PYTHON, "-S", "-c", REAPER, *argv]
    fake = strategy() == "userns"
    flags = [
        f"SWH_PROTECT_PROC={int(protect_proc and not fake)}",
        f"SWH_REPO={REPO}",
        f"SWH_SITE={SITE}",
        f"SWH_FAKE_ROOT={int(fake)}",
    ]
    unshare = [*USERNS, *UNSHARE[1:]] if fake else UNSHARE
    # setpriv: the namespace dies with the supervisor's thread, even when pytest itself is killed.
    return [
        "setpriv",
        "--pdeathsig",
        "KILL",
        "/bin/sh",
        "-c",
        join,
        "swh-join",
        "" if fake else cgroup or "",
        *unshare,
        "env",
        *flags,
        "/bin/sh",
        "-c",
        ROOT_SCRIPT,
        "swh-root",
        layers,
        *inner,
    ]


# ---- the pids cgroup safety net ------------------------------------------------------------------------

PIDS_ROOT = "/sys/fs/cgroup/pids"


def make_pids_cgroup(name: str) -> str | None:
    """A cgroup-v1 pids group capped at PIDS_MAX, or None where pids cgroups cannot be made."""
    if not os.path.isdir(PIDS_ROOT) or not os.access(PIDS_ROOT, os.W_OK):
        return None
    path = os.path.join(PIDS_ROOT, name)
    try:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "pids.max"), "w") as fh:
            fh.write(str(PIDS_MAX))
    except OSError:
        return None
    return path


def pids_cap_hits(path: str | None) -> int:
    """How often the group's process cap refused a fork so far."""
    if path is None:
        return 0
    try:
        with open(os.path.join(path, "pids.events")) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
    except (OSError, ValueError):
        return 0
    return 0


def remove_pids_cgroup(path: str | None, wait: float = 10.0) -> None:
    """Remove the group once the last process of the worker's namespace has left it."""
    if path is None:
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.05)  # its processes are still being torn down with the namespace
