"""Building blocks of attack scripts for ``python3 -c``: every call wrapped so that a script goes on
after each refusal and prints what it got, and raw system calls by name."""

from __future__ import annotations

from hostile.casebook import DEFAULT_TIMEOUT, Call, sh

# Every call wrapped: an attack script goes on after each refusal and prints what it got.
TRY = (
    "import ctypes, os, platform, resource, socket, sys\n"
    "def t(f, *a, **k):\n"
    "    try:\n"
    '        print(getattr(f, "__name__", f), a, "->", f(*a, **k), flush=True)\n'
    "    except Exception as e:\n"
    '        print(getattr(f, "__name__", f), a, "->", e, flush=True)\n'
)
# Raw system calls by name (x86_64, aarch64 numbers); sc() prints the result and errno.
SYSCALL = TRY + (
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "NR = {\n"
    '    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),\n'
    '    "ptrace": (101, 117), "chmod": (90, None), "fchmodat": (268, 53), "fchmodat2": (452, 452),\n'
    '    "openat": (257, 56), "mknodat": (259, 33), "keyctl": (250, 219), "add_key": (248, 217),\n'
    '    "request_key": (249, 218), "io_uring_setup": (425, 425), "clone": (56, 220),\n'
    '    "clone3": (435, 435), "open_tree": (428, 428), "fsopen": (430, 430),\n'
    '    "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265), "bpf": (321, 280),\n'
    '    "perf_event_open": (298, 241), "userfaultfd": (323, 282), "process_vm_readv": (310, 270),\n'
    '    "pidfd_open": (434, 434), "pidfd_getfd": (438, 438), "pidfd_send_signal": (424, 424),\n'
    '    "prlimit64": (302, 261), "ioprio_set": (251, 30), "sched_setattr": (314, 274),\n'
    '    "memfd_secret": (447, 447), "pivot_root": (155, 41), "chroot": (161, 51),\n'
    "}\n"
    'COL = 0 if platform.machine() == "x86_64" else 1\n'
    "def sc(name, *a):\n"
    "    nr = NR[name][COL]\n"
    "    if nr is None:\n"
    '        print(name, "not on this machine")\n'
    "        return -1\n"
    "    r = libc.syscall(ctypes.c_long(nr), *a)\n"
    '    print(name, a, "->", r, os.strerror(ctypes.get_errno()) if r < 0 else "", flush=True)\n'
    "    return r\n"
)


def pyc(*parts: str, timeout: float = DEFAULT_TIMEOUT) -> Call:
    """``python3 -c 'CODE'`` where CODE is the parts, one or more lines each, joined by newlines (it
    must not hold a single quote)."""
    code = "\n".join(part.rstrip("\n") for part in parts) + "\n"
    if "'" in code:
        raise ValueError("python3 -c code must not contain single quotes")
    return sh(f"python3 -c '{code}'", timeout=timeout)
