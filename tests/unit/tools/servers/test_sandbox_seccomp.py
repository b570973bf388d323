"""The seccomp filter's program, run by a small classic-BPF interpreter on synthetic system calls
(the kernel's verdicts are checked for real in tests/integration/test_sandbox_*.py)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from starweave.errors import SeccompUnsupported
from starweave.tools.sandbox import seccomp
from starweave.tools.sandbox.seccomp import (
    AUDIT_ARCH,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    SYSCALLS,
    build_filter,
    machine_arch,
    rules,
)


def run_filter(program: bytes, nr: int, args: tuple[int, ...] = (), arch: str = "x86_64") -> int:
    """Evaluate the filter on one ``seccomp_data`` (nr, arch, ip, args) like the kernel does."""
    data = struct.pack("=iIQ6Q", nr, AUDIT_ARCH.get(arch, 0x40000003), 0, *(list(args) + [0] * 6)[:6])
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x54:  # and #k
            acc &= k
        elif code == 0x05:  # ja
            pc += k
        elif code in (0x15, 0x35, 0x45):  # jeq / jge / jset
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += jt if hit else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x}")


def nr(name: str, arch: str = "x86_64") -> int:
    value = SYSCALLS[name][0 if arch == "x86_64" else 1]
    assert value is not None
    return value


EPERM = RET_ERRNO | 1
STRICT = build_filter("x86_64", rules("strict", (2, 10, 16)))
BASIC = build_filter("x86_64", rules("basic"))


@pytest.mark.parametrize("program", [STRICT, BASIC])
@pytest.mark.parametrize(
    ("call", "args", "verdict"),
    [
        ("chmod", (0, 0o4755), EPERM),
        ("chmod", (0, 0o2755), EPERM),
        ("chmod", (0, 0o1777), RET_ALLOW),  # the sticky bit is fine
        ("chmod", (0, 0o755), RET_ALLOW),
        ("fchmod", (3, 0o6755), EPERM),
        ("fchmodat", (3, 0, 0o4700), EPERM),
        ("fchmodat", (3, 0, 0o700), RET_ALLOW),
        ("fchmodat2", (3, 0, 0o2000, 0), EPERM),
        ("open", (0, 0o100 | 1, 0o4755), EPERM),  # O_CREAT with a setuid mode
        ("open", (0, 1, 0o4755), RET_ALLOW),  # no O_CREAT: the mode is ignored by the kernel
        ("openat", (3, 0, 0o100, 0o6755), EPERM),
        ("openat", (3, 0, 0o20000000 | 2, 0o4755), EPERM),  # O_TMPFILE
        ("openat", (3, 0, 0o100, 0o644), RET_ALLOW),
        ("creat", (0, 0o4755), EPERM),
        ("mknod", (0, 0o020600, 0x103), EPERM),  # character device
        ("mknodat", (3, 0, 0o060600, 0x800), EPERM),  # block device
        ("mknodat", (3, 0, 0o100644 | 0o4000, 0), EPERM),  # a regular file with setuid
        ("mknod", (0, 0o140755, 0), EPERM),  # a socket (what cp -a makes of one)
        ("mknodat", (3, 0, 0o140644, 0), EPERM),
        ("ioctl", (0, 0x5412, 0), EPERM),  # TIOCSTI
        ("ioctl", (0, 0x5401, 0), RET_ALLOW),  # TCGETS
        ("openat2", (3, 0, 0, 24), RET_ERRNO | 38),
        ("read", (0, 0, 10), RET_ALLOW),
    ],
)
def test_setid_bits_device_nodes_and_terminal_injection(
    program: bytes, call: str, args: tuple[int, ...], verdict: int
) -> None:
    number = 0 if call == "read" else nr(call)
    assert run_filter(program, number, args) == verdict


@pytest.mark.parametrize(
    ("call", "args", "strict", "basic"),
    [
        ("clone", (0x10000000 | 17,), EPERM, RET_ALLOW),  # CLONE_NEWUSER
        ("clone", (0x003D0F00,), RET_ALLOW, RET_ALLOW),  # a thread
        ("unshare", (0x10000000,), EPERM, RET_ALLOW),
        ("clone3", (0, 88), RET_ERRNO | 38, RET_ALLOW),
        ("io_uring_setup", (8, 0), EPERM, RET_ALLOW),
        ("keyctl", (0, 0), EPERM, RET_ALLOW),
        ("mount", (0, 0, 0, 0), EPERM, RET_ALLOW),
        ("bpf", (0, 0, 0), EPERM, RET_ALLOW),
        ("mknodat", (3, 0, 0o010644, 0), EPERM, RET_ALLOW),  # a FIFO
        ("mknod", (0, 0o100644, 0), RET_ALLOW, RET_ALLOW),  # a regular file
        ("socket", (1, 1, 0), RET_ERRNO | 97, RET_ALLOW),  # AF_UNIX
        ("socket", (40, 1, 0), RET_ERRNO | 97, RET_ALLOW),  # AF_VSOCK
        ("socket", (2, 1, 0), RET_ALLOW, RET_ALLOW),  # AF_INET (allowed in this profile)
        ("socket", (10, 2, 0), RET_ALLOW, RET_ALLOW),
        ("bind", (3, 0, 110), EPERM, RET_ALLOW),  # no network: no bind (a unix socket file)
        ("memfd_create", (0, 1), RET_ERRNO | 38, RET_ALLOW),  # memory no rlimit counts
        ("shmget", (0, 1 << 30, 0o1600), RET_ERRNO | 38, RET_ALLOW),
        ("shmat", (3, 0, 0), RET_ERRNO | 38, RET_ALLOW),
    ],
)
def test_strict_profile_closes_the_kernel_surface(
    call: str, args: tuple[int, ...], strict: int, basic: int
) -> None:
    assert run_filter(STRICT, nr(call), args) == strict
    assert run_filter(BASIC, nr(call), args) == basic


def test_socket_families_follow_the_allow_list() -> None:
    no_network = build_filter("x86_64", rules("strict", ()))
    for family in (1, 2, 10, 16, 17, 40):
        assert run_filter(no_network, nr("socket"), (family, 1, 0)) == RET_ERRNO | 97


def test_bind_stays_allowed_with_the_network() -> None:
    networked = build_filter("x86_64", rules("strict", (2, 10, 16), allow_bind=True))
    assert run_filter(networked, nr("bind"), (3, 0, 16)) == RET_ALLOW
    assert run_filter(networked, nr("mknod"), (0, 0o140644, 0)) == EPERM
    assert run_filter(networked, nr("memfd_create"), (0, 1)) == RET_ERRNO | 38
    assert seccomp.filter_hex("strict", (2,), "x86_64", allow_bind=True) != seccomp.filter_hex(
        "strict", (2,), "x86_64"
    )


def test_high_argument_bits_do_not_hide_a_setuid_mode() -> None:
    # The kernel reads mode_t as 32 bits: garbage above them must not change the verdict.
    assert run_filter(STRICT, nr("chmod"), (0, (1 << 40) | 0o4755)) == EPERM


def test_other_abis_are_killed() -> None:
    assert run_filter(STRICT, nr("chmod"), (0, 0o755), arch="i386") == RET_KILL_PROCESS
    assert run_filter(STRICT, 0x40000000 | 90, (0, 0o4755)) == RET_KILL_PROCESS  # x32 chmod


def test_aarch64_program_uses_its_own_numbers() -> None:
    program = build_filter("aarch64", rules("strict", ()))
    assert run_filter(program, nr("fchmodat", "aarch64"), (3, 0, 0o4755), arch="aarch64") == EPERM
    assert run_filter(program, nr("mknodat", "aarch64"), (3, 0, 0o020600, 0), arch="aarch64") == EPERM
    assert run_filter(program, nr("openat", "aarch64"), (3, 0, 0o100, 0o6755), arch="aarch64") == EPERM
    assert run_filter(program, nr("fchmodat", "aarch64"), (3, 0, 0o4755)) == RET_KILL_PROCESS  # x86 arch
    assert run_filter(program, 56, (3, 0, 0o100, 0o644), arch="aarch64") == RET_ALLOW


def test_unknown_architectures_are_refused_cleanly() -> None:
    assert machine_arch("amd64") == "x86_64" and machine_arch("arm64") == "aarch64"
    with pytest.raises(SeccompUnsupported, match="x86_64 and aarch64 only"):
        machine_arch("riscv64")


def test_filter_hex_round_trips_and_is_cached() -> None:
    text = seccomp.filter_hex("strict", (2,), "x86_64")
    assert bytes.fromhex(text) == build_filter("x86_64", rules("strict", (2,)))
    assert seccomp.filter_hex("strict", (2,), "x86_64") is text


def test_x86_64_numbers_match_the_installed_kernel_headers() -> None:
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        pytest.skip("no x86_64 kernel headers installed")
    table = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+) (\d+)", header.read_text())}
    checked = 0
    for name, (x86, _arm) in SYSCALLS.items():
        if name in table:
            assert table[name] == x86, name
            checked += 1
    assert checked >= 40


def test_aarch64_numbers_match_the_generic_kernel_headers() -> None:
    header = Path("/usr/include/asm-generic/unistd.h")
    if not header.exists():
        pytest.skip("no generic kernel headers installed")
    table = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR(?:3264)?_(\w+) (\d+)", header.read_text())}
    checked = 0
    for name, (_x86, arm) in SYSCALLS.items():
        if arm is not None and name in table:
            assert table[name] == arm, name
            checked += 1
    assert checked >= 35
