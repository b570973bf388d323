"""Start one simple command confined: the launcher's spec, the bubblewrap or launcher command line,
the environment, and how to stop it.

Every command goes through the launcher (:mod:`.launcher`, run with this interpreter in isolated
mode and its source given with ``-c``, so nothing on disk can change it after Starweave started):

* ``bwrap``: ``bwrap ... -- python -I -S -c LAUNCHER SPEC -- program args``; the launcher is the
  sandbox's first process and ends in execve. Stopping = SIGKILL to bubblewrap's process group; the
  PID namespace takes every process with it.
* ``landlock``, ``none``, ``unrestricted``: ``python -I -S -c LAUNCHER SPEC -- program args``; the
  launcher supervises the command. Stopping = SIGTERM to the launcher, which kills every process the
  command started (it is their subreaper) and removes the private HOME/TMPDIR.

The limits (SHELL.MAX_MEMORY_MB, MAX_PROCESSES, MAX_FILE_SIZE_MB, MAX_OPEN_FILES) apply in every
mode, per process; where a cgroup v2 hierarchy with the memory controller is writable (as root,
normally), each command also gets a cgroup of its own (``memory.max`` = MAX_MEMORY_MB, no swap,
``pids.max``) that the launcher joins before anything else, so the memory limit holds for the whole
command (memfds, shared memory, many processes). The seccomp filter is ``strict`` under a sandbox,
``basic`` with SANDBOX none, and absent in unrestricted mode.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError
from starweave.tools.confine.hidden import hidden_paths
from starweave.tools.confine.paths import is_within
from starweave.tools.sandbox import landlock, seccomp
from starweave.tools.sandbox.bwrap import BwrapLayout, bwrap_argv
from starweave.tools.sandbox.launcher_program import launcher_code, notify_program

CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"
BWRAP_HOME = "/tmp/home"
SPEC_IN_ARGV = 32 * 1024  # characters of spec passed as an argument; longer ones go through a memfd
STOP_GRACE = 5.0  # seconds a supervising launcher gets to clean up before its group is killed
AS_FACTOR = 8  # address space allowed per MB of data memory (runtimes reserve far more than they use)
PID_MAX_SLACK = 3  # the PID namespace's init, the launcher and the command itself

# Variables the model's assignments can never override: they close tools' configuration.
CLOSED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_COUNT": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "/bin/false",
    "SSH_ASKPASS": "/bin/false",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_EDITOR": "/bin/false",
    "EDITOR": "/bin/false",
    "VISUAL": "/bin/false",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
    "LESSSECURE": "1",
}
_PROTECTED_PREFIXES = ("GIT_", "LD_", "BASH_FUNC_")

log = logging.getLogger(__name__)
_supervised: weakref.WeakSet[asyncio.subprocess.Process] = weakref.WeakSet()
_releases: set[asyncio.Task[None]] = set()
# Per bwrap executable, whether root runs it with a new user namespace (found by the probe).
_bwrap_userns: dict[str, bool] = {}


def known_bwrap_variants() -> dict[str, bool]:
    """The recorded variants, by real path of the executable."""
    return dict(_bwrap_userns)


def remember_bwrap_userns(exe: str, userns: bool) -> None:
    """Record the bubblewrap variant the probe found working for ``exe``."""
    _bwrap_userns[os.path.realpath(exe)] = userns


def clean_env(home: str, tmpdir: str) -> dict[str, str]:
    """The whole environment of every command: nothing from Starweave's process leaks in."""
    return {
        "PATH": CLEAN_PATH,
        "HOME": home,
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        **CLOSED_ENV,
    }


def command_env(base: dict[str, str], assignments: dict[str, str]) -> dict[str, str]:
    """``base`` plus the command's own assignments, except any that would reopen a closed setting."""
    allowed = {
        k: v for k, v in assignments.items() if k not in base and not k.startswith(_PROTECTED_PREFIXES)
    }
    return {**base, **allowed}


def launcher_python(workspace: str) -> tuple[str, str]:
    """The interpreter that runs the launcher and its standard library folder; never one inside the
    workspace (the model could replace it)."""
    exe = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    if not (is_within(exe, workspace) or is_within(prefix, workspace)):
        return exe, prefix
    system = shutil.which("python3", path=CLEAN_PATH)
    if system and not is_within(os.path.realpath(system), workspace):
        return os.path.realpath(system), "/usr"
    raise ConfigError(
        f"Starweave's Python ({exe}) is inside the workspace {workspace}, where the model could replace "
        "it; choose a workspace that does not contain the Python installation"
    )


# ---- the per-command cgroup ----------------------------------------------------------------------

CGROUP_FS = "/sys/fs/cgroup"
_leaf_numbers = itertools.count()


def _cgroup2_mount() -> str | None:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup`` preferred), or None."""
    found: list[str] = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    found.append(left.split()[4].replace("\\040", " "))
    except OSError:
        return None
    return CGROUP_FS if CGROUP_FS in found else (found[0] if found else None)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def _controllers(path: str) -> list[str]:
    with open(path, encoding="ascii") as f:
        return f.read().split()


@cache
def cgroup_parent() -> tuple[str | None, str]:
    """This process's cgroup for its commands' leaves (memory and pids enabled below it, made once,
    removed at exit), or None and why there is none."""
    root = _cgroup2_mount()
    if root is None:
        return None, "no cgroup v2 hierarchy"
    try:
        available = _controllers(os.path.join(root, "cgroup.controllers"))
    except OSError as exc:
        return None, f"cgroup v2 unreadable ({exc.strerror})"
    if "memory" not in available:
        return None, "no memory controller in the cgroup v2 hierarchy"
    wanted = [c for c in ("memory", "pids") if c in available]
    enable = " ".join(f"+{c}" for c in wanted)
    parent = os.path.join(root, f"starweave-{os.getpid()}")
    try:
        enabled = _controllers(os.path.join(root, "cgroup.subtree_control"))
        if any(c not in enabled for c in wanted):
            _write(os.path.join(root, "cgroup.subtree_control"), enable)
        with contextlib.suppress(FileExistsError):
            os.mkdir(parent, 0o755)
        _write(os.path.join(parent, "cgroup.subtree_control"), enable)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.rmdir(parent)
        return None, f"the cgroup v2 hierarchy is not writable here ({exc.strerror})"
    atexit.register(_remove_cgroups, parent)
    return parent, ""


def new_cgroup(parent: str, memory_bytes: int, pids: int) -> str | None:
    """A fresh leaf below ``parent`` limited to ``memory_bytes`` (no swap) and ``pids`` tasks."""
    leaf = os.path.join(parent, f"cmd-{next(_leaf_numbers)}")
    try:
        os.mkdir(leaf, 0o755)
    except OSError as exc:
        log.warning("cannot make a cgroup for the command (%s): per-process limits only", exc)
        return None
    try:
        _write(os.path.join(leaf, "memory.max"), str(memory_bytes))
        for name, value in (("memory.swap.max", 0), ("pids.max", pids)):
            if os.path.exists(os.path.join(leaf, name)):
                _write(os.path.join(leaf, name), str(value))
    except OSError as exc:
        log.warning("cannot limit the command's cgroup (%s): per-process limits only", exc)
        release_cgroup(leaf, wait=0)
        return None
    return leaf


def release_cgroup(leaf: str, wait: float = 2.0) -> bool:
    """Kill whatever is left in ``leaf`` and remove it (retrying up to ``wait`` seconds)."""
    with contextlib.suppress(OSError):
        _write(os.path.join(leaf, "cgroup.kill"), "1")
    deadline = time.monotonic() + wait
    while True:
        try:
            os.rmdir(leaf)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _remove_cgroups(parent: str) -> None:
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            if name.startswith("cmd-"):
                release_cgroup(os.path.join(parent, name), wait=0.5)
    with contextlib.suppress(OSError):
        os.rmdir(parent)


def memory_limit_text(config: ShellConfig) -> str:
    """How the memory limit holds here, for ``starweave doctor``."""
    mb = config.max_memory_mb
    per_process = f"{mb} MB data memory and {mb} MB stack per process"
    parent, why = cgroup_parent()
    if parent:
        return f"{mb} MB memory per command (cgroup v2) and {per_process}"
    # (shared mappings are not data memory: only the address space bounds them then)
    return f"{per_process} only, shared memory up to {mb * AS_FACTOR} MB ({why}: not per command)"


@dataclass
class Prepared:
    """A command line ready to start, and the descriptors it inherits (close them after the start)."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    cgroup: str | None = None  # the command's cgroup leaf: release_cgroup() once it ended

    def close(self) -> None:
        """Close the descriptors passed to the command (the child has its own copies)."""
        for fd in self.pass_fds:
            os.close(fd)


@dataclass
class Launch:
    """How commands of one policy start: the sandbox kind and everything that does not change
    between commands."""

    kind: str  # bwrap | landlock | none | unrestricted
    config: ShellConfig
    workspace: str
    read_roots: list[str] = field(default_factory=list)
    bwrap_exe: str | None = None
    landlock_abi: int = 0
    as_root: bool = field(default_factory=lambda: os.geteuid() == 0)
    bwrap_userns: bool | None = None  # None: what the probe found (a new user namespace by default)

    @property
    def supervised(self) -> bool:
        """Whether the launcher stays as a supervisor (everything but bubblewrap)."""
        return self.kind != "bwrap"

    @property
    def bwrap_home(self) -> str:
        """HOME inside bubblewrap: in the private /tmp, never the workspace or around it."""
        home = BWRAP_HOME
        if is_within(self.workspace, home) or is_within(home, self.workspace):
            home = "/tmp/.starweave-home"
        return home

    @property
    def private_base(self) -> str:
        """Where the launcher makes each command's private HOME and TMPDIR (outside the workspace)."""
        base = os.path.realpath(tempfile.gettempdir())
        return "/tmp" if is_within(base, self.workspace) else base

    def _userns(self) -> bool:
        if self.bwrap_userns is not None:
            return self.bwrap_userns
        return _bwrap_userns.get(os.path.realpath(self.bwrap_exe or "bwrap"), True)

    def base_env(self) -> dict[str, str]:
        """The environment before the private HOME/TMPDIR (the supervisor fills those in)."""
        if self.kind == "bwrap":
            return clean_env(self.bwrap_home, "/tmp")
        return clean_env("/nonexistent", "/nonexistent")

    def limits(self) -> dict[str, int]:
        """Resource limits of every process of the command (bytes or counts)."""
        mb = 1024 * 1024
        c = self.config
        return {
            "data": c.max_memory_mb * mb,
            "as": c.max_memory_mb * AS_FACTOR * mb,
            "fsize": c.max_file_size_mb * mb,
            "nofile": c.max_open_files,
            "nproc": c.max_processes,
            "core": 0,
            "stack": c.max_memory_mb * mb,  # the ceiling only (see launcher_confine.set_limits)
        }

    def spec(self, name: str) -> dict[str, Any]:
        """The launcher's spec for a command shown to the user as ``name``."""
        spec: dict[str, Any] = {"name": name, "limits": self.limits(), "drop_caps": True}
        if self.kind == "bwrap":
            families = (seccomp.AF_INET, seccomp.AF_INET6, seccomp.AF_NETLINK)
            spec["seccomp"] = seccomp.filter_hex("strict", families, allow_bind=self.config.allow_network)
            if self.as_root:
                spec.update(bwrap_pid_max=self.config.max_processes + PID_MAX_SLACK, bwrap_proc_ro=True)
            return spec
        spec.update(supervise=True, private_base=self.private_base)
        if self.kind != "unrestricted" and self.as_root:
            spec["ipcns"] = True  # System V objects die with the command
        # Without a user namespace RLIMIT_NPROC counts all of the user's processes (root: none).
        spec["nproc_mode"] = "plain" if self.as_root else "count"
        if self.kind == "landlock":
            allow = self.config.allow_network
            inet = (seccomp.AF_INET, seccomp.AF_INET6, seccomp.AF_NETLINK)
            allowed: tuple[int, ...] = inet if allow else ()
            # A normal user's command shares the user's PID, IPC and mount namespaces.
            shared = not self.as_root
            spec["seccomp"] = seccomp.filter_hex("strict", allowed, allow_bind=allow, host_shared=shared)
            spec["landlock"] = landlock.launcher_spec(
                self.landlock_abi, self.workspace, self.read_roots, self.config.mode == "readonly", allow
            )
            spec["private_access"] = landlock.WRITE
            writable = [] if self.config.mode == "readonly" else [self.workspace]
            if self.as_root:
                # Its own PID and mount namespace: a private /proc, pid_max, and every mount but
                # these read-only (Landlock does not cover chmod, chown or utimes).
                spec.update(pidns=True, pid_max=self.config.max_processes + PID_MAX_SLACK, writable=writable)
            else:  # no mount namespace: the supervisor makes those changes, inside these folders only
                spec["notify"] = seccomp.notify_spec(writable)
        elif self.kind == "none":
            spec["seccomp"] = seccomp.filter_hex("basic")
            if self.as_root:  # root is exempt from RLIMIT_NPROC: the PID namespace's pid_max limits it
                spec.update(pidns=True, pid_max=self.config.max_processes + PID_MAX_SLACK)
        else:
            spec["drop_caps"] = False  # unrestricted: the user asked for full power, limits only
        return spec

    def _cgroup(self) -> tuple[str, int] | None:
        """A cgroup leaf for one command and its ``cgroup.procs`` open for the launcher, if any."""
        parent = cgroup_parent()[0]
        leaf = parent and new_cgroup(
            parent, self.config.max_memory_mb * 1024 * 1024, self.config.max_processes + PID_MAX_SLACK
        )
        if not leaf:
            return None
        try:
            return leaf, os.open(os.path.join(leaf, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            log.warning("cannot open the command's cgroup (%s): per-process limits only", exc)
            release_cgroup(leaf, wait=0)
            return None

    def prepare(
        self, exe: str, argv: list[str], cwd: str, env: dict[str, str], cgroup: bool = False
    ) -> Prepared:
        """The full command line that starts ``exe argv[1:]`` in ``cwd`` with ``env`` (and the
        descriptors that carry a spec too long for a command-line argument and, with ``cgroup``,
        the command's cgroup: see :func:`release_cgroup`)."""
        python, prefix = launcher_python(self.workspace)
        spec_dict = self.spec(argv[0])
        if "notify" in spec_dict:
            spec_dict["notify"]["program"] = notify_program(python)
        fds: tuple[int, ...] = ()
        leaf = self._cgroup() if cgroup else None
        if leaf:
            spec_dict["cgroup_fd"] = leaf[1]
            fds = (leaf[1],)
        # repr() writes a literal the launcher reads without importing json (milliseconds per command).
        spec = repr(spec_dict)
        if len(spec) > SPEC_IN_ARGV:  # one argument may hold 128 KiB; a Landlock ruleset can be more
            fd = os.memfd_create("starweave-spec")
            os.write(fd, spec.encode())
            os.lseek(fd, 0, os.SEEK_SET)
            spec, fds = f"fd:{fd}", (*fds, fd)
        inner = [python, "-I", "-S", "-c", launcher_code(python), spec, "--", exe, *argv[1:]]
        cgroup_leaf = leaf[0] if leaf else None
        if self.kind != "bwrap":
            return Prepared(inner, fds, cgroup_leaf)
        layout = BwrapLayout(
            workspace=self.workspace,
            cwd=cwd,
            home=self.bwrap_home,
            readonly=self.config.mode == "readonly",
            allow_network=self.config.allow_network,
            as_root=self.as_root,
            userns=self._userns(),
            tmp_bytes=self.config.max_file_size_mb * 1024 * 1024,
            read_roots=self.read_roots,
            hidden=hidden_paths([self.workspace, *self.read_roots]),
            runtime=[prefix, os.path.dirname(python)],
        )
        return Prepared(bwrap_argv(self.bwrap_exe or "bwrap", layout, env, inner), fds, cgroup_leaf)


async def spawn(
    launch: Launch,
    argv: list[str],
    cwd: str,
    assignments: dict[str, str],
    fds: dict[int, int],
    keep: tuple[int, ...] = (),
) -> asyncio.subprocess.Process | int:
    """Start ``argv`` confined with stdin/stdout/stderr ``fds`` (and the descriptors ``keep``
    inherited under their numbers); an exit code if it cannot start."""
    exe = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=CLEAN_PATH)
    if exe is None:
        os.write(fds[2], f"{argv[0]}: command not found\n".encode())
        return 127
    env = command_env(launch.base_env(), assignments)
    prepared = await asyncio.to_thread(launch.prepare, exe, argv, cwd, env, True)
    try:
        proc = await asyncio.create_subprocess_exec(
            *prepared.argv,
            stdin=fds[0],
            stdout=fds[1],
            stderr=fds[2],
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=(*prepared.pass_fds, *keep),
        )
    except BaseException:
        if prepared.cgroup:
            release_cgroup(prepared.cgroup, wait=0)
        raise
    finally:
        prepared.close()
    if launch.supervised:
        _supervised.add(proc)
    if prepared.cgroup:
        task = asyncio.get_running_loop().create_task(_release_after(proc, prepared.cgroup))
        _releases.add(task)
        task.add_done_callback(_releases.discard)
    return proc


async def _release_after(proc: asyncio.subprocess.Process, leaf: str) -> None:
    """Once the command's first process ended: kill what is left in its cgroup and remove it."""
    await proc.wait()
    if not await asyncio.to_thread(release_cgroup, leaf):
        log.warning("the command's cgroup %s could not be removed", leaf)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def stop(proc: asyncio.subprocess.Process) -> None:
    """Stop a started command and everything it started (see the module docstring)."""
    if proc.returncode is not None:
        return
    if proc not in _supervised:
        _kill_group(proc)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGTERM)
    # Should the supervisor not finish (it always does), its process group goes the hard way.
    asyncio.get_running_loop().call_later(STOP_GRACE, _kill_group, proc)
