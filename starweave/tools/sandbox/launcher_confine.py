"""The launcher's first half: confine this process, then execve the command; standard library only.

Order before ``execve``, each step failing closed (exit 125, one line on stderr): joining the
command's cgroup (memory and processes of the whole command, when Starweave made one), resource
limits, oom_score_adj 1000 (the kernel's OOM killer takes sandboxed processes first), as root a
per-PID-namespace pid_max (the process limit root is otherwise exempt from) and, inside
bubblewrap, a read-only /proc (root may write kernel settings there), dropping every capability
with the bounding set and secure bits, no_new_privs, the Landlock ruleset, the filter that hands
metadata changes to the supervisor (Landlock as a normal user, see ``launcher_notify``), the seccomp
filter.

:func:`starweave.tools.sandbox.launcher_program.launcher_source` joins this file and
``launcher.py`` into the one program the launcher runs (``python -I -S -c PROGRAM``: nothing is
imported from disk).
"""

from __future__ import annotations

import _signal as signal  # the C module: "signal" would import enum, which costs milliseconds
import ctypes
import os
import struct

TYPE_CHECKING = False  # "from typing import ..." at run time would cost milliseconds per command
if TYPE_CHECKING:
    from typing import Any, NoReturn

SETUP_FAILED = 125
PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_CAPBSET_READ, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 1, 22, 23, 24, 28
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 36, 38, 47, 4
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
# NOROOT(+locked), fix-up locked on, KEEP_CAPS locked off, NO_CAP_AMBIENT_RAISE(+locked).
SECURE_BITS = 0x01 | 0x02 | 0x08 | 0x20 | 0x40 | 0x80
CAP_SETPCAP = 8
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_RULE_PATH_BENEATH = 1
FILE_RIGHTS = 0x1 | 0x2 | 0x4 | 0x4000 | 0x8000  # execute, write, read, truncate, ioctl_dev
CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWIPC = 0x00020000, 0x20000000, 0x08000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 0x40000
MNT_DETACH = 2
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE = 442, -100, 0x8000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
PID_MAX_MIN = 301  # RESERVED_PIDS + 1: the smallest pid_max the kernel accepts
STACK_SOFT = 8 << 20  # the usual stack limit, where Starweave itself runs with none

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


# Not in starweave.errors: this file runs as a standard-library-only program (nothing is imported
# from disk), and the error never leaves it: the launcher reports it on stderr and exits 125.
class SetupError(Exception):
    """A confinement step failed: the command must not run."""


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")
    return result


def _prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    args = [ctypes.c_ulong(a) for a in (option, arg2, arg3, arg4, arg5)]
    return _libc.prctl(*args)


# ---- limits --------------------------------------------------------------------------------------


def _tasks_of_user(uid: int) -> int:
    """Tasks (threads) the real user ``uid`` has now: RLIMIT_NPROC counts them all."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as f:
                status = f.read()
        except OSError:
            continue
        fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
        try:
            if int(fields[b"Uid"].split()[0]) == uid:
                count += int(fields.get(b"Threads", b"1"))
        except (KeyError, ValueError):
            continue
    return count


def set_limits(limits: dict[str, int], nproc_mode: str) -> None:
    """Apply the resource limits (soft = hard, so the command cannot raise them)."""
    import resource

    table = {
        "data": resource.RLIMIT_DATA,
        "as": resource.RLIMIT_AS,
        "fsize": resource.RLIMIT_FSIZE,
        "nofile": resource.RLIMIT_NOFILE,
        "nproc": resource.RLIMIT_NPROC,
        "core": resource.RLIMIT_CORE,
        "stack": resource.RLIMIT_STACK,
    }
    for key, value in limits.items():
        if key == "nproc" and nproc_mode == "count":
            value += _tasks_of_user(os.getuid())  # no user namespace: the count is the user's total
        soft, hard = resource.getrlimit(table[key])
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        # The stack's soft limit is also the default size of every thread's stack: only the
        # ceiling is lowered (RLIMIT_DATA does not count the stack; without a ceiling
        # "ulimit -s unlimited" lets one process take memory up to RLIMIT_AS).
        low = min(soft if soft != resource.RLIM_INFINITY else STACK_SOFT, value) if key == "stack" else value
        try:
            resource.setrlimit(table[key], (low, value))
        except (ValueError, OSError) as exc:
            raise SetupError(f"setting the {key} limit to {value}: {exc}") from None
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError as exc:
        raise SetupError(f"raising oom_score_adj: {exc}") from None


def join_cgroup(fd: int) -> None:
    """Move this process into the command's cgroup through its ``cgroup.procs``, opened by Starweave
    (the kernel checks the opener's rights and cgroup namespace, so this works inside bubblewrap)."""
    try:
        os.write(fd, b"0")
    except OSError as exc:
        raise SetupError(f"joining the command's cgroup: {exc}") from None
    finally:
        os.close(fd)


def kernel_has_pidns_pid_max() -> bool:
    """pid_max is per PID namespace since Linux 6.14; before, writing it would change the host's."""
    parts = os.uname().release.split(".")
    try:
        return (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)) >= (6, 14)
    except (IndexError, ValueError):
        return False


def set_pid_max(value: int, proc_dir: str) -> None:
    """Limit the PIDs of this (new) PID namespace through a proc mounted at ``proc_dir``."""
    if not kernel_has_pidns_pid_max():
        return
    path = os.path.join(proc_dir, "sys/kernel/pid_max")
    try:
        with open(path, "w") as f:
            f.write(str(max(value, PID_MAX_MIN)))
    except OSError as exc:
        raise SetupError(f"setting pid_max of the PID namespace: {exc}") from None


def _mount(source: bytes | None, target: bytes, fstype: bytes | None, flags: int) -> None:
    _check(_libc.mount(source, target, fstype, ctypes.c_ulong(flags), None), f"mount {target.decode()}")


def proc_read_only() -> None:
    """Inside bubblewrap, as root: make /proc read-only. bubblewrap leaves /proc/sys and
    /proc/sysrq-trigger writable, and uid 0 passes their checks without any capability (a
    core_pattern written there runs a program as root outside the sandbox)."""
    _mount(None, b"/proc", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def pid_max_in_bwrap(value: int) -> None:
    """Inside bubblewrap's PID namespace (as root): mount a private proc to reach pid_max."""
    if not kernel_has_pidns_pid_max():
        return
    where = f"/tmp/.starweave-proc-{os.getpid()}"
    os.mkdir(where, 0o700)
    try:
        _mount(b"proc", where.encode(), b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        try:
            set_pid_max(value, where)
        finally:
            _libc.umount2(where.encode(), MNT_DETACH)
    finally:
        os.rmdir(where)


# ---- capabilities --------------------------------------------------------------------------------


def _capget() -> tuple[int, int, int]:
    header = struct.pack("=Ii", 0x20080522, 0)
    data = ctypes.create_string_buffer(24)
    _check(_libc.capget(header, data), "capget")
    eff0, prm0, inh0, eff1, prm1, inh1 = struct.unpack("=6I", data.raw)
    return (eff1 << 32) | eff0, (prm1 << 32) | prm0, (inh1 << 32) | inh0


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def drop_capabilities() -> None:
    """Drop every capability: bounding set, ambient, inheritable, permitted, effective; with the
    secure bits set, root gets none back at execve either."""
    _eff, prm, _inh = _capget()
    if prm & (1 << CAP_SETPCAP):
        _check(_prctl(PR_SET_SECUREBITS, SECURE_BITS), "setting the secure bits")
        for cap in range(_last_cap() + 1):
            _check(_prctl(PR_CAPBSET_DROP, cap), f"dropping capability {cap} from the bounding set")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = struct.pack("=Ii", 0x20080522, 0)
    _check(_libc.capset(header, bytes(24)), "capset")
    if any(_capget()):
        raise SetupError("capabilities are still held after dropping them")
    if os.geteuid() == 0 and _prctl(PR_CAPBSET_READ, 0) == 1:
        raise SetupError("running as root with a full bounding set (CAP_SETPCAP is missing)")


# ---- Landlock ------------------------------------------------------------------------------------


def _landlock(nr: int, *args: Any) -> int:
    return _check(_libc.syscall(ctypes.c_long(nr), *args), "landlock")


def apply_landlock(spec: dict[str, Any], extra_rules: list[tuple[str, int]]) -> None:
    """Create the ruleset of ``spec`` (handled rights and rules) and restrict this process."""
    handled = [spec["fs"], spec.get("net", 0), spec.get("scoped", 0)]
    size = 24 if handled[2] else 16 if handled[1] else 8
    attr = (ctypes.c_uint64 * 3)(*handled)
    fd = _landlock(LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for path, access in [*spec["rules"], *extra_rules]:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:
                continue  # gone, or not reachable by this user: a rule less only takes access away
            try:
                mode = os.fstat(target).st_mode
                if (mode & 0o170000) == 0o120000:
                    continue  # a symlink: its target has its own rule, or none
                if (mode & 0o170000) != 0o040000:
                    access &= FILE_RIGHTS
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access & spec["fs"], target), 12)
                _landlock(
                    LANDLOCK_ADD_RULE,
                    ctypes.c_int(fd),
                    ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                    rule,
                    ctypes.c_uint32(0),
                )
            finally:
                os.close(target)
        _landlock(LANDLOCK_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def _program(program_hex: str) -> tuple[object, ctypes.Array[ctypes.c_char]]:
    program = bytes.fromhex(program_hex)
    insns = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("=HxxxxxxQ", len(program) // 8, ctypes.addressof(insns)))
    return insns, fprog  # (both stay referenced until the kernel has copied the program)


def install_seccomp(program_hex: str) -> None:
    _insns, fprog = _program(program_hex)
    _check(
        _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog)), "installing the seccomp filter"
    )


def install_notify(notify: dict[str, Any]) -> None:
    """Install the filter that hands metadata calls to the supervisor and send the supervisor its
    listener over ``notify["socket"]``; this process keeps no copy (with one, the command could
    answer its own calls, or let them through to the kernel)."""
    import _socket  # (the full "socket" module would cost milliseconds)

    _insns, fprog = _program(notify["filter"])
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
    listener = _check(
        _libc.syscall(ctypes.c_long(notify["nr"]), SECCOMP_SET_MODE_FILTER, flags, fprog),
        "installing the metadata filter",
    )
    sock = _socket.socket(fileno=notify["socket"])
    try:
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("=i", listener))]
        sock.sendmsg([b"L"], rights)
    finally:
        sock.close()
        os.close(listener)


# ---- the command -------------------------------------------------------------------------------


def confine_and_exec(
    spec: dict[str, Any],
    argv: list[str],
    env: dict[str, str],
    extra_rules: list[tuple[str, int]] | None = None,
) -> NoReturn:
    """Every confinement step of ``spec``, then execve(argv). Never returns."""
    try:
        if spec.get("cgroup_fd") is not None:
            join_cgroup(spec["cgroup_fd"])
        set_limits(spec.get("limits", {}), spec.get("nproc_mode", "plain"))
        if spec.get("bwrap_pid_max"):
            pid_max_in_bwrap(spec["bwrap_pid_max"])
        if spec.get("bwrap_proc_ro"):
            proc_read_only()
        if spec.get("drop_caps"):
            drop_capabilities()
        _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "setting no_new_privs")
        if spec.get("landlock"):
            apply_landlock(spec["landlock"], extra_rules or [])
        if spec.get("notify"):
            install_notify(spec["notify"])
        if spec.get("seccomp"):
            install_seccomp(spec["seccomp"])
    except (SetupError, OSError) as exc:
        os.write(2, f"starweave sandbox: {exc}; the command was not run\n".encode())
        os._exit(SETUP_FAILED)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)  # Python ignores some; execve keeps ignored signals ignored
    name = spec.get("name") or argv[0]
    try:
        os.execve(argv[0], argv, env)
    except FileNotFoundError:
        os.write(2, f"{name}: command not found\n".encode())
        os._exit(127)
    except OSError as exc:
        os.write(2, f"{name}: {os.strerror(exc.errno or 13).lower()}\n".encode())
        os._exit(126)
