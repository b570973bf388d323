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
  (unix sockets reach local daemons such as Docker or D-Bus; ``socketpair`` stays allowed); without
  the network, ``bind`` (the filter cannot read the address, and a ``socketpair`` socket bound to a
  path leaves a socket file); memory no per-process limit counts: ``memfd_create`` and System V
  shared memory (``shmget``/``shmat``) answer ENOSYS, so callers fall back to ordinary files.

Only x86_64 and aarch64 are supported: another architecture raises :class:`SeccompUnsupported`, and
inside the filter a system call of another ABI (i386 ``int 0x80``, x32) kills the process.
"""

from __future__ import annotations

import functools
import platform
import struct
from dataclasses import dataclass

from starweave.errors import InvalidArgumentError, SeccompUnsupported

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
AF_INET, AF_INET6, AF_NETLINK = 2, 10, 16
X32_SYSCALL_BIT = 0x40000000

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

# System call numbers; None where the architecture has no such call (aarch64 has only the *at forms).
SYSCALLS: dict[str, tuple[int | None, int | None]] = {
    # name: (x86_64, aarch64)
    "open": (2, None),
    "creat": (85, None),
    "chmod": (90, None),
    "mknod": (133, None),
    "openat": (257, 56),
    "fchmod": (91, 52),
    "fchmodat": (268, 53),
    "fchmodat2": (452, 452),
    "mknodat": (259, 33),
    "openat2": (437, 437),
    "ioctl": (16, 29),
    "socket": (41, 198),
    "bind": (49, 200),
    "memfd_create": (319, 279),
    "shmget": (29, 194),
    "shmat": (30, 196),
    "clone": (56, 220),
    "clone3": (435, 435),
    "unshare": (272, 97),
    "setns": (308, 268),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "open_by_handle_at": (304, 265),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "syslog": (103, 116),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    "clock_adjtime": (305, 266),
    "iopl": (172, None),
    "ioperm": (173, None),
}

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
    profile: str, allowed_socket_families: tuple[int, ...] = (), allow_bind: bool = False
) -> list[Rule]:
    """The rules of ``profile``: ``basic`` (set-id bits, device and socket nodes, terminal injection)
    or ``strict`` (basic plus FIFOs, and the namespace, io_uring, keyring, mount, socket family,
    ``bind`` unless ``allow_bind``, memfd and System V shared memory rules)."""
    # Node types mknod may not make: devices and sockets always; FIFOs too under a sandbox (Starweave
    # and the file server would block on one left in the workspace).
    nodes: tuple[int, ...] = (S_IFCHR, S_IFBLK, S_IFSOCK)
    if profile != "basic":
        nodes += (S_IFIFO,)
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
        Rule("ioctl", (Check("deny_in", 1, 0xFFFFFFFF, (TIOCSTI, TIOCLINUX)),)),
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
    ]
    if not allow_bind:
        out.append(Rule("bind", (), default_allow=False))
    out += [Rule(name, (), default_allow=False) for name in STRICT_DENIED]
    return out


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
) -> str:
    """The filter for this machine, hex-encoded for the launcher's spec (cached)."""
    arch = machine_arch(machine)
    return build_filter(arch, rules(profile, allowed_socket_families, allow_bind)).hex()
