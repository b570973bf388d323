"""The seccomp filter every sandboxed command runs under, as classic BPF built here.

The launcher installs it just before ``execve`` (after no_new_privs), so the command and everything
it starts inherit it. What it refuses, and why:

* **set-id bits**: ``chmod``/``fchmod``/``fchmodat``/``fchmodat2`` and ``open``/``openat``/``creat``/
  ``mknod`` with S_ISUID or S_ISGID in the mode fail with EPERM. A set-id file left in the workspace
  would run with its owner's rights for whoever starts it later, outside any sandbox (``cp -p`` and
  ``tar -p`` of a setuid binary go through fchmod and lose the bits).
* **device nodes and sockets**: ``mknod``/``mknodat`` of character or block devices and of sockets
  fail (Starweave opens files of the workspace itself; a device node there would give it the disk or
  memory, a socket file is a node no tool should meet); under a sandbox (the ``strict`` profile)
  FIFOs too.
* **terminal injection**: ``ioctl`` TIOCSTI and TIOCLINUX.
* In the ``strict`` profile (bubblewrap and Landlock), also: new user namespaces (``clone``/``unshare``
  with CLONE_NEWUSER; ``clone3`` answers ENOSYS so the C library falls back to ``clone``), io_uring
  (its operations bypass seccomp), kernel keyrings (not namespaced), mounting, modules, kexec, BPF,
  perf, userfaultfd, swap, reboot, clock changes, and sockets of families other than the allowed ones
  (unix sockets reach local daemons such as Docker or D-Bus; stream and seqpacket ``socketpair``
  stay allowed, datagram ones are refused: an unconnected datagram socket sends to any path, such
  as a system logger's, by address); without the network, ``bind`` (the filter cannot read the
  address, and a ``socketpair`` socket bound to a path leaves a socket file); memory no per-process
  limit counts: ``memfd_create`` and System V shared memory (``shmget``/``shmat``) answer ENOSYS, so
  callers fall back to ordinary files.
* With ``host_shared`` (Landlock as a normal user: no PID, IPC or mount namespace of its own), also
  what reaches the user's other processes without tracing them: System V IPC and POSIX message
  queues (ENOSYS), resource limits, scheduling and I/O priority of any process but the caller
  (EPERM), setting inode flags (``chattr``) and the new ``*xattrat``/``file_setattr`` calls.
  :func:`notify_filter_hex` then hands chmod, chown, utimes and xattr changes to the supervisor
  (``launcher_notify``), which makes them only inside the folders the command may write.

Only x86_64 and aarch64 are supported: another architecture raises :class:`SeccompUnsupported`, and
inside the filter a system call of another ABI (i386 ``int 0x80``, x32) kills the process.
"""

from __future__ import annotations

import functools
import platform
import struct
from dataclasses import dataclass

from starweave.errors import InvalidArgumentError, SeccompUnsupported
from starweave.tools.sandbox.syscall_numbers import SYSCALLS

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_ALU_AND_K = 0x54
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_JA = 0x05
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000

EPERM, EACCES, ENOSYS, EAFNOSUPPORT = 1, 13, 38, 97
S_ISUID_GID = 0o6000
S_IFMT, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK = 0o170000, 0o020000, 0o060000, 0o010000, 0o140000
O_CREAT, O_TMPFILE = 0o100, 0o20000000
CLONE_NEWUSER = 0x10000000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
# FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION, FS_IOC32_SETVERSION,
# FS_IOC_ENABLE_VERITY, FS_IOC_SET_ENCRYPTION_POLICY, FS_IOC_REMOVE_ENCRYPTION_KEY: changes an owner
# may make through a read-only descriptor, where no read-only mount refuses them
INODE_FLAG_IOCTLS = (
    0x40086602,
    0x40046602,
    0x401C5820,
    0x40087602,
    0x40047602,
    0x40806685,
    0x800C6613,
    0xC0406618,
)
# btrfs's ioctls (subvolumes, snapshots ... on a folder's descriptor) but the copy ones cp uses
BTRFS_TYPE, FICLONE, FICLONERANGE, FIDEDUPERANGE = 0x9400, 0x40049409, 0x4020940D, 0xC0189436
AF_INET, AF_INET6, AF_NETLINK = 2, 10, 16
SOCK_TYPE_MASK, SOCK_STREAM, SOCK_SEQPACKET = 0xF, 1, 5
PRIO_PROCESS, PRIO_PGRP = 0, 1
IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP = 1, 2
RET_USER_NOTIF = 0x7FC00000
X32_SYSCALL_BIT = 0x40000000

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


# Refused outright in the strict profile (each needs a capability the sandbox does not have, or
# widens the kernel surface a confined command has no use for).
STRICT_DENIED = (
    "setns",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "open_tree_attr",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "open_by_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "iopl",
    "ioperm",
)
# Handed to the supervisor where no read-only mount refuses them (see launcher_notify).
NOTIFIED = (
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
)
# With host_shared: objects of the user's other processes (no IPC namespace), and metadata calls
# the supervisor does not emulate (callers fall back to the ones it does).
HOST_SHARED_ENOSYS = (
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "shmctl",
    "shmdt",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "setxattrat",
    "removexattrat",
    "file_getattr",
    "file_setattr",
)


@dataclass(frozen=True)
class Check:
    """One test on a system call argument (its low 32 bits, as the kernel reads an int or mode_t).

    ``op`` is ``deny_any`` (refuse when ``arg & mask``), ``allow_none`` (allow when not ``arg & mask``),
    ``deny_in`` (refuse when ``arg & mask`` is one of ``values``) or ``allow_in`` (allow when it is).
    """

    op: str
    arg: int
    mask: int = 0xFFFFFFFF
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Rule:
    """The checks for one system call, in order, then ``default`` (an allow or an errno)."""

    syscall: str
    checks: tuple[Check, ...]
    errno: int = EPERM
    default_allow: bool = True


def machine_arch(machine: str | None = None) -> str:
    """``x86_64`` or ``aarch64`` for this machine; SeccompUnsupported otherwise."""
    name = (machine or platform.machine()).lower()
    name = _MACHINE_ALIASES.get(name, name)
    if name not in AUDIT_ARCH:
        raise SeccompUnsupported(
            f"the seccomp filter supports x86_64 and aarch64 only (this machine: {name or 'unknown'})"
        )
    return name


def rules(
    profile: str,
    allowed_socket_families: tuple[int, ...] = (),
    allow_bind: bool = False,
    host_shared: bool = False,
) -> list[Rule]:
    """The rules of ``profile``: ``basic`` (set-id bits, device and socket nodes, terminal injection)
    or ``strict`` (basic plus FIFOs, and the namespace, io_uring, keyring, mount, socket family,
    datagram socketpair, ``bind`` unless ``allow_bind``, memfd and System V shared memory rules;
    with ``host_shared`` the rules for a command that shares the user's PID and IPC namespaces)."""
    # Node types mknod may not make: devices and sockets always; FIFOs too under a sandbox (Starweave
    # and the file server would block on one left in the workspace).
    nodes: tuple[int, ...] = (S_IFCHR, S_IFBLK, S_IFSOCK)
    if profile != "basic":
        nodes += (S_IFIFO,)
    # (chattr on a read-only descriptor of the user's own file outside: no read-only mount refuses it)
    shared = host_shared and profile == "strict"
    flag_ioctls = INODE_FLAG_IOCTLS if shared else ()
    btrfs = (
        (
            Check("allow_in", 1, 0xFFFFFFFF, (FICLONE, FICLONERANGE, FIDEDUPERANGE)),
            Check("deny_in", 1, 0xFF00, (BTRFS_TYPE,)),
        )
        if shared
        else ()
    )
    out = [
        Rule("chmod", (Check("deny_any", 1, S_ISUID_GID),)),
        Rule("fchmod", (Check("deny_any", 1, S_ISUID_GID),)),
        Rule("fchmodat", (Check("deny_any", 2, S_ISUID_GID),)),
        Rule("fchmodat2", (Check("deny_any", 2, S_ISUID_GID),)),
        Rule("creat", (Check("deny_any", 1, S_ISUID_GID),)),
        Rule("open", (Check("allow_none", 1, O_CREAT | O_TMPFILE), Check("deny_any", 2, S_ISUID_GID))),
        Rule("openat", (Check("allow_none", 2, O_CREAT | O_TMPFILE), Check("deny_any", 3, S_ISUID_GID))),
        Rule("mknod", (Check("deny_in", 1, S_IFMT, nodes), Check("deny_any", 1, S_ISUID_GID))),
        Rule("mknodat", (Check("deny_in", 2, S_IFMT, nodes), Check("deny_any", 2, S_ISUID_GID))),
        # openat2 passes its mode in a struct the filter cannot read: callers fall back to openat.
        Rule("openat2", (), errno=ENOSYS, default_allow=False),
        Rule("ioctl", (Check("deny_in", 1, 0xFFFFFFFF, (TIOCSTI, TIOCLINUX, *flag_ioctls)), *btrfs)),
    ]
    if profile == "basic":
        return out
    if profile != "strict":
        raise InvalidArgumentError(f"unknown seccomp profile {profile!r}")
    out += [
        Rule("clone", (Check("deny_any", 0, CLONE_NEWUSER),)),
        Rule("unshare", (Check("deny_any", 0, CLONE_NEWUSER),)),
        Rule("clone3", (), errno=ENOSYS, default_allow=False),
        Rule("socket", (Check("allow_in", 0, 0xFFFFFFFF, allowed_socket_families),), EAFNOSUPPORT, False),
        Rule("memfd_create", (), errno=ENOSYS, default_allow=False),
        Rule("shmget", (), errno=ENOSYS, default_allow=False),
        Rule("shmat", (), errno=ENOSYS, default_allow=False),
        # Stream and seqpacket pairs ignore a destination address; a datagram pair does not.
        Rule(
            "socketpair",
            (Check("allow_in", 1, SOCK_TYPE_MASK, (SOCK_STREAM, SOCK_SEQPACKET)),),
            default_allow=False,
        ),
    ]
    if not allow_bind:
        out.append(Rule("bind", (), default_allow=False))
    out += [Rule(name, (), default_allow=False) for name in STRICT_DENIED]
    if host_shared:
        out += _host_shared_rules()
    return out


def _host_shared_rules() -> list[Rule]:
    """Without a PID namespace another process of the user is one pid away: limits, scheduling and
    I/O priority may be set for the caller itself only (pid 0, or its own process group)."""
    own = Check("deny_any", 0, 0xFFFFFFFF)  # arg 0 is the pid: anything but 0 is refused
    return [
        *(Rule(name, (), errno=ENOSYS, default_allow=False) for name in HOST_SHARED_ENOSYS),
        Rule("prlimit64", (own,)),
        Rule("sched_setparam", (own,)),
        Rule("sched_setscheduler", (own,)),
        Rule("sched_setaffinity", (own,)),
        Rule("sched_setattr", (own,)),
        Rule(
            "setpriority",
            (Check("deny_any", 1, 0xFFFFFFFF), Check("allow_in", 0, 0xFFFFFFFF, (PRIO_PROCESS, PRIO_PGRP))),
            default_allow=False,
        ),
        Rule(
            "ioprio_set",
            (
                Check("deny_any", 1, 0xFFFFFFFF),
                Check("allow_in", 0, 0xFFFFFFFF, (IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP)),
            ),
            default_allow=False,
        ),
    ]


def _insn(code: int, jt: int = 0, jf: int = 0, k: int = 0) -> tuple[int, int, int, int]:
    if not (0 <= jt <= 255 and 0 <= jf <= 255):
        raise InvalidArgumentError("BPF jump out of range")
    return (code, jt, jf, k & 0xFFFFFFFF)


def _ret(allow: bool, errno: int) -> tuple[int, int, int, int]:
    return _insn(_RET_K, k=RET_ALLOW if allow else RET_ERRNO | errno)


def _rule_body(rule: Rule) -> list[tuple[int, int, int, int]]:
    """Instructions that run once the system call number matched; every path ends in a return."""
    body: list[tuple[int, int, int, int]] = []
    deny = _ret(False, rule.errno)
    allow = _ret(True, 0)
    for check in rule.checks:
        body.append(_insn(_LD_W_ABS, k=16 + 8 * check.arg))
        if check.op in ("deny_any", "allow_none"):
            # JSET: jump jt when (A & mask) != 0.
            if check.op == "deny_any":
                body += [_insn(_JSET_K, 0, 1, check.mask), deny]
            else:
                body += [_insn(_JSET_K, 1, 0, check.mask), allow]
            continue
        if check.mask != 0xFFFFFFFF:
            body.append(_insn(_ALU_AND_K, k=check.mask))
        n = len(check.values)
        for i, value in enumerate(check.values):
            body.append(_insn(_JEQ_K, n - i, 0, value))  # to the return after the jump below
        body += [_insn(_JA, k=1), deny if check.op == "deny_in" else allow]
    body.append(_ret(rule.default_allow, rule.errno))
    return body


def build_filter(arch: str, rule_list: list[Rule]) -> bytes:
    """The filter program for ``arch`` as the bytes of a ``struct sock_filter`` array."""
    column = 0 if arch == "x86_64" else 1
    prog = [
        _insn(_LD_W_ABS, k=4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        _insn(_RET_K, k=RET_KILL_PROCESS),
        _insn(_LD_W_ABS, k=0),  # seccomp_data.nr
    ]
    if arch == "x86_64":
        prog += [_insn(_JGE_K, 0, 1, X32_SYSCALL_BIT), _insn(_RET_K, k=RET_KILL_PROCESS)]
    for rule in rule_list:
        nr = SYSCALLS[rule.syscall][column]
        if nr is None:
            continue
        body = _rule_body(rule)
        # A mismatch skips the body with A still holding the number; a body always returns.
        prog.append(_insn(_JEQ_K, 0, len(body), nr))
        prog += body
    prog.append(_insn(_RET_K, k=RET_ALLOW))
    if len(prog) > 4096:
        raise InvalidArgumentError("seccomp filter too long")
    return b"".join(struct.pack("=HBBI", *insn) for insn in prog)


@functools.lru_cache(maxsize=16)
def filter_hex(
    profile: str,
    allowed_socket_families: tuple[int, ...] = (),
    machine: str | None = None,
    allow_bind: bool = False,
    host_shared: bool = False,
) -> str:
    """The filter for this machine, hex-encoded for the launcher's spec (cached)."""
    arch = machine_arch(machine)
    return build_filter(arch, rules(profile, allowed_socket_families, allow_bind, host_shared)).hex()


def build_notify_filter(arch: str, names: tuple[str, ...] = NOTIFIED) -> bytes:
    """A filter that hands the system calls ``names`` to a supervisor (SECCOMP_RET_USER_NOTIF) and
    allows everything else; installed next to the main filter, whose errors take precedence."""
    column = 0 if arch == "x86_64" else 1
    numbers = [nr for nr in (SYSCALLS[name][column] for name in names) if nr is not None]
    prog = [
        _insn(_LD_W_ABS, k=4),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        _insn(_RET_K, k=RET_ALLOW),  # another ABI: the main filter kills the process
        _insn(_LD_W_ABS, k=0),
    ]
    for i, nr in enumerate(numbers):
        prog.append(_insn(_JEQ_K, len(numbers) - i, 0, nr))  # to the RET_USER_NOTIF at the end
    prog += [_insn(_RET_K, k=RET_ALLOW), _insn(_RET_K, k=RET_USER_NOTIF)]
    return b"".join(struct.pack("=HBBI", *insn) for insn in prog)


@functools.lru_cache(maxsize=4)
def notify_filter_hex(machine: str | None = None) -> str:
    """:func:`build_notify_filter` for this machine, hex-encoded for the launcher's spec."""
    return build_notify_filter(machine_arch(machine)).hex()


def notify_spec(writable: list[str], machine: str | None = None) -> dict[str, object]:
    """The ``notify`` part of the launcher's spec: the filter, the number of ``seccomp(2)``, the
    names of the notified calls by number, and the folders the command may write."""
    column = 0 if machine_arch(machine) == "x86_64" else 1
    calls = {SYSCALLS[name][column]: name for name in NOTIFIED if SYSCALLS[name][column] is not None}
    return {
        "filter": notify_filter_hex(machine),
        "nr": SYSCALLS["seccomp"][column],
        "calls": calls,
        "writable": list(writable),
    }
